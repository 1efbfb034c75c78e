"""The free-flyer quaternion has one rule, applied where it enters the node (~/base_pose and the
services' base_pose): model.unit_quaternion normalises a quaternion within tf2's tolerance and
refuses the rest with a message, so the kernels' own check never fails later."""
import os

import numpy as np
import pytest
from rosnode import NodeProcess, rclpy, stamp_ns

from geometry_msgs.msg import PoseStamped  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.srv import InverseDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

BIPED = bundled_urdf("floating_base_biped")


@pytest.fixture(scope="module")
def biped():
    node = NodeProcess(f"urdf_file:={BIPED}", "floating_base:=true")
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope="module")
def model():
    return load_urdf(BIPED, floating_base=True)


def pose(position, quaternion):
    msg = PoseStamped()
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = map(float, position)
    o.x, o.y, o.z, o.w = map(float, quaternion)
    return msg


def gravity_for(client, node, model, joints, stamp, publish_pose=None):
    torques = client.inbox.get(f"{node.ns}/gravity_torques") or client.listen(JointState, f"{node.ns}/gravity_torques")

    def send():
        if publish_pose is not None:
            client.publish(PoseStamped, f"{node.ns}/base_pose", publish_pose, rclpy.qos.qos_profile_sensor_data)
        client.joint_state(node.joint_states, model.joint_names, joints, (), stamp)
    return client.wait_for(lambda: next((m for m in torques if stamp_ns(m) == stamp), None), action=send,
                           what=f"gravity_torques stamped {stamp}")


def test_base_pose_slightly_off_unit_is_normalised_and_a_non_rotation_refused(client, biped, model):
    joints = np.linspace(-0.5, 0.5, len(model.joint_names))
    quat = np.array([0.1, -0.2, 0.3, 0.9])
    quat *= 1.004 / np.linalg.norm(quat)            # |q| = 1.004: within tf2's 0.01, over the kernels' 1e-6
    good = pose([0.1, 0.2, 0.9], quat)
    gravity_for(client, biped, model, joints, 1, good)
    q = np.concatenate(([0.1, 0.2, 0.9], quat / np.linalg.norm(quat), joints))
    expected = rd.gravity_torques(model, q)[6:]
    # the node takes the pose on another subscription, which may match later than joint_states'
    # (best effort: a pose sent before it matched is lost): send both until the answer reflects it
    client.wait_for(lambda: next((m for m in client.inbox[f"{biped.ns}/gravity_torques"][::-1]
                                  if np.allclose(m.effort, expected, rtol=1e-9, atol=1e-9)), None),
                    action=lambda: (client.publish(PoseStamped, f"{biped.ns}/base_pose", good,
                                                   rclpy.qos.qos_profile_sensor_data),
                                    client.joint_state(biped.joint_states, model.joint_names, joints, (), 2)),
                    what="gravity with the normalised base pose")
    for bad in ([0.0, 0.0, 0.0, 1.5], [0.0, 0.0, 0.0, 0.0], [float("nan"), 0.0, 0.0, 1.0]):
        client.publish(PoseStamped, f"{biped.ns}/base_pose", pose([0.0, 0.0, 0.0], bad), rclpy.qos.qos_profile_sensor_data)
    client.wait_for(lambda: "base_pose rejected" in biped.output(), what="the warning about the bad base pose")
    assert "base_pose.orientation" in biped.output()
    out = gravity_for(client, biped, model, joints, 3)       # still the last good pose, and the node runs
    assert np.allclose(out.effort, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("norm,ok", [(1.0, True), (1.003, True), (0.995, True), (1.5, False), (0.0, False)])
def test_service_base_pose_is_normalised_or_refused(client, biped, model, norm, ok):
    rng = np.random.default_rng(int(norm * 1000))
    n = len(model.joint_names)
    quat = np.array([0.3, 0.1, -0.4, 0.8])
    quat = quat / np.linalg.norm(quat) * norm
    joints, v, a = rng.uniform(-1, 1, n), rng.normal(size=model.nv), rng.normal(size=model.nv)
    request = InverseDynamics.Request(positions=list(joints), velocities=list(v[6:]), accelerations=list(a[6:]))
    p, o = request.base_pose.position, request.base_pose.orientation
    p.z, (o.x, o.y, o.z, o.w) = 0.8, map(float, quat)
    for msg, x in ((request.base_twist, v), (request.base_acceleration, a)):
        msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z = map(float, x[:6])
    r = client.call(InverseDynamics, f"{biped.ns}/inverse_dynamics", request)
    if not ok:
        assert not r.success and "base_pose.orientation" in r.message, r.message
        return
    assert r.success, r.message
    q = np.concatenate(([0.0, 0.0, 0.8], quat / np.linalg.norm(quat), joints))
    assert np.allclose(r.efforts, rd.inverse_dynamics(model, q, v, a)[6:], rtol=1e-9, atol=1e-9)


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def test_a_planar_base_takes_its_pose_from_base_pose(client):
    """A URDF planar root joint (a mobile base) takes x, y and its turn from ~/base_pose."""
    path = f"{DATA}/planar_base_arm.urdf"
    node, model = NodeProcess(f"urdf_file:={path}"), load_urdf(path)
    try:
        q = np.array([0.3, -0.2, 0.7, 0.1, -0.4, 0.05])
        H = rd.frame_placement(model, q, "base")
        yaw = np.arctan2(H[1, 0], H[0, 0])
        expected = rd.gravity_torques(model, q)[3:]
        torques = client.listen(JointState, f"{node.ns}/gravity_torques")
        client.wait_for(lambda: any(np.allclose(m.effort, expected, rtol=1e-9, atol=1e-9) for m in torques),
                        action=lambda: (client.publish(PoseStamped, f"{node.ns}/base_pose",
                                                       pose(H[:3, 3], [0, 0, np.sin(yaw / 2), np.cos(yaw / 2)]),
                                                       rclpy.qos.qos_profile_sensor_data),
                                        client.joint_state(node.joint_states, model.joint_names, q[3:], (), 7)),
                        what="gravity with the planar base where base_pose put it")
    finally:
        assert node.stop() == 0, node.output()


def test_multi_coordinate_joints_below_the_root_are_announced_once(client):
    path = f"{DATA}/floating_object_arm.urdf"
    node, model = NodeProcess(f"urdf_file:={path}"), load_urdf(path)
    try:
        joints = np.array([0.2, -0.1, 0.4])
        expected = rd.gravity_torques(model, np.concatenate((rd.neutral(model)[:17], joints)))[15:]
        torques = client.listen(JointState, f"{node.ns}/gravity_torques")
        client.wait_for(lambda: any(np.allclose(m.effort, expected, rtol=1e-9, atol=1e-9) for m in torques),
                        action=lambda: client.joint_state(node.joint_states, model.joint_names, joints, (), 8),
                        what="gravity with the unmeasured joints at their neutral configuration")
        assert client.set_parameters(node.name, gravity=[0.0, 0.0, -9.8]).successful      # a rebuild
        client.wait_for(lambda: node.output().count("model 'floating_object_arm'") >= 2, what="the rebuilt model")
        assert node.output().count("these multi-coordinate joints below the root are not measured") == 1
        assert "table_planar (planar: q[7:10], v[6:9]) at its origin, at rest" in node.output()
    finally:
        assert node.stop() == 0, node.output()
