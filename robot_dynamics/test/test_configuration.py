"""The configuration-space helpers (robot_dynamics/configuration.py: neutral, integrate, difference,
random_configuration, the root joint's coordinates from a pose and a twist) against Pinocchio's, on
models with floating and planar joints at the root and mid-tree, mimic and continuous joints; and
their compiled half (kernels/configuration.py: integrate, the tangent rate) that the simulator and
inverse kinematics step with."""
import numpy as np
import pytest

from oracle import URDFS, Pair, pin, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.kernels import configuration as kconfig

pytestmark = pytest.mark.robots("planar_base_arm", "floating_object_arm", "mimic-freeflyer", "talos-freeflyer")
def same_configuration(pair, pin_a, pin_b, leaders_only=False):
    """Pinocchio configurations equal up to the sign of each quaternion (leaders_only: not
    comparing mimic joints, whose offset Pinocchio's neutral does not know)."""
    a, b = np.array(pin_a, float), np.array(pin_b, float)
    for body, (_, n, where, kind) in enumerate(pair.q_parts):
        if kind == "floating" and a[where + 3:where + 7] @ b[where + 3:where + 7] < 0:
            b[where + 3:where + 7] *= -1
        if leaders_only and pair.model.body_joint_names[body] not in pair.model.joint_by_name:
            a[where:where + n + (kind in ("continuous", "planar"))] = b[where:where + n + (kind in ("continuous", "planar"))]
    return np.allclose(a, b, rtol=0, atol=1e-12)


def test_neutral(pair):
    assert same_configuration(pair, pair.pin_q(rd.neutral(pair.model)), pin.neutral(pair.pin), leaders_only=True)


def test_integrate_and_difference_against_pinocchio(pair):
    m, rng = pair.model, np.random.default_rng(11)
    for _ in range(50):
        q0, q1 = rd.random_configuration(m, rng), rd.random_configuration(m, rng)
        v = rng.uniform(-2, 2, m.nv)
        assert same_configuration(pair, pair.pin_q(rd.integrate(m, q0, v)),
                                  pin.integrate(pair.pin, pair.pin_q(q0), pair.pin_v(v)))
        if pair.permutation:       # with mimic joints Pinocchio's difference has coordinates we lack
            np.testing.assert_allclose(rd.difference(m, q0, q1),
                                       pair.ours_v(pin.difference(pair.pin, pair.pin_q(q0), pair.pin_q(q1))),
                                       rtol=0, atol=1e-9)


def test_round_trips(pair):
    m, rng = pair.model, np.random.default_rng(12)
    for _ in range(50):
        q0, q1 = rd.random_configuration(m, rng), rd.random_configuration(m, rng)
        v = rng.uniform(-1, 1, m.nv)           # turns below pi: the logarithm is unique
        np.testing.assert_allclose(rd.difference(m, q0, rd.integrate(m, q0, v)), v, rtol=0, atol=1e-9)
        back = rd.integrate(m, q0, rd.difference(m, q0, q1))
        assert same_configuration(pair, pair.pin_q(back), pair.pin_q(q1))
        np.testing.assert_allclose(rd.difference(m, q1, q1), 0.0, atol=1e-12)


@pytest.mark.parametrize("angle", [1e-9, 1e-7, 1e-5, 1e-3, 0.3, 0.49, 0.51, 1.0, 3.0])
def test_small_turns_keep_every_digit(pair, angle):
    """difference(q0, integrate(q0, v)) == v to rounding for any size of the turns of the floating
    and planar joints: the closed forms of the exponential's coefficients cancel digits for small
    angles ((t - sin t) / t^3 kept ~1e-5 relative at 1e-5 rad), their series below 0.5 rad do not."""
    m, rng = pair.model, np.random.default_rng(14)
    for _ in range(5):
        q0, v = rd.random_configuration(m, rng), rng.uniform(-1, 1, m.nv)
        for j in m.joints:
            if j.kind in ("floating", "planar"):
                turn = slice(j.idx_v + 3, j.idx_v + 6) if j.kind == "floating" else slice(j.idx_v + 2, j.idx_v + 3)
                v[turn] *= angle / np.linalg.norm(v[turn])
        d = rd.difference(m, q0, rd.integrate(m, q0, v))
        np.testing.assert_allclose(d, v, rtol=0, atol=1e-14 * np.abs(v).max())


def test_quaternions_stay_unit(pair):
    m, rng = pair.model, np.random.default_rng(13)
    q = rd.random_configuration(m, rng)
    for _ in range(200):
        q = rd.integrate(m, q, rng.uniform(-3, 3, m.nv))
    for j in m.joints:
        if j.kind == "floating":
            assert abs(np.linalg.norm(q[j.idx_q + 3:j.idx_q + 7]) - 1.0) < 1e-14
    rd.gravity_torques(m, q)            # the kernels accept it


def test_batches(pair):
    m, rng = pair.model, np.random.default_rng(14)
    Q0, Q1 = rd.random_configuration(m, rng, n=5), rd.random_configuration(m, rng, n=5)
    V = rng.normal(size=(5, m.nv))
    for k in range(5):
        np.testing.assert_array_equal(rd.integrate(m, Q0, V)[k], rd.integrate(m, Q0[k], V[k]))
        np.testing.assert_array_equal(rd.difference(m, Q0, Q1)[k], rd.difference(m, Q0[k], Q1[k]))
    assert rd.integrate(m, Q0[0], V).shape == (5, m.nq)       # one q, many v


def test_random_configuration_within_limits(pair):
    m = pair.model
    Q = rd.random_configuration(m, np.random.default_rng(15), n=2000)
    joints = Q[:, m.joint_offset[0]:]
    bounded = np.isfinite(m.lower_limits) & np.isfinite(m.upper_limits)
    lo, hi = np.where(bounded, m.lower_limits, -np.pi), np.where(bounded, m.upper_limits, np.pi)
    assert np.all(joints >= lo) and np.all(joints <= hi)
    assert np.all(joints.min(0) < lo + 0.05 * (hi - lo)) and np.all(joints.max(0) > hi - 0.05 * (hi - lo))
    for j in m.joints:
        if j.kind == "floating":
            np.testing.assert_allclose(np.linalg.norm(Q[:, j.idx_q + 3:j.idx_q + 7], axis=1), 1.0, atol=1e-14)
            assert np.all(np.abs(Q[:, j.idx_q:j.idx_q + 3]) <= 1.0)
        elif j.kind == "planar":
            assert np.all(np.abs(Q[:, j.idx_q + 2]) <= np.pi)
    a, b = rd.random_configuration(m, 7), rd.random_configuration(m, 7)
    np.testing.assert_array_equal(a, b)        # a seed gives the same configuration


def test_bad_input_is_named():
    m = Pair("planar_base_arm").model
    with pytest.raises(ValueError, match=r"v must have shape \(6,\) or \(N, 6\)"):
        rd.integrate(m, rd.neutral(m), np.zeros(5))
    with pytest.raises(ValueError, match="q1 contains NaN"):
        rd.difference(m, rd.neutral(m), np.full(m.nq, np.nan))


def _quaternion(R):
    """x y z w of a rotation matrix (w >= 0)."""
    w = np.sqrt(max(0.0, 1 + np.trace(R))) / 2
    if w > 1e-6:
        return np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w])
    x = np.sqrt(max(0.0, 1 + R[0, 0] - R[1, 1] - R[2, 2])) / 2
    return np.array([x, (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x), (R[2, 1] - R[1, 2]) / (4 * x)])


@pytest.mark.parametrize("name, floating_base", [("planar_base_arm", False), ("floating_object_arm", False), ("biped", True)])
def test_root_coordinates_from_the_root_links_pose(name, floating_base):
    """What the node does with ~/base_pose: the root link's world pose -> the root joint's q, and
    a twist in the root link's frame -> its v (and back)."""
    m = Pair(name, floating_base).model
    root, link = m.root_joint, m.body_names[0]
    rng = np.random.default_rng(16)
    for _ in range(20):
        q = rd.random_configuration(m, rng)
        H = rd.frame_placement(m, q, link)
        got = rd.root_coordinates(m, H[:3, 3], _quaternion(H[:3, :3]))
        back = q.copy()
        back[:root.nq] = got
        np.testing.assert_allclose(rd.frame_placement(m, back, link), H, atol=1e-12)
        v = rng.normal(size=m.nv)
        v[root.nv:] = 0.0
        J = rd.frame_jacobian(m, q, link, "local")
        np.testing.assert_allclose(rd.root_twist(m, v[:root.nv]), J @ v, atol=1e-12)
        np.testing.assert_allclose(rd.root_twist_coordinates(m, J @ v), v[:root.nv], atol=1e-12)
    if root.kind == "planar":
        H = rd.frame_placement(m, rd.neutral(m), link)
        with pytest.raises(ValueError, match="leaves the plane of planar root joint 'base_planar' by 0.1 m"):
            rd.root_coordinates(m, H[:3, 3] + H[:3, :3] @ [0, 0, 0.1], _quaternion(H[:3, :3]))
        with pytest.raises(ValueError, match="moves in its plane only"):
            rd.root_twist_coordinates(m, [0, 0, 1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="orientation must be 4 finite numbers"):
        rd.root_coordinates(m, [0, 0, 0], [0, 0, 0, 0])


def test_root_coordinates_need_a_free_root():
    with pytest.raises(ValueError, match="has no floating or planar root joint"):
        rd.root_coordinates(Pair("puma560").model, [0, 0, 0], [0, 0, 0, 1])


@pytest.mark.parametrize("name,floating", [("floating_object_arm", False), ("planar_base_arm", False),
                                           ("biped", True), ("panda", False)])
def test_compiled_integrate_equals_rd_integrate(name, floating):
    """kernels/configuration.integrate, which the simulator and inverse kinematics step with, is
    rd.integrate (floating, planar and one-coordinate joints, mimic models)."""
    model = load_urdf(URDFS[name], floating_base=floating)
    rng = np.random.default_rng(5)
    Q = rd.random_configuration(model, rng, 30)
    V = rng.normal(size=(30, model.nv)) * np.repeat([1e-8, 1e-3, 0.1, 1.0, 3.0], 6)[:, None]
    out = np.empty(Q.shape)
    kconfig.integrate_rows(model.packed, Q, V, 0.7, out)
    assert rel_err(out, rd.integrate(model, Q, 0.7 * V)) < 1e-14


@pytest.mark.parametrize("name,floating", [("floating_object_arm", False), ("planar_base_arm", False), ("biped", True)])
def test_tangent_rate_is_the_inverse_right_jacobian(name, floating):
    """q0 (+) (theta + h rate) = (q0 (+) theta) (+) h v + O(h^2): the rate at which the exponential
    coordinates theta of a displacement change when the joints move with v (SE(3) and SE(2)).
    A wrong rate leaves an error of order h; h = 1e-4 leaves ~h^2 |v|^2 of second-order terms."""
    model = load_urdf(URDFS[name], floating_base=floating)
    rng = np.random.default_rng(6)
    for h in (1e-4, 1e-5):
        worst = 0.0
        for _ in range(20):
            q0 = rd.random_configuration(model, rng)
            theta, v = rng.normal(size=model.nv), rng.normal(size=model.nv)
            rate = np.empty((1, model.nv))
            kconfig.tangent_rate_rows(model.packed, theta[None], v[None], rate)
            a = rd.integrate(model, q0, theta + h * rate[0])
            b = rd.integrate(model, rd.integrate(model, q0, theta), h * v)
            worst = max(worst, np.abs(a - b).max())
        assert worst < 30 * h * h, (h, worst)
