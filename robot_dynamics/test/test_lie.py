"""robot_dynamics.lie and the compiled group operations the kernels use (kernels/lie.py): against themselves (exp/log round trips, Ad of a product, dual pairings,
Jacobians against finite differences and a quadrature of their integral) and against Pinocchio's
exp3/log3/exp6/log6/Jexp/Jlog, SE3.action/dualAction and Motion.action/dualAction.
Angles from 1e-9 rad to a hair below a half turn, across the series/closed-form switch at 0.5 rad."""
import numpy as np
import pytest
import scipy.linalg

from oracle import pin, rel_err
from robot_dynamics import lie

ANGLES = (0.0, 1e-9, 1e-5, 1e-3, 0.01, 0.3, 0.4999, 0.5001, 1.0, 2.0, 3.0, np.pi - 1e-4, np.pi - 1e-9)


def twists(rng, n=20):
    """Random twists [v; w] with |w| at every angle of ANGLES."""
    out = []
    for t in ANGLES:
        u = rng.normal(size=(n, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        out.append(np.hstack((rng.normal(size=(n, 3)), t * u)))
    return np.vstack(out)


@pytest.fixture
def xis():
    return twists(np.random.default_rng(0))


def test_so3_against_pinocchio_and_round_trips(xis):
    for xi in xis:
        w = xi[3:]
        R = lie.exp3(w)
        assert rel_err(R, pin.exp3(w)) < 1e-14
        assert rel_err(lie.log3(R), w) < 1e-13                   # |w| < pi: log3 inverts exp3
        if np.linalg.norm(w) <= 3.0:        # nearer a half turn the two may pick opposite signs
            assert rel_err(lie.log3(R), pin.log3(R)) < 1e-9
        assert rel_err(lie.Jexp3(w), pin.Jexp3(w)) < 1e-12
        assert rel_err(lie.Jlog3(R), pin.Jlog3(R)) < 1e-9
        assert rel_err(lie.Jlog3(R) @ lie.Jexp3(w), np.eye(3)) < 1e-12
        assert rel_err(lie.quaternion_to_matrix(lie.quaternion_exp(w)), R) < 1e-14
        assert rel_err(lie.quaternion_exp(w), pin.exp3_quat(w)) < 1e-14
        assert rel_err(lie.quaternion_log(lie.quaternion_exp(w)), w) < 1e-13


def test_half_turn_logarithm_keeps_its_axis():
    """At and near a half turn the skew part vanishes; the axis comes from the symmetric part."""
    rng = np.random.default_rng(1)
    for _ in range(50):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        for t in (np.pi, np.pi - 1e-7, np.pi - 1e-3):
            w = lie.log3(lie.exp3(t * u))
            assert np.isclose(np.linalg.norm(w), t, rtol=0, atol=1e-12)
            assert min(np.abs(w - t * u).max(), np.abs(w + t * u).max() if t == np.pi else 1.0) < 1e-12


def test_se3_against_pinocchio_and_round_trips(xis):
    for xi in xis:
        T = lie.exp6(xi)
        M = pin.exp6(pin.Motion(xi))
        assert rel_err(T, M.homogeneous) < 1e-14
        assert rel_err(lie.log6(T), xi) < 1e-12
        assert rel_err(lie.log6(T), pin.log6(M).vector) < 1e-9
        assert rel_err(lie.Jlog6(T) @ lie.Jexp6(xi), np.eye(6)) < 1e-12
        if not 1e-4 < np.linalg.norm(xi[3:]) < 0.1:
            # Pinocchio 4.1's closed forms lose digits there (Jexp6 4e-8, Jlog6 1.4e-7 at 1e-3 rad); ours
            # are checked there by quadrature and finite differences below
            assert rel_err(lie.Jlog6(T), pin.Jlog6(M)) < 1e-9
            assert rel_err(lie.Jexp6(xi), pin.Jexp6(pin.Motion(xi))) < 1e-9
        assert rel_err(lie.Ad(T), M.action) < 1e-14
        assert rel_err(lie.Ad_dual(T), M.dualAction) < 1e-14
        assert rel_err(lie.ad(xi), pin.Motion(xi).action) == 0
        assert rel_err(lie.ad_dual(xi), pin.Motion(xi).dualAction) == 0
        assert rel_err(lie.inverse(T), M.inverse().homogeneous) < 1e-14


def test_jexp6_equals_the_integral_of_exp_minus_s_ad(xis):
    """Jr(xi) = int_0^1 exp(-s ad(xi)) ds, by 20-point Gauss-Legendre quadrature of scipy's expm:
    an oracle independent of the closed form and of Pinocchio (exact to ~1e-15 for |w| <= pi)."""
    nodes, weights = np.polynomial.legendre.leggauss(20)
    s, ws = 0.5 * (nodes + 1), 0.5 * weights
    for xi in xis[::3]:
        ad = lie.ad(xi)
        J = sum(w * scipy.linalg.expm(-si * ad) for si, w in zip(s, ws))
        assert rel_err(lie.Jexp6(xi), J) < 1e-13
        assert rel_err(lie.Jexp3(xi[3:]), J[3:, 3:]) < 1e-13


def test_jacobians_against_finite_differences(xis):
    """log(exp(xi) exp(h d)) = xi + h Jlog d + O(h^2), exp(xi + h d) = exp(xi) exp(h Jexp d) + O(h^2)."""
    rng = np.random.default_rng(2)
    h = 1e-6
    for xi in xis[::4]:
        if np.linalg.norm(xi[3:]) > 3.0:
            continue
        d = rng.normal(size=6)
        T = lie.exp6(xi)
        fd = (lie.log6(T @ lie.exp6(h * d)) - lie.log6(T @ lie.exp6(-h * d))) / (2 * h)
        assert rel_err(lie.Jlog6(T) @ d, fd) < 1e-7
        Ti = lie.inverse(T)
        fd = (lie.log6(Ti @ lie.exp6(xi + h * d)) - lie.log6(Ti @ lie.exp6(xi - h * d))) / (2 * h)
        assert rel_err(lie.Jexp6(xi) @ d, fd) < 1e-7


def test_adjoints_of_products_inverses_and_dual_pairings(xis):
    rng = np.random.default_rng(3)
    for a, b in zip(xis[::2], xis[1::2]):
        A, B = lie.exp6(a), lie.exp6(b)
        assert rel_err(lie.Ad(A @ B), lie.Ad(A) @ lie.Ad(B)) < 1e-13
        assert rel_err(lie.Ad(lie.inverse(A)), np.linalg.inv(lie.Ad(A))) < 1e-12
        assert rel_err(lie.Ad_dual(A), np.linalg.inv(lie.Ad(A)).T) < 1e-12
        assert rel_err(lie.hat6(lie.Ad(A) @ b), A @ lie.hat6(b) @ lie.inverse(A)) < 1e-13    # Ad is conjugation
        assert rel_err(lie.ad(a) @ b, lie.vee6(lie.hat6(a) @ lie.hat6(b) - lie.hat6(b) @ lie.hat6(a))) < 1e-13
        assert rel_err(lie.Ad(A) @ a, a) < 1e-13           # exp(a) commutes with a
        F, V = rng.normal(size=6), rng.normal(size=6)
        assert np.isclose((lie.Ad_dual(A) @ F) @ (lie.Ad(A) @ V), F @ V, rtol=1e-12, atol=1e-12)
        assert np.isclose((lie.ad_dual(a) @ F) @ V, -F @ (lie.ad(a) @ V), rtol=1e-12, atol=1e-12)
        assert rel_err(lie.Ad(A) @ V, pin.SE3(A).act(pin.Motion(V)).vector) < 1e-13
        assert rel_err(lie.Ad_dual(A) @ F, pin.SE3(A).act(pin.Force(F)).vector) < 1e-13


def test_quaternions():
    rng = np.random.default_rng(4)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = np.roll(q, 1, axis=0)
    R = lie.quaternion_to_matrix(q)
    assert rel_err(R, [pin.Quaternion(*x[[3, 0, 1, 2]]).toRotationMatrix() for x in q]) < 1e-14
    assert rel_err(lie.quaternion_to_matrix(lie.quaternion_multiply(p, q)), lie.quaternion_to_matrix(p) @ R) < 1e-14
    back = lie.matrix_to_quaternion(R)
    assert rel_err(back, q * np.sign(q[:, 3:])) < 1e-14 and np.all(back[:, 3] >= 0)
    assert rel_err(lie.quaternion_multiply(q, lie.quaternion_conjugate(q)), np.tile([0, 0, 0, 1.0], (50, 1))) < 1e-15
    T = lie.pose_matrix(rng.normal(size=(50, 3)), q)
    pos, quat = lie.pose(T)
    assert rel_err(lie.pose_matrix(pos, quat), T) < 1e-14


def test_batches_keep_their_shape_and_equal_single_calls(xis):
    X = xis[:12].reshape(3, 4, 6)
    T = lie.exp6(X)
    assert T.shape == (3, 4, 4, 4) and lie.log6(T).shape == (3, 4, 6) and lie.Jlog6(T).shape == (3, 4, 6, 6)
    assert np.array_equal(T[1, 2], lie.exp6(X[1, 2]))
    assert np.array_equal(lie.Ad(T)[2, 3], lie.Ad(T[2, 3]))


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="w must have shape"):
        lie.exp3([1.0, 2.0])
    with pytest.raises(ValueError, match=r"xi contains NaN or inf \(element 1\)"):
        lie.exp6([[0.0] * 6, [0.0, np.nan, 0, 0, 0, 0]])
    with pytest.raises(ValueError, match="R must be a rotation matrix"):
        lie.log3(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="last row"):
        lie.log6(np.ones((4, 4)))
    with pytest.raises(ValueError, match="unit quaternion"):
        lie.quaternion_to_matrix([0.0, 0.0, 0.0, 2.0])
