"""Whole-robot identification in the node over real DDS (test/rosnode.py: node and test client in separate
processes): joint_states of the PUMA as it really is (identification_truth: heavier links, a tool,
friction, armature) buffered by the node, ~/identify_dynamics on the buffered window against the library
on the same samples, applied: the outputs become the identified model's, a later parameter change keeps
it, a new robot description drops it; bad windows refused with the reason; ~/excitation_trajectory."""
import itertools
import os

import identification_truth as truth
import numpy as np
import pytest
from rosnode import RELIABLE, NodeProcess, effort_state, stamp_ns

from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from robot_dynamics_interfaces.srv import ExcitationTrajectory, IdentifyDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA = bundled_urdf("puma560")
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
_names = itertools.count()


def identification_node(*params):
    """The node with joint_states reliable and deep (every message taken, none dropped)."""
    name = f"ident{os.getpid()}_{next(_names)}"
    prefix = f"qos_overrides./{name}/joint_states_in.subscription"
    return NodeProcess(f"urdf_file:={PUMA}", f"{prefix}.reliability:=reliable", f"{prefix}.depth:=1000", *params,
                       name=name)


def send(client, node, answers, stamps, q, v, tau, chunk=100):
    """joint_states (stamps in ns) in chunks, each chunk's last gravity answer awaited (re-sent if lost)."""
    names = load_urdf(PUMA).joint_names
    for lo in range(0, len(stamps), chunk):
        for k in range(lo, min(lo + chunk, len(stamps))):
            msg = effort_state(names, q[k], v[k], tau[k], stamps[k])
            client.publish(JointState, node.joint_states, msg, RELIABLE)
        last = int(stamps[min(lo + chunk, len(stamps)) - 1])
        client.wait_for(lambda: any(stamp_ns(m) == last for m in answers), every=2.0,
                        action=lambda: client.publish(JointState, node.joint_states, msg, RELIABLE),
                        what=f"the gravity answer to joint_states stamped {last}")


def answer(client, node, answers, stamp, q, v):
    """The gravity torques the node publishes for one message (efforts 0: not an observer sample... but
    complete: they are buffered too; a stamp after the window's keeps the identification's samples)."""
    send(client, node, answers, [stamp], [q], [v], [np.zeros(6)])
    return np.array(next(m for m in answers if stamp_ns(m) == stamp).effort)


def identify(client, node, **fields):
    return client.call(IdentifyDynamics, f"{node.ns}/identify_dynamics", IdentifyDynamics.Request(**fields),
                       timeout=120.0)


def test_a_buffered_window_is_identified_as_the_library_does_and_applied_to_the_outputs(client):
    node = identification_node("friction.compensate_gravity:=full")
    try:
        gravity = client.listen(JointState, f"{node.ns}/gravity_torques", RELIABLE)
        prior = load_urdf(PUMA)
        r = identify(client, node)
        assert not r.success and "no joint_states buffered yet" in r.message, r.message
        # at rest (stamps after the excitation's: going back to them starts the buffer again)
        still = truth.measure("puma560", np.zeros(60), np.random.default_rng(1))
        still_stamps = 500 * 10**9 + np.arange(60) * 5_000_000
        send(client, node, gravity, still_stamps, still[0], 0 * still[1], still[3])
        r = identify(client, node, window=0.1)
        assert not r.success and "fewer than 50" in r.message, r.message
        r = identify(client, node)
        assert not r.success and "the robot was at rest" in r.message, r.message
        # the excitation, 10 s at 200 Hz
        t = np.arange(0.0, 10.0, 0.005)
        q, v, _, tau = truth.measure("puma560", t, np.random.default_rng(3))
        stamps = 10**11 + np.round(t * 1e9).astype(np.int64)
        send(client, node, gravity, stamps, q, v, tau)
        r = identify(client, node, apply=True)
        assert r.success and r.applied and r.physical, r.message
        est = rd.identify_dynamics(prior, q, v, tau, t=(stamps - stamps[0]) * 1e-9, threads=1)
        assert r.joint_names == prior.joint_names and r.samples == len(t) and abs(r.duration - 9.995) < 1e-9
        for term in ("viscous", "coulomb", "offset"):
            assert np.allclose(getattr(r, term), [est.friction[j][term] for j in prior.joint_names], rtol=1e-6,
                               atol=1e-9), term
        assert np.allclose(r.armature, est.model.armature, rtol=1e-6, atol=1e-9)
        assert np.allclose(r.residual, est.residual, rtol=1e-6) and abs(r.condition_number / est.condition_number - 1) < 1e-6
        identified = load_urdf(r.urdf)
        assert np.allclose(identified.inertia, est.model.inertia, rtol=1e-6, atol=1e-9)
        # the outputs: the identified model's gravity torques and friction (compensate_gravity: full)
        q1, v1 = np.array([0.2, -0.5, 0.8, 0.1, 0.6, -0.3]), np.array([0.3, -0.2, 0.1, 0.5, -0.4, 0.2])
        expected = rd.gravity_torques(identified, q1) + rd.friction_torques(identified, v1)
        assert np.allclose(answer(client, node, gravity, 20 * 10**10, q1, v1), expected, rtol=1e-9, atol=1e-9)
        assert not np.allclose(expected, rd.gravity_torques(prior, q1), rtol=0.05)
        # announced, latched: a subscriber that comes later gets the URDF
        latched = client.listen(String, f"{node.ns}/robot_description_identified", LATCHED)
        client.wait_for(lambda: latched, what="~/robot_description_identified")
        assert latched[-1].data == r.urdf
        # a gravity change keeps the estimate
        result = client.set_parameters(node.name, gravity=[0.0, 0.0, -3.7])
        assert result.successful, result.reason
        identified.gravity = [0.0, 0.0, -3.7]
        expected = rd.gravity_torques(identified, q1) + rd.friction_torques(identified, v1)
        assert np.allclose(answer(client, node, gravity, 21 * 10**10, q1, v1), expected, rtol=1e-9, atol=1e-9)
        # a new robot description drops it (announced with an empty text), the URDF's model serves
        with open(PUMA) as f:
            result = client.set_parameters(node.name, robot_description=f.read())
        assert result.successful, result.reason
        client.wait_for(lambda: latched[-1].data == "", what="the estimate dropped")
        prior.gravity = [0.0, 0.0, -3.7]
        assert np.allclose(answer(client, node, gravity, 22 * 10**10, q1, v1), rd.gravity_torques(prior, q1),
                           rtol=1e-12, atol=1e-12)
    finally:
        assert node.stop() == 0, node.output()


def test_excitation_trajectory_within_the_limits_and_bad_requests_named(client):
    node = identification_node("identification.buffer_seconds:=0.0")
    try:
        name = f"{node.ns}/excitation_trajectory"
        r = client.call(ExcitationTrajectory, name, ExcitationTrajectory.Request(duration=0.5))
        assert not r.success and r.message.startswith("duration takes a number in [1, 300] s"), r.message
        r = client.call(ExcitationTrajectory, name, ExcitationTrajectory.Request(duration=4.0, harmonics=3,
                                                                                 limit_scaling=0.5, time_budget=0.5))
        assert r.success, r.message
        model = load_urdf(PUMA)
        points = r.trajectory.points
        assert r.trajectory.joint_names == model.joint_names and len(points) == 201
        v = np.array([p.velocities for p in points])
        assert np.all(np.abs(v) <= 0.5 * model.velocity_limits) and not np.any(v[[0, -1]])
        assert np.allclose(points[0].positions, points[-1].positions, atol=1e-12)
        assert 1 < r.condition_number < r.random_condition_number * 1.01 and r.evaluations >= 8
        r = identify(client, node)
        assert not r.success and "identification.buffer_seconds is 0" in r.message, r.message
    finally:
        assert node.stop() == 0, node.output()
