"""The dynamics node in its own process, and a test-side rclpy client that talks to it over
real DDS. conftest.py gives each test session a random ROS_DOMAIN_ID on localhost."""
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

rclpy = pytest.importorskip("rclpy")
_pkg = pytest.importorskip("robot_dynamics_interfaces")
if getattr(_pkg, "__file__", None) is None:   # only the source folder, seen as a namespace package
    pytest.skip("robot_dynamics_interfaces not built", allow_module_level=True)

from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

_names = itertools.count()


def executable(name):
    """An executable of the package as `ros2 run robot_dynamics <name>` finds it: lib/robot_dynamics
    of the package's prefix in the ament index (`make` builds the workspace overlay ./install)."""
    from ament_index_python.packages import get_package_prefix     # noqa: PLC0415
    return os.path.join(get_package_prefix("robot_dynamics"), "lib", "robot_dynamics", name)
RUNNING = []      # every node process of this session; all must be gone at its end


class NodeProcess:
    """`python -m robot_dynamics.ros` under a unique name, with its own joint_states and
    robot_description topics so that nodes of different tests never hear each other; env: variables
    added to the test's environment."""

    def __init__(self, *params, name=None, ros_args=(), env=None):
        self.name = name or f"dyn{os.getpid()}_{next(_names)}"
        self.ns = f"/{self.name}"
        self.joint_states = f"{self.ns}/joint_states_in"
        self.description = f"{self.ns}/description_in"
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"{self.name}_", suffix=".log", delete=False)
        args = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__node:={self.name}",
                "-r", f"joint_states:={self.joint_states}", "-r", f"robot_description:={self.description}"]
        args += list(ros_args)          # before the -p overrides, which win when they come last
        for p in params:
            args += ["-p", p]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                     env={**os.environ, **(env or {})})
        self.signalled = False        # sent its stop signal (a second one is never sent)
        RUNNING.append(self)

    def output(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self, sig=signal.SIGINT, timeout=10):
        """Stop the node as a user would (Ctrl-C); kill it if it hangs. Returns the exit code."""
        if self.proc.poll() is None:
            if not self.signalled:
                self.proc.send_signal(sig)
                self.signalled = True
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def stop_all():
    """Stop every node this session started and check that none survives: Ctrl-C to all of them
    first, so that they shut down together, then each waited for (and killed if it hangs)."""
    for node in RUNNING:
        if node.proc.poll() is None and not node.signalled:
            node.proc.send_signal(signal.SIGINT)
            node.signalled = True
    for node in RUNNING:
        node.stop()
    assert all(node.proc.poll() is not None for node in RUNNING)


class Client:
    """A test-side node: publishes inputs, collects outputs, calls services."""
    _count = itertools.count()

    def __init__(self):
        self.node = rclpy.create_node(f"test_client_{os.getpid()}_{next(self._count)}")
        self.inbox, self._publishers, self._clients, self._parameter_clients = {}, {}, {}, {}

    def close(self):
        self.node.destroy_node()

    def listen(self, msg_type, topic, qos=50):
        self.inbox[topic] = []
        self.node.create_subscription(msg_type, topic, self.inbox[topic].append, qos)
        return self.inbox[topic]

    def publish(self, msg_type, topic, msg, qos=10):
        key = (topic, str(qos))
        if key not in self._publishers:
            self._publishers[key] = self.node.create_publisher(msg_type, topic, qos)
        self._publishers[key].publish(msg)

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def wait_for(self, predicate, timeout=20.0, every=0.2, action=None, what="the expected message"):
        """Spin until predicate() is truthy, running action() (e.g. a re-publish, since
        discovery takes a moment) every `every` seconds; fail naming `what` on timeout."""
        end, next_action = time.monotonic() + timeout, 0.0
        while time.monotonic() < end:
            if action and time.monotonic() >= next_action:
                action()
                next_action = time.monotonic() + every
            rclpy.spin_once(self.node, timeout_sec=0.01)
            result = predicate()
            if result:
                return result
        pytest.fail(f"timed out after {timeout} s waiting for {what}")

    def call(self, srv_type, name, request, timeout=20.0):
        if name not in self._clients:
            self._clients[name] = self.node.create_client(srv_type, name)
        client = self._clients[name]
        assert client.wait_for_service(timeout_sec=timeout), f"service {name} not available"
        # A request sent just after discovery can lose its response (the server's response writer
        # not yet matched with this client): ask again, as a client would, before failing.
        for _ in range(3):
            future = client.call_async(request)
            rclpy.spin_until_future_complete(self.node, future, timeout_sec=timeout / 3)
            if future.done():
                return future.result()
            client.remove_pending_request(future)
        pytest.fail(f"no answer from {name} to 3 requests")

    def set_parameters(self, node_name, **values):
        """Set parameters of a node atomically (name__sub for name.sub); the SetParametersResult."""
        if node_name not in self._parameter_clients:
            self._parameter_clients[node_name] = AsyncParameterClient(self.node, node_name)
        client = self._parameter_clients[node_name]
        assert client.wait_for_services(timeout_sec=20.0)
        parameters = [Parameter(k.replace("__", "."), value=v) for k, v in values.items()]
        for _ in range(3):      # a response can be lost right after discovery, as in call(): ask again
            future = client.set_parameters_atomically(parameters)
            rclpy.spin_until_future_complete(self.node, future, timeout_sec=7.0)
            if future.done():
                return future.result().result
            future.cancel()
        pytest.fail(f"no answer from {node_name}'s set_parameters_atomically to 3 requests")

    def get_parameters(self, node_name, *names):
        """Values of parameters of a node (unset ones as None)."""
        response = self.call(GetParameters, f"/{node_name}/get_parameters", GetParameters.Request(names=list(names)))
        return [parameter_value_to_python(v) for v in response.values]

    def joint_state(self, topic, names, positions, velocities=(), stamp_ns=0):
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 10**9)
        msg.name = list(names)
        msg.position = [float(x) for x in positions]
        msg.velocity = [float(x) for x in velocities]
        self.publish(JointState, topic, msg)


def stamp_ns(msg):
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
