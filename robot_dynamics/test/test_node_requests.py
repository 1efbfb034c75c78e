"""The node under requests over real DDS: heavy requests on the worker (a full queue refused naming it,
the other services answered meanwhile), every service's bounds and magnitudes refused in the request's
own field names, long strings quoted short; outputs that fit drives that compensate gravity
(drive_compensates_gravity), the feedforward without a reference, a reference sampled at the node's
clock for joint_states stamped zero, ~/check_trajectory's velocity limits, a parameter set to its value
again, a bundled robot's short name as urdf_file, no efforts warning for plain gravity users, and no
~/base_pose or ~/contact_forces on a fixed base. One node for the module (the short name puma560)."""
import numpy as np
import pytest
from rosnode import NodeProcess, stamp_ns

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.control import computed_torque  # noqa: E402
from robot_dynamics_interfaces.srv import (CheckTrajectory, InverseDynamics, InverseKinematics,  # noqa: E402
                                           TimeParameterize, WrenchToJointTorques)
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

NS = 10**9
W = np.array([[0.0, -0.3, 0.2, 0.0, 0.3, 0.0], [0.8, -0.8, 0.6, 0.5, -0.2, 0.4], [1.4, -0.2, 0.1, -0.3, 0.5, 0.9]])


@pytest.fixture(scope="module")
def model():
    return load_urdf("puma560")


@pytest.fixture(scope="module")
def puma():
    node = NodeProcess("urdf_file:=puma560", "diagnostics_period:=0.2")
    yield node
    assert node.stop() == 0, node.output()


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


def waypoints(model, W=W):
    return JointTrajectory(joint_names=list(model.joint_names),
                           points=[JointTrajectoryPoint(positions=w.tolist()) for w in W])


def timed(model, times, P):
    msg = JointTrajectory(joint_names=list(model.joint_names))
    for t, p in zip(times, P):
        point = JointTrajectoryPoint(positions=list(map(float, p)))
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(round(t * NS), NS)
        msg.points.append(point)
    return msg


def refused(client, node, kind, name, request, words):
    r = client.call(kind, f"{node.ns}/{name}", request)
    assert not r.success and words in r.message, (name, r.message)
    return r.message


def test_a_bundled_short_name_loads_and_a_parameter_set_to_its_value_rebuilds_nothing(client, puma):
    client.wait_for(lambda: "ready: every answer for 'puma560'" in puma.output(), timeout=120, what="the node ready")
    lines = puma.output().count("model 'puma560'")
    for _ in range(3):
        assert client.set_parameters(puma.name, gravity=[0.0, 0.0, -9.81], urdf_file="puma560").successful
    client.spin_for(0.3)
    assert puma.output().count("model 'puma560'") == lines


def test_heavy_requests_queue_on_the_worker_and_a_full_queue_is_refused(client, puma, model):
    """Three IK searches that cannot converge (1000 iterations from each of 300 restarts each) at once:
    one runs, one waits, the third is refused naming the queue; ~/inverse_dynamics answers meanwhile.
    (The two searches cost ~1-2 s of CPU: the queue must be full while the third arrives.)"""
    target = InverseKinematics.Request(frame=model.frame_names[-1], position_only=True, max_iterations=1000,
                                       restarts=300)
    target.target.pose.position.x = 100.0
    ik = client.node.create_client(InverseKinematics, f"{puma.ns}/inverse_kinematics")
    assert ik.wait_for_service(timeout_sec=20)
    client.call(InverseDynamics, f"{puma.ns}/inverse_dynamics", InverseDynamics.Request(positions=[0.0] * 6))
    futures = [ik.call_async(target) for _ in range(3)]
    answer = client.call(InverseDynamics, f"{puma.ns}/inverse_dynamics", InverseDynamics.Request(positions=[0.0] * 6))
    assert answer.success
    client.wait_for(lambda: all(f.done() for f in futures), timeout=120, what="the three IK answers")
    messages = sorted(f.result().message for f in futures)
    busy = [m for m in messages if "busy" in m]
    assert busy == ["~/inverse_kinematics: busy: 2 requests already queued (queue 'heavy', at most 2)"], messages
    assert sum("restarts" in m or "did not converge" in m or "stalled" in m or "iteration" in m
               for m in messages) == 2, messages


def test_bounds_and_magnitudes_are_refused_in_the_requests_own_fields(client, puma, model):
    path = waypoints(model)
    refused(client, puma, TimeParameterize, "time_parameterize",
            TimeParameterize.Request(waypoints=path, gridpoints=4294967295), "gridpoints (4294967295) must be at most 10000")
    far = waypoints(model, W.copy())
    far.points[1].positions[2] = 1e308
    refused(client, puma, TimeParameterize, "time_parameterize", TimeParameterize.Request(waypoints=far),
            "waypoints.points[1].positions contains 1e+308 (joint 'joint3'): too large (at most 1e+09 in magnitude)")
    step = timed(model, [0.0, 1.0], W[:2])
    refused(client, puma, CheckTrajectory, "check_trajectory",
            CheckTrajectory.Request(trajectory=step, sample_period=5e-324), "more than 200000: take a longer period")
    refused(client, puma, InverseDynamics, "inverse_dynamics",
            InverseDynamics.Request(positions=[0.0, 1e300, 0.0, 0.0, 0.0, 0.0]),
            "positions contains 1e+300 (joint 'joint2'): too large (at most 1e+09 in magnitude)")
    refused(client, puma, InverseDynamics, "inverse_dynamics",
            InverseDynamics.Request(positions=[0.0] * 6, accelerations=[0.0, 0.0, 2e9, 0.0, 0.0, 0.0]),
            "accelerations contains 2e+09 (joint 'joint3')")
    long = "x" * 10000
    message = refused(client, puma, WrenchToJointTorques, "wrench_to_joint_torques",
                      WrenchToJointTorques.Request(positions=[0.0] * 6, frame=long), "unknown frame 'xxxx")
    assert "(10000 characters)" in message and len(message) < 1000
    message = refused(client, puma, InverseDynamics, "inverse_dynamics",
                      InverseDynamics.Request(joint_names=[long] * 3 + list(model.joint_names), positions=[0.0] * 9),
                      "joint_names: unknown joints")
    assert len(message) < 1000
    refused(client, puma, InverseKinematics, "inverse_kinematics",
            InverseKinematics.Request(frame=model.frame_names[-1], restarts=1001), "restarts must be 0 to 1000")


def test_check_trajectory_holds_velocity_limits_and_active_limits_start_empty(client, puma, model):
    """A 1 rad step of joint1 in 0.2 s with positions only (5 rad/s, the URDF allows 1.92): infeasible."""
    P = np.zeros((2, 6))
    P[1, 0] = 1.0
    c = client.call(CheckTrajectory, f"{puma.ns}/check_trajectory",
                    CheckTrajectory.Request(trajectory=timed(model, [0.0, 0.2], P)))
    assert c.success, c.message
    assert not c.feasible and (c.first_violation_joint, c.first_violation_limit) == ("joint1", "velocity")
    assert close(c.velocity_peak_ratio[0], 5.0 / model.velocity_limits[0])
    slow = client.call(CheckTrajectory, f"{puma.ns}/check_trajectory",
                       CheckTrajectory.Request(trajectory=timed(model, [0.0, 2.0], P), acceleration_limits=[1.0] * 6))
    assert slow.success and slow.feasible and slow.first_violation_limit == "", slow
    r = client.call(TimeParameterize, f"{puma.ns}/time_parameterize", TimeParameterize.Request(waypoints=waypoints(model)))
    assert r.success and r.active_limits[0] == "" and r.active_limits[-1] == "" and any(r.active_limits), r.message


def test_drive_compensates_gravity_leaves_g_out_of_feedforward_and_timed_efforts(client, puma, model):
    """Without a reference, the feedforward is the gravity torques (the arm held where it is), as after a
    cancel; with drive_compensates_gravity it is zero, a followed reference's is M qdd + C qd, the timed
    trajectory's efforts lose g(q) and its timing is unchanged; ~/gravity_torques keeps g(q)."""
    feedforward = client.listen(JointState, f"{puma.ns}/feedforward_torques")
    gravity = client.listen(JointState, f"{puma.ns}/gravity_torques")
    q = np.linspace(-0.4, 0.5, 6)
    stamps = iter(range(10 * NS, 20 * NS, NS // 100))

    def answered(out):
        ns = next(stamps)
        m = client.wait_for(lambda: next((m for m in out if stamp_ns(m) == ns), None), what=f"stamp {ns}",
                            action=lambda: client.joint_state(puma.joint_states, model.joint_names, q, [0.0] * 6, ns))
        return np.array(m.effort)

    assert close(answered(feedforward), rd.gravity_torques(model, q))      # before any reference
    r0 = client.call(TimeParameterize, f"{puma.ns}/time_parameterize", TimeParameterize.Request(waypoints=waypoints(model)))
    try:
        assert client.set_parameters(puma.name, drive_compensates_gravity=True).successful
        assert close(answered(feedforward), np.zeros(6))
        assert close(answered(gravity), rd.gravity_torques(model, q))
        r1 = client.call(TimeParameterize, f"{puma.ns}/time_parameterize",
                         TimeParameterize.Request(waypoints=waypoints(model)))
        assert r1.success and r1.duration == r0.duration
        for p0, p1 in zip(r0.trajectory.points, r1.trajectory.points):
            assert close(np.array(p0.effort) - np.array(p1.effort), rd.gravity_torques(model, p0.positions), 1e-8)
        V = np.full((2, 6), 0.2)
        reference = timed(model, [0.0, 5.0], W[:2])
        for p, v in zip(reference.points, V):
            p.velocities = v.tolist()
        start = 50 * NS
        reference.header.stamp.sec = start // NS
        stamps = iter(range(start + NS, start + 4 * NS, NS // 10))
        client.publish(JointTrajectory, f"{puma.ns}/reference", reference)
        client.wait_for(lambda: "following" in " ".join(s.message for s in reference_status(client, puma)),
                        action=lambda: client.publish(JointTrajectory, f"{puma.ns}/reference", reference),
                        what="the reference taken")
        ns = start + NS
        tau = answered(feedforward)
        q_d, v_d, a_d = rd.sample_trajectory([0.0, 5.0], W[:2], V, t=(ns - start) / NS)
        no_gravity = load_urdf("puma560")
        no_gravity.gravity = [0.0, 0.0, 0.0]
        assert close(tau, computed_torque(no_gravity, q, np.zeros(6), q_d, v_d, a_d, 0.0, 0.0, "desired"))
    finally:
        client.publish(JointTrajectory, f"{puma.ns}/reference", JointTrajectory(joint_names=list(model.joint_names)))
        assert client.set_parameters(puma.name, drive_compensates_gravity=False).successful


def reference_status(client, node):
    diagnostics = client.inbox.get("/diagnostics")
    if diagnostics is None:
        diagnostics = client.listen(DiagnosticArray, "/diagnostics")
    return [s for m in diagnostics for s in m.status if s.name == f"{node.name}: reference"]


def test_joint_states_stamped_zero_sample_the_reference_at_the_node_clock(client, puma, model):
    feedforward = client.listen(JointState, f"{puma.ns}/feedforward_torques")
    P = np.array([W[0], W[1]])
    reference = timed(model, [0.0, 3.0], P)        # stamped zero: starts when it arrives
    client.publish(JointTrajectory, f"{puma.ns}/reference", reference)
    client.wait_for(lambda: any("following" in s.message for s in reference_status(client, puma)),
                    action=lambda: client.publish(JointTrajectory, f"{puma.ns}/reference", reference),
                    what="the reference taken")
    seen = []

    def two_different():
        client.joint_state(puma.joint_states, model.joint_names, W[0], [0.0] * 6, 0)
        seen.extend(tuple(m.effort) for m in feedforward if stamp_ns(m) == 0)
        del feedforward[:]
        return len(set(seen)) >= 2
    client.wait_for(two_different, timeout=20, what="the feedforward moving along the reference")
    status = client.wait_for(lambda: next((s for s in reference_status(client, puma)
                                           if "sampled at the node's clock" in s.message), None), what="the status")
    assert {v.key: v.value for v in status.values}["sampled at"].startswith("the node's clock")
    assert puma.output().count("joint_states are stamped zero: the reference is sampled at the node's clock") == 1
    client.publish(JointTrajectory, f"{puma.ns}/reference", JointTrajectory(joint_names=list(model.joint_names)))


def test_plain_gravity_users_get_no_efforts_warning_and_a_fixed_base_no_base_topics(client, puma, model):
    gravity = client.listen(JointState, f"{puma.ns}/gravity_torques")
    client.wait_for(lambda: gravity, action=lambda: client.joint_state(puma.joint_states, model.joint_names, W[0]),
                    what="gravity torques")
    client.spin_for(0.3)
    assert "carries no efforts" not in puma.output()
    topics = dict(client.node.get_topic_names_and_types())
    assert f"{puma.ns}/gravity_torques" in topics
    assert f"{puma.ns}/base_pose" not in topics and f"{puma.ns}/contact_forces" not in topics
