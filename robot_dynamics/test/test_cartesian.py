"""robot_dynamics/cartesian.py: straight lines in SE(3) against their closed forms (screw: a constant
body twist; decoupled: the origin on the segment, the rotation on the geodesic) and Pinocchio's
exp6/log6, exp3/log3; cartesian_path keeps the frame on the line at every gridpoint (panda, ur5),
its derivatives are those of its q, and a line through a singularity or out of reach is refused at
the s where it happens."""
import numpy as np
import pytest

from oracle import Pair, pin
from robot_dynamics import dynamics as rd
from robot_dynamics import lie

S = np.linspace(0.0, 1.0, 11)


@pytest.fixture(scope="module")
def ends():
    rng = np.random.default_rng(3)
    T0 = lie.exp6(rng.normal(size=6))
    T1 = T0 @ lie.exp6(np.array([0.3, -0.2, 0.5, 1.1, -0.7, 0.9]))
    return T0, T1


def test_screw_motion_is_a_constant_body_twist(ends):
    T0, T1 = ends
    T, V, dV = rd.se3_interpolate(T0, T1, S, "screw", derivatives=True)
    X = pin.log6(pin.SE3(np.linalg.inv(T0) @ T1)).vector
    for s, Ts in zip(S, T):
        np.testing.assert_allclose(Ts, T0 @ pin.exp6(pin.Motion(s * X)).homogeneous, atol=1e-12)
    np.testing.assert_allclose(V, np.tile(X, (len(S), 1)), atol=1e-12)
    assert not dV.any()
    np.testing.assert_allclose(T[0], T0, atol=1e-12)
    np.testing.assert_allclose(T[-1], T1, atol=1e-12)


def test_decoupled_motion_is_a_segment_and_a_geodesic(ends):
    T0, T1 = ends
    T, V, dV = rd.se3_interpolate(T0, T1, S, "decoupled", derivatives=True)
    w = pin.log3(T0[:3, :3].T @ T1[:3, :3])
    for s, Ts in zip(S, T):
        np.testing.assert_allclose(Ts[:3, 3], (1 - s) * T0[:3, 3] + s * T1[:3, 3], atol=1e-12)
        np.testing.assert_allclose(Ts[:3, :3], T0[:3, :3] @ pin.exp3(s * w), atol=1e-12)
        np.testing.assert_allclose(Ts[3], [0, 0, 0, 1], atol=0)
    np.testing.assert_allclose(T[-1], T1, atol=1e-12)
    np.testing.assert_allclose(V[:, 3:], np.tile(w, (len(S), 1)), atol=1e-12)


@pytest.mark.parametrize("kind", ["screw", "decoupled"])
def test_twists_are_the_derivatives_along_s(ends, kind):
    """V = (T^-1 dT/ds)^v and dV/ds against central differences (h = 1e-6)."""
    T0, T1 = ends
    h = 1e-6
    for s in (0.2, 0.7):
        T, V, dV = rd.se3_interpolate(T0, T1, s, kind, derivatives=True)
        assert T.shape == (4, 4) and V.shape == (6,) and dV.shape == (6,)
        dT = (rd.se3_interpolate(T0, T1, s + h, kind) - rd.se3_interpolate(T0, T1, s - h, kind)) / (2 * h)
        np.testing.assert_allclose(lie.vee6(np.linalg.inv(T) @ dT), V, atol=1e-8)
        Vp, Vm = (rd.se3_interpolate(T0, T1, s + x, kind, derivatives=True)[1] for x in (h, -h))
        np.testing.assert_allclose((Vp - Vm) / (2 * h), dV, atol=1e-7)


def test_se3_interpolate_bad_input(ends):
    T0, T1 = ends
    with pytest.raises(ValueError, match="kind must be one of 'screw', 'decoupled', got 'linear'"):
        rd.se3_interpolate(T0, T1, 0.5, "linear")
    with pytest.raises(ValueError, match="T_end must be a 4x4 homogeneous transform"):
        rd.se3_interpolate(T0, 2 * T1, 0.5)
    with pytest.raises(ValueError, match="s contains NaN or inf"):
        rd.se3_interpolate(T0, T1, [0.1, np.nan])


ARMS = {"panda": ("panda_hand", [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02]),
        "ur5": ("tool0", [0.0, -1.2, 1.5, -1.9, -1.57, 0.0])}


@pytest.fixture(scope="module", params=sorted(ARMS))
def arm(request):
    frame, q0 = ARMS[request.param]
    m = Pair(request.param).model
    return m, frame, np.array(q0[:m.nq])


@pytest.mark.parametrize("kind", ["screw", "decoupled"])
def test_cartesian_path_keeps_the_frame_on_the_line(arm, kind):
    """At every gridpoint the frame is where the line is (1e-9 m and rad); dq_ds and d2q_ds2 are the
    derivatives of q along s (central differences of the 40 gridpoints, to their O(ds^2) error)."""
    m, frame, q0 = arm
    T0 = rd.frame_placement(m, q0, frame)
    goal = T0 @ lie.exp6(np.array([0.1, -0.05, 0.08, 0.3, -0.2, 0.4]))
    s, q, dq, ddq = rd.cartesian_path(m, frame, q0, goal, 40, kind=kind)
    assert s.shape == (40,) and q.shape == (40, m.nq) and dq.shape == ddq.shape == (40, m.nv)
    np.testing.assert_array_equal(q[0], q0)
    line = rd.se3_interpolate(T0, goal, s, kind)
    error = lie.log6(np.linalg.inv(line) @ rd.frame_placement(m, q, frame))
    assert np.abs(error).max() <= 1e-9
    inner = slice(1, -1)
    assert np.abs(np.gradient(q, s, axis=0) - dq)[inner].max() <= 1e-3 * np.abs(dq).max()
    assert np.abs(np.gradient(dq, s, axis=0) - ddq)[inner].max() <= 1e-3 * np.abs(ddq).max()


def test_cartesian_path_refuses_a_singularity_and_names_s():
    """ur5: a line to the stretched elbow ends on a singularity; beyond it, out of reach."""
    m = Pair("ur5").model
    q0 = np.array(ARMS["ur5"][1])
    stretched = rd.frame_placement(m, np.array([0.0, -1.2, 0.0, -1.9, -1.57, 0.0]), "tool0")
    with pytest.raises(ValueError, match=r"Jacobian is singular at s = 1 \(gridpoint 19"):
        rd.cartesian_path(m, "tool0", q0, stretched, 20, kind="screw")
    beyond = stretched.copy()
    start = rd.frame_placement(m, q0, "tool0")[:3, 3]
    beyond[:3, 3] = start + 1.3 * (stretched[:3, 3] - start)
    with pytest.raises(ValueError, match=r"between s = 0\.6\d+ and s = 0\.6\d+"):
        rd.cartesian_path(m, "tool0", q0, beyond, 20, kind="decoupled")
    with pytest.raises(ValueError, match="n must be an integer of at least 2"):
        rd.cartesian_path(m, "tool0", q0, stretched, 1)
    with pytest.raises(ValueError, match="kind must be one of"):
        rd.cartesian_path(m, "tool0", q0, stretched, 5, kind="joint")
    outside = q0.copy()
    outside[1] = 10.0
    with pytest.raises(ValueError, match=r"q_start\[1\] = 10 is outside joint 'shoulder_lift_joint'"):
        rd.cartesian_path(m, "tool0", outside, stretched, 5)
