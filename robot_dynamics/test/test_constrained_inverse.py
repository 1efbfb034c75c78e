"""Constrained inverse dynamics (Kim, section 3.1) on the bundled five-bar parallel robot
(urdf/five_bar.urdf: a tree cut at the end effector, a 6d loop, two motors, three passive joints),
against the equations of motion and constraints built from Pinocchio's M, nonLinearEffects, frame
Jacobians and their drift: the unique case (two motors), redundant actuation (three actuators:
the least force against the pseudo-inverse solution, eq. 59; the least torque against the closed
form of eqs. 62-64 and against a direct least-squares solve), every joint actuated (eqs. 65-66),
too few actuators (refused, or the least-squares solution), motions that break the loop (refused,
naming it), bad input, batches. The four-bar with the crank alone actuated against its closed form
(four_bar.py). Contact inverse dynamics, the case "floating joints passive": on standing legged
robots (solo12 on its point feet, talos and the biped on their soles), at rest and moving, against
the equations of motion, the least-norm forces and forward dynamics; and constrained_inverse_dynamics
with every joint but the base actuated against it and against the KKT system built from Pinocchio's
terms (solo12 standing: redundant, least force and least torque)."""
import numpy as np
import pytest

from four_bar import closed_four_bar, four_bar_terms
from oracle import (FIVE_BAR_LOOPS, FIVE_BAR_MOTORS, FOUR_BAR_LOOPS, SOLO_FEET, Pair, moving_state, null_space, rel_err,
                    srdf_posture)
from robot_dynamics import dynamics as rd
from robot_dynamics.dynamics import ConstraintError

TOL = 1e-9
THREE = FIVE_BAR_MOTORS + ["left_elbow_joint"]      # redundant actuation


@pytest.fixture(scope="module")
def five_bar():
    return Pair("five_bar")


def closed_states(P, rng, n, spread=0.4):
    """n states of the five-bar on its loop: the motors at random angles, the passive joints
    assembled, v and a meeting the loop (from Pinocchio's J and Jdot v)."""
    m = P.model
    motors = [m.joint_index[j] for j in FIVE_BAR_MOTORS]
    for _ in range(n):
        guess = np.zeros(m.nq)
        guess[motors] = rng.uniform(-spread, spread, 2)
        q = rd.assemble(m, guess, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
        v, a = moving_state(P, q, (), FIVE_BAR_LOOPS, rng)
        yield q, v, a


def split(m, actuated):
    mask = np.zeros(m.nv, bool)
    mask[[m.joint_index[j] for j in actuated]] = True
    return mask, np.flatnonzero(mask), np.flatnonzero(~mask)


def test_five_bar_two_motors_unique(five_bar):
    """Two motors, three passive joints, three independent loop rows: tau_a and f solve
    [E_a, J^T] [tau_a; f] = M a + b uniquely (the least-norm f: zero on the loop's three
    identically-zero rows), to 1e-9; both objectives agree; names and a mask agree; the torques
    at rest are the mechanism's gravity torques."""
    P = five_bar
    m = P.model
    mask, act, pas = split(m, FIVE_BAR_MOTORS)
    for q, v, a in closed_states(P, np.random.default_rng(1), 10):
        M, b, J, drift = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
        x = np.linalg.lstsq(np.column_stack((np.eye(m.nv)[:, act], J.T)), M @ a + b, rcond=1e-13)[0]
        assert rel_err(tau[act], x[:2]) < TOL and rel_err(f, x[2:]) < TOL
        np.testing.assert_array_equal(tau[pas], 0.0)
        assert rel_err(M @ a + b, tau + J.T @ f) < TOL
        for other in (rd.constrained_inverse_dynamics(m, q, v, a, mask, loops=FIVE_BAR_LOOPS),
                      rd.constrained_inverse_dynamics(m, q, v, a, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS,
                                                      objective="min_torque")):
            assert rel_err(other[0], tau) < TOL and rel_err(other[1], f) < TOL
        tau0, f0 = rd.constrained_inverse_dynamics(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
        x = np.linalg.lstsq(np.column_stack((np.eye(m.nv)[:, act], J.T)), P.constraint_terms(q, 0 * v, (),
                            FIVE_BAR_LOOPS)[1], rcond=1e-13)[0]
        assert rel_err(tau0[act], x[:2]) < TOL and rel_err(f0, x[2:]) < TOL


def test_five_bar_three_actuators_least_force(five_bar):
    """Redundant actuation, "min_force": f = (J_p^T)^+ (tau_pr - tau_p) (Kim eq. 59 with the
    pseudo-inverse), tau_a = tau_ar - J_a^T f, with passive torques given (a spring, say)."""
    P = five_bar
    m = P.model
    mask, act, pas = split(m, THREE)
    rng = np.random.default_rng(2)
    for q, v, a in closed_states(P, rng, 10):
        tp = np.where(mask, np.nan, rng.uniform(-0.5, 0.5, m.nv))     # read at the passive joints only
        tp[act] = 0.0
        M, b, J, drift = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)
        tau_r = M @ a + b
        f = np.linalg.pinv(J[:, pas].T) @ (tau_r[pas] - tp[pas])
        tau, forces = rd.constrained_inverse_dynamics(m, q, v, a, THREE, loops=FIVE_BAR_LOOPS, passive_torques=tp)
        assert rel_err(forces, f) < TOL
        assert rel_err(tau[act], tau_r[act] - J[:, act].T @ f) < TOL
        np.testing.assert_array_equal(tau[pas], tp[pas])
        assert rel_err(tau + J.T @ forces, tau_r) < TOL


def test_five_bar_three_actuators_least_torque(five_bar):
    """Redundant actuation, "min_torque": Kim's closed form (eqs. 62-64) with N a basis of the null
    space of J_p^T, s* = (J_a^T N)^+ t0, t0 = tau_ar - J_a^T f0, tau_a = (1 - J_a^T N (J_a^T N)^+) t0
    and f = f0 + N s*; the same tau_a from a direct solve of min |tau_ar - J_a^T f|^2 subject to
    J_p^T f = tau_pr - tau_p (the equality-constrained least squares' KKT system, numpy's lstsq);
    |tau_a| no larger than the least force's."""
    P = five_bar
    m = P.model
    mask, act, pas = split(m, THREE)
    for q, v, a in closed_states(P, np.random.default_rng(3), 10):
        M, b, J, drift = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)
        tau_r = M @ a + b
        Ja, Jp, c = J[:, act], J[:, pas], tau_r[pas]
        f0 = np.linalg.pinv(Jp.T) @ c
        N = null_space(Jp.T)
        t0 = tau_r[act] - Ja.T @ f0
        X = Ja.T @ N
        s = np.linalg.pinv(X, rcond=1e-10) @ t0
        tau_a, f = (np.eye(len(act)) - X @ np.linalg.pinv(X, rcond=1e-10)) @ t0, f0 + N @ s
        tau, forces = rd.constrained_inverse_dynamics(m, q, v, a, THREE, loops=FIVE_BAR_LOOPS, objective="min_torque")
        assert rel_err(tau[act], tau_a) < TOL and rel_err(forces, f) < TOL
        np.testing.assert_array_equal(tau[pas], 0.0)
        k = J.shape[0]
        K = np.block([[Ja @ Ja.T, Jp], [Jp.T, np.zeros((len(pas), len(pas)))]])
        direct = np.linalg.lstsq(K, np.concatenate((Ja @ tau_r[act], c)), rcond=1e-12)[0][:k]
        assert rel_err(tau[act], tau_r[act] - Ja.T @ direct) < TOL
        least_force = rd.constrained_inverse_dynamics(m, q, v, a, THREE, loops=FIVE_BAR_LOOPS)[0]
        assert np.linalg.norm(tau[act]) <= np.linalg.norm(least_force[act]) * (1 + 1e-12)


def test_every_joint_actuated(five_bar):
    """Every joint actuated (Kim eqs. 65-66): "min_force" gives f = 0 and tau = ID(q, v, a), the
    open chain's torques; "min_torque" f = (J J^T)^+ J tau_r and tau = tau_r - J^T f."""
    P = five_bar
    m = P.model
    everything = np.ones(m.nv, bool)
    for q, v, a in closed_states(P, np.random.default_rng(4), 5):
        M, b, J, drift = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, everything, loops=FIVE_BAR_LOOPS)
        np.testing.assert_array_equal(f, 0.0)
        assert rel_err(tau, M @ a + b) < TOL
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, everything, loops=FIVE_BAR_LOOPS, objective="min_torque")
        expected = np.linalg.pinv(J.T) @ (M @ a + b)
        assert rel_err(f, expected) < TOL and rel_err(tau, M @ a + b - J.T @ expected) < TOL


def test_too_few_actuators(five_bar):
    """One motor cannot drive a two-degree-of-freedom mechanism: ConstraintError naming the passive
    joints left unbalanced; least_squares=True gives f = (J_p^T)^+ (tau_pr - tau_p) and
    tau_a = tau_ar - J_a^T f (the passive rows then do not balance)."""
    P = five_bar
    m = P.model
    mask, act, pas = split(m, ["left_base_joint"])
    q, v, a = next(closed_states(P, np.random.default_rng(5), 1))
    with pytest.raises(ConstraintError, match=r"the actuated joints cannot produce this motion: the passive joint\(s\) "
                                              r"('\w+', ){3}'\w+' cannot follow .*loop 0 \(6d between 'end_effector' "
                                              r"and 'right_distal_tip'\) act.* on only 3 of the 4 passive coordinates"):
        rd.constrained_inverse_dynamics(m, q, v, a, ["left_base_joint"], loops=FIVE_BAR_LOOPS)
    M, b, J, drift = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)
    tau_r = M @ a + b
    f = np.linalg.pinv(J[:, pas].T) @ tau_r[pas]
    tau, forces = rd.constrained_inverse_dynamics(m, q, v, a, ["left_base_joint"], loops=FIVE_BAR_LOOPS,
                                                  least_squares=True)
    assert rel_err(forces, f) < TOL and rel_err(tau[act], tau_r[act] - J[:, act].T @ f) < TOL
    np.testing.assert_array_equal(tau[pas], 0.0)
    assert np.abs(J[:, pas].T @ forces - tau_r[pas]).max() > 1e-3       # the passive rows do not balance
    free = rd.constrained_forward_dynamics(m, q, v, np.zeros(m.nv), [], FIVE_BAR_LOOPS)[0]   # needs no torque
    assert np.abs(rd.constrained_inverse_dynamics(m, q, v, free, ["left_base_joint"], loops=FIVE_BAR_LOOPS)[0]).max() < 1e-9
    with pytest.raises(ConstraintError, match=r"cannot produce this motion \(batch row 1\): the passive joint"):
        rd.constrained_inverse_dynamics(m, np.array([q, q]), np.array([v, v]), np.array([free, a]),
                                        ["left_base_joint"], loops=FIVE_BAR_LOOPS, passive_torques=np.zeros(m.nv))


def test_a_motion_that_breaks_the_loop_is_refused_naming_it(five_bar):
    """J v != 0 or J a + Jdot v != 0 beyond the tolerance: ConstraintError naming the loop and the
    level; tolerance=None skips the check; rounding-level violations pass."""
    P = five_bar
    m = P.model
    q, v, a = next(closed_states(P, np.random.default_rng(6), 1))
    J = P.constraint_terms(q, v, (), FIVE_BAR_LOOPS)[2]
    off = np.linalg.pinv(J) @ np.array([1e-3, 0, 0, 0, 0, 0])      # moves the end effector off the loop
    name = r"loop 0 \(6d between 'end_effector' and 'right_distal_tip'\)"
    with pytest.raises(ConstraintError, match=rf"the motion does not meet {name} at the velocity level: .*J v = 0"):
        rd.constrained_inverse_dynamics(m, q, v + off, a, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ConstraintError, match=rf"does not meet {name} at the acceleration level: .*J a \+ Jdot v = 0"):
        rd.constrained_inverse_dynamics(m, q, v, a + off, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ConstraintError, match=r"\(batch row 1\)"):
        rd.constrained_inverse_dynamics(m, np.array([q, q]), np.array([v, v]), np.array([a, a + off]),
                                        FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    tau, f = rd.constrained_inverse_dynamics(m, q, v, a + off, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, tolerance=None)
    assert np.all(np.isfinite(tau)) and np.all(np.isfinite(f))
    rd.constrained_inverse_dynamics(m, q, v + off * 1e-12, a, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)


def test_bad_input_is_refused_by_name(five_bar):
    m = five_bar.model
    q = np.zeros(m.nq)
    call = rd.constrained_inverse_dynamics
    for actuated, words in ((["left_base"], "actuated: unknown joint 'left_base'; the joints with coordinates are "
                                            "left_base_joint"),
                            (["right_distal_tip_joint"], "joint 'right_distal_tip_joint' is fixed: it has no coordinate"),
                            ("left_base_joint", "actuated must be a boolean mask .* or a list of joint names, got the "
                                                "string"),
                            (np.ones(4, bool), r"actuated must be a boolean mask of shape \(5,\)"),
                            (np.ones(5), r"actuated must be a boolean mask .* got float64"),
                            ([1, 2], "actuated must be a boolean mask")):
        with pytest.raises(ValueError, match=words):
            call(m, q, 0, 0, actuated, loops=FIVE_BAR_LOOPS)
    panda = Pair("panda").model
    with pytest.raises(ValueError, match="joint 'panda_finger_joint2' mimics another joint"):
        call(panda, rd.neutral(panda), 0, 0, ["panda_finger_joint2"])
    with pytest.raises(ValueError, match="objective must be 'min_force' or 'min_torque', got 'least'"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, objective="least")
    with pytest.raises(ValueError, match="tolerance must be a finite non-negative number"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, tolerance=-1.0)
    with pytest.raises(ValueError, match="passive_torques contains NaN or inf"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, passive_torques=np.full(5, np.nan))
    with pytest.raises(ValueError, match=r"passive_torques must have shape \(5,\)"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, passive_torques=np.zeros(3))
    with pytest.raises(ValueError, match=r"q contains NaN or inf \(batch row 1\)"):
        call(m, np.array([q, q + np.nan]), 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ValueError, match="loop 0: kind must be 'point' or '6d'"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=[("end_effector", "right_distal_tip", "hinge")])
    with pytest.raises(KeyError, match="unknown frame 'tip'"):
        call(m, q, 0, 0, FIVE_BAR_MOTORS, loops=[("end_effector", "tip", "6d")])


def test_batches_and_out_equal_single_states(five_bar):
    m = five_bar.model
    rng = np.random.default_rng(7)
    S = list(closed_states(five_bar, rng, 70))
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    TP = rng.uniform(-0.2, 0.2, (70, m.nv))
    for objective in ("min_force", "min_torque"):
        for threads in (1, 2):
            tau, f = rd.constrained_inverse_dynamics(m, Q, V, A, THREE, loops=FIVE_BAR_LOOPS, passive_torques=TP,
                                                     objective=objective, threads=threads)
            out = (np.empty_like(tau), np.empty_like(f))
            got = rd.constrained_inverse_dynamics(m, Q, 0, 0, THREE, loops=FIVE_BAR_LOOPS, passive_torques=TP[0],
                                                  objective=objective, threads=threads, out=out)
            assert got[0] is out[0] and got[1] is out[1]
            for k, (q, v, a) in enumerate(S):
                single = rd.constrained_inverse_dynamics(m, q, v, a, THREE, loops=FIVE_BAR_LOOPS,
                                                         passive_torques=TP[k], objective=objective)
                np.testing.assert_array_equal(tau[k], single[0])
                np.testing.assert_array_equal(f[k], single[1])
                rest = rd.constrained_inverse_dynamics(m, q, 0, 0, THREE, loops=FIVE_BAR_LOOPS,
                                                       passive_torques=TP[0], objective=objective)
                np.testing.assert_array_equal(out[0][k], rest[0])
                np.testing.assert_array_equal(out[1][k], rest[1])
    with pytest.raises(ValueError, match="out must be 2 distinct C-contiguous"):
        rd.constrained_inverse_dynamics(m, Q, 0, 0, THREE, loops=FIVE_BAR_LOOPS, out=(np.empty((70, 5)),) * 2)


def test_four_bar_inverse_dynamics_with_the_crank_alone_actuated():
    """The unique case (one actuator, two passive joints, a planar point loop of rank 2): the crank
    torque that makes the linkage follow (t2, t2', t2'') equals the Lagrangian's
    I t2'' + c t2'^2 + dV/dt2, tau and the forces solve the equations of motion built from
    Pinocchio's M, nonLinearEffects and frame Jacobians ([E_a, J^T] [tau_a; f] = M a + b, the
    least-norm f: the loop's force along the plane's normal is zero), and either objective gives
    the same answer."""
    P = Pair("four_bar", False)
    m = P.model
    rng = np.random.default_rng(11)
    for t2 in np.linspace(-np.pi, np.pi, 13):
        w2, t2dd = rng.uniform(-5, 5), rng.uniform(-20, 20)
        q, v, a = closed_four_bar(t2, w2, t2dd)
        inertia, c, dV = four_bar_terms(t2)
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, ["crank_joint"], loops=FOUR_BAR_LOOPS)
        assert abs(tau[0] - (inertia * t2dd + c * w2 ** 2 + dV)) < TOL * max(1.0, abs(tau[0]))
        np.testing.assert_array_equal(tau[1:], 0.0)
        M, b, J, drift = P.constraint_terms(q, v, (), FOUR_BAR_LOOPS)
        assert np.abs(J @ a + drift).max() < 1e-12 * max(1.0, np.abs(drift).max())   # the closed form's motion
        x = np.linalg.lstsq(np.column_stack((np.eye(3)[:, :1], J.T)), M @ a + b, rcond=1e-13)[0]
        assert rel_err(tau[0], x[0]) < TOL and rel_err(f, x[1:]) < TOL and f[1] == 0.0
        np.testing.assert_allclose(rd.constrained_inverse_dynamics(m, q, v, a, ["crank_joint"], loops=FOUR_BAR_LOOPS,
                                                                    objective="min_torque")[0], tau, rtol=TOL, atol=TOL)
    q, _, _ = closed_four_bar(0.3)    # at rest: the gravity torque, from the virtual work alone
    tau, f = rd.constrained_inverse_dynamics(m, q, 0, 0, ["crank_joint"], loops=FOUR_BAR_LOOPS)
    assert rel_err(tau[0], four_bar_terms(0.3)[2]) < TOL


# --- contact inverse dynamics: the case "floating joints passive", on standing legged robots -----------
TALOS_SOLES = ["left_sole_link", "right_sole_link"]


@pytest.fixture(scope="module")
def solo():
    return Pair("solo12", True)


@pytest.fixture(scope="module")
def talos():
    return Pair("talos", True)


def random_state(pair, rng):
    q, v, _ = pair.random_state(rng)
    return q, v, rng.uniform(-5, 5, pair.model.nv)


def padded(f):
    return np.concatenate((f, np.zeros(6 - len(f))))


def check_contact_inverse(m, q, v, a, contacts):
    """tau and forces satisfy M a + b = tau + J^T f (to 1e-9), the floating rows are zero, the
    forces are the least-norm ones, and with them applied as external wrenches our forward dynamics
    returns a. Returns the forces."""
    tau, f = rd.contact_inverse_dynamics(m, q, v, a, contacts)
    J, _ = rd.constraint_jacobian(m, q, v, contacts)
    M, b = rd.mass_matrix(m, q), rd.bias_forces(m, q, v)
    assert rel_err(tau + J.T @ f, M @ a + b) < TOL
    np.testing.assert_array_equal(tau[:6], 0.0)
    tau_id = rd.inverse_dynamics(m, q, v, a)
    assert rel_err(f, np.linalg.lstsq(J[:, :6].T, tau_id[:6], rcond=None)[0]) < TOL
    rows, k = {}, 0
    for frame, kind in contacts:
        n = 3 if kind == "point" else 6
        rows[frame] = padded(f[k:k + n])
        k += n
    qdd = rd.forward_dynamics(m, q, v, tau, external_wrenches=rows)
    np.testing.assert_allclose(qdd, a, rtol=0, atol=TOL * max(1.0, np.abs(a).max()))
    return f


@pytest.mark.parametrize("posture", ["standing", "straight_standing"])
def test_contact_inverse_dynamics_standing_quadruped(solo, posture):
    """solo12 on its four feet in its SRDF postures: at rest the forces carry the weight (sum of
    vertical forces = m g); with motion, an acceleration that the contacts allow."""
    m = solo.model
    q = srdf_posture(m, posture)
    contacts = [(f, "point") for f in SOLO_FEET]
    heights = [rd.frame_placement(m, q, f)[2, 3] for f in SOLO_FEET]
    assert np.ptp(heights) < 1e-9       # the SRDF posture stands level on its four feet
    f = check_contact_inverse(m, q, np.zeros(m.nv), np.zeros(m.nv), contacts)
    assert abs(f[2::3].sum() - m.total_mass * 9.81) < 1e-9 * m.total_mass * 9.81
    if posture == "straight_standing":  # symmetric: every foot carries a quarter
        np.testing.assert_allclose(f[2::3], m.total_mass * 9.81 / 4, rtol=1e-9)
    rng = np.random.default_rng(5)
    J, _ = rd.constraint_jacobian(m, q, 0, contacts)
    null = np.linalg.svd(J)[2][J.shape[0]:].T
    for _ in range(5):
        v = null @ rng.normal(size=null.shape[1])
        drift = rd.constraint_jacobian(m, q, v, contacts)[1]
        a = np.linalg.lstsq(J, -drift, rcond=None)[0] + null @ rng.normal(size=null.shape[1])
        check_contact_inverse(m, q, v, a, contacts)


def test_contact_inverse_dynamics_standing_bipeds(talos):
    """talos on both soles (6d) and the bundled biped on both soles, at rest and moving."""
    biped = Pair("biped", True)
    rng = np.random.default_rng(6)
    for pair, soles in ((talos, TALOS_SOLES), (biped, ["left_sole", "right_sole"])):
        m = pair.model
        contacts = [(f, "6d") for f in soles]
        q = rd.neutral(m)
        f = check_contact_inverse(m, q, 0 * q[:m.nv], np.zeros(m.nv), contacts)
        assert abs(f[2] + f[8] - m.total_mass * 9.81) < 1e-9 * m.total_mass * 9.81
        for _ in range(5):
            q = pair.random_state(rng)[0]
            J, _ = rd.constraint_jacobian(m, q, 0, contacts)
            null = np.linalg.svd(J)[2][J.shape[0]:].T
            v = null @ rng.normal(size=null.shape[1])
            drift = rd.constraint_jacobian(m, q, v, contacts)[1]
            a = np.linalg.lstsq(J, -drift, rcond=None)[0] + null @ rng.normal(size=null.shape[1])
            check_contact_inverse(m, q, v, a, contacts)


def test_contact_inverse_dynamics_fixed_base_needs_no_forces():
    P = Pair("panda", False)
    q, v, a = P.random_state(np.random.default_rng(7))
    tau, f = rd.contact_inverse_dynamics(P.model, q, v, a, [("panda_hand", "6d")])
    np.testing.assert_array_equal(f, 0.0)
    np.testing.assert_allclose(tau, rd.inverse_dynamics(P.model, q, v, a), rtol=0, atol=1e-12)


def test_batches_equal_single_states(solo):
    m = solo.model
    rng = np.random.default_rng(8)
    S = [random_state(solo, rng) for _ in range(70)]
    Q, V, T = (np.array([s[k] for s in S]) for k in range(3))
    contacts = [(f, "point") for f in SOLO_FEET]
    for threads in (1, 2):
        qdd, forces = rd.constrained_forward_dynamics(m, Q, V, T, contacts, baumgarte=(10.0, 5.0), threads=threads)
        tau, cforces = rd.contact_inverse_dynamics(m, Q, V, T, contacts, threads=threads)
        tau0, cforces0 = rd.contact_inverse_dynamics(m, Q, 0, 0, contacts, threads=threads)
        J, drift = rd.constraint_jacobian(m, Q, V, contacts)
        for k, (q, v, t) in enumerate(S):
            for batch, single in zip((qdd[k], forces[k], tau[k], cforces[k], tau0[k], cforces0[k], J[k], drift[k]),
                                     rd.constrained_forward_dynamics(m, q, v, t, contacts, baumgarte=(10.0, 5.0))
                                     + rd.contact_inverse_dynamics(m, q, v, t, contacts)
                                     + rd.contact_inverse_dynamics(m, q, 0, 0, contacts)
                                     + rd.constraint_jacobian(m, q, v, contacts)):
                np.testing.assert_array_equal(batch, single)


# --- constrained inverse dynamics with every joint but the base actuated ---------------------------
def standing_states(pair, rng, n):
    """solo12 on its four feet in its SRDF posture: at rest, then n motions the contacts allow
    (from Pinocchio's J and Jdot v)."""
    m = pair.model
    q = srdf_posture(m, "standing")
    contacts = [(f, "point") for f in SOLO_FEET]
    yield q, np.zeros(m.nv), np.zeros(m.nv)
    for _ in range(n):
        v, a = moving_state(pair, q, contacts, (), rng)
        yield q, v, a


def test_solo12_standing_constrained_inverse_dynamics_agrees_with_contact_inverse_dynamics(solo):
    """solo12 standing with its 12 joints actuated (the base passive: 6 passive coordinates, 12
    contact rows, redundant): constrained_inverse_dynamics ("min_force", the motion checked) equals
    contact_inverse_dynamics and the pseudo-inverse solution f = (J_p^T)^+ ID_p, tau = ID - J^T f
    built from Pinocchio's terms; "min_torque" equals Kim's closed form (eqs. 62-64)."""
    m = solo.model
    contacts = [(f, "point") for f in SOLO_FEET]
    joints = [j.name for j in m.joints if j.kind != "floating"]
    pas, act = np.arange(6), np.arange(6, m.nv)
    for q, v, a in standing_states(solo, np.random.default_rng(9), 5):
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, joints, contacts)
        tau_c, f_c = rd.contact_inverse_dynamics(m, q, v, a, contacts)
        assert rel_err(tau, tau_c) < TOL and rel_err(f, f_c) < TOL
        M, b, J, drift = solo.constraint_terms(q, v, contacts)
        tau_r = M @ a + b
        expected = np.linalg.pinv(J[:, pas].T) @ tau_r[pas]
        assert rel_err(f, expected) < TOL and rel_err(tau, tau_r - J.T @ expected) < TOL
        np.testing.assert_array_equal(tau[pas], 0.0)
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, joints, contacts, objective="min_torque")
        N = null_space(J[:, pas].T)
        X = J[:, act].T @ N
        t0 = tau_r[act] - J[:, act].T @ expected
        s = np.linalg.pinv(X, rcond=1e-10) @ t0
        assert rel_err(f, expected + N @ s) < TOL and rel_err(tau[act], t0 - X @ s) < TOL


def test_bad_options_and_an_open_loop_are_refused_by_name(five_bar):
    """Duplicate actuated joints, a least_squares that is not a bool, and a q whose loop is open: the
    check (check_loops=True by default) names the loop, its gap and the batch row; check_loops=False
    takes q as given; the same q assembled passes."""
    m = five_bar.model
    q = np.zeros(m.nq)
    with pytest.raises(ValueError, match="actuated names joint 'left_base_joint' more than once"):
        rd.constrained_inverse_dynamics(m, q, 0, 0, [FIVE_BAR_MOTORS[0]] * 2, loops=FIVE_BAR_LOOPS)
    with pytest.raises(TypeError, match="least_squares must be True or False, got 'yes'"):
        rd.constrained_inverse_dynamics(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, least_squares="yes")
    with pytest.raises(TypeError, match="check_loops must be True or False"):
        rd.constrained_inverse_dynamics(m, q, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, check_loops=1)
    opened = q.copy()
    opened[0] = 0.3
    with pytest.raises(ConstraintError, match=r"loop 0 \(6d between 'end_effector' and 'right_distal_tip'\) is open at "
                                              r"q: its frames are 0.128 m apart, 0.3 rad turned"):
        rd.constrained_inverse_dynamics(m, opened, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ConstraintError, match=r"loop 0 .* is open at q \(batch row 1\)"):
        rd.constrained_inverse_dynamics(m, np.array([q, opened]), 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)
    tau, _ = rd.constrained_inverse_dynamics(m, opened, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS, check_loops=False)
    assert np.all(np.isfinite(tau))
    closed = rd.assemble(m, opened, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
    assert np.all(np.isfinite(rd.constrained_inverse_dynamics(m, closed, 0, 0, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS)[0]))
