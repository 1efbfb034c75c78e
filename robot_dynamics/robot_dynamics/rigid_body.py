"""The rigid-body algorithms of the public API: inverse dynamics (RNEA), the mass matrix (CRBA), the
Coriolis matrix, forward and hybrid dynamics (ABA), frame placements and Jacobians, the
Jacobian-transpose wrench mapping. NumPy in, NumPy out, one state (1-D arrays) or a batch (2-D, a
row per state); conventions in `dynamics`. Re-exported there (`from robot_dynamics import dynamics
as rd`).
"""
import numpy as np

from .calling import (BOOL, NO_EXT, NO_SPECS, Kernel, batch_size, call, data_of, external_rows, frame_spec, fresh, of,
                      output, plain, plain_data, solve_spd, vector)
from . import kernels as K
from .kernels import aba as _aba
from .kernels import coriolis as _coriolis
from .kernels import crba as _crba
from .kernels import jacobian as _jacobian
from .kernels import rnea as _rnea
from .kernels import entries as _entries
from .kernels.entries import fast_path

#: each algorithm's kernel (its module's entry point)
KERNELS = {"rnea": Kernel(_rnea, "rnea"), "crba": Kernel(_crba, "crba"), "coriolis": Kernel(_coriolis, "coriolis"),
           "aba": Kernel(_aba, "aba"), "frame_jacobian": Kernel(_jacobian, "frame_jacobian")}
_RNEA, _CRBA, _CORIOLIS, _ABA, _JACOBIAN = KERNELS.values()
#: the single-state fast paths' C entries (kernels/entries.py: the output made and the arrays checked in C;
#: None for the checked path); g(q) by RNEA's passes from an entry point that takes neither v, a nor wrenches
FAST = {name: fast_path(name) for name in ("inverse_dynamics", "gravity_torques", "mass_matrix", "coriolis_matrix",
                                           "forward_dynamics", "frame_jacobian", "frame_placement")}


def load_fast_paths():
    """Every fast path's C entry compiled or loaded from numba's cache now, not at its first call: a
    process that says it is ready loads no code afterwards (the node's warm-ups)."""
    _entries.load()


# --- the algorithms -------------------------------------------------------------------------------
def inverse_dynamics(model, q, v, a, external_wrenches=None, threads=None, data=None):
    """tau = M(q) a + C(q, v) v + g(q) - sum J^T f_ext (RNEA). external_wrenches maps a frame
    name to a wrench [force; torque] acting at the frame origin, in local_world_aligned axes,
    or to (wrench, reference) with reference world / local / local_world_aligned."""
    if not external_wrenches:
        tau = FAST["inverse_dynamics"](model.packed, q, v, a, NO_EXT, model.nv, data_of(model, data).rnea)
        if tau is not None:
            return tau
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    a = vector(a, model.nv, "a", n)
    ext = external_rows(model, of(model, data), external_wrenches, n)
    tau = fresh(q.shape[:-1] + (model.nv,))
    call(_RNEA, model, data, threads, n, (q, v, a, ext, tau),
         dict(q=q, v=v, a=a, external_wrenches=ext[..., K.F_WRENCH:]))
    return tau


def gravity_torques(model, q, threads=None, data=None):
    """g(q): the torques that hold the robot still against gravity."""
    d = data_of(model, data)
    tau = FAST["gravity_torques"](model.packed, q, d.zero, model.nv, d.rnea)
    if tau is not None:
        return tau
    q = np.asarray(q, dtype=np.float64)
    zero = np.zeros(q.shape[:-1] + (model.nv,))
    return inverse_dynamics(model, q, zero, zero, threads=threads, data=data)


def bias_forces(model, q, v, threads=None, data=None):
    """C(q, v) v + g(q)."""
    if plain(v, model.nv):
        return inverse_dynamics(model, q, v, of(model, data).zero, data=data)
    v = np.asarray(v, dtype=np.float64)
    return inverse_dynamics(model, q, v, np.zeros(v.shape), threads=threads, data=data)


def mass_matrix(model, q, threads=None, out=None, data=None):
    """M(q), joint-space inertia with armature on the diagonal (CRBA). out: an array to fill and
    return instead of a fresh one (nv x nv, or N x nv x nv: fresh memory is much of a large batch's
    cost, as for the derivatives)."""
    d = data_of(model, data)
    if out is None or getattr(out, "shape", None) == d.nv_nv:      # the entry checks its dtype and layout
        M = FAST["mass_matrix"](model.packed, q, d.nv_nv if out is None else out, d.crba)
        if M is not None:
            return M
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    M = output(out, q.shape[:-1] + (model.nv, model.nv))
    call(_CRBA, model, data, threads, n, (q, M), dict(q=q))
    return M


def coriolis_matrix(model, q, v, threads=None, data=None):
    """C(q, v) with C v the Coriolis and centrifugal torques and Mdot - 2C skew-symmetric."""
    d = data_of(model, data)
    C = FAST["coriolis_matrix"](model.packed, q, v, d.nv_nv, d.coriolis)
    if C is not None:
        return C
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    C = fresh(q.shape[:-1] + (model.nv, model.nv))
    call(_CORIOLIS, model, data, threads, n, (q, v, C), dict(q=q, v=v))
    return C


def forward_dynamics(model, q, v, tau, external_wrenches=None, threads=None, data=None, method="aba"):
    """qdd = M^-1 (tau + sum J^T f_ext - C v - g) (armature in M), by one of three methods that agree
    to rounding:

    - "aba" (the default): the articulated-body algorithm (Featherstone, RBDA ch. 7), O(n), no matrix
      formed; the fastest for one state and for batches, the choice unless M itself is wanted (models
      with mimic joints, whose coordinates are coupled: RNEA, CRBA and a Cholesky solve in the kernel).
    - "mass_matrix": M by CRBA, b = C v + g by RNEA, then M qdd = tau - b by a Cholesky solve
      (Pinocchio's computeMinverse route, O(n^3)); the better choice when M or its factor is wanted
      as well, or to check ABA with an independent computation.
    - "unit_vector": Kajita's unit-vector method (Kajita, Humanoid Robots, forward dynamics by
      inverse dynamics, rotor inertia included): b = ID(q, v, 0) and column k of M as
      ID(q, v, e_k) - b, n + 1 inverse-dynamics calls (one batch), then the Cholesky solve; needs
      nothing but inverse dynamics, O(n^2) RNEA work: the slowest, the textbook's construction.
    """
    if method != "aba":
        return _forward_by_matrix(model, q, v, tau, external_wrenches, threads, data, method)
    if not external_wrenches:       # tau is only read: nothing is known
        d = data_of(model, data)
        qdd = FAST["forward_dynamics"](model.packed, q, v, d.nothing_known, model.nv, tau, NO_EXT, d.aba)
        if qdd is not None:
            return qdd
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    tau = vector(tau, model.nv, "tau", n)
    if not tau.flags.writeable:     # only read here, but aba is compiled for hybrid_dynamics' writeable tau
        tau = tau.copy()
    qdd = fresh(v.shape)
    nothing = of(model, data).nothing_known
    _solve_hybrid(model, data, q, v, nothing.reshape(1, -1) if n else nothing, qdd, tau, external_wrenches, threads)
    return qdd


FORWARD_METHODS = ("aba", "unit_vector", "mass_matrix")


def _forward_by_matrix(model, q, v, tau, external_wrenches, threads, data, method):
    """forward_dynamics by method "mass_matrix" or "unit_vector": M and b, then solve_spd."""
    if method not in FORWARD_METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, FORWARD_METHODS))}, got {method!r}")
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    tau = vector(tau, model.nv, "tau", n)
    zero = np.zeros(v.shape)
    b = inverse_dynamics(model, q, v, zero, external_wrenches, threads, data)
    if method == "mass_matrix":
        M = mass_matrix(model, q, threads, data=data)
    else:       # Kajita: column k of M is ID(q, v, e_k) - b, the n states in one batch
        nv, states = model.nv, max(n, 1)
        unit = np.broadcast_to(np.eye(nv), (states, nv, nv)).reshape(-1, nv)
        columns = inverse_dynamics(model, np.repeat(q.reshape(states, -1), nv, 0), np.repeat(v.reshape(states, -1), nv, 0),
                                   unit, _repeated(external_wrenches, nv), threads, data)
        M = np.swapaxes(columns.reshape(states, nv, nv) - b.reshape(states, 1, nv), 1, 2).reshape(v.shape + (nv,))
    if not np.all(np.isfinite(M)):
        raise ValueError("the result is not finite: the inputs are too large for double precision")
    return solve_spd(model, M, (tau - b)[..., None])[..., 0]


def _repeated(external_wrenches, nv):
    """external_wrenches for the unit-vector batch: a wrench per state repeated for its nv columns
    (one wrench for all states stays one)."""
    if not external_wrenches:
        return None
    out = {}
    for frame, value in external_wrenches.items():
        wrench, reference = value if isinstance(value, tuple) else (value, "local_world_aligned")
        out[frame] = (np.repeat(wrench, nv, 0) if np.ndim(wrench) == 2 else wrench, reference)
    return out


def hybrid_dynamics(model, q, v, acceleration_known, qdd, tau, external_wrenches=None, threads=None, data=None):
    """Solve M qdd + b = tau where acceleration_known[k] says qdd[k] is given (tau[k] is
    sought) and otherwise tau[k] is given (qdd[k] is sought). Returns complete (qdd, tau).
    For a batch, the mask is one per state or one for all."""
    nv = model.nv
    d = plain_data(model, data, q, v)
    if d is not None and not external_wrenches and plain(acceleration_known, nv, BOOL, (1,)) and plain(qdd, nv) \
            and plain(tau, nv):
        qdd, tau = qdd.copy(), tau.copy()
        if not _ABA.run(model.packed, q, v, acceleration_known, qdd, tau, NO_EXT, d.aba):
            return qdd, tau
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, nv, "v", n)
    known = np.asarray(acceleration_known)
    if known.dtype != bool or known.shape not in (v.shape, (nv,)):
        raise ValueError(f"acceleration_known must be a boolean mask of shape {v.shape}"
                         f"{f' or ({nv},)' if n else ''}, got {known.dtype} of shape {known.shape}")
    known = np.ascontiguousarray(known.reshape(1, nv) if n and known.ndim == 1 else known)
    qdd = vector(qdd, nv, "qdd", n).copy()
    tau = vector(tau, nv, "tau", n).copy()
    _solve_hybrid(model, data, q, v, known, qdd, tau, external_wrenches, threads)
    return qdd, tau


def _solve_hybrid(model, data, q, v, known, qdd, tau, external_wrenches, threads):
    """The `aba` kernel on checked arrays: writes qdd where unknown and tau where known; an error
    names the given input at fault (qdd where known, tau elsewhere)."""
    n = batch_size(q)
    ext = external_rows(model, of(model, data), external_wrenches, n)
    call(_ABA, model, data, threads, n, (q, v, known, qdd, tau, ext),
         lambda: dict(q=q, v=v, qdd=np.where(known, qdd, 0.0), tau=np.where(known, 0.0, tau),
                      external_wrenches=ext[..., K.F_WRENCH:]))


def _frame_kernel(model, data, q, frame, reference, threads):
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    spec = frame_spec(model, of(model, data), frame, reference)
    J = fresh(q.shape[:-1] + (6, model.nv))
    H = np.empty(q.shape[:-1] + (4, 4))
    call(_JACOBIAN, model, data, threads, n, (q, spec, J, H), dict(q=q))
    return J, H


FOUR_BY_FOUR = (4, 4)


def frame_placement(model, q, frame, threads=None, data=None):
    """4x4 homogeneous transform of a frame (link or joint name) in the world."""
    d = data_of(model, data)
    spec = d.frame_specs["world"].get(frame)
    if spec is not None:
        H = FAST["frame_placement"](model.packed, q, spec, d.J, FOUR_BY_FOUR, d.jacobian)
        if H is not None:
            return H
    return _frame_kernel(model, data, q, frame, "world", threads)[1]


def frame_jacobian(model, q, frame, reference="local_world_aligned", threads=None, data=None):
    """6 x nv Jacobian of a frame, rows [linear; angular], in the given reference."""
    d = data_of(model, data)
    spec = d.frame_specs.get(reference, NO_SPECS).get(frame)
    if spec is not None:
        J = FAST["frame_jacobian"](model.packed, q, spec, d.six_nv, d.H, d.jacobian)
        if J is not None:
            return J
    return _frame_kernel(model, data, q, frame, reference, threads)[0]


def wrench_to_joint_torques(model, q, frame, wrench, reference="local_world_aligned", threads=None, data=None):
    """tau = J^T F (Lynch and Park, Modern Robotics, ch. 5 statics): the joint torques equivalent to a wrench F [force; torque]
    acting at the frame origin, F given in the same reference as the Jacobian."""
    J = frame_jacobian(model, q, frame, reference, threads, data)
    if J.ndim == 2 and plain(wrench, 6):
        return wrench @ J
    F = vector(wrench, 6, "wrench", J.shape[0] if J.ndim == 3 else 0)
    return np.einsum("...ij,...i->...j", J, F)
