"""Structural properties that hold whatever the oracle: M symmetric positive definite and
Mdot - 2C skew-symmetric, inverse/forward consistency, hybrid dynamics against the reduced
system M_uu qdd_u = tau_u - b_u - M_uk qdd_k, batches, bad input, singular mass matrices."""
import numpy as np
import pytest

from oracle import Pair
from robot_dynamics import dynamics as rd

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


def test_bad_input_is_named(arm):
    q, v = np.zeros(6), np.zeros(6)
    with pytest.raises(ValueError, match=r"q must have shape \(6,\)"):
        rd.inverse_dynamics(arm, np.zeros(5), v, v)
    with pytest.raises(ValueError, match=r"v must have shape \(3, 6\)"):
        rd.inverse_dynamics(arm, np.zeros((3, 6)), v, v)
    with pytest.raises(ValueError, match="a contains NaN or inf"):
        rd.inverse_dynamics(arm, q, v, np.array([0, 0, np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"q contains NaN or inf \(batch row 1\)"):
        rd.mass_matrix(arm, np.array([np.zeros(6), np.full(6, np.inf)]))
    with pytest.raises(KeyError, match="unknown frame 'nowhere'"):
        rd.frame_jacobian(arm, q, "nowhere")
    with pytest.raises(ValueError, match="reference must be one of"):
        rd.frame_jacobian(arm, q, "tool0", "sideways")
    with pytest.raises(ValueError, match="acceleration_known must be a boolean mask of shape"):
        rd.hybrid_dynamics(arm, q, v, np.ones(5, bool), v, v)
    with pytest.raises(ValueError, match="external wrench on 'tool0' must have shape"):
        rd.inverse_dynamics(arm, q, v, v, {"tool0": np.ones(3)})
    with pytest.raises(KeyError, match="unknown frame 'hand'"):
        rd.inverse_dynamics(arm, q, v, v, {"hand": np.ones(6)})
    with pytest.raises(ValueError, match="external_wrenches contains NaN"):
        rd.inverse_dynamics(arm, q, v, v, {"tool0": np.full(6, np.nan)})
    with pytest.raises(ValueError, match=r"v contains a value beyond 1e\+50 in magnitude"):
        rd.inverse_dynamics(arm, q, np.full(6, 1e200), v)        # finite, but v^2 would overflow
    with pytest.raises(ValueError, match=r"q contains a value beyond 1e\+50 in magnitude \(batch row 1\)"):
        rd.mass_matrix(arm, np.array([np.zeros(6), np.full(6, -1e60)]))
    np.testing.assert_allclose(rd.inverse_dynamics(arm, q, v, v), rd.gravity_torques(arm, q))   # still fine


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


def test_free_flyer_quaternion_must_be_unit():
    m = Pair("biped", True).model
    q = np.zeros(m.nq)
    q[6] = 2.0
    with pytest.raises(ValueError, match="quaternion .* must have unit norm; got norm 2"):
        rd.gravity_torques(m, q)


# --- a mass matrix that is not positive definite: an error naming the suspect links, never NaN or inf ---
def _robot(*parts):
    return '<robot name="r"><link name="base"/>' + "".join(parts) + "</robot>"


def _link(name, mass, inertia="0 0 0", com="0 0 0"):
    ixx, iyy, izz = inertia.split()
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/><inertia ixx="{ixx}" '
            f'iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _joint(name, parent, child, kind="revolute", extra="", xyz="0 0 0"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>{extra}</joint>')


ARM = _link("upper", 1.0, "0.01 0.01 0.01", "0.3 0 0") + _joint("shoulder", "base", "upper")


@pytest.mark.parametrize("xml, links, warned", [
    # a point mass on the axis of its joint: nothing resists the turn (D = 0)
    (_robot(ARM, _link("rotor", 0.5), _joint("spin", "upper", "rotor")), "rotor", False),
    # romeo's body: a negative principal moment about the axis (D < 0)
    (_robot(ARM, _link("bad", 1.0, "0.1 0.1 -1.0", "0.8 0 0"), _joint("spin", "upper", "bad", xyz="1 0 0")), "bad", True),
    # the same, coupled through a mimic joint: the reduced system's Cholesky fails
    (_robot(ARM, _link("rotor", 0.5), _joint("spin", "upper", "rotor"), _link("twin", 0.2),
            _joint("twin_joint", "upper", "twin", extra='<mimic joint="spin" multiplier="2"/>')), "rotor, twin", False),
    # a massless floating link: its six coordinates have no inertia at all
    (_robot(ARM, '<link name="ghost"/><joint name="loose" type="floating"><parent link="upper"/>'
            '<child link="ghost"/></joint>'), "ghost", False),
])
def test_singular_mass_matrix_is_an_error_naming_the_links(xml, links, warned):
    from robot_dynamics.dynamics import SingularMassMatrixError
    m = __import__("robot_dynamics").load_urdf(xml)
    assert bool(m.warnings) == warned
    q, v, tau = rd.neutral(m), np.zeros(m.nv), np.ones(m.nv)
    with pytest.raises(SingularMassMatrixError, match=f"not positive definite.*Suspect links .*: {links}"
                       + (".*the loader warned: link 'bad'" if warned else "")):
        rd.forward_dynamics(m, q, v, tau)
    with pytest.raises(SingularMassMatrixError, match=r"\(batch row 0\)"):
        rd.forward_dynamics(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(tau, (2, 1)), threads=1)
    # with every coordinate of the singular joint known, hybrid dynamics is well posed
    known = np.ones(m.nv, bool)
    known[m.joint_offset[1] + m.joint_index["shoulder"]] = False
    qdd, t = rd.hybrid_dynamics(m, q, v, known, np.zeros(m.nv), tau)
    assert np.all(np.isfinite(qdd)) and np.all(np.isfinite(t))
