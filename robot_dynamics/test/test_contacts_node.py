"""The node's contacts over real DDS (test/rosnode.py: node and client in separate processes): with
contacts.frames on a floating-base model, ~/gravity_torques, ~/gravity_commands, ~/contact_forces
and the feedforward equal rd.contact_inverse_dynamics on the same message, and
~/constrained_forward_dynamics equals rd.constrained_forward_dynamics; contacts a model cannot
take are refused naming the parameter, at start-up and at run time (the old configuration serving
on)."""
import math

import numpy as np
import pytest
from rosnode import NodeProcess, rclpy, reference, stamp_ns

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics.ros.node import DynamicsNode, StartupError  # noqa: E402
from robot_dynamics_interfaces.msg import ContactForces  # noqa: E402
from robot_dynamics_interfaces.srv import ConstrainedForwardDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

BIPED, PUMA = bundled_urdf("floating_base_biped"), bundled_urdf("puma560")
SOLES = ["left_sole", "right_sole"]
SPEC = [("left_sole", "6d"), ("right_sole", "6d")]
CONTACTS = ("floating_base:=true", "contacts.frames:=[left_sole, right_sole]", "contacts.kind:=6d")
BASE = np.array([0.03, -0.01, 0.85, 0.0, 0.0, math.sin(0.1), math.cos(0.1)])   # x y z qx qy qz qw


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


@pytest.fixture(scope="module")
def model():
    return load_urdf(BIPED, floating_base=True)


@pytest.fixture(scope="module")
def standing(client, model):
    """The biped node standing on both soles, its base pose taken (BASE). Joint torques do not depend
    on the base's yaw, so the base pose is known to be taken when the contact forces (world axes, with
    horizontal parts at this bent pose) are those at BASE's yaw: ~/base_pose and joint_states come on
    separate subscriptions, and the first pose can be lost before discovery (best effort)."""
    node = NodeProcess(f"urdf_file:={BIPED}", *CONTACTS)
    torques = client.listen(JointState, f"{node.ns}/gravity_torques")
    contact = client.listen(ContactForces, f"{node.ns}/contact_forces")
    q = configuration(model, np.random.default_rng(5).uniform(-0.4, 0.4, model.nv - 6))
    tau, forces = rd.contact_inverse_dynamics(model, q, 0, 0, SPEC)
    unrotated = rd.contact_inverse_dynamics(model, configuration(model, q[7:], np.r_[BASE[:3], 0, 0, 0, 1]), 0, 0, SPEC)[1]
    assert not close(unrotated, forces, 1e-3)       # the check below tells the base pose apart
    client.wait_for(lambda: any(close(m.effort, tau[6:]) for m in torques)
                    and any(close(np.ravel(wrench_values(m)), forces) for m in contact), timeout=60.0,
                    action=lambda: (send_pose(client, node, BASE), client.joint_state(node.joint_states, model.joint_names,
                                                                                      q[7:], (), 1)),
                    what="contact-consistent gravity and contact forces with the base where base_pose put it")
    yield node
    assert node.stop() == 0, node.output()


def configuration(model, joints, base=BASE):
    return np.concatenate((base, joints))


def send_pose(client, node, base):
    msg = PoseStamped()
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = map(float, base)
    client.publish(PoseStamped, f"{node.ns}/base_pose", msg, rclpy.qos.qos_profile_sensor_data)


def answer(client, node, topic, kind, stamp, action):
    inbox = client.inbox.get(f"{node.ns}/{topic}") or client.listen(kind, f"{node.ns}/{topic}")
    return client.wait_for(lambda: next((m for m in inbox if stamp_ns(m) == stamp), None), action=action,
                           timeout=30.0, what=f"{topic} stamped {stamp}")


def wrench_values(msg):
    return [[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z, w.wrench.torque.x, w.wrench.torque.y,
             w.wrench.torque.z] for w in msg.wrenches]


# --- contact-consistent gravity -----------------------------------------------------------------------
def test_gravity_and_contact_forces_are_contact_inverse_dynamics_of_the_same_message(client, standing, model):
    rng = np.random.default_rng(11)
    commands = client.listen(Float64MultiArray, f"{standing.ns}/gravity_commands")
    client.listen(ContactForces, f"{standing.ns}/contact_forces")
    for stamp in (101, 102, 103):
        joints = rng.uniform(-0.4, 0.4, model.nv - 6)
        q = configuration(model, joints)
        tau, forces = rd.contact_inverse_dynamics(model, q, 0, 0, SPEC)
        send = lambda: client.joint_state(standing.joint_states, model.joint_names, joints, (), stamp)  # noqa: E731,B023
        out = answer(client, standing, "gravity_torques", JointState, stamp, send)
        assert list(out.name) == model.joint_names and close(out.effort, tau[6:])
        assert not close(out.effort, rd.gravity_torques(model, q)[6:], 1e-3)    # not the base-held torques
        # sent again until it comes (gravity_commands' subscription may match after gravity_torques'): the
        # command equal to an answer of this stamp
        answers = client.inbox[f"{standing.ns}/gravity_torques"]
        command = client.wait_for(lambda: next((c for c in reversed(commands) for m in answers  # noqa: B023
                                                if stamp_ns(m) == stamp and np.array_equal(c.data, m.effort)), None),
                                  action=send, every=1.0, what="the gravity_commands published with it")
        assert close(command.data, tau[6:])
        f = answer(client, standing, "contact_forces", ContactForces, stamp, send)
        assert [(w.link, w.reference) for w in f.wrenches] == [(s, "local_world_aligned") for s in SOLES]
        assert close(np.ravel(wrench_values(f)), forces)
        assert math.isclose(sum(w.wrench.force.z for w in f.wrenches), model.total_mass * 9.81, rel_tol=1e-9)




def test_the_feedforward_is_contact_consistent_with_the_base_at_rest(client, standing, model):
    rng = np.random.default_rng(12)
    n = model.nv - 6
    joints, q_d, v_d, a_d = (rng.uniform(-0.3, 0.3, n) for _ in range(4))
    ref = reference(model.joint_names, q_d, v_d, a_d, stamp_ns=201)      # one point at 201 ns: the state there
    a = np.concatenate((np.zeros(6), a_d))      # evaluate_at desired, no gains: the reference at its state
    tau, _ = rd.contact_inverse_dynamics(model, configuration(model, q_d), np.concatenate((np.zeros(6), v_d)), a, SPEC)
    inbox = client.inbox.get(f"{standing.ns}/feedforward_torques") or client.listen(
        JointState, f"{standing.ns}/feedforward_torques")
    # before the reference is taken, a message stamped 201 gets the feedforward without a reference (the
    # contact-consistent gravity torques): wait for the reference's
    client.wait_for(lambda: next((m for m in inbox if stamp_ns(m) == 201 and close(m.effort, tau[6:])), None),
                    action=lambda: (client.joint_state(standing.joint_states, model.joint_names, joints, (), 201),
                                    client.publish(JointTrajectory, f"{standing.ns}/reference", ref)),
                    timeout=30.0, what="the contact-consistent feedforward of the reference, stamped 201")


# --- ~/constrained_forward_dynamics -------------------------------------------------------------------
def cfd_request(model, q, v, tau, **fields):
    req = ConstrainedForwardDynamics.Request(joint_names=model.joint_names, positions=list(q[7:]),
                                             velocities=list(v[6:]), efforts=list(tau[6:]), **fields)
    p, o = req.base_pose.position, req.base_pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = map(float, q[:7])
    t = req.base_twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = map(float, rd.root_twist(model, v[:6]))
    return req


@pytest.mark.parametrize("fields,spec,loops", [
    ({}, SPEC, []),
    (dict(contact_frames=["right_sole", "left_sole"], contact_kinds=["point", "6d"]),
     [("right_sole", "point"), ("left_sole", "6d")], []),
    (dict(contact_frames=["left_sole"], contact_kinds=["6d"], loop_frames_a=["right_foot"], loop_frames_b=["left_foot"],
          loop_kinds=["point"], baumgarte_kp=100.0, baumgarte_kd=20.0), [("left_sole", "6d")],
     [("right_foot", "left_foot", "point")]),
], ids=["node's contacts", "request's contacts", "contact and loop"])
def test_the_service_equals_the_library(client, standing, model, fields, spec, loops):
    rng = np.random.default_rng(13)
    q = configuration(model, rng.uniform(-0.4, 0.4, model.nv - 6))
    v = np.concatenate((np.zeros(6), rng.uniform(-0.5, 0.5, model.nv - 6)))
    tau = np.concatenate((np.zeros(6), rng.uniform(-30, 30, model.nv - 6)))
    r = client.call(ConstrainedForwardDynamics, f"{standing.ns}/constrained_forward_dynamics",
                    cfd_request(model, q, v, tau, **fields))
    assert r.success, r.message
    gains = (fields["baumgarte_kp"], fields["baumgarte_kd"]) if loops else None
    qdd, forces = rd.constrained_forward_dynamics(model, q, v, tau, spec, loops, gains)
    acc = r.base_acceleration
    assert close(r.accelerations, qdd[6:], 1e-8)
    assert close([acc.linear.x, acc.linear.y, acc.linear.z, acc.angular.x, acc.angular.y, acc.angular.z],
                 rd.root_twist(model, qdd[:6]), 1e-8)
    sizes = [3 if kind == "point" else 6 for *_, kind in spec + loops]
    got = [x for w, n in zip(r.constraint_wrenches, sizes) for x in
           ([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z] + ([w.wrench.torque.x, w.wrench.torque.y,
                                                                       w.wrench.torque.z] if n == 6 else []))]
    assert [w.link for w in r.constraint_wrenches] == [c[0] for c in spec + loops]
    assert close(got, forces, 1e-8)


@pytest.mark.parametrize("fields,words", [
    (dict(contact_frames=["left_sole", "hand"], contact_kinds=["6d"]), "contact_frames: unknown frame 'hand'"),
    (dict(contact_frames=SOLES), "contact_kinds: give one kind"),
    (dict(contact_frames=SOLES, contact_kinds=["flat"]), "unknown kinds ['flat']"),
    (dict(contact_frames=["left_sole", "left_foot"], contact_kinds=["6d"]), "cannot all hold"),
    (dict(positions=float("nan")), "NaN or inf"),
    (dict(efforts=1e300), "efforts contains 1e+300 (joint 'left_hip_roll'): too large"),
], ids=["unknown frame", "no kinds", "unknown kind", "contradictory", "NaN", "overflow"])
def test_bad_requests_and_impossible_constraints_are_clear_refusals(client, standing, model, fields, words):
    q, v, tau = configuration(model, np.zeros(model.nv - 6)), np.zeros(model.nv), np.zeros(model.nv)
    v[6:] = 1.0
    req = cfd_request(model, q, v, tau, **{k: x for k, x in fields.items() if k not in ("positions", "efforts")})
    for field in ("positions", "efforts"):
        if field in fields:
            setattr(req, field, [fields[field]] * len(model.joint_names))
    r = client.call(ConstrainedForwardDynamics, f"{standing.ns}/constrained_forward_dynamics", req)
    assert not r.success and words in r.message, r.message
    assert not r.accelerations and not r.constraint_wrenches


# --- parameters: refused at start-up and at run time -------------------------------------------------
REFUSED = [  # (parameter overrides beyond urdf_file, the parameter named, words of the reason)
    (dict(floating_base=True, **{"contacts.frames": ["left_sole", "hand"]}), "contacts.frames", "unknown frames ['hand']"),
    (dict(floating_base=False, **{"contacts.frames": SOLES}), "contacts.frames", "fixed base"),
    (dict(floating_base=True, **{"contacts.frames": SOLES, "contacts.kind": "flat"}), "contacts.kind", "point"),
    (dict(floating_base=True, **{"contacts.frames": SOLES, "contacts.kind": ["6d"] * 3}), "contacts.kind", "3 kinds"),
]
IDS = ["unknown frame", "fixed-base model", "wrong kind", "wrong count"]


@pytest.mark.parametrize("values,name,words", REFUSED, ids=IDS)
def test_contacts_a_model_cannot_take_stop_the_node_at_start_up(client, values, name, words):
    overrides = [Parameter("urdf_file", value=BIPED)] + [Parameter(k, value=v) for k, v in values.items()]
    with pytest.raises(StartupError) as refused:
        DynamicsNode(parameter_overrides=overrides)
    assert name in str(refused.value) and words in str(refused.value), str(refused.value)


def test_the_executable_exits_naming_the_parameter(client):
    node = NodeProcess(f"urdf_file:={PUMA}", "contacts.frames:=[link6]")
    assert node.proc.wait(60) == 1
    output = node.output()
    assert "parameter contacts.frames" in output and "fixed base" in output and "Traceback" not in output, output


@pytest.mark.parametrize("values,name,words", REFUSED, ids=IDS)
def test_contacts_a_model_cannot_take_are_refused_at_run_time_and_the_old_ones_serve_on(
        client, standing, model, values, name, words):
    result = client.set_parameters(standing.name, **{k.replace(".", "__"): v for k, v in values.items()})
    assert not result.successful and name in result.reason and words in result.reason, result.reason
    assert client.get_parameters(standing.name, "contacts.frames", "floating_base") == [SOLES, True]
    stamp = 300 + REFUSED.index((values, name, words))
    joints = np.full(model.nv - 6, 0.01 * (stamp - 300))
    out = answer(client, standing, "gravity_torques", JointState, stamp,
                 lambda: client.joint_state(standing.joint_states, model.joint_names, joints, (), stamp))
    assert close(out.effort, rd.contact_inverse_dynamics(model, configuration(model, joints), 0, 0, SPEC)[0][6:])


def test_contacts_can_be_set_and_cleared_at_run_time(client, model):
    node = NodeProcess(f"urdf_file:={BIPED}", "floating_base:=true")
    try:
        q = configuration(model, np.zeros(model.nv - 6), rd.neutral(model)[:7])    # no base_pose: the origin
        for stamp, frames in ((401, []), (402, SOLES), (403, [])):
            if stamp > 401:
                result = client.set_parameters(node.name, contacts__frames=frames, contacts__kind="6d")
                assert result.successful, result.reason
            out = answer(client, node, "gravity_torques", JointState, stamp,
                         lambda: client.joint_state(node.joint_states, model.joint_names, q[7:], (), stamp))  # noqa: B023
            expected = rd.contact_inverse_dynamics(model, q, 0, 0, SPEC)[0] if frames else rd.gravity_torques(model, q)
            assert close(out.effort, expected[6:])
    finally:
        assert node.stop() == 0, node.output()
