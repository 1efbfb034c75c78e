"""Torque-limited time-optimal timing of a path: TOPP-RA, time-optimal path parameterization by
reachability analysis (Pham and Pham, "A New Approach to Time-Optimal Path Parameterization
Based on Reachability Analysis", IEEE T-RO 2018).

The path is given at gridpoints s_0 < ... < s_N by q(s), q'(s) and q''(s) (any path
representation works). Along it, q' = q' sd and qdd = q' sdd + q'' sd^2, so the inverse dynamics
tau = M(q) qdd + C(q, qd) qd + g(q) is linear in u = sdd and x = sd^2 at each gridpoint:

    tau = (M q') u + (M q'' + C(q, q') q') x + g(q)

its three coefficients from three batched RNEA calls (q, 0, q'), (q, q', q''), (q, 0, 0) (armature,
payload and gravity included). With the velocity limits (x <= (qd_max / |q'_j|)^2), the
acceleration limits (|q' u + q'' x| <= qdd_max) and the effort limits each gridpoint is a set of
linear constraints in (u, x) (collocation: gridpoint i's constraints hold u_i, the path
acceleration held on segment i, and x_i), and `kernels.reachability` runs the paper's backward
pass (controllable sets) and greedy forward pass. The duration follows from constant u on each
segment: dt_i = 2 ds_i / (sd_i + sd_i+1).

discretization="interpolation" (the paper's second scheme, toppra's `Interpolation`) adds to
gridpoint i's rows those of gridpoint i+1 at the end of segment i, where x_i+1 = x_i + 2 ds_i u_i:
A_i+1 u + B_i+1 (x + 2 ds_i u) = (A_i+1 + 2 ds_i B_i+1) u + B_i+1 x, so u_i is held within the limits at
both ends of its segment. Collocation lets u_i be anything that gridpoint i allows; where a joint's
inertia term (M q')_j crosses zero (a dynamic singularity) that is a large u_i whose torque at the next
gridpoint is far beyond the limit, and a trajectory interpolated between the gridpoints follows it
(the demo's path, PUMA with 3 kg at 90 % of its effort limits, 100 gridpoints: up to 2.0x the limit
between gridpoints with collocation, 1.005x with interpolation, cubic segments).
"""
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .calling import Kernel, call, check_threads, vector
from .kernels import reachability as _ra
from .kernels import rnea as _rnea
from .kernels.common import EXT_COLS

LIMIT_KINDS = ("", "effort", "acceleration", "velocity")
DISCRETIZATIONS = ("collocation", "interpolation")


@dataclass
class TimedPath:
    """The time-optimal timing of a path. At the N + 1 gridpoints: s, t (from 0), sd, and the
    joint trajectory q, v = q' sd, a = q' sdd + q'' sd^2 and tau, its inverse dynamics; sdd[i] is
    the path acceleration held on segment i (s_i to s_i+1), TOPP-RA's u_i, and gridpoint i's a
    and tau use sd_i and sdd_i; the last gridpoint's use sdd_end, sdd[N - 1] unless a limit
    there forbids it (then the nearest allowed). limit_kind / limit_joint: what bounds each
    gridpoint (LIMIT_KINDS index: 0 none, 1 effort, 2 acceleration, 3 velocity, and the joint's
    index, -1 none); `limits` names them. K: the controllable sets of sd^2, (N + 1, 2)."""
    duration: float
    s: np.ndarray
    t: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray
    sdd_end: float
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    limit_kind: np.ndarray
    limit_joint: np.ndarray
    K: np.ndarray
    joint_names: list = field(repr=False)

    @property
    def limits(self):
        """Per gridpoint, the limit that holds it: 'effort <joint>', 'acceleration <joint>',
        'velocity <joint>' or '' (none: the start, the end)."""
        return [f"{LIMIT_KINDS[k]} {self.joint_names[j]}" if k else "" for k, j in zip(self.limit_kind, self.limit_joint)]


def coordinate_names(model):
    """A name per velocity coordinate: the joint's, with [k] for a multi-coordinate joint's k-th."""
    names = [f"{j.name}[{k}]" for j in model.joints if j.nv > 1 for k in range(j.nv)]
    return names + list(model.joint_names)


def limit_vector(model, value, name, default):
    """A limit per velocity coordinate (a number for all, one per coordinate, or a dict by joint name:
    the joints it names, `default` for the others) as a float array: positive, +inf for none; None
    gives `default` per joint (the URDF's, whose zeros are refused too), none for the coordinates of
    floating and planar joints. ValueError or KeyError naming `name` for anything else."""
    if isinstance(value, Mapping):
        return _limit_dict(model, value, name, default)
    given = value is not None
    if not given and default is None:
        return np.full(model.nv, np.inf)
    try:
        if np.asarray(value).dtype.kind in "US":     # a string is not a number, even "87"
            raise TypeError(name)
        x = np.array(value if given else default, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} takes one number, one per joint ({model.nv}) or a dict by joint name, got "
                         f"{value!r}") from None
    if not given and model.joint_offset[1]:
        x = np.concatenate((np.full(model.joint_offset[1], np.inf), np.broadcast_to(x, (len(model.joint_names),))))
    if x.shape != (model.nv,):
        if x.ndim > 1 or x.size not in (1, model.nv):
            raise ValueError(f"{name} takes one number or one per joint ({model.nv}), got shape {x.shape}")
        x = np.full(model.nv, x.item())
    if not np.all(x > 0.0):
        j = int(np.flatnonzero(~(x > 0.0))[0])
        joint = coordinate_names(model)[j]
        if given:
            raise ValueError(f"{name} must be positive (or inf: none); got {x[j]:g} for joint {joint!r} ({name}[{j}])")
        raise ValueError(f"the URDF gives joint {joint!r} {name.split('_')[0]} limit {x[j]:g}: pass {name}")
    return x


def _limit_dict(model, value, name, default):
    """limit_vector of a dict {joint name: limit}: the default limits with the named joints' replaced."""
    x = limit_vector(model, None, name, default).copy()
    names = coordinate_names(model)
    for joint, limit in value.items():
        if joint not in names:
            raise KeyError(f"{name}: unknown joint {joint!r}; the model's joints are {', '.join(names)}")
        try:
            if isinstance(limit, (str, bytes)):
                raise TypeError(name)
            x[names.index(joint)] = float(limit)
        except (TypeError, ValueError):
            raise ValueError(f"{name}[{joint!r}] must be a number, got {limit!r}") from None
    return limit_vector(model, x, name, None)


#: dq_ds and d2q_ds2 are checked against q along s, segment by segment, by the corrected trapezoid rule
#: (Euler-Maclaurin: q_i+1 - q_i = ds (q'_i + q'_i+1) / 2 - ds^2 (q''_i+1 - q''_i) / 12, exact for a
#: cubic, the error ds^5 |q^(5)| / 720 otherwise), to this fraction of the segment's largest ds |q'|
#: (the plain trapezoid rule was off by up to 1.4 of it on valid cubic splines of few gridpoints)
PATH_TOLERANCE = 0.1


def _path_rates(model, s, q, dq, ddq):
    """The first segment where the derivatives disagree with q's differences along s beyond
    PATH_TOLERANCE: ValueError naming its gridpoints and the joint."""
    h = np.diff(s)[:, None]
    rule = 0.5 * h * (dq[:-1] + dq[1:]) - h * h / 12.0 * (ddq[1:] - ddq[:-1])
    error = np.abs(np.diff(q, axis=0) - rule)
    scale = h[:, 0] * np.maximum(np.abs(dq[:-1]).max(axis=1), np.abs(dq[1:]).max(axis=1))
    limit = PATH_TOLERANCE * scale + 1e-12 * (1.0 + np.abs(q[1:]).max(axis=1))
    bad = np.flatnonzero((error > limit[:, None]).any(axis=1))
    if len(bad):
        i = int(bad[0])
        j = int(np.argmax(error[i]))
        raise ValueError(f"dq_ds disagrees with q between gridpoints {i} and {i + 1} (s = {s[i]:g} to {s[i + 1]:g}): joint "
                         f"{coordinate_names(model)[j]!r} moves {q[i + 1, j] - q[i, j]:.6g} there, dq_ds and d2q_ds2 give "
                         f"{rule[i, j]:.6g} (the corrected trapezoid rule; tolerance {PATH_TOLERANCE:g} of ds |dq_ds|): "
                         "dq_ds and d2q_ds2 must be the derivatives of q along s")


def _path(model, s, q, dq_ds, d2q_ds2):
    if model.joint_offset != (0, 0):
        multi = next(j for j in model.joints if j.kind in ("floating", "planar"))
        raise ValueError(f"time_parameterize times paths of joints with one coordinate each; joint {multi.name!r} "
                         f"is {multi.kind} (its coordinates are not actuated joints)")
    s = np.ascontiguousarray(s, dtype=float)
    if s.ndim != 1 or len(s) < 2:
        raise ValueError(f"s must be a 1-D array of at least 2 gridpoints, got shape {s.shape}")
    n1 = len(s)
    q, dq, ddq = (vector(x, model.nv, name, n1) for x, name in ((q, "q"), (dq_ds, "dq_ds"), (d2q_ds2, "d2q_ds2")))
    code, i = _ra.first_bad_gridpoint(s, q, dq, ddq)
    if code == _ra.NOT_INCREASING:
        raise ValueError(f"s must increase: s[{i}] = {float(s[i])!r} follows s[{i - 1}] = {float(s[i - 1])!r}")
    if code == _ra.STILL:
        raise ValueError(f"dq_ds is zero at gridpoint {i} (s = {s[i]:g}): the path must move with s at every gridpoint")
    if code:
        name = ("s", "q", "dq_ds", "d2q_ds2")[code - _ra.BAD_S]
        raise ValueError(f"{name} contains NaN or inf at gridpoint {i}")
    _path_rates(model, s, q, dq, ddq)
    return s, (q, dq, ddq)


def _speed(value, name):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}") from None
    if not (x >= 0.0 and np.isfinite(x)):
        raise ValueError(f"{name} must be a finite non-negative path speed, got {value!r}")
    return x


def time_parameterize(model, s, q, dq_ds, d2q_ds2, velocity_limits=None, acceleration_limits=None,
                      effort_limits=None, start_speed=0.0, end_speed=0.0, threads=1, discretization="collocation",
                      data=None):
    """The fastest timing of the path (s, q, dq_ds, d2q_ds2 at N + 1 gridpoints) within the joint
    velocity, acceleration and effort limits (each a number, one per joint or a dict by joint name,
    +inf for none; velocity and effort default to the URDF's, acceleration to none), from path speed
    start_speed to end_speed (ds/dt at s_0 and s_N). Returns a TimedPath. A path the limits
    cannot follow raises ValueError naming the joint and the gridpoint; so do a dq_ds and d2q_ds2
    that are not q's derivatives along s (checked segment by segment by the corrected trapezoid rule
    to PATH_TOLERANCE, 10 %, of each segment's ds |dq_ds|). threads: for the RNEA
    batch (3 (N + 1) states), one by default: on this 2-core VM two were 1.5x faster at 1000
    gridpoints while it was quiet and 7-17x slower while the other core was busy
    (bench_trajectory.py, bench/RESULTS.md). discretization: "collocation" (gridpoint i's limits
    hold (u_i, x_i)) or "interpolation" (they also hold at the end of segment i, with u_i and
    x_i+1: what a trajectory interpolated between the gridpoints needs; see the module)."""
    if discretization not in DISCRETIZATIONS:
        raise ValueError(f"discretization must be one of {DISCRETIZATIONS}, got {discretization!r}")
    threads = check_threads(threads)
    s, (q, dq, ddq) = _path(model, s, q, dq_ds, d2q_ds2)
    vmax = limit_vector(model, velocity_limits, "velocity_limits", model.velocity_limits)
    accel = limit_vector(model, acceleration_limits, "acceleration_limits", None)
    effort = limit_vector(model, effort_limits, "effort_limits", model.effort_limits)
    x_start, x_end = _speed(start_speed, "start_speed") ** 2, _speed(end_speed, "end_speed") ** 2
    n1, nv = q.shape
    N = n1 - 1
    c, a, b = _coefficients(model, q, dq, ddq, threads, data)
    limited = (np.flatnonzero(effort < np.inf), np.flatnonzero(accel < np.inf))
    row_joint = np.concatenate(limited)
    row_kind = np.repeat(np.array([_ra.EFFORT, _ra.ACCELERATION]), [len(limited[0]), len(limited[1])])
    rows, xrange = np.empty((n1, len(row_joint), _ra.ROW_COLS)), np.empty((n1, 2))
    empty = _ra.stage_rows(a, b, c, dq, ddq, effort, accel, vmax, rows, xrange)
    problem = _Problem(model, s, q, rows, row_kind, row_joint, effort, accel, vmax, a, b, c, xrange)
    if empty >= 0:
        problem.no_speed(empty)
    ds = np.diff(s)
    if discretization == "interpolation":
        rows, row_kind, row_joint = _segment_ends(rows, ds), np.tile(row_kind, 2), np.tile(row_joint, 2)
        problem.rows, problem.row_kind, problem.row_joint, problem.ends = rows, row_kind, row_joint, len(row_kind) // 2
    for i, speed, where in ((0, x_start, "start"), (N, x_end, "end")):
        if speed == 0.0 and np.any(np.abs(c[i]) > effort):
            j = int(np.argmax(np.abs(c[i]) > effort))
            raise ValueError(f"gravity alone needs {c[i, j]:.6g} at joint {model.joint_names[j]!r} at the {where} of the "
                             f"path (gridpoint {i}, s = {s[i]:g}), beyond its effort limit {effort[j]:g}: the arm cannot "
                             f"hold it at rest there")
    K, x, u = np.empty((n1, 2)), np.empty(n1), np.empty(N)
    brake, active, info = np.empty(N, np.int64), np.empty(N, np.int64), np.zeros(3, np.int64)
    status = _ra.time_optimal(rows, xrange, ds, x_start, x_end, K, x, u, brake, active, info)
    if status != _ra.OK:
        problem.failed(status, info, K, x_start, x_end)
    u_end = _ra.last_acceleration(rows, N, x[N], u[N - 1])
    sd, t = np.empty(n1), np.empty(n1)
    v, acc, tau = np.empty((n1, nv)), np.empty((n1, nv)), np.empty((n1, nv))
    kind, joint = np.empty(n1, np.int64), np.empty(n1, np.int64)
    stopped = _ra.assemble(ds, x, u, u_end, K, a, b, c, dq, ddq, vmax, row_kind, row_joint, brake, active,
                           sd, t, v, acc, tau, kind, joint)
    if stopped >= 0:
        problem.stopped(stopped, K)
    return TimedPath(float(t[-1]), s.copy(), t, sd, u, float(u_end), q.copy(), v, acc, tau, kind, joint, K,
                     list(model.joint_names))


def _segment_ends(rows, ds):
    """Gridpoint i's rows followed by gridpoint i+1's taken at the end of segment i (A + 2 ds_i B,
    B, lo, hi); the last gridpoint's twice (it ends no segment)."""
    n1, R = rows.shape[0], rows.shape[1]
    out = np.empty((n1, 2 * R, rows.shape[2]))
    out[:, :R], out[:-1, R:], out[-1, R:] = rows, rows[1:], rows[-1]
    out[:-1, R:, _ra.ROW_A] += 2.0 * ds[:, None] * rows[1:, :, _ra.ROW_B]
    return out


def _coefficients(model, q, dq, ddq, threads, data):
    """g, M q' and M q'' + C(q, q') q' at every gridpoint: one RNEA batch of the three states
    (q, 0, 0), (q, 0, q'), (q, q', q'') per gridpoint (the inputs are checked already)."""
    n1, nv = q.shape
    Q, V, A = np.empty((3, 3 * n1, nv))
    Q[:n1], Q[n1:2 * n1], Q[2 * n1:] = q, q, q
    V[:2 * n1], V[2 * n1:] = 0.0, dq
    A[:n1], A[n1:2 * n1], A[2 * n1:] = 0.0, dq, ddq
    tau = np.empty((3 * n1, nv))
    call(_RNEA, model, data, threads, 3 * n1, (Q, V, A, np.zeros((3 * n1, 0, EXT_COLS)), tau), dict(q=Q, v=V, a=A))
    c = tau[:n1]
    return c, tau[n1:2 * n1] - c, tau[2 * n1:] - c


_RNEA = Kernel(_rnea, "rnea")


class _Problem:
    """The constraints of one call, to say why a path cannot be timed."""

    def __init__(self, model, s, q, rows, row_kind, row_joint, effort, accel, vmax, a, b, c, xrange):
        self.model, self.s, self.q, self.rows = model, s, q, rows
        self.row_kind, self.row_joint = row_kind, row_joint
        self.effort, self.accel, self.vmax, self.a, self.b, self.c, self.xrange = effort, accel, vmax, a, b, c, xrange
        self.ends = None        # interpolation: rows from here on are gridpoint i+1's, at the end of segment i

    def where(self, i):
        return f"gridpoint {i} (s = {self.s[i]:.6g}, q = {np.array2string(self.q[i], precision=4, separator=', ')})"

    def row(self, i, r, K_next=None):
        """What row r of gridpoint i is, in words (R: reaching K_next, the next controllable speeds)."""
        if r < 0:
            return "the joint velocity limits"
        if r >= len(self.row_kind):
            lo, hi = K_next if K_next is not None else (np.nan, np.nan)
            return (f"reaching a path speed from which the rest of the path can be followed (sd in "
                    f"[{np.sqrt(max(lo, 0)):.4g}, {np.sqrt(max(hi, 0)):.4g}] at s = {self.s[i + 1]:.6g})")
        j = int(self.row_joint[r])
        name = self.model.joint_names[j]
        end = self.ends is not None and r >= self.ends
        at = min(i + 1, len(self.s) - 1) if end else i
        if self.row_kind[r] == _ra.EFFORT:
            text = (f"the effort limit {self.effort[j]:g} of joint {name!r} (gravity alone needs {self.c[at, j]:.6g} "
                    f"there, the path's inertia term is {self.a[at, j]:.4g} sdd)")
        else:
            text = f"the acceleration limit {self.accel[j]:g} of joint {name!r}"
        return text + (f" at the segment's end (s = {self.s[at]:.6g})" if end else "")

    def gravity_note(self, i):
        over = np.flatnonzero(np.abs(self.c[i]) > self.effort)
        return "".join(f"; gravity alone exceeds the effort limit of joint {self.model.joint_names[j]!r} there "
                       f"({self.c[i, j]:.6g} against {self.effort[j]:g})" for j in over)

    def no_speed(self, i):
        """stage_rows found gridpoint i allows no x at all (rows whose A is zero, velocity)."""
        rows = [r for r in range(len(self.row_kind)) if self.rows[i, r, _ra.ROW_A] == 0.0]
        names = ", ".join(self.row(i, r) for r in rows) or "the joint velocity limits"
        raise ValueError(f"the path cannot be timed within the limits: at {self.where(i)} no path speed meets "
                         f"{names}{self.gravity_note(i)}")

    def failed(self, status, info, K, x_start, x_end):
        i, rl, ru = (int(k) for k in info)
        N = len(self.s) - 1
        if status == _ra.UNBOUNDED:
            raise ValueError(f"nothing bounds the path speed at {self.where(i)}: give velocity, acceleration or effort "
                             "limits for the joints that move there")
        if status == _ra.NOT_CONTROLLABLE and rl < 0:
            raise ValueError(f"start_speed {np.sqrt(x_start):g} cannot be followed to the end: the path speeds at s[0] "
                             f"from which the end is reachable at end_speed {np.sqrt(x_end):g} are "
                             f"[{np.sqrt(K[0, 0]):.6g}, {np.sqrt(K[0, 1]):.6g}]")
        if status == _ra.INFEASIBLE and i == N:
            raise ValueError(f"end_speed {np.sqrt(x_end):g} is not allowed at the end of the path, {self.where(i)}: "
                             f"{self.row(i, rl)} conflicts with {self.row(i, ru)}{self.gravity_note(i)}")
        K_next = K[i + 1] if i < N else None
        what = "no path acceleration meets both" if status == _ra.INFEASIBLE else "the forward pass lost the " \
            "controllable speeds (rounding) between"
        raise ValueError(f"the path cannot be timed within the limits at {self.where(i)}: {what} "
                         f"{self.row(i, rl, K_next)} and {self.row(i, ru, K_next)}{self.gravity_note(i)}")

    def stopped(self, i, K):
        raise ValueError(f"the path cannot be timed within the limits: the path speed must be zero at both "
                         f"{self.where(i)} and {self.where(i + 1)} (controllable speeds up to "
                         f"{np.sqrt(K[i, 1]):.3g} and {np.sqrt(K[i + 1, 1]):.3g}){self.gravity_note(i)}")
