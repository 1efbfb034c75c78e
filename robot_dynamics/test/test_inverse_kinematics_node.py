"""~/inverse_kinematics over real DDS (test/rosnode.py: node and client in separate processes), against
rd.inverse_kinematics on the same seed and target: panda, ur5 and the PUMA reach random reachable
targets (pose, position only, weighted, given in a world-fixed frame of the model, from the measured
state), the answer by joint name in the request's order then the model's; an unreachable target is
success=false with the best configuration and why; bad requests are refused naming the field, with
nothing else in the answer; every answer runs code compiled before the ready line."""
import math
import os

import numpy as np
import pytest
from rosnode import CACHE_LOG, HEAVY_READY, NodeProcess, after_ready, stamp_ns

from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import lie, load_urdf  # noqa: E402
from robot_dynamics.model import unit_quaternion  # noqa: E402
from robot_dynamics_interfaces.srv import InverseKinematics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

oracle = pytest.importorskip("oracle")      # the test robots' URDFs (example-robot-data for panda and ur5)
FRAMES = {"panda": "panda_hand_tcp", "ur5": "tool0", "puma560": "tool0"}


@pytest.fixture(scope="module")
def robots():
    """One node per robot, started on first use: {name: (node, model)}."""
    started = {}

    def get(name):
        if name not in started:
            path = oracle.URDFS[name]
            if not os.path.exists(path):
                pytest.skip(f"{name} URDF not installed")
            started[name] = (NodeProcess(f"urdf_file:={path}"), load_urdf(path))
            started[name][0].wait_for_output(HEAVY_READY)   # else the first request waits for the warm-up
        return started[name]
    yield get
    for node, _ in started.values():
        assert node.stop() == 0, node.output()


def set_pose(msg, T):
    position, quaternion = lie.pose(T)
    p, o = msg.position, msg.orientation
    p.x, p.y, p.z = position.tolist()
    o.x, o.y, o.z, o.w = quaternion.tolist()


def sent(T):
    """The target as the node takes it from the message: position and quaternion, normalised."""
    position, quaternion = lie.pose(T)
    return lie.pose_matrix(position, unit_quaternion(quaternion))


def request(frame, T=None, position=None, names=(), seed=(), frame_id="", **fields):
    r = InverseKinematics.Request(frame=frame, joint_names=list(names), seed_positions=[float(x) for x in seed],
                                  **fields)
    r.target.header.frame_id = frame_id
    if T is not None:
        set_pose(r.target.pose, T)
    if position is not None:
        p = r.target.pose.position
        p.x, p.y, p.z = map(float, position)
        r.position_only = True
    return r


def ik(client, node, req):
    return client.call(InverseKinematics, f"{node.ns}/inverse_kinematics", req)


def in_model_order(model, names, positions):
    q = rd.neutral(model)
    q[[model.joint_index[n] for n in names]] = positions       # fixed-base models: q = joint positions
    return q


def assert_same_as_library(model, answer, result, names):
    """The answer is the library's result, named in `names`' order then the model's other joints."""
    order = list(names) + [n for n in model.joint_names if n not in names]
    assert list(answer.joint_names) == order
    assert np.array_equal(answer.positions, result.q[[model.joint_index[n] for n in order]])
    assert answer.converged == result.converged and answer.success == result.converged
    assert answer.error == result.error and answer.iterations == result.iterations
    assert all(math.isfinite(x) for x in answer.positions) and math.isfinite(answer.error)


@pytest.mark.parametrize("robot", ["panda", "ur5", "puma560"])
def test_random_reachable_targets_equal_the_library_by_joint_name(client, robots, robot):
    node, model = robots(robot)
    frame, rng = FRAMES[robot], np.random.default_rng(len(robot))
    for k in range(6):
        goal = rd.random_configuration(model, rng)
        T = rd.frame_placement(model, goal, frame)
        seed = rd.random_configuration(model, rng)
        names = list(rng.permutation(model.joint_names)) if k % 2 else list(model.joint_names[:3])[::-1]
        given = seed[[model.joint_index[n] for n in names]]
        q0 = in_model_order(model, names, given) if len(names) == len(model.joint_names) else None
        if q0 is None:      # a subset: the other joints start from the measured state (neutral: nothing was sent)
            q0 = rd.neutral(model)
            q0[[model.joint_index[n] for n in names]] = given
        answer = ik(client, node, request(frame, T, names=names, seed=given))
        result = rd.inverse_kinematics(model, frame, sent(T), q0)
        assert answer.success and answer.converged, answer.message
        assert_same_as_library(model, answer, result, names)
        assert "converged" in answer.message
        q = in_model_order(model, answer.joint_names, answer.positions)
        assert np.abs(rd.frame_placement(model, q, frame) - T).max() < 1e-9
        assert np.all(q >= model.lower_limits - 1e-12) and np.all(q <= model.upper_limits + 1e-12)


def test_position_only_weights_and_a_target_in_a_world_fixed_frame(client, robots):
    node, model = robots("ur5")
    rng = np.random.default_rng(3)
    goal, seed = rd.random_configuration(model, rng), rd.random_configuration(model, rng)
    T = rd.frame_placement(model, goal, "tool0")
    names = model.joint_names
    # position only: the frame's origin at the point, any orientation
    answer = ik(client, node, request("tool0", position=T[:3, 3], names=names, seed=seed))
    assert answer.success, answer.message
    assert_same_as_library(model, answer, rd.inverse_kinematics(model, "tool0", T[:3, 3], seed), names)
    q = in_model_order(model, answer.joint_names, answer.positions)
    assert np.abs(rd.frame_placement(model, q, "tool0")[:3, 3] - T[:3, 3]).max() < 1e-9
    # a tool free to turn about its z
    weights = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    answer = ik(client, node, request("tool0", T, names=names, seed=seed, weights=weights))
    assert answer.success, answer.message
    assert_same_as_library(model, answer, rd.inverse_kinematics(model, "tool0", sent(T), seed, weights=weights), names)
    # the target in ur5's frame "base" (turned half a turn about z from the world), which no joint moves
    B = rd.frame_placement(model, seed, "base")
    assert np.abs(B[:3, :3] - np.eye(3)).max() > 1.0
    answer = ik(client, node, request("tool0", np.linalg.solve(B, T), names=names, seed=seed, frame_id="base"))
    assert answer.success, answer.message
    result = rd.inverse_kinematics(model, "tool0", sent(T), seed)
    assert np.allclose(answer.positions, result.q, rtol=0, atol=1e-9) and answer.converged
    q = in_model_order(model, answer.joint_names, answer.positions)
    assert np.abs(rd.frame_placement(model, q, "tool0") - T).max() < 1e-9


def test_the_seed_defaults_to_the_measured_state(client):
    """A node of its own (the other tests' nodes hear no joint_states: their seeds start from neutral)."""
    model = load_urdf(oracle.URDFS["puma560"])
    node = NodeProcess(f"urdf_file:={oracle.URDFS['puma560']}")
    try:
        measured = np.array([0.3, -0.6, 0.4, 0.2, 0.7, -0.3])
        torques = client.listen(JointState, f"{node.ns}/gravity_torques")
        client.wait_for(lambda: any(stamp_ns(m) == 77 for m in torques),
                        action=lambda: client.joint_state(node.joint_states, model.joint_names, measured, (), 77),
                        what="the node's answer to the measured state")
        T = rd.frame_placement(model, measured + 0.05, "tool0")
        answer = ik(client, node, request("tool0", T))
        assert answer.success, answer.message
        assert_same_as_library(model, answer, rd.inverse_kinematics(model, "tool0", sent(T), measured),
                               model.joint_names)
        assert answer.iterations < 20      # from the nearby measured state, not a restart
        # a subset of the joints seeded: the others from the measured state
        seed = measured.copy()
        seed[[4, 1]] = [0.5, -0.4]
        answer = ik(client, node, request("tool0", T, names=["joint5", "joint2"], seed=[0.5, -0.4]))
        assert answer.success, answer.message
        names = ["joint5", "joint2"]
        assert_same_as_library(model, answer, rd.inverse_kinematics(model, "tool0", sent(T), seed), names)
    finally:
        assert node.stop() == 0, node.output()


def test_an_unreachable_target_is_success_false_with_the_best_configuration_and_why(client, robots):
    node, model = robots("puma560")
    T = rd.frame_placement(model, rd.neutral(model), "tool0")
    T[:3, 3] += [3.0, 0.0, 0.0]
    seed = np.zeros(6)
    answer = ik(client, node, request("tool0", T, names=model.joint_names, seed=seed, restarts=2))
    result = rd.inverse_kinematics(model, "tool0", sent(T), seed, restarts=2)
    assert not answer.success and not answer.converged
    assert_same_as_library(model, answer, result, model.joint_names)
    assert "not converged" in answer.message and answer.error > 1.0, answer.message
    q = np.array(answer.positions)
    assert np.all(q >= model.lower_limits) and np.all(q <= model.upper_limits)


REFUSED = [
    (dict(frame="nowhere"), "unknown frame 'nowhere'"),
    (dict(frame="base_link"), "fixed to the world"),
    (dict(orientation=(0.0, 0.0, 0.0, 1.5)), "target.pose.orientation"),
    (dict(orientation=(0.0, 0.0, 0.0, 0.0)), "target.pose.orientation"),
    (dict(position=(math.nan, 0.0, 0.0)), "target.pose.position"),
    (dict(orientation=(math.inf, 0.0, 0.0, 1.0)), "target.pose.orientation"),
    (dict(seed=[0.0, math.nan, 0.0, 0.0, 0.0, 0.0]), "seed_positions contains NaN or inf (joint 'joint2')"),
    (dict(seed=[0.0] * 5), "seed_positions has 5 values for 6 joints"),
    (dict(names=["joint1", "elbow"], seed=[0.0, 0.0]), "unknown joints ['elbow']"),
    (dict(names=["joint1", "joint1"], seed=[0.0, 0.0]), "duplicate joint names"),
    (dict(frame_id="map"), "target.header.frame_id 'map' is not accepted"),
    (dict(frame_id="link3"), "target.header.frame_id 'link3' is not accepted"),
    (dict(fields=dict(max_iterations=0)), "max_iterations must be 1 to 10000"),
    (dict(fields=dict(max_iterations=20000)), "max_iterations must be 1 to 10000"),
    (dict(fields=dict(restarts=5000)), "restarts must be 0 to 1000"),
    (dict(fields=dict(tolerance=-1.0)), "tolerance must be a finite number >= 0"),
    (dict(fields=dict(tolerance=math.nan)), "tolerance must be a finite number >= 0"),
    (dict(fields=dict(weights=[1.0] * 5)), "weights must be 6 finite non-negative numbers"),
    (dict(fields=dict(weights=[1.0, 1.0, 1.0, -1.0, 1.0, 1.0])), "weights must be 6"),
    (dict(fields=dict(weights=[1.0, math.nan, 1.0, 1.0, 1.0, 1.0])), "weights contains NaN or inf"),
    (dict(fields=dict(weights=[1.0] * 6, position_only=True)), "weights must be 3"),
]


@pytest.mark.parametrize("bad,words", REFUSED, ids=[w for _, w in REFUSED])
def test_bad_requests_are_refused_naming_the_field_with_nothing_else(client, robots, bad, words):
    node, model = robots("puma560")
    T = rd.frame_placement(model, np.full(6, 0.2), "tool0")
    position, quaternion = lie.pose(T)
    req = request(bad.get("frame", "tool0"), names=bad.get("names", ()), seed=bad.get("seed", ()),
                  frame_id=bad.get("frame_id", ""), **bad.get("fields", {}))
    p, o = req.target.pose.position, req.target.pose.orientation
    p.x, p.y, p.z = bad.get("position", position.tolist())
    o.x, o.y, o.z, o.w = bad.get("orientation", quaternion.tolist())
    answer = ik(client, node, req)
    assert not answer.success and words in answer.message, answer.message
    assert not answer.converged and not answer.joint_names and not answer.positions and answer.iterations == 0
    assert ik(client, node, request("tool0", T)).success        # and the node serves on


def test_every_answer_runs_code_compiled_before_the_ready_line(client):
    model = load_urdf(oracle.URDFS["puma560"])
    node = NodeProcess(f"urdf_file:={oracle.URDFS['puma560']}", env=CACHE_LOG)
    try:
        client.wait_for(lambda: HEAVY_READY in node.output(), timeout=120.0, what="the heavy requests' ready line")
        q = np.array([0.1, -0.4, 0.7, 0.2, 0.3, -0.5])
        T = rd.frame_placement(model, q, "tool0")
        far = T.copy()
        far[:3, 3] += 5.0
        for req in (request("tool0", T), request("tool0", position=T[:3, 3]), request("tool0", far, restarts=3),
                    request("tool0", T, frame_id="base_link", weights=[1.0, 1.0, 1.0, 1.0, 1.0, 0.0])):
            answer = ik(client, node, req)
            assert answer.joint_names, answer.message
        after, loaded = after_ready(node)
        assert loaded > 5, "NUMBA_DEBUG_CACHE shows no cache lines: the check would prove nothing"
        assert "[cache]" not in after, after
    finally:
        assert node.stop() == 0, node.output()
