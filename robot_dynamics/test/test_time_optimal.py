"""time_parameterize (TOPP-RA, Pham and Pham, IEEE T-RO 2018) against an independent implementation,
the PyPI toppra package with Pinocchio's RNEA (collocation, as ours), on the same path samples at the
same gridpoints: the same duration within 0.1 % (observed at most 4e-8; 4.9e-6 at 100 gridpoints on a
path with a dynamic singularity, where toppra's safeguards keep sd at 2e-4 instead of 0) at 100 and 1000 gridpoints on
panda (arm only), ur5 and a one-joint arm; every effort and velocity limit met at every gridpoint
(Pinocchio's torques, 1e-9 relative); the profile maximal: at every gridpoint sd is the largest
speed both reachable from the start and controllable to the end (an independent vertex-enumeration
solve of every stage's LP, 1e-9) wherever a maximal profile exists: at a dynamic singularity none does
(proven there), and each step is the paper's greedy one; the one-joint arm's bang-bang answer in closed form; payload,
armature and gravity counted; every bad input and every infeasible path refused by name.

discretization="interpolation", the paper's second scheme (toppra's DiscretizationType.Interpolation):
each segment's path acceleration held within the limits at both of its ends; against toppra with the
same scheme: the same duration within 0.1 % (observed at most 2.1e-9), with acceleration limits too,
every limit met at both ends of every segment by Pinocchio's torques (1e-9); and what it is for: a
trajectory interpolated between the gridpoints (cubic segments, as joint_trajectory_controller with
positions and velocities) stays within the limits where the collocation profile of the same path
breaks them by far (the demo's path and payload)."""
import numpy as np
import pytest

from topp_oracle import (INTERPOLATION, one_joint_urdf, panda_arm_urdf, pin_coefficients, pin_pair,
                         reachable_and_controllable, toppra_solve, with_payload_urdf)
from oracle import URDFS, pin

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.payload import add_payload
from robot_dynamics.resources import bundled_urdf

#: the effort limits of the tests, a fraction of the URDF's: at the URDF's these arms are held by their
#: velocity limits nearly all the way (the last test of toppra's durations has them too)
EFFORT_SCALE = {"panda": 0.6, "ur5": 0.5}
#: the waypoints of each arm's test path (inside its joint limits)
WAYPOINTS = {
    "panda": [[0.0, -0.6, 0.0, -2.2, 0.0, 1.6, 0.8], [0.8, 0.2, -0.5, -1.6, 0.6, 2.2, 0.0],
              [1.6, 0.6, 0.4, -0.9, -0.4, 2.8, -1.2], [0.6, -0.3, 1.1, -2.0, 1.2, 1.2, 0.4],
              [-0.8, 0.4, 0.2, -1.2, -1.0, 2.0, 1.8]],
    "ur5": [[0.0, -1.6, 1.4, -1.2, -1.6, 0.0], [1.2, -0.6, 0.8, -2.0, -0.6, 1.0],
            [2.4, -1.8, 2.2, -0.4, 0.8, 2.2], [0.4, -1.0, 0.2, -1.6, 1.8, -0.6]],
}


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    folder = tmp_path_factory.mktemp("arms")
    return {"panda": pin_pair(panda_arm_urdf(folder)), "ur5": pin_pair(URDFS["ur5"]), "folder": folder}


def limits_met(pair, tp, effort, vmax):
    """Pinocchio's torques at each gridpoint's (q, v, a) equal ours and stay within the effort
    limits, and v within the velocity limits, to 1e-9 relative."""
    tau = np.array([pin.rnea(pair.pin, pair.data, q, v, a) for q, v, a in zip(tp.q, tp.v, tp.a)])
    np.testing.assert_allclose(tp.tau, tau, rtol=0, atol=1e-9 * np.max(effort))
    assert np.all(np.abs(tau) <= effort * (1 + 1e-9)), np.max(np.abs(tau) / effort)
    if vmax is not None:
        assert np.all(np.abs(tp.v) <= vmax * (1 + 1e-9)), np.max(np.abs(tp.v) / vmax)


def consistent(tp, dq, ddq):
    """The TimedPath's own equations: sd_i+1^2 = sd_i^2 + 2 ds_i sdd_i, dt_i = 2 ds_i / (sd_i + sd_i+1),
    v = q' sd, a = q' sdd + q'' sd^2 (sdd_end at the last gridpoint)."""
    ds = np.diff(tp.s)
    x = tp.sd ** 2
    np.testing.assert_allclose(x[1:], x[:-1] + 2 * ds * tp.sdd, rtol=1e-9, atol=1e-12 * x.max())
    np.testing.assert_allclose(np.diff(tp.t), 2 * ds / (tp.sd[1:] + tp.sd[:-1]), rtol=1e-12)
    assert tp.duration == tp.t[-1] and tp.t[0] == 0.0
    u = np.append(tp.sdd, tp.sdd_end)
    np.testing.assert_allclose(tp.v, dq * tp.sd[:, None], rtol=1e-14, atol=0)
    np.testing.assert_allclose(tp.a, dq * u[:, None] + ddq * x[:, None], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gridpoints", [100, 1000])
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_same_duration_as_toppra_with_every_limit_met(arms, robot, gridpoints):
    pair = arms[robot]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS[robot], gridpoints)
    effort, vmax = EFFORT_SCALE[robot] * model.effort_limits, model.velocity_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort)
    sd, duration = toppra_solve(pair, s, q, dq, ddq, effort, vmax)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    assert len(tp.s) == gridpoints and tp.q is q or np.array_equal(tp.q, q)
    limits_met(pair, tp, effort, vmax)
    consistent(tp, dq, ddq)
    kinds = {name.split(" ")[0] for name in tp.limits if name}
    assert {"effort", "velocity"} <= kinds, kinds        # the path meets both kinds of limit


#: paths whose maximal profile exists (no dynamic singularity): the first span of each test path,
#: panda torque-bound all the way (no velocity limits), ur5 bound by torque and velocity in turn
MAXIMAL = {"panda": (0.6, np.inf), "ur5": (0.4, 1.0)}


@pytest.mark.parametrize("robot, gridpoints", [("panda", 100), ("ur5", 100), ("panda", 1000)])
def test_the_profile_is_maximal(arms, robot, gridpoints):
    """At every gridpoint sd is the largest speed that is both reachable from the start and
    controllable to the end, solved independently (every stage's LP by its vertices, on
    Pinocchio's coefficients), compared in x = sd^2 (the LPs' variable: at x = 0 a square root
    would turn their rounding, 1e-16, into 1e-8); the controllable sets agree too."""
    pair = arms[robot]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS[robot][:2], gridpoints)
    effort, vmax = MAXIMAL[robot][0] * model.effort_limits, MAXIMAL[robot][1] * model.velocity_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort, velocity_limits=vmax)
    a, b, c = pin_coefficients(pair, q, dq, ddq)
    best, K, singular, _ = reachable_and_controllable(a, b, c, dq, ddq, s, effort, vmax)
    x = tp.sd ** 2
    assert singular == -1
    np.testing.assert_allclose(x, best, rtol=1e-9, atol=1e-9 * x.max())
    np.testing.assert_allclose(tp.K, K, rtol=1e-9, atol=1e-9 * x.max())
    np.testing.assert_allclose(tp.sd[x > 1e-6 * x.max()], np.sqrt(best[x > 1e-6 * x.max()]), rtol=1e-9)
    assert np.count_nonzero(tp.limit_kind == 1) > gridpoints // 4        # effort-limited on much of it


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_at_a_dynamic_singularity_no_profile_is_maximal_and_the_greedy_steps_hold(arms, robot):
    """Where joint j's inertia term (M q')_j crosses zero with its effort limit active (a dynamic
    singularity), the largest speeds reachable and controllable at two neighbouring gridpoints
    cannot both be had: no path acceleration joins them (the independent LP proves it for these
    paths). Up to there the profile is maximal; everywhere it is the paper's greedy step, the
    largest speed in K_i+1 reachable from sd_i (1e-9), as toppra's is."""
    pair = arms[robot]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS[robot], 100)
    effort = EFFORT_SCALE[robot] * model.effort_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort)
    a, b, c = pin_coefficients(pair, q, dq, ddq)
    x = tp.sd ** 2
    best, K, singular, greedy = reachable_and_controllable(a, b, c, dq, ddq, s, effort, model.velocity_limits, x=x)
    assert singular > 0
    np.testing.assert_allclose(x[:singular + 1], best[:singular + 1], rtol=1e-9, atol=1e-9 * x.max())
    np.testing.assert_allclose(x, greedy, rtol=1e-9, atol=1e-9 * x.max())
    np.testing.assert_allclose(tp.K, K, rtol=1e-9, atol=1e-9 * x.max())
    assert np.all(x <= best * (1 + 1e-9) + 1e-9 * x.max())
    near = slice(singular - 1, singular + 2)
    j = np.flatnonzero(np.any(np.sign(a[near]) != np.sign(a[singular]), axis=0))
    assert len(j) and np.any(np.abs(c[singular, j]) > 0.5 * effort[j]), "not a zero-inertia crossing under load"


def test_acceleration_limits_and_path_speeds_at_the_ends(arms):
    """With joint acceleration limits too, from a moving start to a moving end: toppra's duration,
    every limit met, the profile maximal."""
    pair = arms["panda"]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"], 200)
    accel = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
    tp = rd.time_parameterize(model, s, q, dq, ddq, acceleration_limits=accel, start_speed=0.05, end_speed=0.1)
    _, duration = toppra_solve(pair, s, q, dq, ddq, model.effort_limits, model.velocity_limits, accel, 0.05, 0.1)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    assert tp.sd[0] == pytest.approx(0.05, rel=1e-12) and tp.sd[-1] == pytest.approx(0.1, rel=1e-12)
    assert np.all(np.abs(tp.a) <= accel * (1 + 1e-9))
    assert "acceleration" in {name.split(" ")[0] for name in tp.limits if name}
    limits_met(pair, tp, model.effort_limits, model.velocity_limits)
    a, b, c = pin_coefficients(pair, q, dq, ddq)
    x = tp.sd ** 2
    best, _, singular, greedy = reachable_and_controllable(a, b, c, dq, ddq, s, model.effort_limits, model.velocity_limits,
                                                           accel, 0.05 ** 2, 0.1 ** 2, x)
    np.testing.assert_allclose(x, greedy, rtol=1e-9, atol=1e-9 * x.max())
    upto = len(x) if singular < 0 else singular + 1
    np.testing.assert_allclose(x[:upto], best[:upto], rtol=1e-9, atol=1e-9 * x.max())


def test_payload_armature_and_gravity_count(arms):
    """A payload added with add_payload, rotor inertias and a tilted gravity: the same duration as
    toppra on Pinocchio with the payload welded into the URDF and the same armature and gravity."""
    folder = arms["folder"]
    mass, com, inertia = 3.0, [0.02, 0.0, 0.1], [0.01, 0.01, 0.005, 0.0, 0.0, 0.0]
    armature, gravity = np.array([0.3, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1]), np.array([1.5, 0.0, -9.6])
    reference = pin_pair(with_payload_urdf(folder, panda_arm_urdf(folder), "panda_link8", mass, com, inertia),
                         armature, gravity)
    model = load_urdf(panda_arm_urdf(folder))
    add_payload(model, "panda_link8", mass, com, inertia)
    model.armature, model.gravity = armature, gravity
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"], 300)
    tp = rd.time_parameterize(model, s, q, dq, ddq)
    _, duration = toppra_solve(reference, s, q, dq, ddq, model.effort_limits, model.velocity_limits)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    limits_met(reference, tp, model.effort_limits, model.velocity_limits)
    bare = rd.time_parameterize(load_urdf(panda_arm_urdf(folder)), s, q, dq, ddq)
    assert tp.duration > bare.duration * 1.01      # the load slows it down


# --- the one-joint arm: bang-bang in closed form ------------------------------------------------
def one_joint(arms, **kw):
    model = load_urdf(one_joint_urdf(arms["folder"], **kw))
    model.gravity = [0.0, 0.0, 0.0]
    return model


def straight(L, gridpoints):
    """q(s) = L s on s in [0, 1] (q' = L, q'' = 0) at uniform gridpoints."""
    s = np.linspace(0.0, 1.0, gridpoints)
    return s, (L * s)[:, None], np.full((gridpoints, 1), L), np.zeros((gridpoints, 1))


@pytest.mark.parametrize("gridpoints", [100, 101, 1000])
def test_one_joint_arm_bang_bang_in_closed_form(arms, gridpoints):
    """I = izz + m r^2 + armature, no gravity, effort limit tau, q from 0 to L: |u| <= beta = tau / (I L)
    and the only limit, so sd_i^2 = min(2 beta s_i, 2 beta (1 - s_i)) (full effort speeding up, full
    effort braking) and T = sum 2 ds_i / (sd_i + sd_i+1); with the midpoint a gridpoint (101) this
    is the continuous bang-bang time 2 sqrt(L I / tau) exactly. toppra's duration agrees too."""
    m, r, izz, armature, tau, L = 2.0, 0.4, 0.05, 0.07, 30.0, 2.5
    model = one_joint(arms, m=m, r=r, izz=izz, effort=tau)
    model.armature = [armature]
    I = izz + m * r * r + armature
    s, q, dq, ddq = straight(L, gridpoints)
    tp = rd.time_parameterize(model, s, q, dq, ddq)
    beta = tau / (I * L)
    sd = np.sqrt(np.minimum(2 * beta * s, 2 * beta * (1 - s)))
    np.testing.assert_allclose(tp.sd, sd, rtol=1e-12, atol=1e-12)
    T = np.sum(2 * np.diff(s) / (sd[1:] + sd[:-1]))
    assert tp.duration == pytest.approx(T, rel=1e-12)
    if gridpoints % 2:
        assert tp.duration == pytest.approx(2 * np.sqrt(L * I / tau), rel=1e-12)
    else:
        assert tp.duration == pytest.approx(2 * np.sqrt(L * I / tau), rel=2.0 / gridpoints ** 2)
    moving = ~np.isclose(sd[1:], sd[:-1], rtol=1e-12, atol=0)      # but the middle segment of an odd count: it coasts (u = 0)
    np.testing.assert_allclose(np.abs(tp.tau[:-1, 0][moving]), tau, rtol=1e-12)      # full effort
    assert np.count_nonzero(~moving) == (gridpoints + 1) % 2
    assert set(np.array(tp.limits[:-1])[moving]) == {"effort j"}
    pair = pin_pair(one_joint_urdf(arms["folder"], m=m, r=r, izz=izz, effort=tau), [armature], [0.0, 0.0, 0.0])
    _, duration = toppra_solve(pair, s, q, dq, ddq, np.array([tau]), None)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)


def test_one_joint_arm_with_a_velocity_limit_coasts(arms):
    """With a velocity limit w below the bang-bang peak: speed up at full effort, coast at w, brake:
    sd^2 = min(2 beta s, (w / L)^2, 2 beta (1 - s)); the gridpoints in the coast are velocity-limited."""
    m, r, izz, tau, L, w = 2.0, 0.4, 0.05, 30.0, 2.5, 2.0
    model = one_joint(arms, m=m, r=r, izz=izz, effort=tau, velocity=w)
    I = izz + m * r * r
    s, q, dq, ddq = straight(L, 1001)
    tp = rd.time_parameterize(model, s, q, dq, ddq)
    beta = tau / (I * L)
    sd = np.sqrt(np.minimum(np.minimum(2 * beta * s, (w / L) ** 2), 2 * beta * (1 - s)))
    np.testing.assert_allclose(tp.sd, sd, rtol=1e-12, atol=1e-12)
    # the continuous trapezoid: L / w + w I / tau, within the grid's error
    assert tp.duration == pytest.approx(L / w + w * I / tau, rel=1e-4)
    assert tp.limits[500] == "velocity j" and tp.limits[1] == "effort j" and tp.limits[-2] == "effort j"


# --- what cannot be timed, and bad inputs -------------------------------------------------------
def test_gravity_beyond_a_limit_where_the_arm_must_rest_is_named(arms):
    """A one-joint arm under gravity (axis horizontal) whose effort limit is below m g r: a
    rest-to-rest path that ends horizontal cannot be timed; the error names the joint and where."""
    model = load_urdf(one_joint_urdf(arms["folder"], m=2.0, r=0.4, effort=5.0))
    model.gravity = [0.0, -9.81, 0.0]      # gravity in the plane of the joint's motion: m g r = 7.85 N m
    s = np.linspace(0.0, 1.0, 50)
    q = (-np.pi / 2 + np.pi / 2 * s)[:, None]
    with pytest.raises(ValueError, match=r"joint 'j'.*end of the path.*gridpoint 49"):
        rd.time_parameterize(model, s, q, np.full((50, 1), np.pi / 2), np.zeros((50, 1)))


def test_an_infeasible_path_is_named_never_nan(arms):
    """panda with half its effort limits: on the way gravity alone needs more than joint 2 may
    give, and what braking or speeding up would take conflicts with joint 1: the error names both
    joints and the gridpoint, never a NaN profile. With 40 kg on the flange it cannot even hold the
    start."""
    model = load_urdf(panda_arm_urdf(arms["folder"]))
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"], 100)
    with pytest.raises(ValueError, match=r"cannot be timed within the limits at gridpoint 33 \(s = 3.57.*joint "
                                         r"'panda_joint1'.*joint 'panda_joint2'.*gravity alone exceeds the effort "
                                         r"limit of joint 'panda_joint2' there"):
        rd.time_parameterize(model, s, q, dq, ddq, effort_limits=0.5 * model.effort_limits)
    add_payload(model, "panda_link8", 40.0, [0.0, 0.0, 0.1], [0.1, 0.1, 0.1, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"gravity alone needs -152.* joint 'panda_joint2' at the start of the path "
                                         r"\(gridpoint 0, s = 0\), beyond its effort limit 87"):
        rd.time_parameterize(model, s, q, dq, ddq)


def test_a_start_speed_the_end_cannot_follow_is_refused(arms):
    model = arms["panda"].model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"], 100)
    with pytest.raises(ValueError, match=r"start_speed 50 cannot be followed.*\[0, "):
        rd.time_parameterize(model, s, q, dq, ddq, start_speed=50.0)


def test_an_end_speed_beyond_the_limits_or_no_limit_at_all_is_named(arms):
    model = one_joint(arms, velocity=2.0)
    path = straight(2.5, 20)         # q' = 2.5: the velocity limit allows sd <= 0.8
    with pytest.raises(ValueError, match=r"end_speed 1 is not allowed at the end of the path, gridpoint 19"):
        rd.time_parameterize(model, *path, end_speed=1.0)
    with pytest.raises(ValueError, match=r"nothing bounds the path speed at gridpoint 18"):
        rd.time_parameterize(model, *path, velocity_limits=np.inf, effort_limits=np.inf)


@pytest.mark.parametrize("change, message", [
    (dict(s=np.linspace(0, 1, 10)[::-1]), r"s must increase: s\[1\]"),
    (dict(s=np.r_[0, 0.1, 0.1, np.linspace(0.2, 1, 7)]), r"s must increase: s\[2\]"),
    (dict(s=np.r_[np.nan, np.linspace(0.1, 1, 9)]), r"s contains NaN or inf at gridpoint 0"),
    (dict(s=np.linspace(0, 1, 9)), r"q must have shape \(9, 7\)"),
    (dict(q=np.zeros((10, 6))), r"q must have shape \(10, 7\)"),
    (dict(dq_ds=np.zeros((10, 7))), r"dq_ds is zero at gridpoint 0"),
    (dict(d2q_ds2=np.full((10, 7), np.inf)), r"d2q_ds2 contains NaN or inf at gridpoint 0"),
    (dict(velocity_limits=0.0), r"velocity_limits must be positive.*'panda_joint1'"),
    (dict(effort_limits=[1.0, 2.0]), r"effort_limits takes one number or one per joint \(7\)"),
    (dict(effort_limits=[87, 87, 87, -1, 12, 12, 12]), r"effort_limits must be positive.*'panda_joint4' \(effort_limits\[3\]\)"),
    (dict(acceleration_limits=np.nan), r"acceleration_limits must be positive"),
    (dict(start_speed=-1.0), r"start_speed must be a finite non-negative"),
    (dict(end_speed=np.inf), r"end_speed must be a finite non-negative"),
    (dict(effort_limits="87"), r"effort_limits takes one number, one per joint \(7\) or a dict by joint name, got '87'"),
    (dict(velocity_limits={"panda_joint2": "fast"}), r"velocity_limits\['panda_joint2'\] must be a number, got 'fast'"),
    (dict(dq_ds=np.tile(2 * np.subtract(WAYPOINTS["panda"][1], WAYPOINTS["panda"][0]), (10, 1))),
     r"dq_ds disagrees with q between gridpoints 0 and 1 \(s = 0 to 0.111111\): joint 'panda_joint\d'"),
    (dict(threads=0), r"threads must be None or an integer from 1 to \d+ .*got 0"),
    (dict(threads=-1), r"threads must be None or an integer from 1 to \d+ .*got -1"),
    (dict(threads=1000), r"threads must be None or an integer from 1 to \d+ .*got 1000"),
])
def test_bad_inputs_are_refused_by_name(arms, change, message):
    model = arms["panda"].model
    s = np.linspace(0.0, 1.0, 10)
    q = np.linspace(WAYPOINTS["panda"][0], WAYPOINTS["panda"][1], 10)
    args = dict(s=s, q=q, dq_ds=np.tile(np.subtract(WAYPOINTS["panda"][1], WAYPOINTS["panda"][0]), (10, 1)),
                d2q_ds2=np.zeros((10, 7)))
    args.update(change)
    with pytest.raises(ValueError, match=message):
        rd.time_parameterize(model, **args)


def test_a_floating_base_or_a_zero_urdf_limit_is_refused(arms):
    biped = load_urdf(URDFS["biped"], floating_base=True)
    s = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="one coordinate each; joint .* is floating"):
        rd.time_parameterize(biped, s, np.zeros((5, biped.nq)), np.ones((5, biped.nv)), np.zeros((5, biped.nv)))
    model = one_joint(arms)
    model.effort_limits[0] = 0.0
    with pytest.raises(ValueError, match="URDF gives joint 'j' effort limit 0: pass effort_limits"):
        rd.time_parameterize(model, *straight(1.0, 5))


# --- discretization="interpolation": each segment's path acceleration held within the limits at both ends --


def segment_ends_met(pair, tp, dq, ddq, effort, vmax, accel=None):
    """At the start (u_i, x_i) and the end (u_i, x_i+1) of every segment, Pinocchio's torques within
    the effort limits, the accelerations within theirs and the speeds within the velocity limits."""
    x = tp.sd ** 2
    for k, (start, stop) in enumerate(((slice(0, -1), slice(0, -1)), (slice(1, None), slice(1, None)))):
        qs, xs = tp.q[start], x[stop][:, None]
        a = dq[start] * tp.sdd[:, None] + ddq[start] * xs
        v = dq[start] * np.sqrt(xs)
        tau = np.array([pin.rnea(pair.pin, pair.data, qi, vi, ai) for qi, vi, ai in zip(qs, v, a)])
        assert np.all(np.abs(tau) <= effort * (1 + 1e-9)), ("segment end" if k else "segment start",
                                                            np.max(np.abs(tau) / effort))
        assert np.all(np.abs(v) <= vmax * (1 + 1e-9))
        if accel is not None:
            assert np.all(np.abs(a) <= accel * (1 + 1e-9)), np.max(np.abs(a) / accel)


@pytest.mark.parametrize("gridpoints", [100, 1000])
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_same_duration_as_toppra_and_limits_met_at_both_ends_of_every_segment(arms, robot, gridpoints):
    pair = arms[robot]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS[robot], gridpoints)
    effort, vmax = EFFORT_SCALE[robot] * model.effort_limits, model.velocity_limits
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort, discretization="interpolation")
    _, duration = toppra_solve(pair, s, q, dq, ddq, effort, vmax, scheme=INTERPOLATION)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    segment_ends_met(pair, tp, dq, ddq, effort, vmax)


def test_acceleration_limits_with_interpolation(arms):
    pair = arms["panda"]
    model = pair.model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["panda"][:3], 200)
    effort, vmax, accel = 0.6 * model.effort_limits, model.velocity_limits, np.full(7, 6.0)
    tp = rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort, acceleration_limits=accel,
                              discretization="interpolation")
    _, duration = toppra_solve(pair, s, q, dq, ddq, effort, vmax, accel=accel, scheme=INTERPOLATION)
    assert abs(tp.duration / duration - 1) < 1e-3, (tp.duration, duration)
    segment_ends_met(pair, tp, dq, ddq, effort, vmax, accel)
    assert any(name.startswith("acceleration") for name in tp.limits)


#: the trajectory demo's path (demo/trajectory_demo.py): the PUMA carrying 3 kg through five waypoints
PUMA_WAYPOINTS = [[0.4, -0.8, 1.2, 0.5, -0.6, 0.3], [1.2, -1.5, 0.5, 1.3, 0.4, -0.7], [-0.3, -0.4, 1.7, -0.6, 0.9, 1.0],
                  [0.7, -1.3, 0.7, 0.9, -0.5, -0.6], [0.4, -0.8, 1.2, 0.5, -0.6, 0.3]]


def interpolated_peak(model, tp, effort):
    """max |tau| / limit along the trajectory interpolated with cubic segments through the gridpoints'
    positions and velocities, sampled every 0.5 ms."""
    t = np.arange(0.0, tp.duration, 5e-4)
    q, v, a = rd.Trajectory(tp.t, tp.q, tp.v).sample(t)
    return rd.check_trajectory(model, t, q, v, a, effort_limits=effort).peak.max()


def test_between_the_gridpoints_the_interpolated_trajectory_stays_within_the_limits():
    """Collocation leaves u_i free where a joint's inertia term is near zero at gridpoint i (a dynamic
    singularity): the profile dips sharply there, and the trajectory through the gridpoints needs twice
    the torque limit between them; with interpolation it stays within 1 % of the limits."""
    model = load_urdf(bundled_urdf("puma560"))
    model.armature = [1.141, 4.754, 0.862, 0.202, 0.181, 0.206]
    add_payload(model, "tool0", 3.0, [0.0, 0.0, 0.05], [0.004, 0.004, 0.004, 0.0, 0.0, 0.0])
    effort = 0.9 * model.effort_limits
    s, q, dq, ddq = rd.path_through_waypoints(PUMA_WAYPOINTS, 100)
    peaks = {scheme: interpolated_peak(model, rd.time_parameterize(model, s, q, dq, ddq, effort_limits=effort,
                                                                   discretization=scheme), effort)
             for scheme in ("collocation", "interpolation")}
    assert peaks["interpolation"] < 1.01 and peaks["collocation"] > 1.5, peaks


def test_a_bad_discretization_is_refused_by_name(arms):
    model = arms["ur5"].model
    s, q, dq, ddq = rd.path_through_waypoints(WAYPOINTS["ur5"], 20)
    with pytest.raises(ValueError, match="discretization must be one of"):
        rd.time_parameterize(model, s, q, dq, ddq, discretization="trapezoid")


def test_limits_by_joint_name(arms):
    """A dict by joint name sets the joints it names, the URDF's (or none) the others; an unknown name
    is a KeyError naming the argument; check_trajectory takes the same."""
    model = arms["panda"].model
    path = rd.path_through_waypoints(WAYPOINTS["panda"], gridpoints=50)
    effort = model.effort_limits * 0.6
    by_name = rd.time_parameterize(model, *path, effort_limits={"panda_joint2": effort[1], "panda_joint4": effort[3]})
    vector = model.effort_limits.copy()
    vector[[1, 3]] = effort[[1, 3]]
    assert by_name.duration == rd.time_parameterize(model, *path, effort_limits=vector).duration
    with pytest.raises(KeyError, match="acceleration_limits: unknown joint 'elbow'"):
        rd.time_parameterize(model, *path, acceleration_limits={"elbow": 1.0})
    check = rd.check_trajectory(model, by_name.t, by_name.q, by_name.v, by_name.a, effort_limits={"panda_joint2": 1.0})
    assert check.effort_limits[1] == 1.0 and check.effort_limits[0] == model.effort_limits[0] and not check.feasible
    with pytest.raises(ValueError, match=r"effort_limits takes one number, one per joint \(7\) or a dict"):
        rd.check_trajectory(model, by_name.t, by_name.q, by_name.v, by_name.a, effort_limits="none")
    for threads in (0, -1, 1000, 1.5):
        with pytest.raises(ValueError, match="threads must be None or an integer"):
            rd.check_trajectory(model, by_name.t, by_name.q, by_name.v, by_name.a, threads=threads)


def test_a_coarse_cubic_path_passes_the_derivative_check(arms):
    """The corrected trapezoid rule is exact on cubic splines: panda's waypoints at as few gridpoints as
    waypoints pass (the plain rule was off by up to 1.4 ds |dq_ds| there); the same path with d2q_ds2
    zeroed does not."""
    model = arms["panda"].model
    path = rd.path_through_waypoints(WAYPOINTS["panda"], gridpoints=len(WAYPOINTS["panda"]))
    assert rd.time_parameterize(model, *path, effort_limits=np.inf, velocity_limits=1.0).duration > 0
    with pytest.raises(ValueError, match="dq_ds disagrees with q between gridpoints"):
        rd.time_parameterize(model, *path[:3], np.zeros_like(path[3]), effort_limits=np.inf, velocity_limits=1.0)
