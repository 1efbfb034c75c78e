"""The inertial parameters and the joint torque regressor (robot_dynamics/regressor.py): parameters as
Pinocchio's toDynamicParameters, the regressor against Pinocchio's computeJointTorqueRegressor and
Y theta against RNEA, zero blocks off each body's path, batches and out=, bad input refused by name;
base parameters (Y times their null space is zero, as many as the regressor's rank, the whole robot
identified from noiseless torques; the 2-link planar arm's closed forms by name)."""
import numpy as np
import pytest

from oracle import Pair, pin, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.layout import SUBTREE_END
from robot_dynamics.resources import bundled_urdf

TOL = 1e-9


def pin_columns(P):
    """Pinocchio's regressor columns in our body order (our body b: Pinocchio's joint of the same name)."""
    names = list(P.pin.names)
    return np.concatenate([np.arange(10) + 10 * (names.index(j) - 1) for j in P.model.body_joint_names])


def test_inertial_parameters_are_pinocchios(pair):
    m, P = pair.model, pair
    names = list(P.pin.names)
    expected = np.array([P.pin.inertias[names.index(j)].toDynamicParameters() for j in m.body_joint_names])
    assert rel_err(rd.inertial_parameters(m), expected) < 1e-12
    assert rd.inertial_parameter_names(m)[:10] == [f"{m.body_names[0]}.{p}" for p in rd.PARAMETERS]


def test_regressor_against_pinocchio_and_rnea(pair):
    """Y = G^T Y_pin (mimic joints folded in) and Y theta + armature a = tau (RNEA), 50 states;
    batches (one thread and two) equal single calls."""
    m, P = pair.model, pair
    cols = pin_columns(P)
    if m.joint_names:
        m.armature = np.linspace(0.05, 0.4, len(m.joint_names))
    armature = np.r_[np.zeros(m.joint_offset[1]), m.armature]
    theta = rd.inertial_parameters(m).ravel()
    rng = np.random.default_rng(0)
    Q, V, A = [], [], []
    for _ in range(50):
        q, v, a = P.random_state(rng)
        Y = rd.joint_torque_regressor(m, q, v, a)
        Y_pin = pin.computeJointTorqueRegressor(P.pin, P.data, P.pin_q(q), P.pin_v(v), P.pin_v(a))
        assert rel_err(Y, P.G.T @ Y_pin[:, cols]) < TOL
        assert rel_err(Y @ theta + armature * a, rd.inverse_dynamics(m, q, v, a)) < TOL
        Q.append(q), V.append(v), A.append(a)
    for n, threads in ((7, 1), (len(Q), 2)):
        Yb = rd.joint_torque_regressor(m, np.array(Q[:n]), np.array(V[:n]), np.array(A[:n]), threads=threads)
        for k in range(n):
            np.testing.assert_array_equal(Yb[k], rd.joint_torque_regressor(m, Q[k], V[k], A[k]))
        out = np.full(Yb.shape, np.nan)          # every entry is written, the zeros too
        assert rd.joint_torque_regressor(m, np.array(Q[:n]), np.array(V[:n]), np.array(A[:n]), threads=threads,
                                         out=out) is out
        np.testing.assert_array_equal(out, Yb)
    m.armature = 0.0 if m.joint_names else []


def test_regressor_zero_blocks_and_input_checks():
    """A body's columns are zero on the rows of joints not on its path to the root (the kernel
    writes nothing there); bad input is refused by name."""
    P = Pair("talos", True)
    m = P.model
    q, v, a = P.random_state(np.random.default_rng(1))
    Y = rd.joint_torque_regressor(m, q, v, a)
    for b in range(m.nb):
        chain = {m.v_source[m.idx_v[j]] + d for j in range(b + 1) if m.packed[j, SUBTREE_END] > b
                 for d in range(6 if m.body_joint_kinds[j] == "floating" else 1)}
        others = [k for k in range(m.nv) if k not in chain]
        assert not np.any(Y[others, 10 * b:10 * b + 10]), m.body_names[b]
    with pytest.raises(ValueError, match="a contains NaN"):
        rd.joint_torque_regressor(m, q, v, np.full(m.nv, np.nan))
    with pytest.raises(ValueError, match=r"v must have shape"):
        rd.joint_torque_regressor(m, q, v[:-1], a)
    bad = q.copy()
    bad[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(ValueError, match="unit norm"):
        rd.joint_torque_regressor(m, bad, v, a)
    with pytest.raises(ValueError, match=r"batch row 1"):
        rd.joint_torque_regressor(m, [q, bad], [v, v], [a, a])
    with pytest.raises(ValueError, match="beyond 1e\\+50 in magnitude"):      # finite, but their squares are not
        rd.joint_torque_regressor(m, q, np.full(m.nv, 1e200), a)
    for bad_out in (np.empty((m.nv, 10 * m.nb + 1)), np.empty((m.nv, 10 * m.nb), np.float32),
                    np.empty((10 * m.nb, m.nv)).T, [[0.0] * (10 * m.nb)] * m.nv):
        with pytest.raises(ValueError, match="out must be"):
            rd.joint_torque_regressor(m, q, v, a, out=bad_out)



# --- base parameters --------------------------------------------------------------------------
def test_base_parameters_of_the_planar_arm_are_the_classical_ones():
    """The 2-link planar arm (axes -y, links along x, l1 = 1, gravity in the plane): the torques
    see exactly Iyy1 + m2 l1^2, m1 cx1 + m2 l1 (first moment of link 1 along it, with link 2's
    mass at the elbow), m1 cz1 (perpendicular), and link 2's Iyy2, m2 cx2, m2 cz2. Derived from
    the Lagrangian: T = (Iyy1 + m2 l1^2) qd1^2 / 2 + Iyy2 (qd1 + qd2)^2 / 2 + l1 qd1 (qd1 + qd2)
    (m2 cx2 cos q2 + m2 cz2 sin q2), V = g ((m1 cx1 + m2 l1) sin q1 + m1 cz1 cos q1 + m2 cx2 sin q12
    + m2 cz2 cos q12)."""
    arm = load_urdf(bundled_urdf("planar_2link"))
    bp = rd.base_parameters(arm)
    expected = {"link1.mx": {"link1.mx": 1.0, "link2.m": 1.0}, "link1.mz": {"link1.mz": 1.0},
                "link1.Iyy": {"link1.Iyy": 1.0, "link2.m": 1.0}, "link2.mx": {"link2.mx": 1.0},
                "link2.mz": {"link2.mz": 1.0}, "link2.Iyy": {"link2.Iyy": 1.0}}
    assert sorted(bp.leading) == sorted(expected)
    for lead, combination in zip(bp.leading, bp.combinations):
        assert combination.keys() == expected[lead].keys(), lead
        for name, c in combination.items():
            assert abs(c - expected[lead][name]) < 1e-9, (lead, name, c)
    assert "link1.Iyy + link2.m" in bp.names and "link1.mx + link2.m" in bp.names
    # the values: Iyy1 about the joint = 1/12 + 1/4, m2 l1^2 = 1; m1 lc1 + m2 l1 = 1.5
    values = dict(zip(bp.leading, bp.values(rd.inertial_parameters(arm))))
    np.testing.assert_allclose([values["link1.Iyy"], values["link1.mx"], values["link2.Iyy"], values["link2.mx"]],
                               [1 / 12 + 1 / 4 + 1.0, 1.5, 1 / 12 + 1 / 4, 0.5], rtol=0, atol=1e-12)
    assert abs(values["link1.mz"]) < 1e-12 and abs(values["link2.mz"]) < 1e-12
    # and they are what the torques say: a closed-form Y_base theta_base = tau
    rng = np.random.default_rng(2)
    for _ in range(20):
        q, v, a = rng.uniform(-3, 3, 2), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        s1, c1, s2, c2 = np.sin(q[0]), np.cos(q[0]), np.sin(q[1]), np.cos(q[1])
        s12, c12 = np.sin(q.sum()), np.cos(q.sum())
        g = 9.81
        by_name = dict(zip(bp.leading, np.moveaxis(bp.regressor(arm, q, v, a), -1, 0)))
        np.testing.assert_allclose(by_name["link1.Iyy"], [a[0], 0.0], atol=1e-12)          # (Iyy1 + m2) qdd1
        np.testing.assert_allclose(by_name["link1.mx"], [g * c1, 0.0], atol=1e-12)          # (mx1 + m2) g cos q1
        np.testing.assert_allclose(by_name["link2.Iyy"], [a.sum(), a.sum()], atol=1e-12)
        centripetal = (2 * v[0] + v[1]) * v[1]
        np.testing.assert_allclose(by_name["link2.mx"], [2 * c2 * a[0] + c2 * a[1] - s2 * centripetal + g * c12,
                                                         c2 * a[0] + s2 * v[0] ** 2 + g * c12], atol=1e-12)
        np.testing.assert_allclose(by_name["link1.mz"], [-g * s1, 0.0], atol=1e-12)
        np.testing.assert_allclose(by_name["link2.mz"], [-2 * s2 * a[0] - s2 * a[1] - c2 * centripetal - g * s12,
                                                         -s2 * a[0] + c2 * v[0] ** 2 - g * s12], atol=1e-12)


def test_base_parameters_null_space_and_rank(pair):
    """On states not used to find them: Y N = 0, Y theta = Y_base theta_base, and as many base
    parameters as the stacked regressor's rank (by SVD, not QR)."""
    m, P = pair.model, pair
    bp = rd.base_parameters(m)
    assert bp.margin[0] > 1e6 * max(bp.margin[1], 1e-300) and bp.margin[0] > 1e-4, bp.margin
    rng = np.random.default_rng(11)
    theta = rd.inertial_parameters(m).ravel()
    states = [P.random_state(rng) for _ in range(max(10, 4 * 10 * m.nb // m.nv))]
    Y = np.array([rd.joint_torque_regressor(m, *s) for s in states])
    scale = np.abs(Y).max()
    assert np.abs(Y @ bp.null_space).max() < 1e-12 * scale
    np.testing.assert_allclose(Y @ theta, Y[..., bp.columns] @ bp.values(theta), rtol=0, atol=1e-11 * scale)
    W = Y.reshape(-1, Y.shape[-1])
    norms = np.linalg.norm(W, axis=0)
    live = norms > 1e-10 * norms.max()           # the others are rounding noise (e.g. 2e-15 against 1e2)
    sv = np.linalg.svd(W[:, live] / norms[live], compute_uv=False)
    assert np.sum(sv > 1e-9 * sv[0]) == len(bp.names)
    assert bp.null_space.shape == (10 * m.nb, 10 * m.nb - len(bp.names))
    # identification of the whole robot: the base parameters from noiseless torques
    q, v, a = (np.array(x) for x in zip(*states))
    values, residual, cond = bp.fit(m, q, v, a, rd.inverse_dynamics(m, q, v, a))
    np.testing.assert_allclose(values, bp.values(theta), rtol=1e-6, atol=1e-6 * np.abs(theta).max())
    assert residual < 1e-9 * scale and cond < 1e8
    with pytest.raises(ValueError, match="do not excite"):
        bp.fit(m, q[:1], v[:1], a[:1], rd.inverse_dynamics(m, q[:1], v[:1], a[:1]))
    np.testing.assert_allclose(bp.null_space.T @ bp.null_space, np.eye(bp.null_space.shape[1]), atol=1e-12)
