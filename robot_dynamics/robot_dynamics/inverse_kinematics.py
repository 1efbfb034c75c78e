"""Inverse kinematics of a frame and the manipulability of a configuration (Lynch and Park, Modern
Robotics, sections 5.4 and 6.2). Re-exported by `dynamics` (`rd.inverse_kinematics`,
`rd.manipulability`).

inverse_kinematics: Newton-Raphson on the SE(3) log error with damped least squares
(Wampler 1986; Nakamura and Hanafusa 1986), compiled (kernels/ik.py has the method in full):
- a target is a 4x4 world placement of the frame (pose: the residual is log6(T(q)^-1 T_d), the
  body twist [linear; angular] in the frame's axes, m and rad) or a world position (3 numbers:
  the residual is p_d - p(q), world axes);
- `weights` scale the residual's components (6 for a pose, in the frame's axes: [0, 0, 0] on the
  angular part leaves the orientation free, a 0 on the angular z a tool free to turn about its
  axis; 3 for a position, world axes); components of weight 0 are ignored;
- the solution always lies within the joints' position limits (the seed is clamped into them; a
  step is projected back onto them); floating and planar joints move on their groups (rd.integrate);
- `converged` is true only when the error (the norm of the residual over the components of
  non-zero weight) is at most `tolerance`; otherwise q is the best configuration found and
  `outcome` says why ('iteration limit', or 'stalled': no step reduces the error, as at a local
  minimum, on a joint limit or for an unreachable target; an unreachable target approached by ever
  smaller steps ends at the 'iteration limit' instead). Never silently wrong. `tolerance` must be
  positive: an error of exactly 0 is rarely representable (a reachable target ends 'stalled' at
  ~1e-17).
"""
import math
from typing import NamedTuple

import numpy as np

from . import calling as _call
from . import kernels as K
from .configuration import random_configuration
from .kernels import ik as _ik
from .lie import ROTATION_TOL, as_transform
from .rigid_body import frame_jacobian

#: the damped least squares' first lambda (it adapts from there, down to `damping`)
LAMBDA0 = 1e-3
OUTCOMES = {_ik.CONVERGED: "converged", _ik.ITERATIONS: "iteration limit", _ik.STALLED: "stalled"}


class IKResult(NamedTuple):
    """The answer of `inverse_kinematics`, per target (arrays with a leading N for a batch)."""
    q: np.ndarray            #: (nq,): the solution, or the best configuration found; within the limits
    converged: object        #: bool: error <= tolerance
    error: object            #: float: the residual's norm over the components of non-zero weight (m, rad)
    iterations: object       #: int: evaluations of the frame's placement and Jacobian (all restarts)
    residual: np.ndarray     #: (6,): [linear; angular] of log6(T^-1 T_d) (pose) or [p_d - p; 0] (position)
    outcome: object          #: str: 'converged', 'iteration limit' or 'stalled'

    @property
    def message(self):
        """One line per target saying how it ended, for a log or a service answer."""
        def line(ok, err, it, outcome):
            if ok:
                return f"converged in {it} iterations, error {err:.3g}"
            why = {"stalled": "no step reduces the error (a local minimum, a joint limit or an unreachable target)",
                   "iteration limit": "the iteration limit was reached"}[outcome]
            return f"not converged after {it} iterations: {why}; error {err:.3g}"
        if np.ndim(self.converged) == 0:
            return line(self.converged, self.error, self.iterations, self.outcome)
        return [line(*x) for x in zip(self.converged, self.error, self.iterations, self.outcome)]


def _targets(target):
    """(N or 0, T as (N, 4, 4), position-only): a 4x4 placement or a 3-vector, or batches of them
    (checked by a compiled pass; lie.as_transform words the error)."""
    t = np.asarray(target, dtype=np.float64)
    if t.shape[-2:] == (4, 4) and t.ndim in (2, 3):
        T = np.ascontiguousarray(t.reshape(-1, 4, 4))
        if _ik.first_bad_transform(T, ROTATION_TOL) >= 0:
            as_transform(t, "target")
        return (len(T) if t.ndim == 3 else 0), T, False
    if t.shape[-1:] == (3,) and t.ndim in (1, 2):
        p = t.reshape(-1, 3)
        T = np.zeros((len(p), 4, 4))
        T[:, 0, 0] = T[:, 1, 1] = T[:, 2, 2] = T[:, 3, 3] = 1.0
        T[:, :3, 3] = p
        bad = _ik.first_bad_transform(T, ROTATION_TOL)
        if bad >= 0:
            raise ValueError("target contains NaN or inf" + (f" (batch row {bad})" if t.ndim == 2 else ""))
        return (len(p) if t.ndim == 2 else 0), T, True
    raise ValueError(f"target must be a 4x4 world placement, a world position (3,), or a batch of either "
                     f"((N, 4, 4) or (N, 3)); got shape {t.shape}")


_DEFAULT_WEIGHTS = {False: np.ones(6), True: np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])}


def _weights(weights, position):
    n = 3 if position else 6
    if weights is None:
        return _DEFAULT_WEIGHTS[position]
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise ValueError(f"weights must be {n} finite non-negative numbers, not all zero, for a "
                             f"{'position' if position else 'pose'} target; got {weights!r}")
    return np.concatenate((w, np.zeros(3))) if position else w.copy()


def _limits(model, d):
    """The kernel's limits (3, nq): lower and upper bounds per q entry (+-inf for the floating and
    planar joints) and 1.0 where a coordinate may wrap by whole turns (a revolute joint whose range
    spans a turn or more and that no mimic joint follows: q and q +- 2 pi place every frame alike)."""
    if d.ik_limits is None:
        oq, ov = model.joint_offset
        limits = np.zeros((3, model.nq))
        limits[_ik.L_LOWER], limits[_ik.L_UPPER] = -np.inf, np.inf
        limits[_ik.L_LOWER, oq:], limits[_ik.L_UPPER, oq:] = model.lower_limits, model.upper_limits
        drives = np.bincount(model.v_source, minlength=model.nv)
        for k, name in enumerate(model.joint_names):
            span = model.upper_limits[k] - model.lower_limits[k]
            if model.joint_by_name[name].kind in ("revolute", "continuous") and np.isfinite(span) \
                    and span >= 2 * np.pi and drives[ov + k] == 1:
                limits[_ik.L_WRAP, oq + k] = 1.0
        d.ik_limits = limits
    return d.ik_limits


def inverse_kinematics(model, frame, target, q0, weights=None, tolerance=1e-10, max_iterations=100,
                       damping=1e-12, restarts=30, rng=0, threads=None, data=None):
    """IKResult: q with the frame at `target` (see the module docstring).

    target: a 4x4 world placement, a world position (3,), or a batch ((N, 4, 4) or (N, 3)); q0: the
    seed (nq,) or one per target (N, nq). weights: 6 (pose) or 3 (position) non-negative numbers.
    tolerance: on the error (m and rad). max_iterations: placement-and-Jacobian evaluations per
    attempt. damping: the floor of the damped least squares' lambda (the damping adapts above it).
    restarts: a target that does not converge is tried again from up to this many random
    configurations within the limits (rng: a seed or numpy Generator for them). threads: for batches.
    """
    n, T, position = _targets(target)
    w = _weights(weights, position)
    q0 = _call.vector(q0, model.nq, "q0")
    if q0.ndim == 2 and q0.shape[0] != max(n, 1):
        raise ValueError(f"q0 must have shape ({model.nq},) or ({max(n, 1)}, {model.nq}) for {max(n, 1)} targets, "
                         f"got shape {q0.shape}")
    number = (int, float, np.integer, np.floating)
    if not (isinstance(tolerance, number) and math.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be a finite positive number, got {tolerance!r}"
                         + (" (an error of exactly 0 is rarely reached in floating point)" if tolerance == 0 else ""))
    if not (isinstance(damping, number) and math.isfinite(damping) and damping >= 0):
        raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
    _check_rng(rng)
    if int(max_iterations) != max_iterations or max_iterations < 1 or int(restarts) != restarts or restarts < 0:
        raise ValueError(f"max_iterations must be a positive integer and restarts a non-negative one, got "
                         f"{max_iterations!r} and {restarts!r}")
    settings = np.array([tolerance, max_iterations, damping, LAMBDA0, position], dtype=np.float64)
    d = _call.of(model, data)
    spec = _call.frame_spec(model, d, frame, "local_world_aligned" if position else "local")
    if spec[K.F_BODY] < 0:
        raise ValueError(f"frame {frame!r} is fixed to the world: no joint moves it")
    limits = _limits(model, d)
    N = max(n, 1)
    Q0 = np.array(np.broadcast_to(q0, (N, model.nq)), order="C")   # writeable, C: one compiled signature
    Q, E, info = np.empty((N, model.nq)), np.empty((N, 6)), np.empty((N, _ik.INFO))
    _solve(model, d, Q0, spec, T, w, limits, settings, Q, E, info, threads)
    if restarts:
        gen = np.random.default_rng(rng)
        for _ in range(int(restarts)):
            todo = np.flatnonzero(info[:, _ik.I_OUTCOME] != _ik.CONVERGED)
            if not len(todo):
                break
            seeds = random_configuration(model, gen, len(todo))
            Qr, Er, ir = np.empty((len(todo), model.nq)), np.empty((len(todo), 6)), np.empty((len(todo), _ik.INFO))
            _solve(model, d, seeds, spec, np.ascontiguousarray(T[todo]), w, limits, settings, Qr, Er, ir, threads)
            ir[:, _ik.I_ITERATIONS] += info[todo, _ik.I_ITERATIONS]
            better = (ir[:, _ik.I_OUTCOME] == _ik.CONVERGED) | (ir[:, _ik.I_ERROR] < info[todo, _ik.I_ERROR])
            info[todo, _ik.I_ITERATIONS] = ir[:, _ik.I_ITERATIONS]
            keep = todo[better]
            Q[keep], E[keep], info[keep] = Qr[better], Er[better], ir[better]
    outcome = [OUTCOMES[int(k)] for k in info[:, _ik.I_OUTCOME]]
    converged = info[:, _ik.I_OUTCOME] == _ik.CONVERGED
    iterations = info[:, _ik.I_ITERATIONS].astype(np.int64)
    if not np.isfinite(Q).all():      # cannot happen from finite inputs; never hand it out
        raise ValueError("inverse kinematics produced a non-finite configuration")
    if n:
        return IKResult(Q, converged, info[:, _ik.I_ERROR].copy(), iterations, E, outcome)
    return IKResult(Q[0], bool(converged[0]), float(info[0, _ik.I_ERROR]), int(iterations[0]), E[0], outcome[0])


def _check_rng(rng):
    """rng as numpy.random.default_rng takes it (a seed, a SeedSequence, a BitGenerator or a Generator),
    checked before any solve: TypeError naming rng (numpy's own error names a SeedSequence)."""
    if rng is None or isinstance(rng, (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)):
        return
    try:
        np.random.SeedSequence(rng)
    except (TypeError, ValueError):
        raise TypeError(f"rng must be a non-negative integer seed, a numpy SeedSequence, BitGenerator or Generator, "
                        f"got {rng!r}") from None


def _solve(model, d, Q0, spec, T, w, limits, settings, Q, E, info, threads):
    """The compiled solve of each target (kernels/ik.py); a bad seed (NaN, inf or beyond 1e50, or a
    quaternion off unit norm) is an error naming q0."""
    def bad_seed(model, status, inputs):
        try:
            _call.raise_status(model, status, dict(q0=Q0, q=Q0))
        except ValueError as e:
            raise ValueError(str(e) if str(e).startswith("q0") else f"q0: {e}") from None
    _call.call(_IK, model, d, threads, len(Q0), (Q0, spec, T, w, limits, settings, Q, E, info), None, error=bad_seed)


_IK = _call.Kernel(_ik, "ik")


class Manipulability(NamedTuple):
    """Measures of how far a configuration is from a singularity, from the frame Jacobian's
    singular values s_1 >= ... >= s_k (k = min(rows, nv)): arrays with a leading N for a batch."""
    measure: object            #: Yoshikawa's s_1 ... s_k = sqrt(det(J J^T)) (rows <= nv)
    condition_number: object   #: s_1 / s_k (inf exactly at a singularity, s_k = 0)
    singular_values: np.ndarray  #: (k,)


PARTS = {"full": slice(0, 6), "linear": slice(0, 3), "angular": slice(3, 6)}


def manipulability(model, q, frame, reference="local_world_aligned", part="full", threads=None, data=None):
    """Manipulability of a frame at q (Yoshikawa, IJRR 1985; Lynch and Park, section 5.4): from the
    frame Jacobian in `reference` (world, local, local_world_aligned), its rows `part`: 'full'
    (6), 'linear' (3: the manipulability of the frame origin's velocity) or 'angular' (3). The
    linear and angular parts do not depend on where the frame's axes point, only 'full' of a
    LOCAL or WORLD reference mixes the units of its rows with their lever arms."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    J = frame_jacobian(model, q, frame, reference, threads, data)[..., PARTS[part], :]
    s = np.linalg.svd(J, compute_uv=False)
    measure = np.prod(s, axis=-1)
    smin, smax = s[..., -1], s[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(smin > 0, smax / np.where(smin > 0, smin, 1.0), np.inf)
    if s.ndim == 1:
        return Manipulability(float(measure), float(cond), s)
    return Manipulability(measure, cond, s)

