"""robot_dynamics/rigid_body.py (RNEA, CRBA, the Coriolis matrix, ABA, hybrid dynamics, frame
placements and Jacobians, J^T F) by the properties that hold whatever the oracle: M symmetric
positive definite and Mdot - 2C skew-symmetric, the Jacobian the derivative of the placement,
inverse/forward consistency, hybrid dynamics against the reduced system M_uu qdd_u = tau_u - b_u -
M_uk qdd_k, armature, batches equal single states; and the 2-link planar arm (l1 = l2 = 1) against
its closed forms: M, g, the skew-symmetric Mdot - 2C and the statics tau = J^T F (Lynch and Park,
Modern Robotics, sections 8.1 and 5.2). Against Pinocchio: test_against_pinocchio.py; input checks
and singular mass matrices: test_calling.py."""
import numpy as np
import pytest

from oracle import Pair
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf

pytestmark = pytest.mark.robots("panda", "talos-freeflyer", "mimic", "mimic-freeflyer", "puma560", "biped-freeflyer",
                                "planar_base_arm", "floating_object_arm")


def states(pair, n=20):
    return pair.states(n, seed=3)


def test_mass_matrix_symmetric_positive_definite(pair):
    for q, _, _ in states(pair):
        M = rd.mass_matrix(pair.model, q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0


def test_mdot_minus_2c_is_skew_symmetric(pair):
    """Mdot by central differences along q(t) = q (+) t v (`integrate`: free flyers and planar
    joints move along their exponential, whose velocity is v)."""
    m = pair.model
    for q, v, _ in states(pair):
        h = 1e-6
        Mdot = (rd.mass_matrix(m, rd.integrate(m, q, h * v)) - rd.mass_matrix(m, rd.integrate(m, q, -h * v))) / (2 * h)
        N = Mdot - 2 * rd.coriolis_matrix(m, q, v)
        assert np.abs(N + N.T).max() < 1e-6 * max(1.0, np.abs(Mdot).max())


def _rotation_vector(R):
    """The world-frame rotation vector of a small rotation matrix."""
    return np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2


def test_jacobian_is_the_derivative_of_the_placement(pair):
    """Column k of the local_world_aligned Jacobian: the frame's velocity when q moves along
    integrate(q, t e_k), by central differences (any joint: floating, planar, mimic)."""
    m, h = pair.model, 1e-6
    for q, _, _ in states(pair, 5):
        for frame in m.frame_names[-3:]:
            J = rd.frame_jacobian(m, q, frame, "local_world_aligned")
            for k in range(m.nv):
                e = np.zeros(m.nv)
                e[k] = h
                Hp, Hm = rd.frame_placement(m, rd.integrate(m, q, e), frame), rd.frame_placement(m, rd.integrate(m, q, -e), frame)
                column = np.concatenate(((Hp[:3, 3] - Hm[:3, 3]) / (2 * h), _rotation_vector(Hp[:3, :3] @ Hm[:3, :3].T) / (2 * h)))
                np.testing.assert_allclose(J[:, k], column, rtol=0, atol=1e-7, err_msg=f"{frame} column {k}")


def test_forward_inverts_inverse(pair):
    m = pair.model
    for q, v, a in states(pair):
        tau = rd.inverse_dynamics(m, q, v, a)
        np.testing.assert_allclose(rd.forward_dynamics(m, q, v, tau), a, rtol=0, atol=1e-8)


def test_hybrid_limits_and_block_solution(pair):
    m = pair.model
    rng = np.random.default_rng(4)
    for q, v, a in states(pair):
        tau = rng.uniform(-5, 5, m.nv)
        everything, nothing = np.ones(m.nv, bool), np.zeros(m.nv, bool)
        qdd, t = rd.hybrid_dynamics(m, q, v, everything, a, tau)
        np.testing.assert_allclose(t, rd.inverse_dynamics(m, q, v, a), rtol=0, atol=1e-8)
        np.testing.assert_array_equal(qdd, a)
        qdd, t = rd.hybrid_dynamics(m, q, v, nothing, a, tau)
        np.testing.assert_allclose(qdd, rd.forward_dynamics(m, q, v, tau), rtol=0, atol=1e-8)
        known = rng.random(m.nv) < 0.5
        qdd, t = rd.hybrid_dynamics(m, q, v, known, a, tau)
        M, b = rd.mass_matrix(m, q), rd.bias_forces(m, q, v)
        u = ~known   # the reduced system
        expected_u = np.linalg.solve(M[np.ix_(u, u)], tau[u] - b[u] - M[np.ix_(u, known)] @ a[known])
        # two orders of rounding on a near-singular block: compare relative to its size
        np.testing.assert_allclose(qdd[u], expected_u, rtol=0, atol=1e-8 * max(1.0, np.abs(expected_u).max()))
        np.testing.assert_array_equal(qdd[known], a[known])
        np.testing.assert_allclose(t, M @ qdd + b, rtol=0, atol=1e-8)
        np.testing.assert_array_equal(t[u], tau[u])


def test_armature_adds_to_the_diagonal(pair):
    m = pair.model
    q, v, a = states(pair, 1)[0]
    M0 = rd.mass_matrix(m, q)
    try:
        m.armature = np.linspace(0.1, 0.5, len(m.joint_names))
        off = m.joint_offset[1]
        np.testing.assert_allclose(np.diag(rd.mass_matrix(m, q) - M0)[off:], m.armature, atol=1e-12)
        tau = rd.inverse_dynamics(m, q, v, a)
        np.testing.assert_allclose(rd.forward_dynamics(m, q, v, tau), a, atol=1e-8)
    finally:
        m.armature = 0.0


@pytest.mark.robots("panda", "ur5", "talos", "talos-freeflyer", "mimic", "mimic-freeflyer", "puma560", "biped-freeflyer",
                    "planar_base_arm", "floating_object_arm")
def test_forward_dynamics_methods_agree(pair):
    """ABA, Kajita's unit-vector method and CRBA + Cholesky give one qdd (1e-10 of its size), with
    armature, an external wrench and in a batch."""
    m = pair.model
    S = pair.states(3, seed=5, tau=True)
    Q, V, T = (np.array([s[k] for s in S]) for k in (0, 1, 3))
    frame = m.frame_names[-1]
    try:
        for armature in (0.0, np.linspace(0.1, 0.5, len(m.joint_names))):
            m.armature = armature
            for q, v, _, tau in S:
                for ext in (None, {frame: np.arange(1.0, 7.0)}):
                    aba = rd.forward_dynamics(m, q, v, tau, ext)
                    for method in ("unit_vector", "mass_matrix"):
                        other = rd.forward_dynamics(m, q, v, tau, ext, method=method)
                        assert np.abs(other - aba).max() <= 1e-10 * max(1.0, np.abs(aba).max()), method
            aba = rd.forward_dynamics(m, Q, V, T)
            for method in ("unit_vector", "mass_matrix"):
                batch = rd.forward_dynamics(m, Q, V, T, method=method)
                assert batch.shape == aba.shape and np.abs(batch - aba).max() <= 1e-10 * max(1.0, np.abs(aba).max())
                np.testing.assert_array_equal(batch[1], rd.forward_dynamics(m, Q[1], V[1], T[1], method=method))
    finally:
        m.armature = 0.0


def test_forward_dynamics_method_is_checked(arm):
    q = np.zeros(arm.nq)
    with pytest.raises(ValueError, match="method must be one of 'aba', 'unit_vector', 'mass_matrix', got 'abc'"):
        rd.forward_dynamics(arm, q, q, q, method="abc")


def test_batches_equal_single_states(pair):
    m = pair.model
    S = states(pair, 150)     # above the threshold where threads start
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    frame = m.frame_names[-1]
    known = np.arange(m.nv) % 3 == 0
    for threads in (1, 2):
        batch = dict(
            tau=rd.inverse_dynamics(m, Q, V, A, threads=threads),
            M=rd.mass_matrix(m, Q, threads=threads),
            C=rd.coriolis_matrix(m, Q, V, threads=threads),
            qdd=rd.forward_dynamics(m, Q, V, A, threads=threads),
            hyb=rd.hybrid_dynamics(m, Q, V, np.tile(known, (len(Q), 1)), A, A, threads=threads)[1],
            hyb_one_mask=rd.hybrid_dynamics(m, Q, V, known, A, A, threads=threads)[1],
            J=rd.frame_jacobian(m, Q, frame, "local", threads=threads),
            H=rd.frame_placement(m, Q, frame, threads=threads),
            ext=rd.inverse_dynamics(m, Q, V, A, {frame: np.ones((len(Q), 6))}, threads=threads),
        )
        for k, (q, v, a) in enumerate(S):
            single = dict(
                tau=rd.inverse_dynamics(m, q, v, a), M=rd.mass_matrix(m, q), C=rd.coriolis_matrix(m, q, v),
                qdd=rd.forward_dynamics(m, q, v, a), hyb=rd.hybrid_dynamics(m, q, v, known, a, a)[1],
                hyb_one_mask=rd.hybrid_dynamics(m, q, v, known, a, a)[1],
                J=rd.frame_jacobian(m, q, frame, "local"), H=rd.frame_placement(m, q, frame),
                ext=rd.inverse_dynamics(m, q, v, a, {frame: np.ones(6)}))
            for name, value in single.items():
                np.testing.assert_array_equal(batch[name][k], value, err_msg=name)


@pytest.fixture(scope="module")
def arm():
    return Pair("puma560").model


def test_hybrid_reads_only_the_given_entries(arm):
    """qdd where acceleration_known, tau elsewhere: NaN in the other entries is ignored, NaN
    in a given one is named."""
    rng = np.random.default_rng(5)
    q, v, qdd, tau = rng.normal(size=(4, 6))
    known = np.array([True, False, True, False, False, True])
    expected = rd.hybrid_dynamics(arm, q, v, known, qdd, tau)
    for batch in (False, True):
        qdd_x, tau_x = np.where(known, qdd, np.nan), np.where(known, np.nan, tau)
        args = (np.tile(x, (3, 1)) for x in (q, v, qdd_x, tau_x)) if batch else (q, v, qdd_x, tau_x)
        Q, V, QDD, TAU = args
        for got, want in zip(rd.hybrid_dynamics(arm, Q, V, known, QDD, TAU), expected):
            np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=1e-12, atol=1e-12)
        with pytest.raises(ValueError, match="tau contains NaN or inf" + (r" \(batch row 0\)" if batch else "")):
            rd.hybrid_dynamics(arm, Q, V, known, QDD, np.full_like(TAU, np.nan))
    with pytest.raises(ValueError, match="qdd contains NaN or inf"):
        rd.hybrid_dynamics(arm, q, v, known, np.where(known, np.nan, 0.0), tau)
    with pytest.raises(ValueError, match="tau contains NaN or inf"):
        rd.forward_dynamics(arm, q, v, np.full(6, np.inf))


# --- the 2-link planar arm in closed form ---------------------------------------------------------
m1 = m2 = 1.0
l1 = l2 = 1.0
lc1 = lc2 = 0.5
I1 = I2 = m1 * l1 ** 2 / 12
G = 9.81


@pytest.fixture(scope="module")
def planar_arm():
    return load_urdf(bundled_urdf("planar_2link"))


def closed_form(q, qd):
    c1, c2, c12, s2 = np.cos(q[0]), np.cos(q[1]), np.cos(q[0] + q[1]), np.sin(q[1])
    M11 = m1 * lc1 ** 2 + I1 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * c2 * l1 * lc2) + I2
    M22 = m2 * lc2 ** 2 + I2
    M12 = m2 * c2 * l1 * lc2 + m2 * lc2 ** 2 + I2
    g = np.array([m1 * G * c1 * lc1 + m2 * G * (c12 * lc2 + c1 * l1),
                  m2 * G * c12 * lc2])
    h = m2 * s2 * l1 * lc2 * (qd[0] + 0.5 * qd[1])
    S = np.array([[0.0, -h], [h, 0.0]])
    Mdot12 = -m2 * s2 * l1 * lc2 * qd[1]
    Mdot = np.array([[2 * Mdot12, Mdot12], [Mdot12, 0.0]])
    return np.array([[M11, M12], [M12, M22]]), g, S, Mdot


def test_mass_matrix_gravity_and_coriolis_match_the_closed_forms(planar_arm):
    rng = np.random.default_rng(2)
    for _ in range(50):
        q, qd, qdd = rng.uniform(-3, 3, 2), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        M, g, S, Mdot = closed_form(q, qd)
        np.testing.assert_allclose(rd.mass_matrix(planar_arm, q), M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rd.gravity_torques(planar_arm, q), g, rtol=0, atol=1e-12)
        # M qdd + (Mdot/2 + S) qd + g = u
        u = M @ qdd + (0.5 * Mdot + S) @ qd + g
        np.testing.assert_allclose(rd.inverse_dynamics(planar_arm, q, qd, qdd), u, rtol=0, atol=1e-12)
        # C = Mdot/2 + S is the Christoffel split: same C, and S = C - Mdot/2 is skew
        C = rd.coriolis_matrix(planar_arm, q, qd)
        np.testing.assert_allclose(C, 0.5 * Mdot + S, rtol=0, atol=1e-12)


def test_contact_example_tau_equals_J_transpose_F(planar_arm):
    """A worked example: q = (0, pi/3), F = (0, -1) at the tip -> tau = (-3/2, -1/2)."""
    q = np.array([0.0, np.pi / 3])
    force_down = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])    # the arm moves in the world x-z plane
    tau = rd.wrench_to_joint_torques(planar_arm, q, "tip", force_down)
    np.testing.assert_allclose(tau, [-1.5, -0.5], rtol=0, atol=1e-12)
    J = rd.frame_jacobian(planar_arm, q, "tip")[[0, 2]]                 # in the x-z plane
    s1, s12, c1, c12 = np.sin(q[0]), np.sin(q.sum()), np.cos(q[0]), np.cos(q.sum())
    np.testing.assert_allclose(J, [[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]], atol=1e-12)
    # a contact force enters the dynamics as + J^T F
    tau_ext = rd.inverse_dynamics(planar_arm, q, np.zeros(2), np.zeros(2), {"tip": force_down})
    np.testing.assert_allclose(tau_ext, rd.gravity_torques(planar_arm, q) - tau, atol=1e-12)
