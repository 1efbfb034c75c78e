"""~/centroidal over real DDS (test/rosnode.py: node and client in separate processes): for a free-flyer
model (the biped, solo12) each answer equals rd.centroidal_state on the same joint_states, ~/base_pose and
~/base_twist, stamped with the joint_states message and framed in the base pose's frame; the base is
taken at rest until a twist comes (and the message says so); bad twists are refused by name and the
last good one serves on. A fixed-base model has no ~/centroidal (and gets one when floating_base is set
at run time). In-process: the part is in the joint_states steps only while someone subscribes."""
import math
import os

import numpy as np
import pytest
from rosnode import CACHE_LOG, HEAVY_READY, NodeProcess, after_ready, rclpy, stamp_ns

from geometry_msgs.msg import PoseStamped, TwistStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics.ros.node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.centroidal.part import CentroidalOutput  # noqa: E402
from robot_dynamics_interfaces.msg import CentroidalState  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

BIPED = bundled_urdf("floating_base_biped")
RELIABLE = rclpy.qos.QoSProfile(depth=1000, reliability=rclpy.qos.ReliabilityPolicy.RELIABLE)
SENSOR = rclpy.qos.qos_profile_sensor_data
COUNT = iter(range(10**6))


def urdf(robot):
    if robot == "biped":
        return BIPED
    oracle = pytest.importorskip("oracle")          # example-robot-data's solo12 (test dependency)
    path = oracle.URDFS[robot]
    if not os.path.exists(path):
        pytest.skip(f"{robot} URDF not installed")
    return path


def reliable_node(path, *params, env=None):
    """A node on `path` with a free flyer whose joint_states subscription is reliable and deep (the
    test sends in batches and compares every answer)."""
    name = f"cen{os.getpid()}_{next(COUNT)}"
    prefix = f"qos_overrides./{name}/joint_states_in.subscription"
    return NodeProcess(f"urdf_file:={path}", f"{prefix}.reliability:=reliable", f"{prefix}.depth:=1000", *params,
                       name=name, env=env)


def values(msg):
    return [msg.com.x, msg.com.y, msg.com.z, msg.com_velocity.x, msg.com_velocity.y, msg.com_velocity.z,
            msg.linear_momentum.x, msg.linear_momentum.y, msg.linear_momentum.z,
            msg.angular_momentum.x, msg.angular_momentum.y, msg.angular_momentum.z]


def expected(model, base, joints, twist, velocities):
    """rd.centroidal_state on what the messages carry: the pose as the node takes it (root_coordinates)."""
    q = np.concatenate((rd.root_coordinates(model, base[:3], base[3:]), joints))
    v = np.concatenate((twist, velocities))
    c, cdot, h = rd.centroidal_state(model, q, v)
    return np.concatenate((c, cdot, h))


def close(a, b, tol=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol * (1 + np.abs(b))))


def pose_msg(base, frame_id):
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = map(float, base)
    return msg


def twist_msg(twist, frame_id):
    msg = TwistStamped()
    msg.header.frame_id = frame_id
    t = msg.twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = map(float, twist)
    return msg


def joint_state(names, q, v, stamp):
    msg = JointState(name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in v])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 10**9)
    return msg


class Stream:
    """The test's side of one node: its ~/centroidal answers, and what it sends."""

    def __init__(self, client, node, model):
        self.client, self.node, self.model = client, node, model
        self.out = client.listen(CentroidalState, f"{node.ns}/centroidal", RELIABLE)

    def state(self, q, v, stamp):
        msg = joint_state(self.model.joint_names, q, v, stamp)
        self.client.publish(JointState, self.node.joint_states, msg, RELIABLE)

    def pose(self, base, frame_id="odom"):
        self.client.publish(PoseStamped, f"{self.node.ns}/base_pose", pose_msg(base, frame_id), SENSOR)

    def twist(self, twist, frame_id):
        self.client.publish(TwistStamped, f"{self.node.ns}/base_twist", twist_msg(twist, frame_id), SENSOR)

    def answer(self, stamp, match=None, action=None, what=None, timeout=30.0):
        """The answer stamped `stamp` (satisfying match, if given), re-sending with action meanwhile."""
        def found():
            return next((m for m in self.out if stamp_ns(m) == stamp and (match is None or match(m))), None)
        return self.client.wait_for(found, action=action, every=0.3, timeout=timeout,
                                    what=what or f"~/centroidal stamped {stamp}")


@pytest.mark.parametrize("robot", ["biped", "solo12"])
def test_centroidal_equals_the_library_on_the_same_messages(client, robot):
    path = urdf(robot)
    model = load_urdf(path, floating_base=True)
    node = reliable_node(path, "floating_base:=true")
    try:
        s, rng, n = Stream(client, node, model), np.random.default_rng(7), len(model.joint_names)
        quat = rng.normal(size=4)
        base = np.concatenate(([0.3, -0.2, 0.6], quat / np.linalg.norm(quat)))
        joints, velocities = rng.uniform(-0.5, 0.5, n), rng.normal(size=n)
        # before any ~/base_twist: the base at rest, and the message says so; framed in base_pose's frame
        at_rest = expected(model, base, joints, np.zeros(6), velocities)
        first = s.answer(1, lambda m: close(values(m), at_rest),
                         action=lambda: (s.pose(base), s.state(joints, velocities, 1)),
                         what="~/centroidal with the base where base_pose put it, at rest")
        assert not first.base_twist_measured and first.header.frame_id == "odom"
        # a twist in the base link's frame (an empty frame_id is the same)
        twist = rng.normal(size=6)
        moving = expected(model, base, joints, twist, velocities)
        s.answer(2, lambda m: close(values(m), moving) and m.base_twist_measured,
                 action=lambda: (s.twist(twist, model.body_links[0][0]), s.state(joints, velocities, 2)),
                 what="~/centroidal with the base twist")
        # every answer of a batch of states equals the library on the same messages
        states = [(100 + k, rng.uniform(-1, 1, n), rng.normal(size=n) * 2) for k in range(15)]
        for k in range(0, len(states), 5):
            for stamp, q, v in states[k:k + 5]:
                s.state(q, v, stamp)
            last = states[k + 4]
            s.answer(last[0], action=lambda last=last: s.state(last[1], last[2], last[0]))
        for stamp, q, v in states:
            got = [m for m in s.out if stamp_ns(m) == stamp]
            assert got, f"no answer stamped {stamp}"
            for m in got:
                assert close(values(m), expected(model, base, q, twist, v)), (stamp, values(m))
                assert m.base_twist_measured and m.header.frame_id == "odom"
                assert all(math.isfinite(x) for x in values(m))
        # linear momentum = m cdot
        m = got[-1]
        assert close(values(m)[6:9], model.total_mass * np.array(values(m)[3:6]), 1e-12)
        # bad twists are refused by name; the last good one serves on
        s.twist(twist * 2, "odom")
        s.twist([math.nan, 0, 0, 0, 0, 0], "")
        client.wait_for(lambda: node.output().count("base_twist rejected") >= 2, action=None,
                        what="the node's warnings about the bad twists")
        out = node.output()
        assert "header.frame_id 'odom'" in out and "finite" in out, out
        s.answer(200, lambda m: close(values(m), expected(model, base, joints, twist, velocities)),
                 action=lambda: s.state(joints, velocities, 200), what="the last good twist in use")
    finally:
        assert node.stop() == 0, node.output()


def test_a_planar_base_takes_its_in_plane_twist(client):
    """A URDF planar root (a mobile base): x, y and the turn from ~/base_pose, vx, vy and the turn rate from
    ~/base_twist; a twist leaving the plane is refused by name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "planar_base_arm.urdf")
    model = load_urdf(path)
    node = reliable_node(path)
    try:
        s, n = Stream(client, node, model), len(model.joint_names)
        yaw, joints, velocities = 0.4, np.linspace(-0.3, 0.3, n), np.linspace(0.5, -0.5, n)
        base = np.array([0.1, 0.4, 0.05, 0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)])   # its plane: z = 0.05
        twist = np.array([0.2, -0.1, 0.0, 0.0, 0.0, 0.7])
        q = np.concatenate((rd.root_coordinates(model, base[:3], base[3:]), joints))
        v = np.concatenate((rd.root_twist_coordinates(model, twist), velocities))
        want = np.concatenate(rd.centroidal_state(model, q, v))
        s.answer(4, lambda m: close(values(m), want),
                 action=lambda: (s.pose(base, "map"), s.twist(twist, ""), s.state(joints, velocities, 4)),
                 what="~/centroidal with the planar base's pose and twist")
        s.twist([0.0, 0.0, 0.3, 0.0, 0.0, 0.0], "")
        client.wait_for(lambda: "base_twist rejected" in node.output(), what="the warning about the twist")
        assert "planar root joint" in node.output()
    finally:
        assert node.stop() == 0, node.output()


def test_a_fixed_base_has_no_centroidal_topic_until_floating_base_is_set(client):
    """The biped without a free flyer: no ~/centroidal publisher (nor ~/base_twist); floating_base set at
    run time makes them, and the answers come; set back, they are gone again."""
    model = load_urdf(BIPED, floating_base=True)
    node = reliable_node(BIPED)
    graph = client.node
    topic, twist_topic = f"{node.ns}/centroidal", f"{node.ns}/base_twist"
    try:
        client.wait_for(lambda: graph.get_publishers_info_by_topic(f"{node.ns}/gravity_torques"),
                        what="the node's gravity_torques publisher in the graph")
        client.spin_for(1.0)
        assert not graph.get_publishers_info_by_topic(topic) and not graph.get_subscriptions_info_by_topic(twist_topic)
        assert client.set_parameters(node.name, floating_base=True).successful
        s = Stream(client, node, model)
        n = len(model.joint_names)
        joints, velocities = np.linspace(-0.4, 0.4, n), np.linspace(1.0, -1.0, n)
        base = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
        want = expected(model, base, joints, np.zeros(6), velocities)
        m = s.answer(5, lambda m: close(values(m), want), action=lambda: s.state(joints, velocities, 5))
        assert m.header.frame_id == "" and not m.base_twist_measured      # no base pose came: no frame named
        assert client.set_parameters(node.name, floating_base=False).successful
        client.wait_for(lambda: not graph.get_publishers_info_by_topic(topic), what="~/centroidal gone")
        assert not graph.get_subscriptions_info_by_topic(twist_topic)
    finally:
        assert node.stop() == 0, node.output()


def test_centroidal_runs_code_compiled_before_the_ready_line(client):
    model = load_urdf(BIPED, floating_base=True)
    node = reliable_node(BIPED, "floating_base:=true", env=CACHE_LOG)
    try:
        client.wait_for(lambda: HEAVY_READY in node.output(), timeout=120.0, what="the heavy requests' ready line")
        s = Stream(client, node, model)
        n = len(model.joint_names)
        s.answer(3, action=lambda: (s.twist(np.ones(6), ""), s.state(np.zeros(n), np.ones(n), 3)))
        after, loaded = after_ready(node)
        assert loaded > 5, "NUMBA_DEBUG_CACHE shows no cache lines: the check would prove nothing"
        assert "[cache]" not in after, after
    finally:
        assert node.stop() == 0, node.output()


def test_the_part_runs_on_joint_states_only_while_subscribed(client):
    """In-process: without a subscriber the joint_states steps are those of a node without the part;
    the publisher's matched event adds it when one comes and removes it when it goes."""
    node = DynamicsNode(parameter_overrides=[Parameter("urdf_file", value=BIPED),
                                             Parameter("floating_base", value=True)])
    other = rclpy.create_node(f"centroidal_listener_{os.getpid()}")
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    part = node.part(CentroidalOutput)

    def stepped():
        return any(getattr(step, "__self__", None) is part for step in node.steps)

    def spin_until(condition, what):
        for _ in range(200):
            executor.spin_once(timeout_sec=0.05)
            if condition():
                return
        pytest.fail(f"timed out waiting for {what}")
    try:
        assert part.pub is not None and not stepped()
        subscription = other.create_subscription(CentroidalState, node.resolve_topic_name("~/centroidal"),
                                                 lambda m: None, 10)
        spin_until(stepped, "the part in the steps once subscribed")
        other.destroy_subscription(subscription)
        spin_until(lambda: not stepped(), "the part out of the steps once the subscriber left")
    finally:
        executor.shutdown()
        other.destroy_node()
        node.destroy_node()
