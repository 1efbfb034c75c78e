"""The helpers of the node's DDS tests: the dynamics node in its own process, a test-side rclpy client
that talks to it over real DDS, the messages the tests send (a ~/reference, joint_states with efforts
from the scripted motion, in batches awaited), a parameter dump as `ros2 param dump` writes it.
conftest.py gives each test session a random ROS_DOMAIN_ID on localhost."""
import atexit
import contextlib
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import scripted
import yaml

rclpy = pytest.importorskip("rclpy")
_pkg = pytest.importorskip("robot_dynamics_interfaces")
if getattr(_pkg, "__file__", None) is None:   # only the source folder, seen as a namespace package
    pytest.skip("robot_dynamics_interfaces not built", allow_module_level=True)

from rcl_interfaces.srv import GetParameters, ListParameters  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from robot_dynamics_interfaces.msg import Contact  # noqa: E402
from robot_dynamics_interfaces.srv import IdentifyPayload  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

_names = itertools.count()
#: a node's environment with which numba prints every cache load and save (after_ready reads them)
CACHE_LOG = {"NUMBA_DEBUG_CACHE": "1", "PYTHONUNBUFFERED": "1"}


#: how long a node started by a test may take to offer its services: its imports, the URDF, and any
#: kernel it compiles (a fresh clone under load: over 20 s was seen); a wait returns as soon as they are up
START = 120.0

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

    def wait_for_output(self, text, timeout=120.0):
        """Wait until the node has printed `text` (e.g. HEAVY_READY: a heavy request sent earlier waits
        for the heavy parts' warm-up, seconds on a loaded machine); fails naming it on timeout or exit."""
        deadline = time.monotonic() + timeout
        while text not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the node never printed {text!r}:\n{self.output()}")
            time.sleep(0.05)

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


@atexit.register
def _remove_logs():
    """The nodes' output files go with the test process (a run of the suite left ~100 in /tmp)."""
    for node in RUNNING:
        with contextlib.suppress(OSError):
            os.unlink(node.log.name)


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
        assert client.wait_for_service(timeout_sec=max(timeout, START)), f"service {name} not available"
        # A request sent just after discovery can lose its response (the server's response writer
        # not yet matched with this client): ask again, as a client would, before failing. A slow
        # request is not lost: the earlier requests stay awaited, and a resend's refusal (e.g. a
        # heavy queue full of this client's own resends) does not hide an earlier request's answer.
        sent = []
        for _ in range(3):
            sent.append(client.call_async(request))
            deadline = time.monotonic() + timeout / 3
            while time.monotonic() < deadline:
                rclpy.spin_once(self.node, timeout_sec=0.05)
                answer = [f for f in sent if f.done() and (f is sent[0] or getattr(f.result(), "success", True))]
                if answer:
                    return self._settle(client, sent, answer[0])
        done = [f for f in sent if f.done()]     # only a resend's refusal came back
        if done:
            return self._settle(client, sent, done[0])
        self._settle(client, sent, None)
        pytest.fail(f"no answer from {name} to 3 requests")

    @staticmethod
    def _settle(client, sent, answered):
        for f in sent:
            if not f.done():
                client.remove_pending_request(f)
        return None if answered is None else answered.result()

    def set_parameters(self, node_name, **values):
        """Set parameters of a node atomically (name__sub for name.sub); the SetParametersResult."""
        if node_name not in self._parameter_clients:
            self._parameter_clients[node_name] = AsyncParameterClient(self.node, node_name)
        client = self._parameter_clients[node_name]
        assert client.wait_for_services(timeout_sec=START)
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


def reference(names, positions, velocities, accelerations, stamp_ns=0):
    """A ~/reference of one point (time_from_start 0), stamped stamp_ns."""
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 10**9)
    msg.points = [JointTrajectoryPoint(positions=list(map(float, positions)), velocities=list(map(float, velocities)),
                                       accelerations=list(map(float, accelerations)))]
    return msg


#: what the node logs once its heavy-request process has warmed up (after "ready: every answer")
HEAVY_READY = "heavy requests ready: every heavy answer"


def after_ready(node):
    """The output of a node started with CACHE_LOG after its ready lines (the node's, then its heavy-request
    process's: both print numba's cache lines), and the number of numba cache lines before them."""
    output = node.output()
    assert output.count("ready: every answer") == 1 and output.count(HEAVY_READY) == 1, output
    assert output.index("ready: every answer") < output.index(HEAVY_READY), output
    before, after = output.split(HEAVY_READY)
    return after, before.count("[cache]")


# --- streams of joint_states with efforts, the observer's outputs, ~/identify_payload -------------------
MS = 1_000_000      # ns
RELIABLE = rclpy.qos.QoSProfile(depth=1000, reliability=rclpy.qos.ReliabilityPolicy.RELIABLE)
#: the payload the scripted motion carries by default (link, mass, com, inertia)
PAYLOAD = ("tool0", 1.5, [0.02, 0.01, 0.05], [0.003, 0.004, 0.002, 0.0002, 0.0, 0.0])


def effort_state(names, q, v, tau, stamp):
    """A joint_states message with positions, velocities and efforts, stamped (integer ns)."""
    msg = JointState(name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in v],
                     effort=[float(x) for x in tau])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 10**9)
    return msg


class Outputs:
    """The node's observer outputs and gravity torques, by stamp."""

    def __init__(self, client, node):
        self.torques = client.listen(JointState, f"{node.ns}/external_torques", RELIABLE)
        self.wrench = client.listen(WrenchStamped, f"{node.ns}/external_wrench", RELIABLE)
        self.contact = client.listen(Contact, f"{node.ns}/contact", RELIABLE)
        self.gravity = client.listen(JointState, f"{node.ns}/gravity_torques", RELIABLE)

    def observer(self):
        return (self.torques, self.wrench, self.contact)

    def answered(self, stamp, topics=None):
        return all(any(stamp_ns(m) == stamp for m in messages) for messages in (topics or self.observer()))


def send_all(client, node, outputs, messages, batch=5, topics=None):
    """Publish (stamp, JointState) in batches, each batch's last answer awaited (re-sent if lost)."""
    for k in range(0, len(messages), batch):
        chunk = messages[k:k + batch]
        for _, msg in chunk:
            client.publish(JointState, node.joint_states, msg, RELIABLE)
        last = chunk[-1][0]
        client.wait_for(lambda: outputs.answered(last, topics), every=2.0,
                        action=lambda: client.publish(JointState, node.joint_states, chunk[-1][1], RELIABLE),
                        what=f"the node's answers to joint_states stamped {last}")


def connect(client, node, outputs, model, base, topics=None):
    """Until the node answers on every output (it has discovered the test's subscriptions)."""
    k = [0]

    def pair():
        for _ in range(2):
            q, v, tau = scripted.motion(model, 0.0)
            client.publish(JointState, node.joint_states, effort_state(model.joint_names, q, v, tau, base + k[0] * MS),
                           RELIABLE)
            k[0] += 1
    client.wait_for(lambda: all(messages for messages in (topics or outputs.observer())), action=pair, every=0.3,
                    what="the node's first observer outputs")
    return base + k[0] * MS


class Stream:
    """joint_states of the scripted motion (scripted.py), carrying PAYLOAD, published on demand with rising stamps,
    at most AHEAD messages ahead of the node's answers (gravity torques): none is dropped."""
    AHEAD = 200

    def __init__(self, client, node, model, start, payload=PAYLOAD, noise=0.0, seed=0, velocities=True):
        self.client, self.node, self.model, self.start = client, node, model, start
        self.payload, self.noise, self.velocities = payload, noise, velocities
        self.rng, self.k = np.random.default_rng(seed), 0
        topic = f"{node.ns}/gravity_torques"
        self.answers = client.inbox.get(topic) or client.listen(JointState, topic, RELIABLE)

    def send(self, count=20):
        # before the first answer to this stream (the node may not have discovered the test yet), send regardless
        answered = stamp_ns(self.answers[-1]) if self.answers else -1
        if answered >= self.start and self.start + (self.k - self.AHEAD) * MS > answered:
            return
        for _ in range(count):
            q, v, tau = scripted.motion(self.model, self.k * 1e-3, self.payload)
            tau = tau + self.noise * self.rng.standard_normal(6)
            stamp = self.start + self.k * MS
            self.client.publish(JointState, self.node.joint_states, effort_state(
                self.model.joint_names, q, v if self.velocities else [], tau, stamp), RELIABLE)
            self.k += 1


def identify(client, node, stream, timeout=60.0, **fields):
    """Call ~/identify_payload while the stream runs; its response. Then until the node answered the
    stream's last message: a stream's messages still queued at the node would otherwise be taken by
    the next call's recording (and their stamps, far from the next stream's, stop it as a gap)."""
    service = client.node.create_client(IdentifyPayload, f"{node.ns}/identify_payload")
    assert service.wait_for_service(timeout_sec=START)
    future = service.call_async(IdentifyPayload.Request(**fields))
    client.wait_for(future.done, action=stream.send if stream else None, every=0.01, timeout=timeout,
                    what="the answer of ~/identify_payload")
    client.node.destroy_client(service)
    if stream is not None and stream.k:
        last = stream.start + (stream.k - 1) * MS
        client.wait_for(lambda: any(stamp_ns(m) == last for m in stream.answers), what="the stream's last answer")
    return future.result()


# --- parameters as ros2 param dump writes them ------------------------------------------------------
def dump(client, node_name):
    """What `ros2 param dump <node>` prints (ros2param/verb/dump.py): list_parameters, get_parameters,
    each value by parameter_value_to_python, nested at '.', yaml.dump(default_flow_style=False)."""
    names = sorted(client.call(ListParameters, f"/{node_name}/list_parameters", ListParameters.Request()).result.names)
    values = client.call(GetParameters, f"/{node_name}/get_parameters", GetParameters.Request(names=names)).values
    out = {}
    for name, value in zip(names, values):
        where, key = out, name
        while "." in key:
            head, key = key.split(".", 1)
            where = where.setdefault(head, {})
        where[key] = parameter_value_to_python(value)
    return yaml.dump({f"/{node_name}": {"ros__parameters": out}}, default_flow_style=False)


def write(text):
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dump_{os.getpid()}_{abs(hash(text)) % 10**8}.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path
