"""The dynamics node over real DDS: node and test client in separate processes, outputs
compared with the library (robot_dynamics.dynamics) called in the test process."""
import os
import signal

import numpy as np
import pytest
from rosnode import NodeProcess, rclpy, reference, stamp_ns

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.msg import LinkWrench  # noqa: E402
from robot_dynamics_interfaces.srv import (ForwardDynamics, HybridDynamics,  # noqa: E402
                                           InverseDynamics, WrenchToJointTorques)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA = bundled_urdf("puma560")
CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "dynamics.yaml")
TOL = 1e-9


@pytest.fixture(scope="module")
def puma():
    node = NodeProcess(f"urdf_file:={PUMA}")
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope="module")
def model():
    return load_urdf(PUMA)


def close(a, b, tol=TOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


def gravity_round_trip(client, node, names, positions, stamp, velocities=()):
    """Publish one joint state (again and again until it arrives) and return the node's
    gravity_torques and gravity_commands for that stamp."""
    states = client.inbox.get(f"{node.ns}/gravity_torques") or client.listen(JointState, f"{node.ns}/gravity_torques")
    commands = client.inbox.get(f"{node.ns}/gravity_commands") or client.listen(Float64MultiArray, f"{node.ns}/gravity_commands")
    send = lambda: client.joint_state(node.joint_states, names, positions, velocities, stamp)  # noqa: E731
    out = client.wait_for(lambda: next((m for m in states if stamp_ns(m) == stamp), None), action=send,
                          what=f"gravity_torques stamped {stamp}")
    return out, command_for(client, commands, out, send, states)


def command_for(client, commands, state, send, states):
    """The gravity_commands message published with the JointState `state` (commands carry no stamp:
    the one with the same efforts as an answer of its stamp in `states`, waited for while `send`
    sends the state again: the commands' subscription may match after the answers')."""
    stamp = stamp_ns(state)
    return client.wait_for(lambda: next((c for c in reversed(commands) for m in states
                                         if stamp_ns(m) == stamp and np.array_equal(c.data, m.effort)), None),
                           action=send, every=1.0, what="the gravity_commands published with it")


# --- joint_states -> gravity ---------------------------------------------------------------------
def test_gravity_torques_equal_the_library(client, puma, model):
    rng = np.random.default_rng(1)
    for k in range(3):
        q = rng.uniform(-2, 2, 6)
        out, command = gravity_round_trip(client, puma, model.joint_names, q, 1000 + k)
        expected = rd.gravity_torques(model, q)
        assert list(out.name) == model.joint_names
        assert close(out.effort, expected) and close(command.data, expected)


def test_reordered_partial_two_publishers_and_unknown_joints(client, model):
    order = list(reversed(model.joint_names))
    node = NodeProcess(f"urdf_file:={PUMA}", f"joints:={order}".replace("'", '"'))
    try:
        out_topic = client.listen(JointState, f"{node.ns}/gravity_torques")
        q = np.array([0.3, -0.7, 1.1, 0.4, -0.2, 0.9])
        arm = ["joint5", "joint2", "joint3"]        # first driver, shuffled
        wrist = ["joint6", "gripper", "joint4", "joint1"]   # second driver with a joint the model lacks
        idx = {n: i for i, n in enumerate(model.joint_names)}
        send_arm = lambda stamp: client.joint_state(node.joint_states, arm, [q[idx[n]] for n in arm], (), stamp)  # noqa: E731
        client.wait_for(lambda: "joint_states of" in node.output(), action=lambda: send_arm(1),
                        what="the node's warning about missing joints")
        assert "joint1" in node.output() and "joint6" in node.output()   # the warning names them
        wrist_q = [q[idx[n]] if n in idx else 99.0 for n in wrist]
        out = client.wait_for(lambda: next((m for m in out_topic if stamp_ns(m) == 2), None),
                              action=lambda: client.joint_state(node.joint_states, wrist, wrist_q, (), 2),
                              what="gravity after the second publisher")
        # messages are taken and answered in order: anything for stamp 1 would have come before
        assert not [m for m in out_topic if stamp_ns(m) == 1], "published although joints were missing"
        assert list(out.name) == order
        assert close(out.effort, rd.gravity_torques(model, q)[::-1])
        q[idx["joint2"]] = -1.2                     # the first driver moves: merged with the second's last values
        out = client.wait_for(lambda: next((m for m in out_topic if stamp_ns(m) == 3), None),
                              action=lambda: send_arm(3), what="gravity after an update of one publisher")
        assert close(out.effort, rd.gravity_torques(model, q)[::-1])
    finally:
        assert node.stop() == 0


def test_bad_joint_states_are_rejected_and_the_node_goes_on(client, puma, model):
    q = np.full(6, 0.25)
    gravity_round_trip(client, puma, model.joint_names, q, 5000)
    outputs = client.inbox[f"{puma.ns}/gravity_torques"]
    bad = {
        5001: (model.joint_names, [0.1, 0.2, np.nan, 0.1, 0.1, 0.1], ()),       # NaN
        5002: (model.joint_names, [0.1] * 5, ()),                               # wrong length
        5003: (model.joint_names, [0.1] * 6, [0.0] * 3),                        # velocities of the wrong length
        5004: (["joint1", "joint1", "joint2", "joint3", "joint4", "joint5"], [0.1] * 6, ()),  # duplicate names
        5005: (model.joint_names, [np.inf] + [0.1] * 5, ()),
    }
    problems = ("NaN or inf", "5 positions for 6 names", "3 velocities for 6 names", "duplicate joint names")
    client.wait_for(lambda: all(problem in puma.output() for problem in problems),       # each one was taken
                    action=lambda: [client.joint_state(puma.joint_states, names, pos, vel, stamp)
                                    for stamp, (names, pos, vel) in bad.items()],
                    what=f"the node's warnings {problems}")
    out, _ = gravity_round_trip(client, puma, model.joint_names, q, 5006)
    assert close(out.effort, rd.gravity_torques(model, q))        # the rejected values were not kept
    assert not [m for m in outputs if 5001 <= stamp_ns(m) <= 5005]   # answered in order: none came before 5006


def test_diagnostics_report_the_node(client, puma, model):
    diagnostics = client.listen(DiagnosticArray, "/diagnostics")
    client.joint_state(puma.joint_states, model.joint_names, [0.0] * 6, (), 6000)
    mine = lambda: [s for m in diagnostics for s in m.status if s.name == f"{puma.name}: dynamics"]  # noqa: E731
    status = client.wait_for(mine, timeout=5.0, what="a /diagnostics status of the node")[-1]
    values = {kv.key: kv.value for kv in status.values}
    assert values["model"] == "puma560"
    for key in ("joint_states rate [Hz]", "compute latency mean [us]", "compute latency max [us]",
                "rejected inputs", "missing joints"):
        assert key in values


# --- parameters ----------------------------------------------------------------------------------
def test_gravity_and_payload_parameters_take_effect_and_bad_values_are_refused(client, puma, model):
    q = np.array([0.2, -0.5, 0.8, 0.1, 0.6, -0.3])
    result = client.set_parameters(puma.name, gravity=[0.0, 0.0, -1.62])
    assert result.successful, result.reason
    out, _ = gravity_round_trip(client, puma, model.joint_names, q, 7001)
    assert close(out.effort, rd.gravity_torques(model, q) * 1.62 / 9.81)

    for bad, words in (({"gravity": [0.0, -9.81]}, "gravity"), ({"joints": ["joint1", "elbow"]}, "elbow"),
                       ({"feedforward__evaluate_at": "later"}, "evaluate_at"),
                       ({"armature": [0.1, 0.2]}, "armature"), ({"payload__mass": 2.0, "payload__link": "hand"}, "hand")):
        result = client.set_parameters(puma.name, **bad)
        assert not result.successful and words in result.reason, (bad, result.reason)

    # a 2 kg payload 5 cm beyond tool0, checked against the same payload written into the URDF
    com, inertia = [0.0, 0.0, 0.05], [0.01, 0.02, 0.03, 0.0, 0.0, 0.0]
    result = client.set_parameters(puma.name, gravity=[0.0, 0.0, -9.81], payload__mass=2.0,
                                   payload__com=com, payload__inertia=inertia, payload__link="tool0")
    assert result.successful, result.reason
    with open(PUMA) as f:
        urdf = f.read().replace("</robot>", """
  <link name="payload"><inertial><origin xyz="0 0 0.05"/><mass value="2.0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="payload_mount" type="fixed"><parent link="tool0"/><child link="payload"/></joint>
</robot>""")
    out, _ = gravity_round_trip(client, puma, model.joint_names, q, 7002)
    assert close(out.effort, rd.gravity_torques(load_urdf(urdf), q))
    result = client.set_parameters(puma.name, payload__mass=0.0)
    assert result.successful
    out, _ = gravity_round_trip(client, puma, model.joint_names, q, 7003)
    assert close(out.effort, rd.gravity_torques(model, q))


def test_joint_states_qos_overrides_are_parameters_of_the_node(client, puma, model):
    """joint_states is taken by a second node, <name>_joint_states; its QoS still comes from the
    node's read-only qos_overrides.<resolved topic>.subscription.* parameters."""
    def subscription(node):
        def named():    # an endpoint can be discovered before its node, named _NODE_NAME_UNKNOWN_ until then
            info = client.node.get_subscriptions_info_by_topic(node.joint_states)
            return info if info and all(i.node_name != "_NODE_NAME_UNKNOWN_" for i in info) else None
        info = client.wait_for(named, what=f"the subscription of {node.joint_states} and its node")
        assert [(i.node_namespace, i.node_name) for i in info] == [("/", f"{node.name}_joint_states")]
        return info[0].qos_profile

    def overrides(joint_states):
        return [f"qos_overrides.{joint_states}.subscription.{policy}" for policy in ("reliability", "depth")]

    assert client.get_parameters(puma.name, *overrides(puma.joint_states)) == ["best_effort", 5]
    assert subscription(puma).reliability == rclpy.qos.ReliabilityPolicy.BEST_EFFORT
    name = f"dyn{os.getpid()}_qos"
    reliability, depth = overrides(f"/{name}/joint_states_in")      # NodeProcess's remap
    node = NodeProcess(f"urdf_file:={PUMA}", f"{reliability}:=reliable", f"{depth}:=20", name=name)
    try:
        assert node.joint_states == f"/{name}/joint_states_in"
        assert client.get_parameters(node.name, reliability, depth) == ["reliable", 20]
        assert subscription(node).reliability == rclpy.qos.ReliabilityPolicy.RELIABLE
        gravity_round_trip(client, node, model.joint_names, np.zeros(6), 8000)
        assert not client.set_parameters(node.name, **{reliability: "best_effort"}).successful   # read only
    finally:
        assert node.stop() == 0


# --- robot_description topic -----------------------------------------------------------------------
def test_description_from_topic_late_rebuild_and_bad_text(client):
    node = NodeProcess()
    try:
        request = InverseDynamics.Request(positions=[0.0] * 6)
        response = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", request)
        assert not response.success and "no robot model" in response.message

        latched = rclpy.qos.QoSProfile(depth=1, durability=rclpy.qos.DurabilityPolicy.TRANSIENT_LOCAL)
        for path in (bundled_urdf("puma560"), bundled_urdf("planar_2link")):
            with open(path) as f:
                client.publish(String, node.description, String(data=f.read()), latched)
            model = load_urdf(path)
            client.wait_for(lambda: f"model {model.name!r}" in node.output(), what=f"the node to build {model.name}")
            q = np.linspace(0.2, 0.7, model.nv)
            out, _ = gravity_round_trip(client, node, model.joint_names, q, stamp=hash(path) % 10**6)
            assert list(out.name) == model.joint_names
            assert close(out.effort, rd.gravity_torques(model, q))

        client.publish(String, node.description, String(data="<robot name='broken'><link name='a'/>"), latched)
        client.wait_for(lambda: "model not (re)built" in node.output(), what="the error about the bad URDF")
        request = InverseDynamics.Request(positions=list(q), velocities=[0.3, -0.4], accelerations=[1.0, 2.0])
        response = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", request)
        assert response.success, response.message          # still the planar arm
        assert close(response.efforts, rd.inverse_dynamics(model, q, [0.3, -0.4], [1.0, 2.0]))
    finally:
        assert node.stop() == 0


# --- reference -> feedforward ----------------------------------------------------------------------


def test_reference_gives_the_computed_torque_feedforward(client, model):
    node = NodeProcess(f"urdf_file:={PUMA}", "feedforward.kp:=[25.0]", "feedforward.kd:=[10.0]",
                       "feedforward.evaluate_at:=measured")
    try:
        torques = client.listen(JointState, f"{node.ns}/feedforward_torques")
        commands = client.listen(Float64MultiArray, f"{node.ns}/feedforward_commands")
        q_d, v_d, a_d = np.array([0.1, -0.4, 0.9, 0.2, -0.3, 0.5]), np.linspace(-1, 1, 6), np.linspace(2, -1, 6)
        q, v = q_d + 0.02, v_d - 0.1
        order = [3, 0, 5, 1, 4, 2]                 # the reference names joints in its own order
        names = [model.joint_names[i] for i in order]
        diagnostics = client.listen(DiagnosticArray, "/diagnostics")

        def serve(ref, words):
            """Publish ref until the node's status "reference" says it has it (reference and joint_states are
            separate subscriptions: a state sent with it may be answered before it)."""
            del diagnostics[:]
            client.wait_for(lambda: any(words in s.message for m in diagnostics for s in m.status
                                        if s.name == f"{node.name}: reference"),
                            action=lambda: client.publish(JointTrajectory, f"{node.ns}/reference", ref), every=0.3,
                            what=f"the node's status saying {words!r}")
        # one point, starting at 42 ns: the joint_states stamped 42 ns are at that point (its v and a)
        serve(reference(names, q_d[order], v_d[order], a_d[order], stamp_ns=42), "started at 0.000000042 s")
        send = lambda: client.joint_state(node.joint_states, model.joint_names, q, v, 42)  # noqa: E731
        out = client.wait_for(lambda: next((m for m in torques if stamp_ns(m) == 42), None), action=send,
                              what="feedforward_torques")
        expected = rd.inverse_dynamics(model, q, v, a_d + 25.0 * (q_d - q) + 10.0 * (v_d - v))
        assert close(out.effort, expected)
        assert close(command_for(client, commands, out, send, torques).data, expected)

        result = client.set_parameters(node.name, feedforward__evaluate_at="desired")
        assert result.successful
        # replaces it from 43 ns on
        serve(reference(names, q_d[order], v_d[order], a_d[order], stamp_ns=43), "0.000000043 s")
        out = client.wait_for(lambda: next((m for m in torques if stamp_ns(m) == 43), None),
                              action=lambda: client.joint_state(node.joint_states, model.joint_names, q, v, 43),
                              what="feedforward at the desired state")
        assert close(out.effort, rd.inverse_dynamics(model, q_d, v_d, a_d + 25.0 * (q_d - q) + 10.0 * (v_d - v)))

        bad = reference(names[:5], q_d[:5], [], [])
        client.publish(JointTrajectory, f"{node.ns}/reference", bad)
        client.wait_for(lambda: "reference rejected: reference.joint_names: missing joints" in node.output(),
                        what="the error about a reference missing a joint")
    finally:
        assert node.stop() == 0


# --- services ------------------------------------------------------------------------------------------
def wrench_msg(name, wrench, reference=""):
    lw = LinkWrench(link=name, reference=reference)
    lw.wrench.force.x, lw.wrench.force.y, lw.wrench.force.z = map(float, wrench[:3])
    lw.wrench.torque.x, lw.wrench.torque.y, lw.wrench.torque.z = map(float, wrench[3:])
    return lw


@pytest.mark.parametrize("with_wrenches", [False, True])
def test_services_equal_the_library_with_shuffled_names(client, puma, model, with_wrenches):
    rng = np.random.default_rng(7 + with_wrenches)
    order = rng.permutation(6)
    names = [model.joint_names[i] for i in order]
    q, v, a, tau = (rng.uniform(-1.5, 1.5, 6) for _ in range(4))
    wrenches = {"tool0": (rng.normal(size=6), "world"), "link3": (rng.normal(size=6), "local")} if with_wrenches else {}
    msgs = [wrench_msg(k, w, r) for k, (w, r) in wrenches.items()]

    r = client.call(InverseDynamics, f"{puma.ns}/inverse_dynamics", InverseDynamics.Request(
        joint_names=names, positions=list(q[order]), velocities=list(v[order]), accelerations=list(a[order]),
        external_wrenches=msgs))
    assert r.success and list(r.joint_names) == names, r.message
    assert close(r.efforts, rd.inverse_dynamics(model, q, v, a, wrenches)[order])

    r = client.call(ForwardDynamics, f"{puma.ns}/forward_dynamics", ForwardDynamics.Request(
        joint_names=names, positions=list(q[order]), velocities=list(v[order]), efforts=list(tau[order]),
        external_wrenches=msgs))
    assert r.success, r.message
    assert close(r.accelerations, rd.forward_dynamics(model, q, v, tau, wrenches)[order])

    known = np.array([True, False, True, True, False, False])
    r = client.call(HybridDynamics, f"{puma.ns}/hybrid_dynamics", HybridDynamics.Request(
        joint_names=names, positions=list(q[order]), velocities=list(v[order]),
        acceleration_known=list(map(bool, known[order])), accelerations=list(a[order]), efforts=list(tau[order])))
    assert r.success, r.message
    qdd, effort = rd.hybrid_dynamics(model, q, v, known, a, tau)
    assert close(r.accelerations, qdd[order]) and close(r.efforts, effort[order])

    for reference in ("", "world", "local"):
        F = rng.normal(size=6)
        request = WrenchToJointTorques.Request(joint_names=names, positions=list(q[order]), frame="tool0",
                                               reference=reference)
        request.wrench = wrench_msg("tool0", F).wrench
        r = client.call(WrenchToJointTorques, f"{puma.ns}/wrench_to_joint_torques", request)
        assert r.success, r.message
        ref = reference or "local_world_aligned"
        J = rd.frame_jacobian(model, q, "tool0", ref)
        assert (r.jacobian_rows, r.jacobian_cols) == (6, 6)
        assert close(np.reshape(r.jacobian, (6, 6)), J[:, order])
        assert close(r.efforts, rd.wrench_to_joint_torques(model, q, "tool0", F, ref)[order])


def test_floating_base_services(client):
    path = bundled_urdf("floating_base_biped")
    model = load_urdf(path, floating_base=True)
    node = NodeProcess(f"urdf_file:={path}", "floating_base:=true")
    try:
        rng = np.random.default_rng(3)
        n = len(model.joint_names)
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate(([0.1, -0.2, 0.9], quat, rng.uniform(-1, 1, n)))
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        request = InverseDynamics.Request(joint_names=model.joint_names, positions=list(q[7:]),
                                          velocities=list(v[6:]), accelerations=list(a[6:]))
        p, o = request.base_pose.position, request.base_pose.orientation
        p.x, p.y, p.z, o.x, o.y, o.z, o.w = map(float, q[:7])
        for msg, x in ((request.base_twist, v), (request.base_acceleration, a)):
            msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z = map(float, x[:6])
        r = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", request)
        assert r.success, r.message
        tau = rd.inverse_dynamics(model, q, v, a)
        w = r.base_wrench
        assert close(r.efforts, tau[6:])
        assert close([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z], tau[:6])

        forward = ForwardDynamics.Request(joint_names=model.joint_names, positions=list(q[7:]),
                                          velocities=list(v[6:]), efforts=list(tau[6:]))
        forward.base_pose, forward.base_twist = request.base_pose, request.base_twist
        forward.base_wrench = r.base_wrench
        r = client.call(ForwardDynamics, f"{node.ns}/forward_dynamics", forward)
        assert r.success, r.message
        acc = r.base_acceleration
        assert close(r.accelerations, a[6:], 1e-8)
        assert close([acc.linear.x, acc.linear.y, acc.linear.z, acc.angular.x, acc.angular.y, acc.angular.z], a[:6], 1e-8)
    finally:
        assert node.stop() == 0


BAD_REQUESTS = [  # (service, request fields, words the error message must contain)
    (InverseDynamics, dict(), "positions has 0 values for 6 joints"),
    (InverseDynamics, dict(positions=[0.0] * 5), "positions has 5 values"),
    (InverseDynamics, dict(positions=[0.0] * 6, velocities=[0.0] * 2), "velocities has 2 values"),
    (InverseDynamics, dict(positions=[0.0, 0.0, float("nan"), 0.0, 0.0, 0.0]), "NaN or inf (joint 'joint3')"),
    (InverseDynamics, dict(joint_names=["joint1", "joint2", "joint3", "joint4", "joint5", "wrist"],
                           positions=[0.0] * 6), "unknown joints ['wrist']"),
    (InverseDynamics, dict(joint_names=["joint1", "joint1", "joint3", "joint4", "joint5", "joint6"],
                           positions=[0.0] * 6), "duplicate joint names ['joint1']"),
    (InverseDynamics, dict(joint_names=["joint1", "joint2"], positions=[0.0] * 2), "missing joints"),
    (InverseDynamics, dict(positions=[0.0] * 6, external_wrenches=[wrench_msg("gripper", [0.0] * 6)]), "gripper"),
    (InverseDynamics, dict(positions=[0.0] * 6, external_wrenches=[wrench_msg("tool0", [0.0] * 6, "base")]),
     "reference must be one of"),
    (ForwardDynamics, dict(positions=[0.0] * 6, efforts=[float("inf")] * 6), "NaN or inf"),
    (HybridDynamics, dict(positions=[0.0] * 6, acceleration_known=[True] * 4), "acceleration_known has 4 values"),
    (WrenchToJointTorques, dict(positions=[0.0] * 6, frame="camera"), "unknown frame 'camera'"),
    (WrenchToJointTorques, dict(positions=[0.0] * 6, frame="tool0", reference="tool"), "reference must be one of"),
]


def test_malformed_requests_get_clear_errors_and_the_node_keeps_serving(client, puma, model):
    names = {InverseDynamics: "inverse_dynamics", ForwardDynamics: "forward_dynamics",
             HybridDynamics: "hybrid_dynamics", WrenchToJointTorques: "wrench_to_joint_torques"}
    q = np.full(6, 0.3)
    for kind, fields, words in BAD_REQUESTS:
        r = client.call(kind, f"{puma.ns}/{names[kind]}", kind.Request(**fields))
        assert not r.success and words in r.message, (fields, r.message)
        good = client.call(InverseDynamics, f"{puma.ns}/inverse_dynamics", InverseDynamics.Request(positions=list(q)))
        assert good.success and close(good.efforts, rd.gravity_torques(model, q))


# --- shutdown -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_documented_params_file_loads_and_signals_shut_down_cleanly(client, sig):
    node = NodeProcess(f"urdf_file:={PUMA}", ros_args=["--params-file", CONFIG])
    response = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", InverseDynamics.Request(positions=[0.0] * 6))
    assert response.success, response.message       # the params file left urdf_file alone; the node is serving
    assert node.stop(sig) == 0, node.output()
    assert "Traceback" not in node.output()
