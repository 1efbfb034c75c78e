"""The Lie groups of rigid motion, as the library computes with them (Lynch and Park, Modern
Robotics, ch. 3; J. Kim, Lie group formulation of articulated rigid body dynamics, section 1).

    from robot_dynamics import lie
    R = lie.exp3([0, 0, 1.0]); w = lie.log3(R)             # SO(3): rotation vector <-> matrix
    T = lie.exp6([0.1, 0, 0, 0, 0, 1.0]); xi = lie.log6(T)   # SE(3): twist [v; w] <-> 4x4 transform
    lie.Ad(T) @ xi; lie.Ad_dual(T) @ wrench; lie.ad(xi); lie.ad_dual(xi)

Conventions (Pinocchio's; the rest of the library's):
- twists and spatial velocities are [linear; angular] = [v; w], wrenches [force; torque] = [f; n]
  (Lynch and Park write [w; v]: swap the halves to compare with the book);
- T = [[R, p], [0, 1]] maps coordinates in the moving frame to the fixed one; T exp6(xi) moves T
  by the body twist xi for unit time (`rd.integrate` of a floating joint does exactly this);
- Ad(T) = [[R, [p] R], [0, R]] carries twists from frame b to frame a (T = T_ab; Pinocchio's
  `SE3.action`), Ad_dual(T) = Ad(T)^-T = [[R, 0], [[p] R, R]] carries wrenches the same way
  (`SE3.dualAction`; Kim's dAd of T^-1), so that power is frame-independent:
  (Ad_dual(T) F) . (Ad(T) V) = F . V;
- ad(xi) = [[[w], [v]], [0, [w]]] is the Lie bracket, ad(xi) eta = [xi, eta] (Pinocchio's
  `Motion.action`; Featherstone's crm), ad_dual(xi) = -ad(xi)^T acts on wrenches (`Motion.dualAction`;
  Featherstone's crf; Kim's dad is ad^T = -ad_dual), so (ad_dual(xi) F) . V = -F . (ad(xi) V);
- Jexp3(w), Jexp6(xi): the right Jacobian of the exponential, d/dt exp(xi) = exp(xi) (Jexp(xi) xi')^;
  Jlog3(R), Jlog6(T): its inverse at the logarithm, log(T exp(d)) = log(T) + Jlog6(T) d + O(d^2)
  (Pinocchio's Jexp3, Jexp6, Jlog3, Jlog6);
- quaternions are (x, y, z, w), as in q of a floating joint, ROS messages and Pinocchio.

Every function takes one element or an array of them (leading dimensions kept), checks its input
(shape, NaN/inf, rotations orthonormal to 1e-6) and names it in the error. exp3/log3, exp6/log6 and
the Jacobians run the compiled code the kernels use (kernels/lie.py); the rest is NumPy.
"""
import numpy as np

from .kernels import lie as _k

#: how far from orthonormal (|R^T R - 1|, entries) a rotation may be
ROTATION_TOL = 1e-6


def _array(x, shape, name):
    """x as float64 with trailing dimensions `shape` and at most one leading dimension per batch."""
    a = np.asarray(x, dtype=np.float64)
    k = len(shape)
    if a.ndim < k or a.shape[a.ndim - k:] != shape:
        raise ValueError(f"{name} must have shape {shape} or (..., {', '.join(map(str, shape))}), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.flatnonzero(~np.all(np.isfinite(a.reshape(-1, int(np.prod(shape)))), axis=1))
        raise ValueError(f"{name} contains NaN or inf" + (f" (element {bad[0]})" if a.ndim > k else ""))
    return a


def as_rotation(R, name="R"):
    """R (3x3, or an array of them) checked to be rotations, as float64; ValueError naming `name`."""
    R = _array(R, (3, 3), name)
    flat = R.reshape(-1, 3, 3)
    err = np.abs(np.einsum("nji,njk->nik", flat, flat) - np.eye(3)).max(axis=(1, 2))
    det = np.linalg.det(flat)
    bad = np.flatnonzero((err > ROTATION_TOL) | (det < 0))
    if len(bad):
        where = f" (element {bad[0]})" if R.ndim > 2 else ""
        raise ValueError(f"{name} must be a rotation matrix (orthonormal to {ROTATION_TOL:g}, determinant +1){where}; "
                         f"|R^T R - 1| = {err[bad[0]]:.3g}, det = {det[bad[0]]:.6g}")
    return R


def as_transform(T, name="T"):
    """T (4x4, or an array of them) checked to be rigid transforms, as float64; ValueError naming `name`."""
    T = _array(T, (4, 4), name)
    flat = T.reshape(-1, 4, 4)
    bad = np.flatnonzero(np.abs(flat[:, 3] - [0.0, 0.0, 0.0, 1.0]).max(axis=1) > 0)
    if len(bad):
        where = f" (element {bad[0]})" if T.ndim > 2 else ""
        raise ValueError(f"{name} must be a 4x4 homogeneous transform with last row [0, 0, 0, 1]{where}, "
                         f"got last row {flat[bad[0], 3]}")
    as_rotation(T[..., :3, :3], f"{name}'s rotation block")
    return T


def _rows(fn, x, width, out_shape, *args):
    """Run a compiled `*_rows` driver over the elements of x (flattened to rows of `width`)."""
    flat = np.ascontiguousarray(x.reshape(-1, width))
    out = np.empty((flat.shape[0], int(np.prod(out_shape))))
    fn(flat, *args, out)
    return out


def _lead(x, k):
    return x.shape[:x.ndim - k]


# --- so(3) and SO(3) -------------------------------------------------------------------------
def hat(w):
    """[w], the skew-symmetric matrix with [w] x = w x x."""
    w = _array(w, (3,), "w")
    W = np.zeros(w.shape[:-1] + (3, 3))
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    W[..., 1, 0], W[..., 2, 0], W[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return W


def vee(W):
    """w of a skew-symmetric [w] (its skew part, for any 3x3)."""
    W = _array(W, (3, 3), "W")
    return 0.5 * np.stack((W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]), -1)


def exp3(w):
    """R = exp([w]) (Rodrigues' formula): the rotation by |w| about w / |w|."""
    w = _array(w, (3,), "w")
    return _rows(_k.exp3_rows, w, 3, (9,)).reshape(_lead(w, 1) + (3, 3))


def log3(R):
    """w with exp3(w) = R and |w| in [0, pi] (at a half turn, either sign)."""
    R = as_rotation(R, "R")
    return _rows(_k.log3_rows, R, 9, (3,)).reshape(_lead(R, 2) + (3,))


def Jexp3(w):
    """Jr(w) = 1 - (1 - cos t) / t^2 [w] + (t - sin t) / t^3 [w]^2, t = |w|."""
    w = _array(w, (3,), "w")
    return _rows(_k.jacobian3_rows, w, 3, (9,), False).reshape(_lead(w, 1) + (3, 3))


def Jlog3(R):
    """Jr(log3(R))^-1 = 1 + [w] / 2 + (1 / t^2 - (1 + cos t) / (2 t sin t)) [w]^2."""
    w = log3(R)
    return _rows(_k.jacobian3_rows, w, 3, (9,), True).reshape(_lead(w, 1) + (3, 3))


# --- se(3) and SE(3) -------------------------------------------------------------------------
def hat6(xi):
    """The 4x4 matrix [[ [w], v ], [0, 0]] of the twist xi = [v; w]."""
    xi = _array(xi, (6,), "xi")
    X = np.zeros(xi.shape[:-1] + (4, 4))
    X[..., :3, :3] = hat(xi[..., 3:])
    X[..., :3, 3] = xi[..., :3]
    return X


def vee6(X):
    """The twist [v; w] of a 4x4 se(3) matrix."""
    X = _array(X, (4, 4), "X")
    return np.concatenate((X[..., :3, 3], vee(X[..., :3, :3])), -1)


def exp6(xi):
    """T = exp of the twist xi = [v; w]: R = exp3(w), p = V(w) v (Lynch and Park, eq. 3.88)."""
    xi = _array(xi, (6,), "xi")
    flat = _rows(_k.exp6_rows, xi, 6, (12,))
    T = np.zeros((len(flat), 4, 4))
    T[:, :3, :3], T[:, :3, 3], T[:, 3, 3] = flat[:, :9].reshape(-1, 3, 3), flat[:, 9:], 1.0
    return T.reshape(_lead(xi, 1) + (4, 4))


def log6(T):
    """The twist [v; w] with exp6 = T, |w| in [0, pi] (Lynch and Park, algorithm of section 3.3.3.2)."""
    T = as_transform(T, "T")
    flat = np.concatenate((T[..., :3, :3].reshape(-1, 9), T[..., :3, 3].reshape(-1, 3)), 1)
    return _rows(_k.log6_rows, flat, 12, (6,)).reshape(_lead(T, 2) + (6,))


def Jexp6(xi):
    """Jr(xi) = [[Jr(w), Q(-v, -w)], [0, Jr(w)]], the right Jacobian of exp6 (Barfoot's Q)."""
    xi = _array(xi, (6,), "xi")
    return _rows(_k.jacobian6_rows, xi, 6, (36,), False).reshape(_lead(xi, 1) + (6, 6))


def Jlog6(T):
    """Jr(log6(T))^-1, the derivative of log6 under a body displacement of T."""
    xi = log6(T)
    return _rows(_k.jacobian6_rows, xi, 6, (36,), True).reshape(_lead(xi, 1) + (6, 6))


def inverse(T):
    """T^-1 = [[R^T, -R^T p], [0, 1]]."""
    T = as_transform(T, "T")
    out = np.zeros(T.shape)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out[..., :3, :3], out[..., 3, 3] = Rt, 1.0
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    return out


def Ad(T):
    """Ad(T) = [[R, [p] R], [0, R]]: a twist in frame b to frame a, for T = T_ab."""
    T = as_transform(T, "T")
    R, p = T[..., :3, :3], T[..., :3, 3]
    A = np.zeros(T.shape[:-2] + (6, 6))
    A[..., :3, :3] = A[..., 3:, 3:] = R
    A[..., :3, 3:] = hat(p) @ R
    return A


def Ad_dual(T):
    """Ad(T)^-T = [[R, 0], [[p] R, R]]: a wrench in frame b to frame a, for T = T_ab."""
    A = Ad(T)
    out = np.zeros(A.shape)
    out[..., :3, :3] = out[..., 3:, 3:] = A[..., :3, :3]
    out[..., 3:, :3] = A[..., :3, 3:]
    return out


def ad(xi):
    """ad(xi) = [[[w], [v]], [0, [w]]]: ad(xi) eta = [xi, eta], the motion cross product xi x eta."""
    xi = _array(xi, (6,), "xi")
    A = np.zeros(xi.shape[:-1] + (6, 6))
    A[..., :3, :3] = A[..., 3:, 3:] = hat(xi[..., 3:])
    A[..., :3, 3:] = hat(xi[..., :3])
    return A


def ad_dual(xi):
    """-ad(xi)^T = [[[w], 0], [[v], [w]]]: the force cross product xi x* F."""
    return -np.swapaxes(ad(xi), -1, -2)


# --- quaternions (x, y, z, w) ----------------------------------------------------------------
def _unit(q, name):
    q = _array(q, (4,), name)
    norm = np.linalg.norm(q, axis=-1)
    bad = np.flatnonzero(np.abs(norm.reshape(-1) - 1.0) > ROTATION_TOL)
    if len(bad):
        where = f" (element {bad[0]})" if q.ndim > 1 else ""
        raise ValueError(f"{name} must be a unit quaternion (x, y, z, w){where}, got norm {norm.reshape(-1)[bad[0]]:.9g}")
    return q


def quaternion_multiply(p, q):
    """The Hamilton product p q: the rotation q, then p (matrix(p q) = matrix(p) matrix(q))."""
    p, q = _array(p, (4,), "p"), _array(q, (4,), "q")
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    return np.concatenate((pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, -1, keepdims=True)), -1)


def quaternion_conjugate(q):
    """(-x, -y, -z, w): the inverse rotation of a unit quaternion."""
    return _array(q, (4,), "q") * np.array([-1.0, -1.0, -1.0, 1.0])


def quaternion_to_matrix(q):
    """The rotation matrix of a unit quaternion."""
    q = _unit(q, "q")
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack((np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)), -1),
                     np.stack((2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)), -1),
                     np.stack((2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)), -1)), -2)


def matrix_to_quaternion(R):
    """The unit quaternion of a rotation matrix, w >= 0 (Shepperd's method: the largest of
    w, x, y, z found first, from the trace and diagonal)."""
    R = as_rotation(R, "R")
    flat = R.reshape(-1, 3, 3)
    out = np.empty((len(flat), 4))
    for n, M in enumerate(flat):
        t = np.trace(M)
        k = int(np.argmax([t, M[0, 0], M[1, 1], M[2, 2]]))
        if k == 0:
            w = np.sqrt(1.0 + t) / 2
            q = [(M[2, 1] - M[1, 2]) / (4 * w), (M[0, 2] - M[2, 0]) / (4 * w), (M[1, 0] - M[0, 1]) / (4 * w), w]
        else:
            i, j, m = k - 1, k % 3, (k + 1) % 3
            x = np.sqrt(1.0 + M[i, i] - M[j, j] - M[m, m]) / 2
            q = [0.0, 0.0, 0.0, (M[m, j] - M[j, m]) / (4 * x)]
            q[i], q[j], q[m] = x, (M[j, i] + M[i, j]) / (4 * x), (M[m, i] + M[i, m]) / (4 * x)
        q = np.array(q) / np.linalg.norm(q)
        out[n] = -q if q[3] < 0 else q
    return out.reshape(R.shape[:-2] + (4,))


def quaternion_exp(w):
    """The unit quaternion (sin(t/2) w / t, cos(t/2)) of exp3(w), t = |w| (Pinocchio's exp3_quat)."""
    w = _array(w, (3,), "w")
    return _rows(_k.quaternion_exp_rows, w, 3, (4,)).reshape(_lead(w, 1) + (4,))


def quaternion_log(q):
    """w with quaternion_exp(w) = +-q, |w| in [0, pi] (the shorter way round)."""
    q = _unit(q, "q")
    q = np.where(q[..., 3:] < 0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1)
    t = 2.0 * np.arctan2(s, q[..., 3])
    small = s < 1e-8
    scale = np.where(small, 2.0 / np.where(q[..., 3] > 0, q[..., 3], 1.0), t / np.where(small, 1.0, s))
    return q[..., :3] * scale[..., None]


def pose_matrix(position, quaternion):
    """The 4x4 transform of a pose (a geometry_msgs/Pose): position and unit quaternion (x y z w)."""
    p = _array(position, (3,), "position")
    R = quaternion_to_matrix(quaternion)
    T = np.zeros(np.broadcast_shapes(p.shape[:-1], R.shape[:-2]) + (4, 4))
    T[..., :3, :3], T[..., :3, 3], T[..., 3, 3] = R, p, 1.0
    return T


def pose(T):
    """(position, quaternion x y z w) of a 4x4 transform: `pose_matrix`'s inverse."""
    T = as_transform(T, "T")
    return T[..., :3, 3].copy(), matrix_to_quaternion(T[..., :3, :3])
