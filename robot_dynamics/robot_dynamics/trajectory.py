"""Trajectories: from a planned path to the torques an arm can deliver. Re-exported in `dynamics`.

    time_scaling(kind, T, t, **limits)     s, sd, sdd of cubic / quintic / trapezoid / scurve time
                                           scalings (Lynch and Park, Modern Robotics, ch. 9; time_scaling.py)
    sample_trajectory(times, positions, velocities=None, accelerations=None, t=...)   (q, v, a) at t,
                                           as ros2_control's joint_trajectory_controller samples it
    Trajectory(times, positions, ...)      the same checked once, for sampling many times (a node)
    time_parameterize(model, s, q, dq_ds, d2q_ds2, ...)   TimedPath: the torque-limited time-optimal
                                           timing of a path (TOPP-RA, Pham and Pham 2018; time_optimal.py)
    path_through_waypoints(waypoints)      (s, q, dq_ds, d2q_ds2): a C2 path through them, on a grid
    check_trajectory(model, times, q, v, a, effort_limits=None)   the torques a timed trajectory needs,
                                           the peak |tau| / limit per joint, the first violation
"""
import math
from dataclasses import dataclass, field

import numpy as np

from .calling import Direct, check_threads, vector
from .kernels import interpolation as _interp
from .rigid_body import inverse_dynamics
from .time_optimal import LIMIT_KINDS, TimedPath, coordinate_names, limit_vector, time_parameterize  # noqa: F401
from .time_scaling import KINDS, TimeScaling, minimum_duration, time_scaling  # noqa: F401

_SAMPLE, _FIRST_BAD = Direct(_interp.sample), Direct(_interp.first_bad)
_F64 = np.dtype(np.float64)
#: a torque counts as beyond its limit above this multiple of it (rounding of a profile at the limit)
OVER = 1.0 + 1e-9


def _plain(x, ndim):
    """Already what the kernels take: a writeable C-contiguous float64 array of ndim dimensions."""
    return type(x) is np.ndarray and x.dtype is _F64 and x.ndim == ndim and x.flags.c_contiguous and x.flags.writeable


def _array(x, ndim):
    return x if _plain(x, ndim) else np.array(x, dtype=float, order="C", ndmin=ndim)


class Trajectory:
    """A joint trajectory: points at `times` (seconds, increasing) with positions (M, n) and
    optionally velocities and accelerations (M, n), sampled like joint_trajectory_controller's
    `spline` interpolation: linear between points with positions only, cubic with velocities,
    quintic with accelerations too; before the first point it holds the first at rest, at the last
    point's time gives the last point, after it holds the last position at rest. Checked once
    (shapes, NaN/inf, increasing times); `sample` is a compiled call."""

    def __init__(self, times, positions, velocities=None, accelerations=None, _copy=True):
        if np.ndim(positions) != 2 or not np.shape(positions)[0] or not np.shape(positions)[1]:
            raise ValueError(f"positions must have shape (points, joints), got shape {np.shape(positions)}")
        times, P = _array(times, 1), _array(positions, 2)
        if times.shape != (P.shape[0],):
            raise ValueError(f"times must have one entry per point ({P.shape[0]},), got shape {times.shape}")
        if accelerations is not None and velocities is None:
            raise ValueError("accelerations need velocities (joint_trajectory_controller's quintic segments use both)")
        V = P if velocities is None else _array(velocities, 2)
        A = P if accelerations is None else _array(accelerations, 2)
        for x, name in ((V, "velocities"), (A, "accelerations")):
            if x.shape != P.shape:
                raise ValueError(f"{name} must have the shape of positions {P.shape}, got shape {x.shape}")
        kind = _interp.LINEAR if velocities is None else _interp.CUBIC if accelerations is None else _interp.QUINTIC
        code, row = _FIRST_BAD.run(times, P, V, A, kind)
        if code:
            _refuse(code, row, times)
        if _copy:       # the trajectory keeps its own arrays: nothing changes them under it
            times, P = times.copy(), P.copy()
            V = P if velocities is None else V.copy()
            A = P if accelerations is None else A.copy()
        self.times, self.positions, self.kind = times, P, kind
        self.velocities = None if velocities is None else V
        self.accelerations = None if accelerations is None else A
        self._args = (times, P, V, A, kind)
        self.n = P.shape[1]

    @property
    def interpolation(self):
        return ("linear", "cubic", "quintic")[self.kind]

    def sample(self, t, out=None):
        """(q, v, a) at time t: each of shape (n,) for one t, (len(t), n) for a 1-D array of
        times. out: (q, v, a) arrays to fill (one t: C-contiguous float64 of shape (n,))."""
        if type(t) is float or isinstance(t, (float, int, np.floating, np.integer)) and not isinstance(t, bool):
            t = float(t)
            if not math.isfinite(t):
                raise ValueError(f"t must be finite, got {t!r}")
            if out is None:
                q, v, a = np.empty(self.n), np.empty(self.n), np.empty(self.n)
            else:
                q, v, a = out
                if not (_plain(q, 1) and _plain(v, 1) and _plain(a, 1) and len(q) == len(v) == len(a) == self.n):
                    raise ValueError(f"out must be three writeable C-contiguous float64 arrays of shape ({self.n},)")
            times, P, V, A, kind = self._args
            _SAMPLE.run(times, P, V, A, kind, t, q, v, a)
            return (q, v, a) if out is None else out
        ts = np.asarray(t, dtype=float)
        if ts.ndim == 0:
            return self.sample(float(ts), out)
        if ts.ndim != 1:
            raise ValueError(f"t must be a number or a 1-D array of times, got shape {ts.shape}")
        bad = np.flatnonzero(~np.isfinite(ts))
        if len(bad):
            raise ValueError(f"t contains NaN or inf (t[{bad[0]}])")
        ts = np.ascontiguousarray(ts)
        if out is None:
            out = tuple(np.empty((len(ts), self.n)) for _ in range(3))
        elif not all(_plain(x, 2) and x.shape == (len(ts), self.n) for x in out):
            raise ValueError(f"out must be three writeable C-contiguous float64 arrays of shape ({len(ts)}, {self.n})")
        _interp.sample_rows(*self._args, ts, *out)
        return out


def _refuse(code, row, times):
    if code == _interp.BAD_TIMES:
        raise ValueError(f"times contains NaN or inf (times[{row}])")
    if code == _interp.NOT_INCREASING:
        raise ValueError(f"times must increase: times[{row}] = {float(times[row])!r} follows times[{row - 1}] = {float(times[row - 1])!r}")
    name = {_interp.BAD_POSITIONS: "positions", _interp.BAD_VELOCITIES: "velocities"}.get(code, "accelerations")
    raise ValueError(f"{name} contains NaN or inf (point {row})")


def sample_trajectory(times, positions, velocities=None, accelerations=None, t=None):
    """(q, v, a) at time(s) t of the joint trajectory given by its points (see Trajectory):
    interpolated as ros2_control's joint_trajectory_controller does with `spline` (linear,
    cubic or quintic by the fields present), holding the first point before it and the last
    at rest after it. t: a number (q, v, a of shape (n,)) or a 1-D array (each (len(t), n))."""
    if t is None:
        raise TypeError("sample_trajectory needs the time(s) t to sample at")
    if type(t) is float and _plain(times, 1) and _plain(positions, 2) and math.isfinite(t):
        # one time, arrays as the kernels take them (the node's case): checked and sampled in two calls
        V = positions if velocities is None else velocities
        A = positions if accelerations is None else accelerations
        n = positions.shape[1]
        if (velocities is None or _plain(V, 2) and V.shape == positions.shape) and n and \
                (accelerations is None or velocities is not None and _plain(A, 2) and A.shape == positions.shape) \
                and times.shape[0] == positions.shape[0] > 0:
            kind = _interp.LINEAR if velocities is None else _interp.CUBIC if accelerations is None else _interp.QUINTIC
            if not _FIRST_BAD.run(times, positions, V, A, kind)[0]:
                q, v, a = np.empty(n), np.empty(n), np.empty(n)
                _SAMPLE.run(times, positions, V, A, kind, t, q, v, a)
                return q, v, a
    return Trajectory(times, positions, velocities, accelerations, _copy=False).sample(t)


def path_through_waypoints(waypoints, gridpoints=100):
    """A C2 path through the waypoints (W, n), W >= 2: the natural cubic spline of each joint over
    the chord length s (s_0 = 0, s_k+1 = s_k + |q_k+1 - q_k|), sampled at `gridpoints` values of s
    that include every waypoint (each span gets gridpoints in proportion to its length).
    Returns (s, q, dq_ds, d2q_ds2) for time_parameterize."""
    W = np.asarray(waypoints, dtype=float)
    if W.ndim != 2 or W.shape[0] < 2 or not W.shape[1]:
        raise ValueError(f"waypoints must have shape (waypoints >= 2, joints), got shape {W.shape}")
    bad = np.flatnonzero(~np.isfinite(W).all(axis=1))
    if len(bad):
        raise ValueError(f"waypoints contains NaN or inf (waypoint {bad[0]})")
    m = W.shape[0]
    if not isinstance(gridpoints, (int, np.integer)) or isinstance(gridpoints, bool) or gridpoints < m:
        raise ValueError(f"gridpoints must be an integer >= the number of waypoints ({m}), got {gridpoints!r}")
    h = np.linalg.norm(np.diff(W, axis=0), axis=1)
    same = np.flatnonzero(~(h > 0.0))
    if len(same):
        raise ValueError(f"waypoints {same[0]} and {same[0] + 1} are the same: a path through them cannot move with s")
    knots = np.concatenate(([0.0], np.cumsum(h)))
    M = _natural_moments(h, W)
    # spans share gridpoints - 1 intervals by length (largest remainders), at least one each
    share = (gridpoints - m) * h / knots[-1]
    count = 1 + np.floor(share).astype(int)
    count[np.argsort(np.floor(share) - share, kind="stable")[:gridpoints - 1 - count.sum()]] += 1
    span = np.repeat(np.arange(m - 1), count)
    local = np.concatenate([np.arange(c) / c for c in count]) * h[span]
    s = np.append(knots[span] + local, knots[-1])
    span = np.append(span, m - 2)
    tau = np.append(local, h[-1])[:, None]
    hk, rest = h[span][:, None], (h[span][:, None] - tau)
    M0, M1, y0, y1 = M[span], M[span + 1], W[span], W[span + 1]
    q = (M0 * rest ** 3 + M1 * tau ** 3) / (6 * hk) + (y0 / hk - M0 * hk / 6) * rest + (y1 / hk - M1 * hk / 6) * tau
    dq = (-M0 * rest ** 2 + M1 * tau ** 2) / (2 * hk) + (y1 - y0) / hk - (M1 - M0) * hk / 6
    ddq = (M0 * rest + M1 * tau) / hk
    at_knot = np.append(local == 0.0, True)
    q[at_knot] = W        # exactly through the waypoints
    return s, q, dq, ddq


def _natural_moments(h, W):
    """The second derivatives M_k of the natural cubic spline through W at knots spaced h
    (M_0 = M_W-1 = 0): h_k-1 M_k-1 + 2 (h_k-1 + h_k) M_k + h_k M_k+1 = 6 (d_k - d_k-1), d_k the
    slopes; the tridiagonal system solved by the Thomas algorithm, all joints at once."""
    m = W.shape[0]
    M = np.zeros_like(W)
    if m < 3:
        return M
    d = np.diff(W, axis=0) / h[:, None]
    rhs = 6.0 * np.diff(d, axis=0)
    diag, upper = 2.0 * (h[:-1] + h[1:]), h[1:-1]
    c, r = np.empty(m - 2), np.empty_like(rhs)
    c[0], r[0] = (upper[0] / diag[0] if m > 3 else 0.0), rhs[0] / diag[0]
    for k in range(1, m - 2):
        pivot = diag[k] - h[k] * c[k - 1]
        c[k] = upper[k] / pivot if k < m - 3 else 0.0
        r[k] = (rhs[k] - h[k] * r[k - 1]) / pivot
    for k in range(m - 4, -1, -1):
        r[k] -= c[k] * r[k + 1]
    M[1:-1] = r
    return M


@dataclass
class TrajectoryCheck:
    """The torques a timed trajectory needs and how they compare with the effort limits: tau
    (N, nv) at its points, ratio |tau| / limit (0 where a joint has none), peak: the largest
    ratio per joint and peak_time: when; velocity_peak and acceleration_peak: the largest |v| / limit
    and |a| / limit per joint (zeros when those limits are not checked); feasible: no ratio of the
    three beyond 1 (+1e-9, rounding); first_violation_time / first_violation_joint /
    first_violation_index / first_violation_limit: the first point beyond a limit, its joint and
    limit ("effort", "velocity", "acceleration") with the largest ratio there (None when feasible)."""
    tau: np.ndarray
    ratio: np.ndarray
    peak: np.ndarray
    peak_time: np.ndarray
    feasible: bool
    first_violation_time: float = None
    first_violation_joint: str = None
    first_violation_index: int = None
    effort_limits: np.ndarray = field(default=None, repr=False)
    first_violation_limit: str = None
    velocity_peak: np.ndarray = field(default=None, repr=False)
    acceleration_peak: np.ndarray = field(default=None, repr=False)


def check_trajectory(model, times, q, v, a, effort_limits=None, threads=None, data=None, velocity_limits=None,
                     acceleration_limits=None):
    """The inverse dynamics of a timed trajectory at its points (times (N,), increasing; q, v, a
    (N, nq / nv)) against the effort limits (a number or one per joint, +inf for none; default
    the URDF's; or a dict by joint name), and v and a against velocity_limits and acceleration_limits
    (the same forms; default: not checked): a TrajectoryCheck."""
    threads = check_threads(threads)
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or not len(times):
        raise ValueError(f"times must be a 1-D array of at least one time, got shape {times.shape}")
    n = len(times)
    bad = np.flatnonzero(~np.isfinite(times))
    if len(bad):
        raise ValueError(f"times contains NaN or inf (times[{bad[0]}])")
    steps = np.flatnonzero(~(np.diff(times) > 0.0))
    if len(steps):
        k = steps[0] + 1
        raise ValueError(f"times must increase: times[{k}] = {float(times[k])!r} follows times[{k - 1}] = {float(times[k - 1])!r}")
    q, v, a = vector(q, model.nq, "q", n), vector(v, model.nv, "v", n), vector(a, model.nv, "a", n)
    limits = limit_vector(model, effort_limits, "effort_limits", model.effort_limits)
    vlim = limit_vector(model, velocity_limits, "velocity_limits", None)
    alim = limit_vector(model, acceleration_limits, "acceleration_limits", None)
    tau = inverse_dynamics(model, q, v, a, threads=threads, data=data)
    ratio = np.abs(tau) / limits
    peak_row = np.argmax(ratio, axis=0)
    peak = ratio[peak_row, np.arange(model.nv)]
    ratios = (ratio, np.abs(v) / vlim, np.abs(a) / alim)       # effort, velocity, acceleration
    over = np.flatnonzero(np.logical_or.reduce([(r > OVER).any(axis=1) for r in ratios]))
    check = TrajectoryCheck(tau, ratio, peak, times[peak_row], not len(over), effort_limits=limits,
                            velocity_peak=ratios[1].max(axis=0), acceleration_peak=ratios[2].max(axis=0))
    if len(over):
        k = int(over[0])
        which = int(np.argmax([r[k].max() for r in ratios]))
        check.first_violation_index, check.first_violation_time = k, float(times[k])
        check.first_violation_joint = coordinate_names(model)[int(np.argmax(ratios[which][k]))]
        check.first_violation_limit = ("effort", "velocity", "acceleration")[which]
    return check
