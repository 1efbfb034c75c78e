"""Property-based (hypothesis): random service requests and random JointState (and base pose)
messages thrown at a running node, a floating-base biped, over DDS. Whatever comes, the node stays
up and keeps answering; a success never carries a NaN or inf, a refusal always says why, and
nothing it publishes is non-finite. Values include NaN, inf, huge, wrong lengths, unknown and
duplicate names, non-unit quaternions. Examples are derandomised (the same every run, so CI is
repeatable); HYPOTHESIS_SEED=random explores new ones."""
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rosnode import NodeProcess, rclpy, stamp_ns

from geometry_msgs.msg import PoseStamped  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.msg import LinkWrench  # noqa: E402
from robot_dynamics_interfaces.srv import (ForwardDynamics, HybridDynamics,  # noqa: E402
                                           InverseDynamics, WrenchToJointTorques)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

BIPED = bundled_urdf("floating_base_biped")
MODEL = load_urdf(BIPED, floating_base=True)
NAMES = MODEL.joint_names
N = len(NAMES)
SETTINGS = settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 60)), deadline=None,
                    derandomize=os.environ.get("HYPOTHESIS_SEED") != "random", database=None,
                    suppress_health_check=list(HealthCheck))

floats = st.one_of(st.floats(-3.0, 3.0), st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, 1e300, -1e300, 1e154, float("nan"), float("inf"), -float("inf")]))
names = st.one_of(st.just([]), st.permutations(NAMES),
                  st.lists(st.sampled_from(NAMES + ["elbow", "", "left_knee"]), max_size=N + 2))


def joint_values(min_size=0):
    return st.one_of(st.lists(st.floats(-3.0, 3.0), min_size=N, max_size=N), st.lists(floats, min_size=min_size, max_size=N + 2))


quaternions = st.one_of(st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4), st.lists(floats, min_size=4, max_size=4),
                        st.just([0.0, 0.0, 0.0, 1.0]))
six = st.lists(floats, min_size=6, max_size=6)
frames = st.sampled_from(MODEL.frame_names + ["camera", ""])
references = st.sampled_from(["", "world", "local", "local_world_aligned", "base"])


def set_pose(msg, position, quaternion):
    msg.position.x, msg.position.y, msg.position.z = position
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = quaternion


def set_six(msg, x):
    a, b = (msg.linear, msg.angular) if hasattr(msg, "linear") else (msg.force, msg.torque)
    a.x, a.y, a.z, b.x, b.y, b.z = x


@st.composite
def requests(draw):
    kind = draw(st.sampled_from([InverseDynamics, ForwardDynamics, HybridDynamics, WrenchToJointTorques]))
    req = kind.Request(joint_names=draw(names), positions=draw(joint_values()))
    set_pose(req.base_pose, draw(st.lists(floats, min_size=3, max_size=3)), draw(quaternions))
    if kind is WrenchToJointTorques:
        req.frame, req.reference = draw(frames), draw(references)
        set_six(req.wrench, draw(six))
        return kind, req
    req.velocities = draw(joint_values())
    set_six(req.base_twist, draw(six))
    if kind is HybridDynamics:
        req.acceleration_known = draw(st.lists(st.booleans(), max_size=N + 1))
        req.accelerations, req.efforts = draw(joint_values()), draw(joint_values())
        return kind, req
    if kind is InverseDynamics:
        req.accelerations = draw(joint_values())
        set_six(req.base_acceleration, draw(six))
    else:
        req.efforts = draw(joint_values())
        set_six(req.base_wrench, draw(six))
    req.external_wrenches = [LinkWrench(link=draw(frames), reference=draw(references)) for _ in range(draw(st.integers(0, 2)))]
    for lw in req.external_wrenches:
        set_six(lw.wrench, draw(six))
    return kind, req


SERVICE = {InverseDynamics: "inverse_dynamics", ForwardDynamics: "forward_dynamics",
           HybridDynamics: "hybrid_dynamics", WrenchToJointTorques: "wrench_to_joint_torques"}
NUMBERS = ("efforts", "accelerations", "jacobian")
SIX = ("base_wrench", "base_acceleration")


def numbers(response):
    out = [x for field in NUMBERS if hasattr(response, field) for x in getattr(response, field)]
    for field in SIX:
        if hasattr(response, field):
            m = getattr(response, field)
            a, b = (m.linear, m.angular) if hasattr(m, "linear") else (m.force, m.torque)
            out += [a.x, a.y, a.z, b.x, b.y, b.z]
    return out


@pytest.fixture(scope="module")
def biped(client):
    node = NodeProcess(f"urdf_file:={BIPED}", "floating_base:=true")
    client.listen(JointState, f"{node.ns}/gravity_torques")
    client.listen(Float64MultiArray, f"{node.ns}/gravity_commands")
    yield node
    assert node.proc.poll() is None, node.output()      # it never died
    assert node.stop() == 0, node.output()


def flush(client, node, stamp=987654321):
    """A valid joint state, published until its gravity torques come back."""
    torques = client.inbox.get(f"{node.ns}/gravity_torques") or client.listen(JointState, f"{node.ns}/gravity_torques")
    pose = PoseStamped()
    set_pose(pose.pose, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0])

    def send():
        client.publish(PoseStamped, f"{node.ns}/base_pose", pose, rclpy.qos.qos_profile_sensor_data)
        client.joint_state(node.joint_states, NAMES, np.full(N, 0.1), (), stamp)
    client.wait_for(lambda: any(stamp_ns(m) == stamp for m in torques), action=send, what=f"gravity_torques stamped {stamp}")


def still_serving(client, node):
    q = np.concatenate(([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], np.full(N, 0.2)))
    r = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", InverseDynamics.Request(positions=list(q[7:])))
    assert r.success and np.allclose(r.efforts, rd.inverse_dynamics(MODEL, q, np.zeros(MODEL.nv), np.zeros(MODEL.nv))[6:],
                                     rtol=1e-9, atol=1e-9), r.message


def test_random_requests_never_crash_the_node_nor_succeed_with_a_non_finite_number(client, biped):
    @SETTINGS
    @given(requests())
    def check(request):
        kind, req = request
        r = client.call(kind, f"{biped.ns}/{SERVICE[kind]}", req)
        if r.success:
            assert all(math.isfinite(x) for x in numbers(r)), (req, r)
        else:
            assert r.message and r.message != "ok"
        assert biped.proc.poll() is None, biped.output()

    check()
    still_serving(client, biped)


@st.composite
def joint_states(draw):
    msg = JointState(name=draw(names))
    msg.position = draw(joint_values())
    msg.velocity = draw(st.one_of(st.just([]), joint_values()))
    return msg


def test_random_joint_states_and_base_poses_never_crash_the_node_nor_publish_a_non_finite_number(client, biped):
    @SETTINGS
    @given(st.lists(joint_states(), min_size=1, max_size=5), quaternions, st.lists(floats, min_size=3, max_size=3))
    def check(messages, quaternion, position):
        pose = PoseStamped()
        set_pose(pose.pose, position, quaternion)
        client.publish(PoseStamped, f"{biped.ns}/base_pose", pose, rclpy.qos.qos_profile_sensor_data)
        for msg in messages:
            client.publish(JointState, biped.joint_states, msg, rclpy.qos.qos_profile_sensor_data)
        client.spin_for(0.01)
        assert biped.proc.poll() is None, biped.output()

    check()
    flush(client, biped)     # every earlier message is answered (in order) before this one
    for m in client.inbox[f"{biped.ns}/gravity_torques"]:
        assert all(math.isfinite(x) for x in m.effort)
    for m in client.inbox[f"{biped.ns}/gravity_commands"]:
        assert all(math.isfinite(x) for x in m.data)
    assert client.inbox[f"{biped.ns}/gravity_torques"], "no valid joint state among the examples: nothing checked"
    still_serving(client, biped)
