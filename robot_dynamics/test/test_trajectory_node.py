"""The node's trajectories over real DDS: ~/reference followed in time with
joint_trajectory_controller's semantics, the published feedforward equal to control.computed_torque at
rd.sample_trajectory(..., t = the joint_states stamp - the start), for each interpolation kind, a start in
the future, a replacement mid-way, a cancel, a refused trajectory and sim time; ~/time_parameterize and
~/check_trajectory against the library, and their malformed requests refused with reasons."""
import os

import numpy as np
import pytest
from rosnode import NodeProcess, stamp_ns

from builtin_interfaces.msg import Time  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.control import computed_torque  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.srv import CheckTrajectory, TimeParameterize  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA = bundled_urdf("puma560")
NS = 10**9
ORDER = [3, 0, 5, 1, 4, 2]        # the trajectories name the joints in their own order
TIMES = np.array([0.0, 0.5, 1.2, 1.6])
RNG = np.random.default_rng(22)
P, V, A = RNG.uniform(-1, 1, (4, 6)), RNG.uniform(-1, 1, (4, 6)), RNG.uniform(-3, 3, (4, 6))
KP, KD = 25.0, 10.0


@pytest.fixture(scope="module")
def model():
    return load_urdf(PUMA)


def feedback_node():
    """Feedback gains, evaluated at the measured state: the feedforward depends on the reference and the state."""
    return NodeProcess(f"urdf_file:={PUMA}", f"feedforward.kp:=[{KP}]", f"feedforward.kd:=[{KD}]",
                       "feedforward.evaluate_at:=measured", "diagnostics_period:=0.2")


@pytest.fixture(scope="module")
def puma():
    node = feedback_node()
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture
def fresh():
    node = feedback_node()
    yield node
    assert node.stop() == 0, node.output()


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


def trajectory(model, start_ns, times, P, V=None, A=None):
    names = [model.joint_names[i] for i in ORDER]
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(start_ns), NS)
    for k, t in enumerate(times):
        point = JointTrajectoryPoint(positions=P[k, ORDER].tolist())
        if V is not None:
            point.velocities = V[k, ORDER].tolist()
        if A is not None:
            point.accelerations = A[k, ORDER].tolist()
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(round(t * NS), NS)
        msg.points.append(point)
    return msg


class Probe:
    """Publishes a trajectory and joint_states, and returns the feedforward the node published for a stamp."""

    def __init__(self, client, node, model):
        self.client, self.node, self.model = client, node, model
        self.out = client.listen(JointState, f"{node.ns}/feedforward_torques")
        self.diagnostics = client.inbox.get("/diagnostics")
        if self.diagnostics is None:
            self.diagnostics = client.listen(DiagnosticArray, "/diagnostics")
        self.q = np.linspace(-0.4, 0.5, 6)
        self.v = np.linspace(0.2, -0.3, 6)

    def reference(self, msg):
        self.client.publish(JointTrajectory, f"{self.node.ns}/reference", msg)

    def serve(self, msg, words=None):
        """Publish msg until the node's /diagnostics status "reference" says it has it (its start, or words):
        the reference and joint_states are separate subscriptions, their order is not the publishing order."""
        words = words or f"{stamp_ns(msg) / NS:.9f}"
        del self.diagnostics[:]
        self.client.wait_for(lambda: any(words in s.message for s in statuses(self.diagnostics, self.node, "reference")),
                             action=lambda: self.reference(msg), every=0.3, what=f"the status saying {words!r}")

    def at(self, ns):
        """The feedforward for joint_states stamped ns."""
        def send():
            self.client.joint_state(self.node.joint_states, self.model.joint_names, self.q, self.v, ns)
        out = self.client.wait_for(lambda: next((m for m in self.out if stamp_ns(m) == ns), None), action=send,
                                   what=f"feedforward_torques stamped {ns}")
        return np.array(out.effort)

    def expected(self, t, times, P, V=None, A=None):
        q_d, v_d, a_d = rd.sample_trajectory(times, P, V, A, t=t)
        return computed_torque(self.model, self.q, self.v, q_d, v_d, a_d, KP, KD, "measured")


@pytest.mark.parametrize("kind", ["linear", "cubic", "quintic"])
def test_each_interpolation_kind_is_followed_at_the_stamps(client, puma, model, kind):
    fields = {"linear": (None, None), "cubic": (V, None), "quintic": (V, A)}[kind]
    base = {"linear": 100, "cubic": 200, "quintic": 300}[kind] * NS       # increasing stamps across the tests
    probe = Probe(client, puma, model)
    msg = trajectory(model, base, TIMES, P, *fields)
    probe.serve(msg)
    first = probe.at(base + 1000)
    assert close(first, probe.expected(1e-6, TIMES, P, *fields))
    for t in (0.25, 0.5, 0.9, 1.2, 1.55, 1.6, 2.5):       # between points, at them, at the last, after it
        ns = base + round(t * NS)
        assert close(probe.at(ns), probe.expected(t, TIMES, P, *fields)), (kind, t)


def statuses(diagnostics, node, name):
    return [s for m in diagnostics for s in m.status if s.name == f"{node.name}: {name}"]


def test_future_start_replacement_mid_way_refusal_and_cancel(client, fresh, model):
    puma = fresh
    probe = Probe(client, puma, model)
    diagnostics = probe.diagnostics
    start = 1000 * NS
    a = trajectory(model, start, TIMES, P, V)
    probe.serve(a)
    # stamped before its start: the first point, at rest
    assert close(probe.at(start - NS // 2), probe.expected(-0.5, TIMES, P, V))
    assert not rd.sample_trajectory(TIMES, P, V, t=-0.5)[1].any()
    assert close(probe.at(start + 300_000_000), probe.expected(0.3, TIMES, P, V))
    # b starts at 1000.8 s: a serves until then, b from then on
    P2 = P[::-1].copy()
    b = trajectory(model, start + 800_000_000, TIMES, P2, V)
    probe.serve(b)
    assert close(probe.at(start + 700_000_000), probe.expected(0.7, TIMES, P, V))
    assert close(probe.at(start + 900_000_000), probe.expected(0.1, TIMES, P2, V))
    # refused (a joint missing): b serves on; the reason is logged and on /diagnostics
    bad = trajectory(model, start + NS, TIMES, P, V)
    bad.joint_names = bad.joint_names[1:]
    for point in bad.points:
        point.positions, point.velocities = point.positions[1:], point.velocities[1:]
    words = "reference rejected: reference.joint_names: missing joints ['joint4']"
    client.wait_for(lambda: words in puma.output(), action=lambda: probe.reference(bad), what="the refusal in the log")
    status = client.wait_for(lambda: next((s for s in statuses(diagnostics, puma, "reference") if words in s.message), None),
                             what="the refusal on /diagnostics")
    assert status.level == status.WARN
    assert close(probe.at(start + 1_100_000_000), probe.expected(0.3, TIMES, P2, V))
    # an empty trajectory cancels: gravity only, said once however often it comes
    empty = JointTrajectory(joint_names=list(model.joint_names))
    probe.serve(empty, "cancelled: gravity only")
    for _ in range(3):
        probe.reference(empty)
        client.spin_for(0.1)
    assert close(probe.at(start + 1_200_000_000), rd.gravity_torques(model, probe.q))
    client.spin_for(0.3)
    assert puma.output().count("reference cancelled (an empty trajectory)") == 1
    # and the next trajectory serves again
    probe.serve(a)
    assert close(probe.at(start + 2 * NS), probe.expected(2.0, TIMES, P, V))     # after its end: the last point, at rest


def test_stamp_zero_starts_now_on_sim_time(client, model):
    """use_sim_time: a trajectory stamped zero starts at the /clock time it arrives at; the feedforward is
    the reference at the joint_states stamps (sim time). Without feedback the feedforward depends on the
    reference alone and the node answers it at once, stamped with its start: the /clock time."""
    name = f"simtime{os.getpid()}"
    node = NodeProcess(f"urdf_file:={PUMA}", "use_sim_time:=true", name=name, ros_args=["-r", f"/clock:=/{name}/clock_in"])
    try:
        out = client.listen(JointState, f"{node.ns}/feedforward_torques")
        now = 5000 * NS + 250_000_000
        clock = Clock(clock=Time(sec=now // NS, nanosec=now % NS))
        msg = trajectory(model, 0, TIMES, P, V, A)
        client.wait_for(lambda: next((m for m in out if stamp_ns(m) == now), None), what="the answer at its start",
                        action=lambda: (client.publish(Clock, f"{node.ns}/clock_in", clock),
                                        client.publish(JointTrajectory, f"{node.ns}/reference", msg)))
        for t in (0.3, 1.0, 1.7):
            ns = now + round(t * NS)
            m = client.wait_for(lambda: next((m for m in out if stamp_ns(m) == ns), None), what=f"stamp {ns}",
                                action=lambda: client.joint_state(node.joint_states, model.joint_names, P[0], (), ns))
            q_d, v_d, a_d = rd.sample_trajectory(TIMES, P, V, A, t=t)
            assert close(m.effort, rd.inverse_dynamics(model, q_d, v_d, a_d))
    finally:
        assert node.stop() == 0, node.output()


W = np.array([[0.0, -0.3, 0.2, 0.0, 0.3, 0.0], [0.8, -0.8, 0.6, 0.5, -0.2, 0.4],
              [1.4, -0.2, 0.1, -0.3, 0.5, 0.9], [0.5, 0.3, -0.4, 0.2, 0.1, -0.2]])


def test_services_equal_the_library_and_refuse_malformed_requests(client, puma, model):
    names = [model.joint_names[i] for i in ORDER]
    waypoints = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=w[ORDER].tolist()) for w in W])
    r = client.call(TimeParameterize, f"{puma.ns}/time_parameterize",
                    TimeParameterize.Request(waypoints=waypoints, effort_scaling=0.9, gridpoints=80))
    assert r.success, r.message
    s, q, dq, ddq = rd.path_through_waypoints(W, 80)
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=0.9 * model.effort_limits,
                              discretization="interpolation")
    assert r.duration == tp.duration and list(r.active_limits) == [""] + tp.limits[1:-1] + [""] and list(r.trajectory.joint_names) == names
    got = np.array([p.positions for p in r.trajectory.points])
    assert close(got, tp.q[:, ORDER])
    assert np.all(np.abs(np.array([p.effort for p in r.trajectory.points])) <= 0.9 * model.effort_limits[ORDER] * (1 + 1e-9))

    # the answer checked by ~/check_trajectory: its points' torques are its efforts, within the limits
    c = client.call(CheckTrajectory, f"{puma.ns}/check_trajectory",
                    CheckTrajectory.Request(trajectory=r.trajectory, effort_limits=(0.9 * model.effort_limits[ORDER]).tolist()))
    assert c.success, c.message
    assert close([p.effort for p in c.trajectory.points], [p.effort for p in r.trajectory.points], 1e-8)
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in r.trajectory.points])
    qs = np.array([p.positions for p in r.trajectory.points])[:, np.argsort(ORDER)]
    vs = np.array([p.velocities for p in r.trajectory.points])[:, np.argsort(ORDER)]
    acc = np.array([p.accelerations for p in r.trajectory.points])[:, np.argsort(ORDER)]
    check = rd.check_trajectory(model, t, qs, vs, acc, effort_limits=0.9 * model.effort_limits)
    assert close(c.peak_ratio, check.peak[ORDER]) and c.feasible == check.feasible and c.first_violation_time == -1.0

    # twice as fast (velocities x 2, accelerations x 4): infeasible, the first violation named
    fast = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
        positions=p.positions, velocities=[2 * x for x in p.velocities], accelerations=[4 * x for x in p.accelerations])
        for p in r.trajectory.points])
    for p, k in zip(fast.points, t):
        p.time_from_start.sec, p.time_from_start.nanosec = divmod(round(k * NS / 2), NS)
    c = client.call(CheckTrajectory, f"{puma.ns}/check_trajectory", CheckTrajectory.Request(trajectory=fast, sample_period=0.01))
    assert c.success and not c.feasible and c.first_violation_time >= 0.0 and c.first_violation_joint in names

    for kind, request, words in (
            (TimeParameterize, TimeParameterize.Request(waypoints=waypoints, velocity_scaling=2.0), "velocity_scaling must be in (0, 1]"),
            (TimeParameterize, TimeParameterize.Request(waypoints=JointTrajectory(joint_names=names[:5])), "missing joints ['joint3']"),
            (TimeParameterize, TimeParameterize.Request(waypoints=waypoints, effort_limits=[1.0] * 6), "gravity alone"),
            (CheckTrajectory, CheckTrajectory.Request(trajectory=JointTrajectory(joint_names=names)), "trajectory has no points"),
            (CheckTrajectory, CheckTrajectory.Request(trajectory=fast, sample_period=-1.0), "sample_period must be")):
        name = "time_parameterize" if kind is TimeParameterize else "check_trajectory"
        response = client.call(kind, f"{puma.ns}/{name}", request)
        assert not response.success and words in response.message, (words, response.message)
