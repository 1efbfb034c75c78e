"""Loop assembly: a configuration on the loop closure from a guess, by Newton steps on the
loop-closure error (Featherstone, Rigid Body Dynamics Algorithms, ch. 8.2; Kim, Lie group
formulation of articulated rigid body dynamics, section 3: f(q) = 0, linearized as A qdot = 0).
The position-level counterpart of the constrained dynamics: a closed-chain robot's joint_states
often carry only the actuated joints, and the passive ones follow from the loops. Loops as in
constrained.py's docstring; the algorithm in kernels/assembly.py.
"""
from functools import partial

import numpy as np

from . import calling as _call
from . import constraints as _con
from .constraints import ConstraintError
from . import kernels as K
from .kernels import STATUS_BODY
from .kernels import assembly as _as

#: every component of the closure error within this (metres, radians) on success
CLOSE_TOL = _as.CLOSE_TOL
_ASM = _call.Kernel(_as, "assemble")


def _free(model, d, fixed):
    """1.0 for each coordinate (over v) that assembly may move: those not in `fixed`."""
    return _con.complement(model, d, () if fixed is None else fixed, "fixed", "q")


def assemble(model, q_guess, loops, fixed=None, threads=None, out=None, data=None):
    """q on the loop closure: Newton steps from q_guess on the loops' closure error (for each loop
    (frame_a, frame_b, kind): [p_a - p_b], or [p_a - p_b; log(R_a R_b^T)] for "6d", the same error
    as Baumgarte's position term), moving only the coordinates not in `fixed` (a boolean mask over
    q, or a list of joint names; those keep their given values; None: every coordinate may move).
    Each step is the least-norm least-squares step over the free coordinates, halved where it does
    not reduce the error; joints move along their Lie groups (quaternions stay unit). Joint limits
    are not enforced. Returns q with every component of the error within CLOSE_TOL = 1e-12 (m, rad),
    usually in 2-5 steps from a guess near the closure (warm start: the last solution). A loop the
    free joints cannot close from the guess (the frames out of reach, or a guess past a singular
    configuration) raises ConstraintError naming the loop, its remaining error and the free joints.
    A free revolute or continuous joint guessed beyond REDUCE_ABOVE = 100 rad (16 turns) is first
    brought within half a turn of 0 by whole turns (the same placements): at 1e6 rad a double's spacing
    is 1.2e-10 rad, and no closure within 1e-12 exists there. One state or a batch (N, nq); out: an
    array of q's shape to fill and return."""
    d = _call.of(model, data)
    C, labels, m = _con.rows(model, d, (), loops)
    free = _free(model, d, fixed)
    q_guess = _reduced(model, d, q_guess, free)
    if out is None and _call.plain_data(model, d, q_guess) is not None:
        q = np.empty(model.nq)
        if not _ASM.run(model.packed, q_guess, C, free, q, d.workspace(_as, m)):
            return q
    q0 = _call.vector(q_guess, model.nq, "q_guess")
    n = _call.batch_size(q0)
    if out is None:
        q = np.empty(q0.shape)
    elif not (type(out) is np.ndarray and out.shape == q0.shape and out.dtype == np.float64 and out.flags.c_contiguous
              and out.flags.writeable) or np.may_share_memory(out, q0):
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {q0.shape}, apart from q_guess")
    else:
        q = out
    _call.call(_ASM, model, d, threads, n, (q0, C, free, q), None, m,
               partial(_raise, d, q0, q, n, loops, labels, free))
    return q


#: a free revolute or continuous joint's guess beyond this (rad) is reduced by whole turns first
REDUCE_ABOVE = 100.0


def _reduced(model, d, q_guess, free):
    """q_guess with each free revolute or continuous coordinate (one that no mimic joint follows:
    a whole turn of it is the same placement) beyond REDUCE_ABOVE brought into [-pi, pi) by whole
    turns; q_guess itself (not copied) when none is."""
    key = ("turns", free.tobytes())
    turns = d.masks.get(key)
    if turns is None:
        drives = np.bincount(model.v_source, minlength=model.nv)
        turns = np.array([j.idx_q for j in model.joints if j.name in model.joint_by_name and j.nv == 1
                          and j.kind in ("revolute", "continuous") and free[j.idx_v] and drives[j.idx_v] == 1], int)
        d.masks[key] = turns
    if not len(turns):
        return q_guess
    x = np.asarray(q_guess, dtype=np.float64)
    if x.shape[-1:] != (model.nq,) or not np.any(np.abs(x[..., turns]) > REDUCE_ABOVE):
        return q_guess
    x = x.copy()
    angles = x[..., turns]
    x[..., turns] = np.where(np.abs(angles) > REDUCE_ABOVE, np.remainder(angles + np.pi, 2 * np.pi) - np.pi, angles)
    return x


def _raise(data, q0, q, n, loops, labels, free, model, status, inputs):
    """A loop that does not close names it (its remaining gap); a bad quaternion names q; the rest q_guess."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if len(bad) and status[bad[0]] % STATUS_BODY == _as.NOT_CLOSED:
        row, k = int(bad[0]), int(status[bad[0]]) // STATUS_BODY - 1
        where = f" (batch row {row})" if n else ""
        raise ConstraintError(_not_closed(model, data, q[row] if n else q, loops, labels, k, free, where))
    quaternion = len(bad) and status[bad[0]] % STATUS_BODY == K.BAD_QUATERNION
    _call.raise_status(model, status, dict(q=q0) if quaternion else dict(q_guess=q0))


def _not_closed(model, data, q, loops, labels, k, free, where):
    from .rigid_body import frame_placement
    frame_a, frame_b, kind = loops[k]
    Ha, Hb = frame_placement(model, q, frame_a, data=data), frame_placement(model, q, frame_b, data=data)
    gap = np.linalg.norm(Ha[:3, 3] - Hb[:3, 3])
    R = Ha[:3, :3] @ Hb[:3, :3].T
    turn = np.arctan2(np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2,
                      (np.trace(R) - 1) / 2)
    apart = f"{gap:.4g} m apart" + (f", {turn:.4g} rad turned" if kind == "6d" else "")
    moving = _con.coordinate_names(model, np.flatnonzero(free)) or "none"
    return (f"{labels[k]} cannot close from this guess{where}: the Newton steps over the free joints ({moving}) "
            f"stop with its frames {apart} (the least-squares point: the frames are out of the free joints' reach "
            f"from here, or the guess is past a singular configuration)")
