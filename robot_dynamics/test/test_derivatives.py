"""Analytic derivatives of inverse and forward dynamics: against Pinocchio's computeRNEADerivatives
and computeABADerivatives (mimic models through G: d tau / dq = G^T d tau_pin / dq G, M^-1 against
inv(G^T M G)) and against central finite differences on the tangent space (q (+) h e_k)."""
import numpy as np
import pytest

from oracle import SINGULAR_ROTOR, Pair, pin, rel_err
from robot_dynamics import load_urdf
from robot_dynamics import dynamics as rd

N_STATES, TOL = 20, 1e-8


def pin_rnea_derivatives(P, q, v, a):
    """Pinocchio's (d tau / dq, d tau / dv, M) in our coordinates: G^T (.) G."""
    dq, dv, M = pin.computeRNEADerivatives(P.pin, P.data, P.pin_q(q), P.pin_v(v), P.pin_v(a))
    return P.ours_matrix(dq), P.ours_matrix(dv), P.ours_matrix(M, upper_only=True)


def test_inverse_dynamics_derivatives_against_pinocchio(pair):
    m = pair.model
    for q, v, a, _ in pair.states(N_STATES, tau=True):
        for ours, theirs in zip(rd.inverse_dynamics_derivatives(m, q, v, a), pin_rnea_derivatives(pair, q, v, a)):
            assert rel_err(ours, theirs) < TOL


def test_forward_dynamics_derivatives_against_pinocchio(pair):
    """Pinocchio's computeABADerivatives where its model is ours (no mimic joint); with mimic joints
    the coupled system's -M^-1 d tau / dq at qdd, from Pinocchio's RNEA derivatives and M = G^T M G."""
    m, P = pair.model, pair
    for q, v, _, tau in pair.states(N_STATES, tau=True):
        if P.permutation:
            dq, dv, Minv = pin.computeABADerivatives(P.pin, P.data, P.pin_q(q), P.pin_v(v), P.G @ tau)
            expected = P.ours_matrix(dq), P.ours_matrix(dv), P.ours_matrix(Minv)
        else:
            qdd = P.forward_dynamics(q, v, tau)
            dq, dv, M = pin_rnea_derivatives(P, q, v, qdd)
            Minv = np.linalg.inv(M)
            expected = -Minv @ dq, -Minv @ dv, Minv
        for ours, theirs in zip(rd.forward_dynamics_derivatives(m, q, v, tau), expected):
            assert rel_err(ours, theirs) < TOL


def tangent_differences(model, f, q, h=1e-5):
    """Central differences of f along q (+) h e_k, column by column."""
    columns = []
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        columns.append((f(rd.integrate(model, q, e)) - f(rd.integrate(model, q, -e))) / (2 * h))
    return np.array(columns).T


def differences(f, x, h=1e-5):
    columns = []
    for k in range(len(x)):
        e = np.zeros(len(x))
        e[k] = h
        columns.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(columns).T


def close(analytic, numeric, value):
    """Central differences with h = 1e-5 are good to ~1e-10 of the derivative (truncation) and lose
    ~eps cond |f| / h to rounding: compare to 1e-6 of the larger of the derivative and the value."""
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=1e-6 * max(1.0, np.abs(analytic).max(), np.abs(value).max()))


@pytest.mark.parametrize("robot", [("panda", False), ("talos", True), ("mimic", True), ("biped", True),
                                   ("planar_base_arm", False), ("floating_object_arm", False)],
                         ids=lambda r: f"{r[0]}{'-freeflyer' if r[1] else ''}")
def test_derivatives_against_finite_differences(robot):
    """Independent of Pinocchio: d/dq along the exponential of each joint's tangent space (free
    flyers, planar joints, quaternions, mimic joints), d/dv and d/da, for both algorithms."""
    P = Pair(*robot)
    m = P.model
    for q, v, a, tau in P.states(3, seed=4, tau=True):
        dq, dv, M = rd.inverse_dynamics_derivatives(m, q, v, a)
        value = rd.inverse_dynamics(m, q, v, a)
        close(dq, tangent_differences(m, lambda x: rd.inverse_dynamics(m, x, v, a), q), value)
        close(dv, differences(lambda x: rd.inverse_dynamics(m, q, x, a), v), value)
        close(M, differences(lambda x: rd.inverse_dynamics(m, q, v, x), a), value)
        dq, dv, Minv = rd.forward_dynamics_derivatives(m, q, v, tau)
        value = rd.forward_dynamics(m, q, v, tau)
        close(dq, tangent_differences(m, lambda x: rd.forward_dynamics(m, x, v, tau), q), value)
        close(dv, differences(lambda x: rd.forward_dynamics(m, q, x, tau), v), value)
        close(Minv, differences(lambda x: rd.forward_dynamics(m, q, v, x), tau), value)


def test_mass_matrix_and_inverse(pair):
    """M is the CRBA's, symmetric; M^-1 is its inverse, exactly symmetric."""
    m = pair.model
    for q, v, a, tau in pair.states(5, tau=True):
        M = rd.inverse_dynamics_derivatives(m, q, v, a)[2]
        np.testing.assert_array_equal(M, M.T)
        assert rel_err(M, rd.mass_matrix(m, q)) < 1e-12
        Minv = rd.forward_dynamics_derivatives(m, q, v, tau)[2]
        np.testing.assert_array_equal(Minv, Minv.T)
        assert rel_err(Minv @ M, np.eye(m.nv)) < 1e-9


def test_armature(pair):
    """Armature adds to M's diagonal and leaves d tau / dq and d tau / dv alone."""
    m = pair.model
    q, v, a, tau = pair.states(1, seed=2, tau=True)[0]
    before = rd.inverse_dynamics_derivatives(m, q, v, a)
    try:
        m.armature = np.linspace(0.1, 0.5, len(m.joint_names))
        after = rd.inverse_dynamics_derivatives(m, q, v, a)
        np.testing.assert_allclose(after[0], before[0], atol=1e-12)
        np.testing.assert_allclose(after[1], before[1], atol=1e-12)
        np.testing.assert_allclose(after[2], rd.mass_matrix(m, q), atol=1e-12)
        dq = rd.forward_dynamics_derivatives(m, q, v, tau)[0]
        qdd = rd.forward_dynamics(m, q, v, tau)
        np.testing.assert_allclose(dq, -np.linalg.solve(after[2], rd.inverse_dynamics_derivatives(m, q, v, qdd)[0]),
                                   atol=1e-8 * max(1.0, np.abs(dq).max()))
    finally:
        m.armature = 0.0


def test_batches_equal_single_states(pair):
    """Batches run L states per instruction (kernels/lanes.py): bitwise equal to single calls, the
    lane code fusing the same multiply-adds as the scalar code (test_lanes.py has the other batch
    sizes), on one thread and two."""
    m = pair.model
    S = pair.states(70, tau=True)      # above the threshold where threads start
    Q, V, A, T = (np.array([s[k] for s in S]) for k in range(4))
    for threads in (1, 2):
        inverse = rd.inverse_dynamics_derivatives(m, Q, V, A, threads=threads)
        forward = rd.forward_dynamics_derivatives(m, Q, V, T, threads=threads)
        for k, (q, v, a, tau) in enumerate(S):
            for batch, single in ((inverse, rd.inverse_dynamics_derivatives(m, q, v, a)),
                                  (forward, rd.forward_dynamics_derivatives(m, q, v, tau))):
                for b, x in zip(batch, single):
                    np.testing.assert_array_equal(b[k], x, err_msg=f"state {k}, {threads} thread(s)")


def test_output_into_given_arrays(pair):
    """out=: the same numbers in the caller's arrays, every entry written; bad ones refused."""
    m = pair.model
    S = pair.states(3, seed=9, tau=True)
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    for f in (rd.inverse_dynamics_derivatives, rd.forward_dynamics_derivatives):
        for q, v, a in ((Q[0], V[0], A[0]), (Q, V, A)):
            out = tuple(np.full(q.shape[:-1] + (m.nv, m.nv), np.nan) for _ in range(3))
            got = f(m, q, v, a, out=out)
            assert all(g is o for g, o in zip(got, out))
            for g, e in zip(got, f(m, q, v, a)):
                np.testing.assert_array_equal(g, e)
        shared = np.empty((m.nv, 2 * m.nv))
        for bad in ((np.empty((m.nv, m.nv)),) * 2, (np.empty((m.nv, m.nv)),) * 3, (np.empty((m.nv, m.nv), np.float32),) + tuple(
                np.empty((m.nv, m.nv)) for _ in range(2)), (shared[:, :m.nv], shared[:, m.nv:], np.empty((m.nv, m.nv)))):
            with pytest.raises(ValueError, match="out must be three distinct C-contiguous, writeable float64 arrays"):
                f(m, Q[0], V[0], A[0], out=bad)


def test_bad_input_is_named():
    m = Pair("biped", True).model
    q, v = rd.neutral(m), np.zeros(m.nv)
    with pytest.raises(ValueError, match=rf"q must have shape \({m.nq},\) or \(N, {m.nq}\), got shape \(3,\)"):
        rd.inverse_dynamics_derivatives(m, np.zeros(3), v, v)
    with pytest.raises(ValueError, match=rf"a must have shape \(2, {m.nv}\)"):
        rd.inverse_dynamics_derivatives(m, np.tile(q, (2, 1)), np.zeros((2, m.nv)), v)
    with pytest.raises(ValueError, match="v contains NaN or inf"):
        rd.inverse_dynamics_derivatives(m, q, np.full(m.nv, np.nan), v)
    with pytest.raises(ValueError, match=r"tau contains NaN or inf \(batch row 1\)"):
        rd.forward_dynamics_derivatives(m, np.tile(q, (2, 1)), np.zeros((2, m.nv)), np.array([v, v + np.inf]))
    bad = q.copy()
    bad[6] = 2.0
    with pytest.raises(ValueError, match="quaternion .* must have unit norm; got norm 2"):
        rd.forward_dynamics_derivatives(m, bad, v, v)
    for f in (rd.inverse_dynamics_derivatives, rd.forward_dynamics_derivatives):
        with pytest.raises(ValueError, match=r"v contains a value beyond 1e\+50 in magnitude"):
            f(m, q, np.full(m.nv, 1e200), v)


def test_singular_mass_matrix_is_an_error():
    from robot_dynamics.dynamics import SingularMassMatrixError
    m = load_urdf(SINGULAR_ROTOR)
    with pytest.raises(SingularMassMatrixError, match="Suspect links .*: rotor"):
        rd.forward_dynamics_derivatives(m, np.zeros(2), np.zeros(2), np.ones(2))
    dq, dv, M = rd.inverse_dynamics_derivatives(m, np.zeros(2), np.zeros(2), np.ones(2))   # fine without a solve
    assert np.all(np.isfinite(dq)) and M[1, 1] == 0.0


# --- hybrid dynamics: Kim's hybrid case -------------------------------------------------------------
def hybrid_function(m, known):
    """u -> (qdd, tau) of hybrid_dynamics, u = where(known, qdd, tau), stacked as one vector."""
    return lambda q, v, u: np.concatenate(rd.hybrid_dynamics(m, q, v, known, np.where(known, u, 0.0),
                                                             np.where(known, 0.0, u)))


@pytest.mark.parametrize("robot", [("panda", False), ("talos", True), ("mimic", True), ("biped", True),
                                   ("planar_base_arm", False), ("floating_object_arm", False)],
                         ids=lambda r: f"{r[0]}{'-freeflyer' if r[1] else ''}")
def test_hybrid_derivatives_against_finite_differences(robot):
    """The six derivatives against central differences of hybrid_dynamics (d/dq along each joint's
    tangent space, d/dv, d/du), with a mask that mixes known and unknown coordinates of every kind
    (a free flyer's too)."""
    P = Pair(*robot)
    m = P.model
    rng = np.random.default_rng(7)
    for q, v, a, tau in P.states(2, seed=6, tau=True):
        known = rng.random(m.nv) < 0.5
        u = np.where(known, a, tau)
        f = hybrid_function(m, known)
        derivatives = rd.hybrid_dynamics_derivatives(m, q, v, known, a, tau)
        value = f(q, v, u)
        numeric = (tangent_differences(m, lambda x: f(x, v, u), q), differences(lambda x: f(q, x, u), v),
                   differences(lambda x: f(q, v, x), u))
        for k, (name, d) in enumerate(zip(("dqdd_dq", "dqdd_dv", "dqdd_du", "dtau_dq", "dtau_dv", "dtau_du"), derivatives)):
            rows = slice(0, m.nv) if k < 3 else slice(m.nv, 2 * m.nv)
            assert d.shape == (m.nv, m.nv), name
            close(d, numeric[k % 3][rows], value)


def test_hybrid_derivatives_limits(pair):
    """Every coordinate known: inverse dynamics' derivatives (0, 0, 1, d tau / dq, d tau / dv, M);
    none known: forward dynamics' (d qdd / dq, d qdd / dv, M^-1, 0, 0, 1), to 1e-12."""
    m = pair.model
    eye, zero = np.eye(m.nv), np.zeros((m.nv, m.nv))
    for q, v, a, tau in pair.states(3, seed=8, tau=True):
        inverse = rd.inverse_dynamics_derivatives(m, q, v, a)
        hybrid = rd.hybrid_dynamics_derivatives(m, q, v, np.ones(m.nv, bool), a, tau)
        for ours, expected in zip(hybrid, (zero, zero, eye) + inverse):
            assert rel_err(ours, expected) <= 1e-12
        forward = rd.forward_dynamics_derivatives(m, q, v, tau)
        hybrid = rd.hybrid_dynamics_derivatives(m, q, v, np.zeros(m.nv, bool), a, tau)
        for ours, expected in zip(hybrid, forward + (zero, zero, eye)):
            assert rel_err(ours, expected) <= 1e-12


def test_hybrid_derivatives_batches_equal_single_states(pair):
    """A batch with a mask per state (three masks among the states) and with one mask for all."""
    m = pair.model
    S = pair.states(12, seed=9, tau=True)
    Q, V, A, T = (np.array([s[k] for s in S]) for k in range(4))
    masks = np.array([np.arange(m.nv) % 3 == k % 3 for k in range(len(S))])
    for known in (masks, masks[1]):
        batch = rd.hybrid_dynamics_derivatives(m, Q, V, known, A, T)
        for k in range(len(S)):
            single = rd.hybrid_dynamics_derivatives(m, Q[k], V[k], known if known.ndim == 1 else known[k], A[k], T[k])
            for b, x in zip(batch, single):
                assert b.shape == (len(S), m.nv, m.nv)
                np.testing.assert_array_equal(b[k], x, err_msg=f"state {k}")


def test_hybrid_derivatives_singular_and_bad_input():
    """A singular unknown block names its links (and the batch row); known, the same joint is fine;
    a mask of the wrong kind is named."""
    from robot_dynamics.dynamics import SingularMassMatrixError
    m = load_urdf(SINGULAR_ROTOR)
    zero, one = np.zeros(2), np.ones(2)
    with pytest.raises(SingularMassMatrixError, match="Suspect links .*: rotor"):
        rd.hybrid_dynamics_derivatives(m, zero, zero, np.array([True, False]), one, one)
    with pytest.raises(SingularMassMatrixError, match=r"\(batch row 1\).*Suspect links .*: rotor"):
        rd.hybrid_dynamics_derivatives(m, np.zeros((2, 2)), np.zeros((2, 2)), np.array([[False, True], [True, False]]),
                                       np.ones((2, 2)), np.ones((2, 2)))
    d = rd.hybrid_dynamics_derivatives(m, zero, zero, np.array([False, True]), one, one)
    assert all(np.all(np.isfinite(x)) for x in d)
    with pytest.raises(ValueError, match="acceleration_known must be a boolean mask"):
        rd.hybrid_dynamics_derivatives(m, zero, zero, np.array([1, 0]), one, one)
