"""The configuration space: neutral, integrate, difference, random_configuration (Pinocchio's names).

q holds an angle per revolute or continuous joint and a displacement per prismatic one,
[x y theta] per planar joint and [x y z qx qy qz qw] per floating joint; v holds [vx vy omega]
(planar) and [linear; angular] (floating) in the joint's child frame. q is not a vector space
there, so `integrate` moves along the exponential of SE(2) and SE(3) and `difference` takes their
logarithm (Lynch and Park, Modern Robotics, ch. 3), as Pinocchio does; one-coordinate joints add
and subtract (a continuous joint's difference is the shortest turn, in [-pi, pi)). Every function
takes one configuration (1-D) or a batch (2-D, a row each).
"""
import numpy as np

from .kernels.lie import A_SERIES, B_SERIES, C_SERIES, F_SERIES, SERIES_MAX

#: below SERIES_MAX (0.5 rad) the coefficients of the exponentials and logarithms come from their
#: Taylor series (kernels/lie.py's tables, as the compiled kernels take them): their closed forms
#: cancel digits for small angles ((t - sin t) / t^3 kept only ~1e-5 of its digits at 1e-5 rad)


def _series(coefficients, t, closed):
    """sum_k coefficients[k] t^(2k) below SERIES_MAX, closed(t) above (elementwise)."""
    t = np.asarray(t, dtype=float)
    small = np.abs(t) < SERIES_MAX
    z, out = t * t, np.zeros_like(t)
    for c in coefficients[::-1]:
        out = out * z + c
    with np.errstate(divide="ignore", invalid="ignore"):
        big = closed(np.where(small, 1.0, t))
    return np.where(small, out, big)


def _check(model, x, n, name):
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.shape[-1] != n:
        raise ValueError(f"{name} must have shape ({n},) or (N, {n}), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or inf")
    return x


def neutral(model):
    """The zero configuration: every joint at 0, floating joints at the origin, unrotated."""
    q = np.zeros(model.nq)
    for j in model.joints:
        if j.kind == "floating":
            q[j.idx_q + 6] = 1.0
    return q


def integrate(model, q, v):
    """q (+) v: the configuration reached from q by moving with velocity v for unit time.
    Quaternions stay unit."""
    q, v = _check(model, q, model.nq, "q"), _check(model, v, model.nv, "v")
    out = np.array(np.broadcast_to(q, np.broadcast_shapes(q.shape[:-1], v.shape[:-1]) + (model.nq,)))
    oq, ov = model.joint_offset
    out[..., oq:] += v[..., ov:]                 # one-coordinate joints add
    for j in _multi(model):
        qj, vj = q[..., j.idx_q:j.idx_q + j.nq], v[..., j.idx_v:j.idx_v + j.nv]
        if j.kind == "floating":
            out[..., j.idx_q:j.idx_q + 7] = _se3_integrate(qj, vj)
        else:
            out[..., j.idx_q:j.idx_q + 3] = _se2_integrate(qj, vj)
    return out


def difference(model, q0, q1):
    """The velocity v that `integrate` turns q0 into q1 with: q1 = q0 (+) v."""
    q0, q1 = _check(model, q0, model.nq, "q0"), _check(model, q1, model.nq, "q1")
    out = np.empty(np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1]) + (model.nv,))
    oq, ov = model.joint_offset
    out[..., ov:] = q1[..., oq:] - q0[..., oq:]  # one-coordinate joints subtract,
    turn = model.continuous                      # a continuous joint the shortest way round
    if turn.any():
        out[..., ov:][..., turn] = _wrap(out[..., ov:][..., turn])
    for j in _multi(model):
        a, b = q0[..., j.idx_q:j.idx_q + j.nq], q1[..., j.idx_q:j.idx_q + j.nq]
        if j.kind == "floating":
            out[..., j.idx_v:j.idx_v + 6] = _se3_difference(a, b)
        else:
            out[..., j.idx_v:j.idx_v + 3] = _se2_difference(a, b)
    return out


def _multi(model):
    """The floating and planar joints (their coordinates come first in q and v)."""
    return model.joints[:len(model.joints) - len(model.joint_names)]


def random_configuration(model, rng=None, n=None):
    """A configuration drawn uniformly: one-coordinate joints within their limits (unbounded
    ones in [-pi, pi]), planar and floating joints at x, y (, z) in [-1, 1] with a uniform
    rotation. n: a batch of n configurations."""
    rng = np.random.default_rng(rng)
    shape = () if n is None else (n,)
    q = np.zeros(shape + (model.nq,))
    for j in model.joints:
        if j.kind == "floating":
            quat = rng.normal(size=shape + (4,))
            q[..., j.idx_q:j.idx_q + 3] = rng.uniform(-1.0, 1.0, shape + (3,))
            q[..., j.idx_q + 3:j.idx_q + 7] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        elif j.kind == "planar":
            q[..., j.idx_q:j.idx_q + 2] = rng.uniform(-1.0, 1.0, shape + (2,))
            q[..., j.idx_q + 2] = rng.uniform(-np.pi, np.pi, shape)
        else:
            k = model.joint_index[j.name]
            lo, hi = model.lower_limits[k], model.upper_limits[k]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                lo, hi = -np.pi, np.pi
            q[..., j.idx_q] = rng.uniform(lo, hi, shape)
    return q


# --- the root joint's coordinates from a pose ---------------------------------------------------------
def root_coordinates(model, position, quaternion, tolerance=1e-3):
    """The coordinates of a floating or planar root joint that put its link at the world pose
    (position [m], quaternion x y z w): for a floating root the pose itself, the quaternion
    normalised (model.unit_quaternion); for a planar root [x y theta] in its plane, refusing a pose
    that leaves the plane by more than `tolerance` (m, or rad of tilt). ValueError naming the
    problem; also if the model has no such root."""
    from .model import unit_quaternion      # noqa: PLC0415 (model imports nothing from here)
    root = model.root_joint
    p = np.asarray(position, dtype=float).reshape(-1)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"position must be 3 finite numbers, got {position!r}")
    quat = unit_quaternion(quaternion, "orientation")
    if root is None:
        raise ValueError(f"model {model.name!r} has no floating or planar root joint to take a pose")
    R = _quat_matrix(quat)
    R0, p0, Q = model.tree_rotation[0], model.tree_translation[0], _joint_axes(model, 0)
    rel_p, rel_R = Q.T @ R0.T @ (p - p0), Q.T @ R0.T @ R @ Q     # in the joint frame at zero
    if root.kind == "floating":         # Q = 1; the quaternion kept as given where the joint is unrotated
        return np.concatenate((rel_p, quat if np.array_equal(R0, np.eye(3)) else _matrix_quat(rel_R)))
    off, tilt = abs(rel_p[2]), float(np.hypot(rel_R[0, 2], rel_R[1, 2]))
    if off > tolerance or tilt > tolerance:
        raise ValueError(f"the pose leaves the plane of planar root joint {root.name!r} by {off:.3g} m and "
                         f"{tilt:.3g} rad (tolerance {tolerance:g})")
    return np.array([rel_p[0], rel_p[1], np.arctan2(rel_R[1, 0], rel_R[0, 0])])


def _joint_axes(model, body):
    """Q, the joint frame's axes in the body frame (layout.AXES)."""
    from .layout import AXES      # noqa: PLC0415
    return model.packed[body, AXES:AXES + 9].reshape(3, 3)


def root_twist_coordinates(model, twist):
    """The root joint's velocity coordinates from a twist [linear; angular] in the root link's
    frame (a floating root takes it as is; a planar root its in-plane part, refusing the rest)."""
    t = np.asarray(twist, dtype=float).reshape(-1)
    if t.shape != (6,) or not np.all(np.isfinite(t)):
        raise ValueError(f"a twist is 6 finite numbers [linear; angular], got {twist!r}")
    root = model.root_joint
    if root is None or root.kind == "floating":
        return t
    Q = _joint_axes(model, 0)
    lin, ang = Q.T @ t[:3], Q.T @ t[3:]
    out_of_plane = max(abs(lin[2]), abs(ang[0]), abs(ang[1]))
    if out_of_plane > 1e-9 * max(1.0, np.abs(t).max()):
        raise ValueError(f"planar root joint {root.name!r} moves in its plane only; the twist leaves it "
                         f"(out-of-plane part {out_of_plane:.3g})")
    return np.array([lin[0], lin[1], ang[2]])


def root_twist(model, coordinates):
    """The inverse of `root_twist_coordinates`: a twist (or wrench) [linear; angular] in the root
    link's frame from the root joint's velocity coordinates (or generalized forces)."""
    root = model.root_joint
    x = np.asarray(coordinates, dtype=float)
    if root is None or root.kind == "floating":
        return x[:6]
    Q = _joint_axes(model, 0)
    return np.concatenate((Q @ [x[0], x[1], 0.0], Q @ [0.0, 0.0, x[2]]))


# --- SE(2) and SE(3) ---------------------------------------------------------------------------
def _wrap(angle):
    return (angle + np.pi) % (2 * np.pi) - np.pi


def _sinc_terms(t):
    """sin(t)/t and (1 - cos t)/t for the SE(2) exponential, with their series near 0."""
    a = _series(A_SERIES, t, lambda t: np.sin(t) / t)
    b = t * _series(B_SERIES, t, lambda t: (1.0 - np.cos(t)) / (t * t))
    return a, b


def _se2_integrate(q, v):
    x, y, th = q[..., 0], q[..., 1], q[..., 2]
    vx, vy, w = v[..., 0], v[..., 1], v[..., 2]
    a, b = _sinc_terms(w)
    dx, dy = a * vx - b * vy, b * vx + a * vy        # the motion in the start frame
    c, s = np.cos(th), np.sin(th)
    return np.stack((x + c * dx - s * dy, y + s * dx + c * dy, th + w), axis=-1)


def _se2_difference(q0, q1):
    c, s = np.cos(q0[..., 2]), np.sin(q0[..., 2])
    ex, ey = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
    dx, dy = c * ex + s * ey, -s * ex + c * ey      # q1's origin in q0's frame
    w = _wrap(q1[..., 2] - q0[..., 2])
    a, b = _sinc_terms(w)
    det = a * a + b * b                               # inverse of [[a, -b], [b, a]]
    return np.stack(((a * dx + b * dy) / det, (-b * dx + a * dy) / det, w), axis=-1)


def _quat_multiply(p, q):
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    return np.concatenate((pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, -1, keepdims=True)), -1)


def _matrix_quat(R):
    """x y z w of a rotation matrix (Shepperd's method: the largest of the four first)."""
    t = np.trace(R)
    k = int(np.argmax([t, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        w = np.sqrt(1.0 + t) / 2
        q = [(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w]
    else:
        i, j, m = k - 1, k % 3, (k + 1) % 3
        x = np.sqrt(1.0 + R[i, i] - R[j, j] - R[m, m]) / 2
        q = [0.0, 0.0, 0.0, (R[m, j] - R[j, m]) / (4 * x)]
        q[i], q[j], q[m] = x, (R[j, i] + R[i, j]) / (4 * x), (R[m, i] + R[i, m]) / (4 * x)
    q = np.array(q)
    return q / np.linalg.norm(q)


def _quat_matrix(q):
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack((np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), -1),
                     np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), -1),
                     np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), -1)), -2)


def _se3_terms(w):
    """theta = |w| and the coefficients of V = 1 + b [w] + c [w]^2, the SE(3) exponential's
    left Jacobian of SO(3): b = (1 - cos t)/t^2, c = (t - sin t)/t^3."""
    t = np.linalg.norm(w, axis=-1)
    b = _series(B_SERIES, t, lambda t: (1.0 - np.cos(t)) / t ** 2)
    c = _series(C_SERIES, t, lambda t: (t - np.sin(t)) / t ** 3)
    return t, b, c


def _times_v(w, b, c, x):
    """V x = x + b w x x + c w x (w x x)."""
    wx = np.cross(w, x)
    return x + b[..., None] * wx + c[..., None] * np.cross(w, wx)


def _se3_integrate(q, v):
    p, quat, lin, w = q[..., :3], q[..., 3:7], v[..., :3], v[..., 3:]
    t, b, c = _se3_terms(w)
    half = 0.5 * _series(A_SERIES, 0.5 * t, lambda h: np.sin(h) / h)      # sin(t / 2) / t
    dq = np.concatenate((half[..., None] * w, np.cos(t / 2)[..., None]), -1)
    new = _quat_multiply(quat, dq)
    new /= np.linalg.norm(new, axis=-1, keepdims=True)
    move = np.einsum("...ij,...j->...i", _quat_matrix(quat), _times_v(w, b, c, lin))
    return np.concatenate((p + move, new), -1)


def _se3_difference(q0, q1):
    conj = q0[..., 3:7] * np.array([-1.0, -1.0, -1.0, 1.0])
    rel = _quat_multiply(conj, q1[..., 3:7])
    rel = np.where(rel[..., 3:] < 0, -rel, rel)       # the shorter way round
    vec, norm = rel[..., :3], np.linalg.norm(rel[..., :3], axis=-1)
    t = 2.0 * np.arctan2(norm, rel[..., 3])
    # w = t u from the quaternion (sin(t/2) u, cos(t/2)): vec times t / sin(t/2), its series near 0
    w = vec * (1.0 / (0.5 * _series(A_SERIES, 0.5 * t, lambda h: np.sin(h) / h)))[..., None]
    p = np.einsum("...ji,...j->...i", _quat_matrix(q0[..., 3:7]), q1[..., :3] - q0[..., :3])
    # V^-1 = 1 - [w]/2 + d [w]^2, d = 1 / t^2 - cot(t / 2) / (2 t)
    d = _series(F_SERIES, t, lambda t: 1.0 / (t * t) - np.cos(0.5 * t) / (2.0 * t * np.sin(0.5 * t)))
    wp = np.cross(w, p)
    lin = p - 0.5 * wp + d[..., None] * np.cross(w, wp)
    return np.concatenate((lin, w), -1)
