"""Contact inverse dynamics, the case "floating joints passive" of constrained inverse dynamics: on
standing legged robots (solo12 on its point feet, talos and the biped on their soles), at rest and
moving, against the equations of motion, the least-norm forces and forward dynamics; and
constrained_inverse_dynamics with every joint but the base actuated against it and against the KKT
system built from Pinocchio's terms (solo12 standing: redundant, least force and least torque)."""
import numpy as np
import pytest

from oracle import SOLO_FEET, Pair, moving_state, null_space, rel_err, srdf_posture
from robot_dynamics import dynamics as rd

TALOS_SOLES = ["left_sole_link", "right_sole_link"]
TOL = 1e-9


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
