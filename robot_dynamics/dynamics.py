"""Public dynamics API: NumPy in, NumPy out, one state (1-D arrays) or a batch (2-D, a row per
state). Conventions follow Pinocchio: q = [x y z qx qy qz qw] + joints for a floating base,
v = [linear; angular] in the base frame + joints (multi-coordinate joints first: see Model);
Jacobian rows and wrenches are [linear/force; angular/torque].
"""
import math
import os

import numba
import numpy as np

from . import kernels as K
from .kernels.common import INPUT_LIMIT
from .kernels import coriolis as _coriolis
from .kernels import crba as _crba
from .kernels import hybrid as _hybrid
from .kernels import jacobian as _jacobian
from .kernels import rnea as _rnea
from .layout import AXES
from .configuration import (difference, integrate, neutral, random_configuration,  # noqa: F401
                            root_coordinates, root_twist, root_twist_coordinates)
from .model import REFERENCES

_REF_CODE = {"world": K.WORLD, "local": K.LOCAL, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}
_NO_EXT = np.zeros((0, K.EXT_COLS))
_F64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)
#: states per batch below which threads are not worth starting
PARALLEL_MIN_BATCH = 64


def default_threads():
    """Threads for batches: ROBOT_DYNAMICS_THREADS, else every core numba may use."""
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


def _plain(x, n, dtype=_F64, unit=(8,)):
    """x is already what the kernels take for one state: an array of this dtype, shape (n,)
    and unit stride (the fast paths' cheap check; the kernels only read it)."""
    return type(x) is np.ndarray and x.dtype is dtype and x.strides == unit and len(x) == n


def _plain_state(model, q, v, a, unit=(8,), ndarray=np.ndarray, f64=_F64):
    """`_plain` for q, v and a (or tau) together, written out: 0.1 us less per call."""
    nv = model.nv
    return (type(q) is ndarray and q.dtype is f64 and q.strides == unit and len(q) == model.nq
            and type(v) is ndarray and v.dtype is f64 and v.strides == unit and len(v) == nv
            and type(a) is ndarray and a.dtype is f64 and a.strides == unit and len(a) == nv)


def _batch_size(a):
    return a.shape[0] if a.ndim == 2 else 0


#: transparent huge pages' size on x86-64 (and arm64 with 4 KB pages)
_HUGE_PAGE = 2 << 20
#: fresh batch outputs up to this size are faulted in by the calling thread (`_fresh`)
_PREFAULT_MAX = 64 << 20


def _fresh(shape):
    """np.empty(shape) for a batch's output: from 2 MB up it starts on a huge-page boundary, and up
    to 64 MB the calling thread faults its pages in (a write per 4 KB) before the kernels' threads
    write it. Measured on this VM (N = 10000, bench_derivatives.py and A/B runs):
    - numpy asks Linux for huge pages for arrays of 4 MB or more, but an allocation starts anywhere,
      and its ends fault in 4 KB pages, ~2 us each: panda's derivatives (3 x 5 MB) took 1160 faults
      a call, aligned 5, and 1.95 -> 1.77 us/state on two threads.
    - two threads faulting in fresh memory at once are at times many times slower (panda's
      regressor, 57 MB, on two threads: median 2.8-3.1 us/state, up to 9.8, against 0.73 at best);
      faulted in first by one thread: 0.89 (0.85-1.07). Above 64 MB (talos' derivatives, 115 MB
      each; its regressors, 1 GB) faulting in first cost 10-60 %, so the threads do it there
      (`out=` is the way to skip it)."""
    nbytes = 8 * math.prod(shape)
    if nbytes < _HUGE_PAGE:
        return np.empty(shape)
    pages = -(-nbytes // _HUGE_PAGE)
    raw = np.empty((pages + 1) * _HUGE_PAGE, np.uint8)     # whole huge pages past the boundary
    start = -raw.ctypes.data % _HUGE_PAGE
    x = raw[start:start + nbytes].view(np.float64)
    if nbytes <= _PREFAULT_MAX:
        x[::512] = 0.0
    return x.reshape(shape)


class SingularMassMatrixError(ValueError):
    """Forward or hybrid dynamics met a mass matrix that is not positive definite: no unique
    acceleration answers the torques. The message names the joint and the suspect links."""


def _raise_status(model, status, inputs):
    """Turn a kernel status (or a batch's status array) into an error that names the input."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    where = f" (batch row {row})" if len(status) > 1 else ""
    kind, body = code % K.STATUS_BODY, code // K.STATUS_BODY - 1
    if kind == K.BAD_QUATERNION:
        joint = model.joint_by_name[model.body_joint_names[body]]
        a = joint.idx_q + 3
        quat = np.atleast_2d(inputs["q"])[row, a:a + 4]
        raise ValueError(f"q[{a}:{a + 4}], the quaternion (x y z w) of floating joint {joint.name!r}, must "
                         f"have unit norm; got norm {np.linalg.norm(quat):.6g}{where}")
    if kind == K.SINGULAR:
        raise SingularMassMatrixError(_singular_message(model, body, where))
    if kind == K.OVERFLOW:
        raise ValueError(f"the result is not finite{where}: the inputs are too large for double precision")
    for name, value in inputs.items():
        x = np.asarray(value)
        x = x[row] if len(status) > 1 else x
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or inf{where}")
        if np.any(np.abs(x) > INPUT_LIMIT):
            raise ValueError(f"{name} contains a value beyond {INPUT_LIMIT:g} in magnitude{where}: too large "
                             "to compute with in double precision")
    raise ValueError(f"non-finite input{where}")


def _singular_message(model, body, where):
    """Name the joints that move the singular coordinate (a leader and its mimics) and the links
    they move."""
    coordinate = model.v_source[model.idx_v[body]]
    bodies = [b for b in range(model.nb) if model.v_source[model.idx_v[b]] == coordinate]
    joints = ", ".join(repr(model.body_joint_names[b]) for b in bodies)
    links = list(dict.fromkeys(link for b in bodies for link in model.body_subtree_links(b)))
    warned = [w for w in model.warnings if any(f"link {link!r}" in w for link in links)]
    text = (f"the mass matrix is not positive definite at this state{where}: the inertia that joint "
            f"{joints} moves is singular, so no unique acceleration answers the torques. Suspect links "
            f"(moved by {joints}): {', '.join(links)}. A zero or non-physical inertia in the URDF causes this")
    if warned:
        text += "; the loader warned: " + "; ".join(warned)
    return text


# --- single-state fast paths ------------------------------------------------------------------
class _Direct:
    """A kernel whose compiled code is called directly, skipping numba's type dispatch
    (~0.4 us of a ~1 us single call). Only the fast paths call it, always with the argument
    types of its first call (arrays checked by `_plain`, the model's scratch, _NO_EXT)."""

    def __init__(self, kernel):
        self.kernel = kernel

    def run(self, *args):      # first call: compile (or load from the cache), then bind run
        status = self.kernel(*args)
        compiled = self.kernel.overloads.get(tuple(numba.typeof(x) for x in args))
        self.run = compiled.entry_point if compiled is not None else self.kernel
        return status


#: each algorithm's kernel module and its entry point
KERNELS = {"rnea": (_rnea, _rnea.rnea), "crba": (_crba, _crba.crba), "coriolis": (_coriolis, _coriolis.coriolis),
           "hybrid": (_hybrid, _hybrid.hybrid), "frame_jacobian": (_jacobian, _jacobian.frame_jacobian)}
_RNEA, _CRBA, _CORIOLIS, _HYBRID, _JACOBIAN = (_Direct(KERNELS[k][1]) for k in KERNELS)


class Workspace:
    """A model's buffers for single-state calls: each algorithm's kernel workspace (a row per
    body), zero vectors, the Jacobian and placement of `frame_placement` and `frame_jacobian`,
    and frame specs. One per model, made on first use (`workspace`) and kept in
    `model.workspace`; the kernels hold the GIL, so no two single-state calls use it at once."""

    def __init__(self, model):
        packed = model.packed
        self.rnea = K.workspace(packed, _rnea.WIDTH, False)
        self.crba = K.workspace(packed, _crba.WIDTH, False)
        self.coriolis = K.workspace(packed, _coriolis.WIDTH, False)
        self.hybrid = K.workspace(packed, _hybrid.WIDTH, True)
        self.frame_jacobian = K.workspace(packed, _jacobian.WIDTH, False)
        self.zero = np.zeros(model.nv)                  # read only
        self.nothing_known = np.zeros(model.nv, bool)   # read only
        self.J, self.H = np.empty((6, model.nv)), np.empty((4, 4))
        self.specs = {}                                 # (frame, reference) -> spec row


def workspace(model):
    """The model's Workspace, made on first use. The fast paths write `model.workspace or
    workspace(model)`: the call alone is ~50 ns of a ~1 us single call (measured)."""
    if model.workspace is None:
        model.workspace = Workspace(model)
    return model.workspace


# --- frames and wrenches --------------------------------------------------------------------
def _frame_spec(model, frame, reference):
    key = (frame, reference)
    specs = workspace(model).specs
    if key not in specs:
        if reference not in _REF_CODE:
            raise ValueError(f"reference must be one of {', '.join(REFERENCES)}, got {reference!r}")
        f = model.frame(frame)
        Q = model.packed[f.body, AXES:AXES + 9].reshape(3, 3) if f.body >= 0 else np.eye(3)
        spec = np.empty(K.FRAME_COLS)
        spec[K.F_BODY], spec[K.F_REF] = f.body, _REF_CODE[reference]
        spec[K.F_ROT:K.F_ROT + 9] = (Q.T @ f.rotation).reshape(9)     # in the body's joint frame
        spec[K.F_POS:K.F_POS + 3] = Q.T @ f.translation
        specs[key] = spec
    return specs[key]


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


def _threads(batch, threads):
    return 1 if batch < PARALLEL_MIN_BATCH else max(1, min(threads or default_threads(), batch))


def _drive(module, name, model, n, threads, scratch, *args):
    """Kernel `name` of a kernel module over n states: <name>_rows on one thread with the workspace
    scratch() returns (the model's single-state one), else <name>_batch (a workspace per thread).
    Every batch of the public API runs through here; returns the per-state status."""
    nthreads = _threads(n, threads)
    if nthreads > 1:
        return getattr(module, name + "_batch")(model.packed, *args, nthreads)
    status = np.zeros(n, np.int64)
    getattr(module, name + "_rows")(model.packed, *args, status, 0, n, scratch())
    return status


def _batch(name, model, n, threads, *args):
    """Run this file's kernel `name` over n states (_drive)."""
    return _drive(KERNELS[name][0], name, model, n, threads, lambda: getattr(workspace(model), name), *args)


# --- the algorithms -------------------------------------------------------------------------------
def inverse_dynamics(model, q, v, a, external_wrenches=None, threads=None):
    """tau = M(q) a + C(q, v) v + g(q) - sum J^T f_ext (RNEA). external_wrenches maps a frame
    name to a wrench [force; torque] acting at the frame origin, in local_world_aligned axes,
    or to (wrench, reference) with reference world / local / local_world_aligned."""
    if not external_wrenches and _plain_state(model, q, v, a):
        tau = np.empty(model.nv)
        if not _RNEA.run(model.packed, q, v, a, _NO_EXT, tau, (model.workspace or workspace(model)).rnea):
            return tau
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    a = _vector(a, model.nv, "a", n)
    ext = _external(model, external_wrenches, n)
    tau = _fresh(q.shape[:-1] + (model.nv,))
    status = _batch("rnea", model, n, threads, q, v, a, ext, tau) if n \
        else _rnea.rnea(model.packed, q, v, a, ext, tau, workspace(model).rnea)
    _raise_status(model, status, dict(q=q, v=v, a=a, external_wrenches=ext[..., K.F_WRENCH:]))
    return tau


def gravity_torques(model, q, threads=None):
    """g(q): the torques that hold the robot still against gravity."""
    if _plain(q, model.nq):
        s = model.workspace or workspace(model)
        tau = np.empty(model.nv)
        if not _RNEA.run(model.packed, q, s.zero, s.zero, _NO_EXT, tau, s.rnea):
            return tau
    q = np.asarray(q, dtype=np.float64)
    zero = np.zeros(q.shape[:-1] + (model.nv,))
    return inverse_dynamics(model, q, zero, zero, threads=threads)


def bias_forces(model, q, v, threads=None):
    """C(q, v) v + g(q)."""
    if _plain(v, model.nv):
        return inverse_dynamics(model, q, v, workspace(model).zero)
    v = np.asarray(v, dtype=np.float64)
    return inverse_dynamics(model, q, v, np.zeros(v.shape), threads=threads)


def mass_matrix(model, q, threads=None):
    """M(q), joint-space inertia with armature on the diagonal (CRBA)."""
    if _plain(q, model.nq):
        M = np.empty((model.nv, model.nv))
        if not _CRBA.run(model.packed, q, M, (model.workspace or workspace(model)).crba):
            return M
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    M = _fresh(q.shape[:-1] + (model.nv, model.nv))
    status = _batch("crba", model, n, threads, q, M) if n \
        else _crba.crba(model.packed, q, M, workspace(model).crba)
    _raise_status(model, status, dict(q=q))
    return M


def coriolis_matrix(model, q, v, threads=None):
    """C(q, v) with C v the Coriolis and centrifugal torques and Mdot - 2C skew-symmetric."""
    if _plain(q, model.nq) and _plain(v, model.nv):
        C = np.empty((model.nv, model.nv))
        if not _CORIOLIS.run(model.packed, q, v, C, (model.workspace or workspace(model)).coriolis):
            return C
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    C = _fresh(q.shape[:-1] + (model.nv, model.nv))
    status = _batch("coriolis", model, n, threads, q, v, C) if n \
        else _coriolis.coriolis(model.packed, q, v, C, workspace(model).coriolis)
    _raise_status(model, status, dict(q=q, v=v))
    return C


def forward_dynamics(model, q, v, tau, external_wrenches=None, threads=None):
    """qdd = M^-1 (tau + sum J^T f_ext - C v - g), by the articulated-body algorithm (models with
    mimic joints, whose coordinates are coupled: RNEA, CRBA and a Cholesky solve)."""
    s = model.workspace or workspace(model)
    if not external_wrenches and _plain_state(model, q, v, tau):
        qdd = np.empty(model.nv)    # tau is only read: nothing is known
        if not _HYBRID.run(model.packed, q, v, s.nothing_known, qdd, tau, _NO_EXT, s.hybrid):
            return qdd
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    tau = _vector(tau, model.nv, "tau", n)
    if not tau.flags.writeable:     # only read here, but the kernel's type is the hybrid's
        tau = tau.copy()
    qdd = _fresh(v.shape)
    _solve_hybrid(model, q, v, s.nothing_known.reshape(1, -1) if n else s.nothing_known, qdd, tau,
            external_wrenches, threads)
    return qdd


def hybrid_dynamics(model, q, v, acceleration_known, qdd, tau, external_wrenches=None, threads=None):
    """Solve M qdd + b = tau where acceleration_known[k] says qdd[k] is given (tau[k] is
    sought) and otherwise tau[k] is given (qdd[k] is sought). Returns complete (qdd, tau).
    For a batch, the mask is one per state or one for all."""
    nv = model.nv
    if not external_wrenches and _plain(q, model.nq) and _plain(v, nv) and _plain(acceleration_known, nv, _BOOL, (1,)) \
            and _plain(qdd, nv) and _plain(tau, nv):
        qdd, tau = qdd.copy(), tau.copy()
        if not _HYBRID.run(model.packed, q, v, acceleration_known, qdd, tau, _NO_EXT, (model.workspace or workspace(model)).hybrid):
            return qdd, tau
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, nv, "v", n)
    known = np.asarray(acceleration_known)
    if known.dtype != bool or known.shape not in (v.shape, (nv,)):
        raise ValueError(f"acceleration_known must be a boolean mask of shape {v.shape}"
                         f"{f' or ({nv},)' if n else ''}, got {known.dtype} of shape {known.shape}")
    known = np.ascontiguousarray(known.reshape(1, nv) if n and known.ndim == 1 else known)
    qdd = _vector(qdd, nv, "qdd", n).copy()
    tau = _vector(tau, nv, "tau", n).copy()
    _solve_hybrid(model, q, v, known, qdd, tau, external_wrenches, threads)
    return qdd, tau


def _solve_hybrid(model, q, v, known, qdd, tau, external_wrenches, threads):
    """The hybrid kernel on checked arrays: writes qdd where unknown and tau where known."""
    n = _batch_size(q)
    ext = _external(model, external_wrenches, n)
    status = _batch("hybrid", model, n, threads, q, v, known, qdd, tau, ext) if n \
        else _hybrid.hybrid(model.packed, q, v, known, qdd, tau, ext, workspace(model).hybrid)
    if np.any(status):      # name the given input at fault: qdd where known, tau elsewhere
        _raise_status(model, status, dict(q=q, v=v, qdd=np.where(known, qdd, 0.0), tau=np.where(known, 0.0, tau),
                                          external_wrenches=ext[..., K.F_WRENCH:]))


def _frame_kernel(model, q, frame, reference, threads):
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    spec = _frame_spec(model, frame, reference)
    J = _fresh(q.shape[:-1] + (6, model.nv))
    H = np.empty(q.shape[:-1] + (4, 4))
    status = _batch("frame_jacobian", model, n, threads, q, spec, J, H) if n \
        else _jacobian.frame_jacobian(model.packed, q, spec, J, H, workspace(model).frame_jacobian)
    _raise_status(model, status, dict(q=q))
    return J, H


def frame_placement(model, q, frame, threads=None):
    """4x4 homogeneous transform of a frame (link or joint name) in the world."""
    if _plain(q, model.nq):
        s = model.workspace or workspace(model)
        spec = s.specs.get((frame, "world"))
        H = np.empty((4, 4))
        if spec is not None and not _JACOBIAN.run(model.packed, q, spec, s.J, H, s.frame_jacobian):
            return H
    return _frame_kernel(model, q, frame, "world", threads)[1]


def frame_jacobian(model, q, frame, reference="local_world_aligned", threads=None):
    """6 x nv Jacobian of a frame, rows [linear; angular], in the given reference."""
    if _plain(q, model.nq):
        s = model.workspace or workspace(model)
        spec = s.specs.get((frame, reference))
        J = np.empty((6, model.nv))
        if spec is not None and not _JACOBIAN.run(model.packed, q, spec, J, s.H, s.frame_jacobian):
            return J
    return _frame_kernel(model, q, frame, reference, threads)[0]


def wrench_to_joint_torques(model, q, frame, wrench, reference="local_world_aligned", threads=None):
    """tau = J^T F (Lynch and Park, Modern Robotics, ch. 5 statics): the joint torques equivalent to a wrench F [force; torque]
    acting at the frame origin, F given in the same reference as the Jacobian."""
    J = frame_jacobian(model, q, frame, reference, threads)
    if J.ndim == 2 and _plain(wrench, 6):
        return wrench @ J
    F = _vector(wrench, 6, "wrench", J.shape[0] if J.ndim == 3 else 0)
    return np.einsum("...ij,...i->...j", J, F)


from .identification import (PARAMETERS, BaseParameters, PayloadEstimate, base_parameters,  # noqa: F401,E402
                             identify_payload, identify_payload_from_momentum, inertial_parameter_names,
                             inertial_parameters, joint_torque_regressor)
from .observer import MomentumObserver, estimate_wrench, external_torques, generalized_momentum  # noqa: F401,E402
from .derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives  # noqa: E402,F401
from .constrained import (ConstraintError, constrained_forward_dynamics, constraint_jacobian,  # noqa: E402,F401
                          contact_inverse_dynamics)
