"""Public dynamics API: NumPy in, NumPy out, one state (1-D arrays) or a batch (2-D, a row per
state). Conventions follow Pinocchio: q = [x y z qx qy qz qw] + joints for a floating base,
v = [linear; angular] in the base frame + joints; Jacobian rows and wrenches are
[linear/force; angular/torque].
"""
import os

import numpy as np

from . import kernels as K
from .model import REFERENCES

_REF_CODE = {"world": K.WORLD, "local": K.LOCAL, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}
_NO_EXT = np.zeros((0, K.EXT_COLS))
_F64 = np.dtype(np.float64)
#: states per batch below which threads are not worth starting
PARALLEL_MIN_BATCH = 64


def default_threads():
    """Threads for batches: ROBOT_DYNAMICS_THREADS, else every core numba may use."""
    import numba
    return int(os.environ.get("ROBOT_DYNAMICS_THREADS", numba.config.NUMBA_NUM_THREADS))


# --- input checks ---------------------------------------------------------------------------
def _vector(x, n, name, batch=None):
    """x as a C-contiguous float64 array of shape (n,) or (N, n); batch: the N required."""
    if type(x) is np.ndarray and x.shape == (n,) and not batch and x.dtype == _F64 and x.flags.c_contiguous:
        return x     # the common case, checked cheaply
    a = np.asarray(x, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[-1] != n or (batch is not None and (a.ndim == 2) != (batch > 0)) \
            or (batch and a.shape[0] != batch):
        want = f"({batch}, {n})" if batch else f"({n},)" if batch == 0 else f"({n},) or (N, {n})"
        raise ValueError(f"{name} must have shape {want}, got shape {a.shape}")
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _batch_size(a):
    return a.shape[0] if a.ndim == 2 else 0


def _failed(status):
    return status.any() if type(status) is np.ndarray else status != 0


def _raise_status(model, status, inputs):
    """Turn a kernel status (or a batch's status array) into an error that names the input."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    where = f" (batch row {row})" if len(status) > 1 else ""
    if code == K.BAD_QUATERNION:
        quat = np.atleast_2d(inputs["q"])[row, 3:7]
        raise ValueError(f"q[3:7], the free-flyer quaternion (x y z w), must have unit norm; "
                         f"got norm {np.linalg.norm(quat):.6g}{where}")
    for name, value in inputs.items():
        x = np.asarray(value)
        if not np.all(np.isfinite(x[row] if len(status) > 1 else x)):
            raise ValueError(f"{name} contains NaN or inf{where}")
    raise ValueError(f"non-finite input{where}")


# --- full (kernel) coordinates for models with mimic joints ------------------------------------
def _full_q(model, q):
    return q[..., model.q_source] * model.q_scale + model.q_offset if model.has_mimic else q


def _full_v(model, v):
    return v[..., model.v_source] * model.v_scale if model.has_mimic else v


def _user_tau(model, tau):
    return tau @ model.mimic_map if model.has_mimic else tau


def _user_matrix(model, m):
    g = model.mimic_map
    return g.T @ m @ g if model.has_mimic else m


# --- frames and wrenches --------------------------------------------------------------------
def _frame_spec(model, frame, reference):
    if reference not in _REF_CODE:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}, got {reference!r}")
    f = model.frame(frame)
    spec = np.empty(K.FRAME_COLS)
    spec[K.F_BODY], spec[K.F_REF] = f.body, _REF_CODE[reference]
    spec[K.F_ROT:K.F_ROT + 9] = f.rotation.reshape(9)
    spec[K.F_POS:K.F_POS + 3] = f.translation
    return spec


def _external(model, external_wrenches, batch):
    """{frame: wrench or (wrench, reference)} -> kernel rows (N or 1, k, EXT_COLS)."""
    n = max(batch, 1)
    if not external_wrenches:
        return np.zeros((batch, 0, K.EXT_COLS)) if batch else _NO_EXT
    rows = np.empty((n, len(external_wrenches), K.EXT_COLS))
    for k, (frame, value) in enumerate(external_wrenches.items()):
        wrench, reference = value if isinstance(value, tuple) else (value, "local_world_aligned")
        rows[:, k, :K.FRAME_COLS] = _frame_spec(model, frame, reference)
        rows[:, k, K.F_WRENCH:] = _vector(wrench, 6, f"external wrench on {frame!r}",
                                          batch if np.ndim(wrench) == 2 else 0)
    return rows if batch else rows[0]


def _scratch(model):
    """The model's reusable workspace for single-state calls."""
    buf = model.__dict__.get("_scratch")
    if buf is None:
        buf = model.__dict__["_scratch"] = np.empty(K.workspace_size(model.packed))
    return buf


def _threads(batch, threads):
    return 1 if batch < PARALLEL_MIN_BATCH else max(1, min(threads or default_threads(), batch))


# --- the algorithms -------------------------------------------------------------------------------
def inverse_dynamics(model, q, v, a, external_wrenches=None, threads=None):
    """tau = M(q) a + C(q, v) v + g(q) - sum J^T f_ext (RNEA). external_wrenches maps a frame
    name to a wrench [force; torque] acting at the frame origin, in local_world_aligned axes,
    or to (wrench, reference) with reference world / local / local_world_aligned."""
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    a = _vector(a, model.nv, "a", n)
    ext = _external(model, external_wrenches, n)
    qf, vf, af = _full_q(model, q), _full_v(model, v), _full_v(model, a)
    tau = np.empty(qf.shape[:-1] + (model.nv_full,))
    if n:
        status = K.rnea_batch(model.packed, qf, vf, af, ext, tau, _threads(n, threads))
    else:
        status = K.rnea_one(model.packed, qf, vf, af, ext, tau, _scratch(model))
    if _failed(status):
        _raise_status(model, status, dict(q=q, v=v, a=a, external_wrenches=ext[..., K.F_WRENCH:]))
    return _user_tau(model, tau)


def gravity_torques(model, q, threads=None):
    """g(q): the torques that hold the robot still against gravity."""
    q = np.asarray(q, dtype=np.float64)
    zero = np.zeros(q.shape[:-1] + (model.nv,))
    return inverse_dynamics(model, q, zero, zero, threads=threads)


def bias_forces(model, q, v, threads=None):
    """C(q, v) v + g(q)."""
    v = np.asarray(v, dtype=np.float64)
    return inverse_dynamics(model, q, v, np.zeros(v.shape), threads=threads)


def mass_matrix(model, q, threads=None):
    """M(q), joint-space inertia with armature on the diagonal (CRBA)."""
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    qf = _full_q(model, q)
    M = np.empty(qf.shape[:-1] + (model.nv_full, model.nv_full))
    status = K.crba_batch(model.packed, qf, M, _threads(n, threads)) if n else K.crba_one(model.packed, qf, M, _scratch(model))
    if _failed(status):
        _raise_status(model, status, dict(q=q))
    return _user_matrix(model, M)


def coriolis_matrix(model, q, v, threads=None):
    """C(q, v) with C v the Coriolis and centrifugal torques and Mdot - 2C skew-symmetric."""
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    qf, vf = _full_q(model, q), _full_v(model, v)
    C = np.empty(qf.shape[:-1] + (model.nv_full, model.nv_full))
    status = K.coriolis_batch(model.packed, qf, vf, C, _threads(n, threads)) if n \
        else K.coriolis_one(model.packed, qf, vf, C, _scratch(model))
    if _failed(status):
        _raise_status(model, status, dict(q=q, v=v))
    return _user_matrix(model, C)


def forward_dynamics(model, q, v, tau, external_wrenches=None, threads=None):
    """qdd = M^-1 (tau + sum J^T f_ext - C v - g), by the articulated-body algorithm."""
    known = np.zeros(np.shape(tau), bool)
    return hybrid_dynamics(model, q, v, known, np.zeros(np.shape(tau)), tau, external_wrenches, threads)[0]


def hybrid_dynamics(model, q, v, acceleration_known, qdd, tau, external_wrenches=None, threads=None):
    """Solve M qdd + b = tau where acceleration_known[k] says qdd[k] is given (tau[k] is
    sought) and otherwise tau[k] is given (qdd[k] is sought). Returns complete (qdd, tau)."""
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    known = np.asarray(acceleration_known)
    if known.dtype != bool or known.shape != v.shape:
        raise ValueError(f"acceleration_known must be a boolean mask of shape {v.shape}, "
                         f"got {known.dtype} of shape {known.shape}")
    qdd = _vector(qdd, model.nv, "qdd", n).copy()
    tau = _vector(tau, model.nv, "tau", n).copy()
    ext = _external(model, external_wrenches, n)
    if model.has_mimic:
        return _hybrid_dense(model, q, v, known, qdd, tau, ext, n)
    known = np.ascontiguousarray(known)
    status = K.hybrid_batch(model.packed, q, v, known, qdd, tau, ext, _threads(n, threads)) \
        if n else K.hybrid_one(model.packed, q, v, known, qdd, tau, ext, _scratch(model))
    if _failed(status):
        _raise_status(model, status, dict(q=q, v=v, qdd=qdd, tau=tau, external_wrenches=ext[..., K.F_WRENCH:]))
    return qdd, tau


def _hybrid_dense(model, q, v, known, qdd, tau, ext, n):
    """Mimic joints couple coordinates, which the articulated-body recursion cannot: solve
    the reduced system M_uu qdd_u = tau_u - b_u - M_uk qdd_k (seed 004 eq. 34) instead."""
    Q, V, KNOWN, QDD, TAU = (x.reshape(-1, x.shape[-1]) for x in (q, v, known, qdd, tau))
    EXT = ext if n else ext[None]
    for s in range(len(Q)):
        M, b = mass_matrix(model, Q[s]), _bias(model, Q[s], V[s], EXT[s])
        k, u = KNOWN[s], ~KNOWN[s]
        QDD[s, u] = np.linalg.solve(M[np.ix_(u, u)], TAU[s, u] - b[u] - M[np.ix_(u, k)] @ QDD[s, k])
        TAU[s, k] = M[k] @ QDD[s] + b[k]
    return qdd, tau


def _bias(model, q, v, ext):
    """C v + g - sum J^T f_ext for one state, external wrenches given as kernel rows."""
    tau = np.empty(model.nv_full)
    status = K.rnea_one(model.packed, _full_q(model, q), _full_v(model, v), np.zeros(model.nv_full), ext, tau,
                        _scratch(model))
    if status:
        _raise_status(model, status, dict(q=q, v=v, external_wrenches=ext[:, K.F_WRENCH:]))
    return _user_tau(model, tau)


def _frame_kernel(model, q, frame, reference, threads):
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    spec = _frame_spec(model, frame, reference)
    qf = _full_q(model, q)
    J = np.empty(qf.shape[:-1] + (6, model.nv_full))
    H = np.empty(qf.shape[:-1] + (4, 4))
    status = K.frame_jacobian_batch(model.packed, qf, spec, J, H, _threads(n, threads)) if n \
        else K.frame_jacobian_one(model.packed, qf, spec, J, H, _scratch(model))
    if _failed(status):
        _raise_status(model, status, dict(q=q))
    return (J @ model.mimic_map if model.has_mimic else J), H


def frame_placement(model, q, frame, threads=None):
    """4x4 homogeneous transform of a frame (link or joint name) in the world."""
    return _frame_kernel(model, q, frame, "world", threads)[1]


def frame_jacobian(model, q, frame, reference="local_world_aligned", threads=None):
    """6 x nv Jacobian of a frame, rows [linear; angular], in the given reference."""
    return _frame_kernel(model, q, frame, reference, threads)[0]


def wrench_to_joint_torques(model, q, frame, wrench, reference="local_world_aligned", threads=None):
    """tau = J^T F (seed 002 eq. 37): the joint torques equivalent to a wrench F [force; torque]
    acting at the frame origin, F given in the same reference as the Jacobian."""
    J = frame_jacobian(model, q, frame, reference, threads)
    F = _vector(wrench, 6, "wrench", J.shape[0] if J.ndim == 3 else 0)
    return np.einsum("...ij,...i->...j", J, F)
