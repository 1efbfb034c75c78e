"""Every parameter against every kind of bad value, at start-up and at run time. A refusal names the
parameter (and the form it takes); at run time the previous configuration serves on, unchanged; at
start-up the node does not start (exit code 1, one line naming the parameter, no traceback). Nothing
non-finite is published or returned meanwhile. Good values in every accepted form (integers for
floats, one armature value for all joints, a list sent as a string by `ros2 param set`) work, also
from a parameter file."""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from rosnode import Client, NodeProcess, rclpy, stamp_ns, stop_all

from rclpy.parameter import Parameter  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.ros.node import DynamicsNode, StartupError  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.srv import ForwardDynamics, InverseDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA = bundled_urdf("puma560")
NAN, INF = float("nan"), float("inf")
# parameter: [(bad value, what is wrong with it)]; each refused at start-up and at run time
BAD = {
    "gravity": [([NAN, 0.0, -9.81], "NaN"), ([0.0, 0.0, INF], "inf"), ([0.0, -9.81], "wrong length"),
                ("hello", "wrong type"), (True, "wrong type"), ("[0, 0, 1e400]", "inf as text")],
    "armature": [([NAN], "NaN"), ([INF] * 6, "inf"), ([0.1, 0.2], "wrong length"), (-0.1, "negative"),
                 ("x", "wrong type")],
    "payload.mass": [(NAN, "NaN"), (INF, "inf"), ("nan", "NaN as text"), (-1.0, "negative mass"),
                     ([1.0, 2.0], "wrong length"), (True, "wrong type")],
    "payload.com": [([NAN, 0.0, 0.0], "NaN"), ([0.0, 0.0], "wrong length"), ("x", "wrong type")],
    "payload.inertia": [([0.01, 0.01, 0.03, 0.0, 0.0, 0.0], "non-physical (triangle inequality)"),
                        ([-0.01, 0.02, 0.02, 0.0, 0.0, 0.0], "non-physical (negative moment)"),
                        ([0.01, 0.02, INF, 0.0, 0.0, 0.0], "inf"), ([0.01] * 5, "wrong length")],
    "payload.link": [("hand", "unknown link"), (5, "wrong type")],
    "joints": [(["joint1", "elbow"], "unknown joint"), (["joint1", "joint1"], "duplicate"),
               ("joint1", "wrong type"), ([1, 2], "wrong type")],
    "feedforward.kp": [(NAN, "NaN"), (-1.0, "negative"), ([1.0, 2.0], "wrong length"), ("x", "wrong type")],
    "feedforward.kd": [(INF, "inf"), ([1.0] * 5, "wrong length")],
    "feedforward.evaluate_at": [("later", "unknown choice"), (3, "wrong type")],
    "floating_base": [(1, "wrong type"), ("yes", "wrong type")],
    "contacts.frames": [(["link6"], "fixed-base model"), (["link6", "link6"], "duplicate"), ("link6", "wrong type")],
    "contacts.kind": [("line", "unknown kind"), (["point", "flat"], "unknown kind in a list"), (3, "wrong type")],
    "root_link": [("nope", "unknown link"), (2.0, "wrong type")],
    "tip_link": [("nope", "unknown link")],
    "urdf_file": [("/nonexistent/arm.urdf", "no such file"), (5, "wrong type")],
    "robot_description": [("<robot name='x'><link name='a'/>", "not XML"), (3, "wrong type")],
    "observer.enabled": [(1, "wrong type")],
    "observer.gain": [(0.0, "zero"), ([-1.0], "negative"), (NAN, "NaN"), ([1.0, 2.0], "wrong length"),
                      ("x", "wrong type")],
    "observer.contact_threshold": [(-0.5, "negative"), (INF, "inf"), ([1.0] * 4, "wrong length")],
    "observer.wrench_frame": [("camera", "unknown frame"), ("base_link", "fixed to the world"), (3, "wrong type")],
    "observer.wrench_components": [("moment", "unknown choice")],
    "observer.max_interval": [(0.0, "zero"), (NAN, "NaN"), (60.0, "out of range")],
    "identification.window": [(0.0, "zero"), (2.0, "out of range")],
    "identification.still_velocity": [(-0.01, "negative"), ("fast", "wrong type")],
    "joint_states_timeout": [(0.0, "zero"), (NAN, "NaN"), (-1.0, "negative"), ("soon", "wrong type")],
}
BAD_AT_STARTUP_ONLY = {
    "diagnostics_period": [(0.0, "out of range"), (NAN, "NaN"), ("x", "wrong type")],
    "qos_overrides./joint_states.subscription.depth": [(0, "out of range")],
    "qos_overrides./joint_states.subscription.reliability": [("sometimes", "unknown choice")],
}
CASES = [(name, value, what) for name, values in BAD.items() for value, what in values]
STARTUP_CASES = CASES + [(n, v, w) for n, values in BAD_AT_STARTUP_ONLY.items() for v, w in values]


def ids(cases):
    return [f"{name}={what}" for name, _, what in cases]


# --- start-up: the node refuses to start, naming the parameter ---------------------------------------
@pytest.fixture(scope="module")
def ros():
    rclpy.init()
    yield
    stop_all()
    rclpy.shutdown()


@pytest.mark.parametrize("name,value,what", STARTUP_CASES, ids=ids(STARTUP_CASES))
def test_a_bad_value_at_startup_stops_the_node_naming_it(ros, name, value, what):
    overrides = [Parameter("urdf_file", value=PUMA)] if name not in ("urdf_file", "robot_description") else []
    with pytest.raises(StartupError) as refused:
        DynamicsNode(parameter_overrides=overrides + [Parameter(name, value=value)])
    assert name in str(refused.value), str(refused.value)


def run_node(*args, timeout=30):
    """The node's executable with a parameter file or overrides; (exit code, output) once it exits."""
    command = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r",
               f"__node:=params{os.getpid()}"] + list(args)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def params_file(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    f.write("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in text.strip().splitlines()))
    f.close()
    return f.name


@pytest.mark.parametrize("line,words", [
    ("payload.mass: .nan", "parameter payload.mass takes a finite number >= 0"),
    ("gravity: [0, 0, -9.81]", "write every number of a list of floats with a decimal point"),
    ("joints: [joint1, wrist]", "parameter joints: unknown joints ['wrist']"),
])
def test_a_bad_parameter_file_stops_the_process_with_one_clear_line(line, words):
    code, output = run_node("--params-file", params_file(f"urdf_file: {PUMA}\n{line}"))
    assert code == 1 and words in output and "Traceback" not in output, output


# --- run time: refused, named; the previous configuration serves on ----------------------------------
@pytest.fixture(scope="module")
def client(ros):
    c = Client()
    yield c
    c.close()


@pytest.fixture(scope="module")
def puma(client):
    node = NodeProcess(f"urdf_file:={PUMA}")
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope="module")
def model():
    return load_urdf(PUMA)


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


Q = np.array([0.2, -0.5, 0.8, 0.1, 0.6, -0.3])


def serves(client, node, expected_model, stamp):
    """The node's gravity_commands for one state and its inverse dynamics for another equal the
    library's on `expected_model`."""
    commands = client.inbox.get(f"{node.ns}/gravity_commands") or client.listen(Float64MultiArray, f"{node.ns}/gravity_commands")
    torques = client.inbox.get(f"{node.ns}/gravity_torques") or client.listen(JointState, f"{node.ns}/gravity_torques")
    q = Q + 1e-3 * (stamp % 100)
    client.wait_for(lambda: any(stamp_ns(m) == stamp for m in torques),
                    action=lambda: client.joint_state(node.joint_states, expected_model.joint_names, q, (), stamp),
                    what=f"gravity_torques stamped {stamp}")
    state = next(m for m in torques if stamp_ns(m) == stamp)
    command = client.wait_for(lambda: next((c for c in reversed(commands) if np.array_equal(c.data, state.effort)), None),
                              what="the gravity_commands published with it")     # commands carry no stamp
    assert close(state.effort, rd.gravity_torques(expected_model, q)) and close(command.data, state.effort)
    v, a = np.linspace(-1, 1, 6), np.linspace(1, -2, 6)
    r = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics",
                    InverseDynamics.Request(positions=list(Q), velocities=list(v), accelerations=list(a)))
    assert r.success and close(r.efforts, rd.inverse_dynamics(expected_model, Q, v, a)), r.message


def all_finite(client, node):
    for topic in ("gravity_commands", "gravity_torques"):
        for m in client.inbox.get(f"{node.ns}/{topic}", []):
            assert all(math.isfinite(x) for x in (m.data if topic.endswith("commands") else m.effort))


@pytest.mark.parametrize("name,value,what", CASES, ids=ids(CASES))
def test_a_bad_value_at_run_time_is_refused_naming_it_and_the_old_configuration_serves(
        client, puma, model, name, value, what):
    result = client.set_parameters(puma.name, **{name.replace(".", "__"): value})
    assert not result.successful and name in result.reason, result.reason
    serves(client, puma, model, stamp=hash((name, what)) % 10**9)
    all_finite(client, puma)


def test_a_startup_only_parameter_refuses_changes(client, puma):
    result = client.set_parameters(puma.name, diagnostics_period=5.0)
    assert not result.successful and "diagnostics_period" in result.reason, result.reason
    assert client.get_parameters(puma.name, "diagnostics_period") == [1.0]


def test_payload_link_is_checked_without_a_payload_and_blamed_by_name(client, puma, model):
    """payload.link is checked when it is set, even with payload.mass 0: a wrong name is not kept to be
    blamed later on payload.mass."""
    result = client.set_parameters(puma.name, payload__link="hand")
    assert not result.successful and "payload.link" in result.reason
    assert client.get_parameters(puma.name, "payload.link") == [""]
    result = client.set_parameters(puma.name, payload__mass=1.0)      # tip_link empty, payload.link empty
    assert not result.successful and "payload.link" in result.reason


def test_every_accepted_form_works_and_is_stored_as_floats(client, model):
    node = NodeProcess(f"urdf_file:={PUMA}")
    try:
        # integers for floats, a list as a string (what `ros2 param set` sends for [0, 0, -9.81])
        for value in ([0, 0, -10], "[0, 0, -9.81]"):
            result = client.set_parameters(node.name, gravity=value)
            assert result.successful, result.reason
        assert client.get_parameters(node.name, "gravity") == [[0.0, 0.0, -9.81]]
        result = client.set_parameters(node.name, armature=0.25)       # one value for every joint
        assert result.successful, result.reason
        armed = load_urdf(PUMA)
        armed.armature = [0.25] * 6
        tau = np.linspace(-5, 5, 6)
        r = client.call(ForwardDynamics, f"{node.ns}/forward_dynamics",
                        ForwardDynamics.Request(positions=list(Q), efforts=list(tau)))
        assert r.success and close(r.accelerations, rd.forward_dynamics(armed, Q, np.zeros(6), tau)), r.message
        result = client.set_parameters(node.name, payload__mass=2, payload__link="tool0")
        assert result.successful, result.reason
        assert client.get_parameters(node.name, "payload.mass") == [2.0]
    finally:
        assert node.stop() == 0, node.output()


def test_integer_lists_and_one_armature_value_in_a_parameter_file(client):
    node = NodeProcess(ros_args=["--params-file", params_file(f"urdf_file: {PUMA}\ngravity: [0, 0, -10]\n"
                                                              "armature: 0.1\nfeedforward.kp: 4")])
    try:
        expected = load_urdf(PUMA)
        expected.gravity, expected.armature = [0.0, 0.0, -10.0], [0.1] * 6
        serves(client, node, expected, stamp=424242)
        assert client.get_parameters(node.name, "gravity", "armature", "feedforward.kp") == [
            [0.0, 0.0, -10.0], [0.1], [4.0]]
    finally:
        assert node.stop() == 0, node.output()
