"""Constrained hybrid dynamics (Kim, section 3.3, eqs. 70-80): against the block KKT solution built
from Pinocchio's M, nonLinearEffects, frame Jacobians and drift on the five-bar (the motors'
accelerations given: unique; three accelerations given: the least-norm forces, and given
accelerations the loop cannot meet refused); every coordinate torque-given equals
constrained_forward_dynamics, every coordinate acceleration-given equals constrained inverse
dynamics with every joint actuated; bad input, batches."""
import numpy as np
import pytest

from oracle import FIVE_BAR_LOOPS, FIVE_BAR_MOTORS, SINGULAR_ROTOR, SOLO_FEET, Pair, moving_state, rel_err
from robot_dynamics import load_urdf
from robot_dynamics import dynamics as rd
from robot_dynamics.dynamics import ConstraintError, SingularMassMatrixError

TOL = 1e-9


@pytest.fixture(scope="module")
def five_bar():
    return Pair("five_bar")


def closed_states(P, rng, n):
    m = P.model
    motors = [m.joint_index[j] for j in FIVE_BAR_MOTORS]
    for _ in range(n):
        guess = np.zeros(m.nq)
        guess[motors] = rng.uniform(-0.4, 0.4, 2)
        q = rd.assemble(m, guess, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
        v, a = moving_state(P, q, (), FIVE_BAR_LOOPS, rng)
        yield q, v, a


def block_kkt(P, q, v, known, qdd, tau, contacts=(), loops=()):
    """qdd, tau and the least-norm forces of M qdd + b = tau + J^T f, J qdd + Jdot v = 0 with qdd
    given where known and tau elsewhere: [[M_vv, -J_v^T], [J_v, 0]] [qdd_v; f] =
    [tau_v - b_v - M_vu qdd_u; -(J_u qdd_u + Jdot v)] (numpy's least squares), then
    tau_u = M_u qdd + b_u - J_u^T f, from Pinocchio's terms."""
    M, b, J, drift = P.constraint_terms(q, v, contacts, loops)
    u, w = np.flatnonzero(known), np.flatnonzero(~known)
    k = J.shape[0]
    K = np.block([[M[np.ix_(w, w)], -J[:, w].T], [J[:, w], np.zeros((k, k))]])
    rhs = np.concatenate((tau[w] - b[w] - M[np.ix_(w, u)] @ qdd[u], -(J[:, u] @ qdd[u] + drift)))
    x = np.linalg.lstsq(K, rhs, rcond=1e-13)[0]
    qdd, tau, f = qdd.copy(), tau.copy(), x[len(w):]
    qdd[w] = x[:len(w)]
    tau[u] = M[u] @ qdd + b[u] - J[:, u].T @ f
    return qdd, tau, f


def test_five_bar_motor_accelerations_given(five_bar):
    """The motors' accelerations given, the passive joints' torques given (springs, say): unique
    (three loop rows, three torque-given coordinates); the block KKT solution; and constrained
    inverse dynamics with the motors actuated and those passive torques returns the same torques
    and forces for the accelerations found."""
    P = five_bar
    m = P.model
    known = np.isin(np.arange(m.nv), [m.joint_index[j] for j in FIVE_BAR_MOTORS])
    rng = np.random.default_rng(1)
    for q, v, _ in closed_states(P, rng, 10):
        qdd_given, tau_given = np.where(known, rng.uniform(-5, 5, m.nv), np.nan), rng.uniform(-0.5, 0.5, m.nv)
        qdd, tau, f = rd.constrained_hybrid_dynamics(m, q, v, known, qdd_given, tau_given, loops=FIVE_BAR_LOOPS)
        eqdd, etau, ef = block_kkt(P, q, v, known, np.nan_to_num(qdd_given), tau_given, loops=FIVE_BAR_LOOPS)
        assert rel_err(qdd, eqdd) < TOL and rel_err(tau, etau) < TOL and rel_err(f, ef) < TOL
        np.testing.assert_array_equal(qdd[known], qdd_given[known])
        np.testing.assert_array_equal(tau[~known], tau_given[~known])
        named = rd.constrained_hybrid_dynamics(m, q, v, FIVE_BAR_MOTORS, qdd_given, tau_given, loops=FIVE_BAR_LOOPS)
        for x, y in zip(named, (qdd, tau, f)):
            np.testing.assert_array_equal(x, y)
        tau_id, f_id = rd.constrained_inverse_dynamics(m, q, v, qdd, FIVE_BAR_MOTORS, loops=FIVE_BAR_LOOPS,
                                                       passive_torques=tau_given)
        assert rel_err(tau_id, tau) < TOL and rel_err(f_id, f) < TOL


def test_five_bar_three_accelerations_given(five_bar):
    """Three accelerations given, two torque-given coordinates under three loop rows: the given
    accelerations must be compatible with the loop (they are taken from a motion that keeps it);
    the forces are the least-norm ones (the block KKT's least-squares solution). Accelerations the
    loop cannot meet are refused, naming the loop."""
    P = five_bar
    m = P.model
    known = np.isin(np.arange(m.nv), [m.joint_index[j] for j in FIVE_BAR_MOTORS + ["left_elbow_joint"]])
    rng = np.random.default_rng(2)
    for q, v, a in closed_states(P, rng, 10):
        tau_given = rng.uniform(-0.5, 0.5, m.nv)
        qdd, tau, f = rd.constrained_hybrid_dynamics(m, q, v, known, a, tau_given, loops=FIVE_BAR_LOOPS)
        eqdd, etau, ef = block_kkt(P, q, v, known, a, tau_given, loops=FIVE_BAR_LOOPS)
        assert rel_err(qdd, eqdd) < TOL and rel_err(tau, etau) < TOL and rel_err(f, ef) < TOL
        assert rel_err(qdd, a) < TOL        # the motion they came from
    bad = a + np.where(known, rng.uniform(-1, 1, m.nv), 0.0)
    with pytest.raises(ConstraintError, match=r"the constraints cannot all hold with these given accelerations: loop 0 "
                                              r"\(6d between 'end_effector' and 'right_distal_tip'\) is not met"):
        rd.constrained_hybrid_dynamics(m, q, v, known, bad, tau_given, loops=FIVE_BAR_LOOPS)


FORWARD_CASES = {
    "five-bar": ("five_bar", False, [], FIVE_BAR_LOOPS),
    "solo12-4-points": ("solo12", True, [(f, "point") for f in SOLO_FEET], []),
    "panda-mimic-hand": ("panda", False, [("panda_hand", "6d")], []),
    "floating-object-loop": ("floating_object_arm", False, [("object", "6d")], [("part_arm", "a2", "6d")]),
}


@pytest.mark.parametrize("case", FORWARD_CASES, ids=str)
@pytest.mark.parametrize("baumgarte", [None, (100.0, 20.0)], ids=["plain", "baumgarte"])
def test_every_coordinate_torque_given_is_constrained_forward_dynamics(case, baumgarte):
    name, floating, contacts, loops = FORWARD_CASES[case]
    P = Pair(name, floating)
    m = P.model
    rng = np.random.default_rng(3)
    nothing = np.zeros(m.nv, bool)
    for _ in range(5):
        q, v, _ = P.random_state(rng)
        J = rd.constraint_jacobian(m, q, 0, contacts, loops)[0]
        v = v - np.linalg.pinv(J) @ (J @ v)          # redundant rows hold only where J v = 0
        tau = rng.uniform(-5, 5, m.nv)
        qdd, t, f = rd.constrained_hybrid_dynamics(m, q, v, nothing, np.zeros(m.nv), tau, contacts, loops, baumgarte)
        eqdd, ef = rd.constrained_forward_dynamics(m, q, v, tau, contacts, loops, baumgarte)
        assert rel_err(qdd, eqdd) < TOL and rel_err(f, ef) < TOL
        np.testing.assert_array_equal(t, tau)


@pytest.mark.parametrize("case", ["five-bar", "solo12-4-points", "panda-mimic-hand"], ids=str)
def test_every_coordinate_acceleration_given_is_inverse_dynamics_with_every_joint_actuated(case):
    name, floating, contacts, loops = FORWARD_CASES[case]
    P = Pair(name, floating)
    m = P.model
    rng = np.random.default_rng(4)
    everything = np.ones(m.nv, bool)
    for _ in range(5):
        if name == "five_bar":
            q, v, a = next(closed_states(P, rng, 1))
        else:
            q = P.random_state(rng)[0]
            v, a = moving_state(P, q, contacts, loops, rng)
        qdd, tau, f = rd.constrained_hybrid_dynamics(m, q, v, everything, a, np.full(m.nv, np.nan), contacts, loops)
        tau_id, f_id = rd.constrained_inverse_dynamics(m, q, v, a, everything, contacts, loops)
        np.testing.assert_array_equal(qdd, a)
        assert rel_err(tau, tau_id) < TOL and rel_err(f, f_id) < TOL
        np.testing.assert_array_equal(f, 0.0)


def test_bad_input_is_refused_by_name(five_bar):
    m = five_bar.model
    q, z = np.zeros(m.nq), np.zeros(m.nv)
    call = rd.constrained_hybrid_dynamics
    with pytest.raises(ValueError, match="known: unknown joint 'elbow'"):
        call(m, q, z, ["elbow"], z, z, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ValueError, match=r"known must be a boolean mask of shape \(5,\)"):
        call(m, q, z, np.ones(3, bool), z, z, loops=FIVE_BAR_LOOPS)
    known = np.array([True, False, False, True, False])
    with pytest.raises(ValueError, match="qdd contains NaN or inf"):
        call(m, q, z, known, np.full(5, np.nan), z, loops=FIVE_BAR_LOOPS)
    with pytest.raises(ValueError, match=r"tau contains NaN or inf \(batch row 1\)"):
        call(m, np.array([q, q]), np.array([z, z]), known, np.array([z, z]), np.array([z, z + np.nan]),
             loops=FIVE_BAR_LOOPS)
    call(m, q, z, known, np.where(known, 0.0, np.nan), np.where(known, np.nan, 0.0), loops=FIVE_BAR_LOOPS)
    rotor = load_urdf(SINGULAR_ROTOR)
    with pytest.raises(SingularMassMatrixError, match="Suspect links .*: rotor"):
        call(rotor, np.zeros(2), np.zeros(2), np.array([True, False]), np.zeros(2), np.ones(2), [("upper", "point")])


def test_batches_and_out_equal_single_states(five_bar):
    m = five_bar.model
    rng = np.random.default_rng(5)
    S = list(closed_states(five_bar, rng, 70))
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    T = rng.uniform(-1, 1, (70, m.nv))
    masks = rng.uniform(size=(70, m.nv)) < 0.4
    masks[:, 0] = True          # the left motor's acceleration given: the others can meet the loop
    for known in (masks, masks[0]):
        for threads in (1, 2):
            qdd, tau, f = rd.constrained_hybrid_dynamics(m, Q, V, known, A, T, loops=FIVE_BAR_LOOPS, threads=threads)
            out = tuple(np.empty_like(x) for x in (qdd, tau, f))
            got = rd.constrained_hybrid_dynamics(m, Q, V, known, A, T, loops=FIVE_BAR_LOOPS, threads=threads, out=out)
            assert all(x is y for x, y in zip(got, out))
            for k, (q, v, a) in enumerate(S):
                single = rd.constrained_hybrid_dynamics(m, q, v, known[k] if known.ndim == 2 else known, a, T[k],
                                                        loops=FIVE_BAR_LOOPS)
                for batch, one, fill in zip((qdd[k], tau[k], f[k]), single, (x[k] for x in out)):
                    np.testing.assert_array_equal(batch, one)
                    np.testing.assert_array_equal(fill, one)
