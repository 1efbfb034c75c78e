"""The node's closed loops over real DDS (test/rosnode.py: node and client in separate processes), on
the bundled five-bar: ~/gravity_torques from joint_states with and without the passive joints, and
the feedforward, equal the library's constrained inverse dynamics on the same message (the passive
joints assembled by rd.assemble when missing), and the node says once which joints it assembles;
~/constrained_inverse_dynamics equals the library; loops that cannot close and actuators that cannot
hold the mechanism are refused naming them, at start-up and at run time (the old configuration
serving on), and a message whose passive joints cannot be assembled publishes nothing; a parameter
dump with loops loads back."""
import numpy as np
import pytest
import yaml
from rosnode import NodeProcess, dump, rclpy, stamp_ns, write

from rclpy.parameter import Parameter  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics.ros.node import DynamicsNode, StartupError  # noqa: E402
from robot_dynamics_interfaces.srv import ConstrainedInverseDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

FIVE_BAR = bundled_urdf("five_bar")
LOOP = "end_effector right_distal_tip 6d"
SPEC = (("end_effector", "right_distal_tip", "6d"),)
MOTORS = ["left_base_joint", "right_base_joint"]
LOOPS = (f"urdf_file:={FIVE_BAR}", f"loops:=[{LOOP}]")
ACTUATED = "actuated_joints:=[left_base_joint, right_base_joint]"
ASSEMBLES = "joint_states carries no position for ['left_elbow_joint', 'end_joint', 'right_elbow_joint']"


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


@pytest.fixture(scope="module")
def model():
    return load_urdf(FIVE_BAR)


def closed(model, motors, guess=None):
    """The five-bar at these motor angles, the passive joints assembled (from q = 0, or a guess)."""
    q = np.zeros(model.nq) if guess is None else guess.copy()
    q[[model.joint_index[n] for n in MOTORS]] = motors
    return rd.assemble(model, q, SPEC, fixed=MOTORS)


def expected(model, q):
    return rd.constrained_inverse_dynamics(model, q, 0, 0, MOTORS, loops=SPEC)[0]


def answer(client, node, topic, kind, stamp, action):
    inbox = client.inbox.get(f"{node.ns}/{topic}") or client.listen(kind, f"{node.ns}/{topic}")
    return client.wait_for(lambda: next((m for m in inbox if stamp_ns(m) == stamp), None), action=action,
                           timeout=30.0, what=f"{topic} stamped {stamp}")


def motors_message(client, node, motors, stamp):
    return lambda: client.joint_state(node.joint_states, MOTORS, motors, (), stamp)


@pytest.fixture(scope="module")
def five_bar(client, model):
    """The five-bar node, motors actuated, joint_states carrying the motors only."""
    node = NodeProcess(*LOOPS, ACTUATED)
    answer(client, node, "gravity_torques", JointState, 1, motors_message(client, node, [0.0, 0.0], 1))
    yield node
    assert node.stop() == 0, node.output()


# --- gravity torques ---------------------------------------------------------------------------------
def test_gravity_from_the_motors_alone_is_the_librarys_on_the_assembled_mechanism(client, five_bar, model):
    commands = client.listen(Float64MultiArray, f"{five_bar.ns}/gravity_commands")
    # small steps, as a robot moves between messages: the node's warm start (the last solution) stays on the
    # assembly mode of q = 0 (a jump of ~0.7 rad on both motors can land on the other one)
    for stamp, motors in ((11, [0.1, -0.1]), (12, [0.15, -0.05]), (13, [0.1, 0.05]), (14, [0.12, 0.03])):
        q = closed(model, motors)
        send = motors_message(client, five_bar, motors, stamp)
        out = answer(client, five_bar, "gravity_torques", JointState, stamp, send)
        assert list(out.name) == MOTORS and close(out.effort, expected(model, q)[[0, 3]])
        assert not close(out.effort, rd.gravity_torques(model, q)[[0, 3]], 1e-3)     # not the tree's g(q)
        # sent again until it comes (gravity_commands' subscription may match after gravity_torques'): the
        # command equal to an answer of this stamp (a state sent again is assembled again)
        answers = client.inbox[f"{five_bar.ns}/gravity_torques"]
        command = client.wait_for(lambda: next((c for c in reversed(commands) for m in answers  # noqa: B023
                                                if stamp_ns(m) == stamp and np.array_equal(c.data, m.effort)), None),
                                  action=send, every=1.0, what="the gravity_commands published with it")
        assert len(command.data) == 2
    client.wait_for(lambda: ASSEMBLES in five_bar.output(), what="which joints the node assembles")
    output = five_bar.output()
    assert output.count(ASSEMBLES) == 1, output         # said once
    assert "closed loops end_effector = right_distal_tip (6d)" in output


@pytest.mark.parametrize("actuated", [ACTUATED, None], ids=["actuated_joints", "default: joint_states' joints"])
def test_gravity_with_the_passive_joints_in_joint_states_or_without_is_the_same(client, model, actuated):
    """actuated_joints set, joint_states carrying every joint of a closed configuration: the same
    torques as from the motors alone (a node with actuated_joints empty takes the motors as actuated)."""
    node = NodeProcess(*LOOPS, *([actuated] if actuated else []), "joints:=[left_base_joint, right_base_joint]")
    try:
        q = closed(model, [0.25, -0.3])
        names = MOTORS if actuated is None else model.joint_names
        positions = q[[0, 3]] if actuated is None else q
        out = answer(client, node, "gravity_torques", JointState, 21,
                     lambda: client.joint_state(node.joint_states, names, positions, (), 21))
        assert close(out.effort, expected(model, q)[[0, 3]])
        if actuated is None:
            client.wait_for(lambda: ASSEMBLES in node.output(), what="which joints the node assembles")
        else:
            assert ASSEMBLES not in node.output()
    finally:
        assert node.stop() == 0, node.output()


def test_a_message_whose_passive_joints_cannot_be_assembled_publishes_nothing(client, five_bar, model):
    """Motors at +-60 deg from q = 0: the elbows 0.7 m apart, out of the distal links' reach (0.6 m)."""
    torques = client.inbox.get(f"{five_bar.ns}/gravity_torques") or client.listen(
        JointState, f"{five_bar.ns}/gravity_torques")
    client.wait_for(lambda: "could not be assembled" in five_bar.output(), timeout=20.0,
                    action=motors_message(client, five_bar, [1.047, -1.047], 31), what="the refusal")
    assert not any(stamp_ns(m) == 31 for m in torques)
    assert "loop 0 (6d between 'end_effector' and 'right_distal_tip') cannot close" in five_bar.output()
    out = answer(client, five_bar, "gravity_torques", JointState, 32, motors_message(client, five_bar, [0.2, 0.1], 32))
    assert close(out.effort, expected(model, closed(model, [0.2, 0.1]))[[0, 3]])


# --- the feedforward and the service -------------------------------------------------------------------
def test_the_feedforward_is_the_constrained_inverse_dynamics_of_the_reference(client, five_bar, model):
    q = closed(model, [0.2, -0.1])
    J = rd.constraint_jacobian(model, q, 0, (), SPEC)[0]
    v = np.zeros(5)
    v[[0, 3]] = [0.5, -0.3]
    v[[1, 2, 4]] = np.linalg.lstsq(J[:, [1, 2, 4]], -J[:, [0, 3]] @ v[[0, 3]], rcond=None)[0]
    a = np.zeros(5)
    a[[0, 3]] = [1.0, 2.0]
    drift = rd.constraint_jacobian(model, q, v, (), SPEC)[1]
    a[[1, 2, 4]] = np.linalg.lstsq(J[:, [1, 2, 4]], -(J[:, [0, 3]] @ a[[0, 3]] + drift), rcond=None)[0]
    tau = rd.constrained_inverse_dynamics(model, q, v, a, MOTORS, loops=SPEC)[0]
    guess = q + np.array([0.0, 0.05, -0.05, 0.0, 0.05])     # passive positions: a guess; velocities 0
    ref = JointTrajectory(joint_names=model.joint_names, points=[JointTrajectoryPoint(
        positions=list(guess), velocities=list(v * [1, 0, 0, 1, 0]), accelerations=list(a * [1, 0, 0, 1, 0]))])
    ref.header.stamp.sec = 41
    out = answer(client, five_bar, "feedforward_torques", JointState, 41 * 10**9,
                 lambda: client.publish(JointTrajectory, f"{five_bar.ns}/reference", ref))
    assert close(out.effort, tau[[0, 3]], 1e-8)


def test_a_reference_of_the_motors_alone_is_completed_from_the_loop(client, five_bar, model):
    """The passive joints joint_states does not carry may be left out of the reference too (the
    five-bar demo's controller sends the motors only); a motor left out is refused by name."""
    q = closed(model, [0.25, -0.15])
    J = rd.constraint_jacobian(model, q, 0, (), SPEC)[0]
    v, a = np.zeros(5), np.zeros(5)
    v[[0, 3]], a[[0, 3]] = [-0.4, 0.6], [1.5, -0.5]
    v[[1, 2, 4]] = np.linalg.lstsq(J[:, [1, 2, 4]], -J[:, [0, 3]] @ v[[0, 3]], rcond=None)[0]
    drift = rd.constraint_jacobian(model, q, v, (), SPEC)[1]
    a[[1, 2, 4]] = np.linalg.lstsq(J[:, [1, 2, 4]], -(J[:, [0, 3]] @ a[[0, 3]] + drift), rcond=None)[0]
    tau = rd.constrained_inverse_dynamics(model, q, v, a, MOTORS, loops=SPEC)[0]
    ref = JointTrajectory(joint_names=MOTORS, points=[JointTrajectoryPoint(
        positions=list(q[[0, 3]]), velocities=list(v[[0, 3]]), accelerations=list(a[[0, 3]]))])
    ref.header.stamp.sec = 43
    out = answer(client, five_bar, "feedforward_torques", JointState, 43 * 10**9,
                 lambda: client.publish(JointTrajectory, f"{five_bar.ns}/reference", ref))
    assert close(out.effort, tau[[0, 3]], 1e-8)
    ref.joint_names, ref.header.stamp.sec = ["left_base_joint"], 44
    for field in ("positions", "velocities", "accelerations"):
        setattr(ref.points[0], field, getattr(ref.points[0], field)[:1])
    client.publish(JointTrajectory, f"{five_bar.ns}/reference", ref)
    client.wait_for(lambda: "missing joints ['right_base_joint']" in five_bar.output(), timeout=30.0,
                    what="the refusal naming the motor")


def cid_request(names, q, **fields):
    return ConstrainedInverseDynamics.Request(joint_names=names, positions=list(map(float, q)), **fields)


def test_the_service_equals_the_library_and_refuses_by_name(client, five_bar, model):
    q = closed(model, [-0.2, 0.3])
    name = f"{five_bar.ns}/constrained_inverse_dynamics"
    r = client.call(ConstrainedInverseDynamics, name, cid_request(MOTORS, q[[0, 3]]))
    assert r.success, r.message
    assert list(r.joint_names) == MOTORS + ["left_elbow_joint", "end_joint", "right_elbow_joint"]
    order = [model.joint_index[n] for n in r.joint_names]
    assert close(r.positions, q[order]) and close(r.efforts, expected(model, q)[order])
    assert [w.link for w in r.constraint_wrenches] == ["end_effector"]
    three = MOTORS + ["end_joint"]
    r = client.call(ConstrainedInverseDynamics, name, cid_request(model.joint_names, q, actuated_joints=three,
                                                                  objective="min_torque"))
    assert r.success and close(r.efforts, rd.constrained_inverse_dynamics(model, q, 0, 0, three, loops=SPEC,
                                                                          objective="min_torque")[0])
    r = client.call(ConstrainedInverseDynamics, name, cid_request(model.joint_names, q,
                                                                  actuated_joints=["left_base_joint"]))
    assert not r.success and "the actuated joints cannot produce this motion" in r.message, r.message
    assert not r.efforts and not r.constraint_wrenches
    assert five_bar.output().count(ASSEMBLES) == 1          # said once, for every message since


# --- parameters: refused at start-up and at run time ---------------------------------------------------
REFUSED = [  # (parameters beyond urdf_file, the parameter named, words of the reason)
    (dict(loops=[LOOP, "left_proximal right_proximal point"]), "loops",
     "loop 1 (point between 'left_proximal' and 'right_proximal') cannot close"),
    (dict(loops=[LOOP], actuated_joints=["right_base_joint"]), "actuated_joints",
     "the actuated joints cannot produce this motion"),
    (dict(loops=["end_effector tool0 6d"]), "loops", "unknown frames ['tool0']"),
    (dict(loops=["end_effector right_distal_tip"]), "loops", "is not 'frame_a frame_b kind'"),
]
IDS = ["cannot close", "cannot hold", "unknown frame", "malformed"]


@pytest.mark.parametrize("values,name,words", REFUSED, ids=IDS)
def test_loops_and_actuators_the_model_cannot_take_stop_the_node_at_start_up(client, values, name, words):
    overrides = [Parameter("urdf_file", value=FIVE_BAR)] + [Parameter(k, value=v) for k, v in values.items()]
    with pytest.raises(StartupError) as refused:
        DynamicsNode(parameter_overrides=overrides)
    assert f"parameter{'s' if 'produce' in words else ''} {name}" in str(refused.value), str(refused.value)
    assert words in str(refused.value), str(refused.value)


def test_the_executable_exits_naming_the_loop(client):
    node = NodeProcess(f"urdf_file:={FIVE_BAR}", f"loops:=[{LOOP}, left_proximal right_proximal point]")
    assert node.proc.wait(60) == 1
    output = node.output()
    assert "parameter loops" in output and "cannot close" in output and "Traceback" not in output, output


@pytest.mark.parametrize("values,name,words", REFUSED, ids=IDS)
def test_refused_at_run_time_and_the_old_configuration_serves_on(client, five_bar, model, values, name, words):
    result = client.set_parameters(five_bar.name, **values)
    assert not result.successful and name in result.reason and words in result.reason, result.reason
    assert client.get_parameters(five_bar.name, "loops", "actuated_joints") == [[LOOP], MOTORS]
    stamp = 50 + REFUSED.index((values, name, words))
    motors = [0.05 * (stamp - 50), -0.1]
    out = answer(client, five_bar, "gravity_torques", JointState, stamp,
                 motors_message(client, five_bar, motors, stamp))
    assert close(out.effort, expected(model, closed(model, motors))[[0, 3]], 1e-8)


def test_loops_can_be_cleared_and_set_again_at_run_time(client, model):
    """Without loops the passive joints must come in joint_states (the node waits for them)."""
    node = NodeProcess(f"urdf_file:={FIVE_BAR}")
    try:
        q = closed(model, [0.1, 0.2])
        out = answer(client, node, "gravity_torques", JointState, 61,
                     lambda: client.joint_state(node.joint_states, model.joint_names, q, (), 61))
        assert close(out.effort, rd.gravity_torques(model, q))
        result = client.set_parameters(node.name, loops=[LOOP], actuated_joints=MOTORS)
        assert result.successful, result.reason
        out = answer(client, node, "gravity_torques", JointState, 62,
                     lambda: client.joint_state(node.joint_states, model.joint_names, q, (), 62))
        assert list(out.name) == MOTORS and close(out.effort, expected(model, q)[[0, 3]])
        result = client.set_parameters(node.name, loops=[], actuated_joints=[])
        assert result.successful, result.reason
        out = answer(client, node, "gravity_torques", JointState, 63,
                     lambda: client.joint_state(node.joint_states, model.joint_names, q, (), 63))
        assert close(out.effort, rd.gravity_torques(model, q))
    finally:
        assert node.stop() == 0, node.output()


def test_a_parameter_dump_with_loops_loads_back(client, model):
    name = f"loopdump{id(client) % 10**6}"
    first = NodeProcess(*LOOPS, ACTUATED, name=name)
    try:
        client.wait_for(lambda: "ready:" in first.output(), timeout=60.0, what="the node ready")
        text = dump(client, name)
    finally:
        assert first.stop() == 0, first.output()
    before = yaml.safe_load(text)[f"/{name}"]["ros__parameters"]
    assert before["loops"] == [LOOP] and before["actuated_joints"] == MOTORS, text
    second = NodeProcess(name=name, ros_args=["--params-file", write(text)])
    try:
        q = closed(model, [0.3, 0.1])
        out = answer(client, second, "gravity_torques", JointState, 71, motors_message(client, second, q[[0, 3]], 71))
        assert close(out.effort, expected(model, q)[[0, 3]])
        assert yaml.safe_load(dump(client, name)) == yaml.safe_load(text)
    finally:
        assert second.stop() == 0, second.output()
    assert "Traceback" not in second.output()
