"""Optimal excitation for identification: a periodic trajectory per joint, a finite Fourier series
(Swevers, Ganseman, Tukel, De Schutter and Van Brussel, Optimal robot excitation and
identification, IEEE T-RA 1997),

    q_j(t) = c_j + sum_l a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t),   w = 2 pi / T,
    v_j(t) = sum_l a_jl cos(w l t) + b_jl sin(w l t),
    a_j(t) = sum_l w l (b_jl cos(w l t) - a_jl sin(w l t)),

whose coefficients minimise the condition number of the identification matrix (the base columns
of the inertial, friction and armature parameters, columns scaled to unit norm: the problem
dynamic_identification solves) over samples of one period. The series is periodic, so the end is
the start; at rest at both ends: v(0) = sum_l a_jl = 0 and a(0) = w sum_l l b_jl = 0 (the last
harmonic's two coefficients follow from the others). Limits hold at every sample: each joint's
series is scaled about its centre c_j to the tightest of its position range (URDF, less 2 % each
side), velocity and acceleration limits, then all joints together until the torques (inverse
dynamics plus the model's friction) are within the effort limits. Self-collision is not checked.

The search: `starts` random coefficient sets (normal, about the middle of each range), the best
refined by Powell's derivative-free method (Powell, An efficient method for finding the minimum of
a function of several variables without calculating derivatives, Computer Journal 1964; scipy's)
on the log of the condition number, which limit scaling makes non-smooth in the coefficients, the
centre free as well, restarted while it improves, until `time_budget` seconds or `evaluations`
trials. On 400 trials (about 4 s on this 2-core VM: 10 ms a trial for a 7-joint arm, 10 s periods,
4 harmonics) the condition number fell from the median over random starts within the same limits
of 34 to 7 on the PUMA, 18 to 8 on panda, 14 to 6 on a UR5 (whose wide ranges make random motion
rich already).
"""
import time
from dataclasses import dataclass

import numpy as np

from .dynamic_identification import identification_base, identification_regressor
from .friction import friction_torques
from .model import FRICTION_TERMS
from .rigid_body import inverse_dynamics

__all__ = ["ExcitationTrajectory", "excitation_trajectory"]   # the facade's names; the rest serve sibling modules and tests

#: each side of a joint's position range kept free (fraction of the range)
POSITION_MARGIN = 0.02
#: samples per period at which the limits are checked (and at least 400 per highest harmonic: between
#: them a harmonic series exceeds its sampled peak by at most (2 pi / 400)^2 / 8 = 3e-5 of it, and
#: the limits are met with 1e-4 to spare)
CHECK_SAMPLES, SPARE = 2000, 1e-4


@dataclass
class ExcitationTrajectory:
    """A periodic excitation trajectory (see the module): joint_names (the model's), duration T
    [s] (one period), center c (joints,), coefficients a and b (joints, harmonics) of the
    velocity [rad/s or m/s]; condition_number: of the identification matrix over `samples`
    samples; start_condition_numbers: of the random starts, scaled to the same limits (centred);
    evaluations: the trial trajectories the search tried."""
    joint_names: list
    duration: float
    center: np.ndarray
    a: np.ndarray
    b: np.ndarray
    condition_number: float = float("nan")
    start_condition_numbers: tuple = ()
    samples: int = 0
    evaluations: int = 0

    @property
    def harmonics(self):
        return self.a.shape[1]

    def sample(self, t):
        """(q, v, a) at times t [s] (a number: 1-D arrays; an array of N times: (N, joints))."""
        t = np.asarray(t, float)
        wl = 2 * np.pi / self.duration * np.arange(1, self.harmonics + 1)
        s, c = np.sin(t[..., None] * wl), np.cos(t[..., None] * wl)        # (..., harmonics)
        q = self.center + (s / wl) @ self.a.T - (c / wl) @ self.b.T
        return q, c @ self.a.T + s @ self.b.T, (c * wl) @ self.b.T - (s * wl) @ self.a.T

    def to_joint_trajectory(self, rate=50.0, lead_in=0.0):
        """The content of a trajectory_msgs/JointTrajectory (plain dicts and lists; no ROS import):
        joint_names and one point per 1/rate s over the period, end included, each with
        positions, velocities, accelerations and time_from_start {sec, nanosec}, the first at
        `lead_in` s (a joint_trajectory_controller moves from where the arm is to the first point
        over that time; the trajectory starts and ends at rest). yaml.safe_dump of it is what
        `ros2 topic pub <controller>/joint_trajectory trajectory_msgs/msg/JointTrajectory` takes."""
        if not (np.isfinite(rate) and rate > 0 and np.isfinite(lead_in) and lead_in >= 0):
            raise ValueError(f"rate must be positive and lead_in non-negative, got {rate!r}, {lead_in!r}")
        n = max(int(round(self.duration * rate)), 1)
        t = np.linspace(0.0, self.duration, n + 1)
        q, v, a = self.sample(t)
        v[[0, -1]] = a[[0, -1]] = 0.0                   # at rest, not 1e-16
        points = []
        for k, tk in enumerate(t + lead_in):
            ns = int(round(tk * 1e9))
            points.append({"positions": q[k].tolist(), "velocities": v[k].tolist(), "accelerations": a[k].tolist(),
                           "time_from_start": {"sec": ns // 10**9, "nanosec": ns % 10**9}})
        return {"joint_names": list(self.joint_names), "points": points}


def excitation_trajectory(model, duration, harmonics=5, velocity_limits=None, acceleration_limits=None,
                          effort_limits=None, rng=0, center=None, time_budget=10.0, starts=8,
                          evaluations=None, friction=FRICTION_TERMS, armature=True):
    """An optimal excitation trajectory of one period `duration` [s] (ExcitationTrajectory; see
    the module). Limits per joint, one value or one per joint: velocity_limits [rad/s or m/s]
    and effort_limits (default the URDF's), acceleration_limits (default none); positions stay in
    the URDF range. center: the pose the series oscillates about (default the middle of each
    range, 0 for an unbounded joint). rng: a seed or numpy Generator. Runs for about
    `time_budget` seconds (default 10; at least the `starts` random starts), or until
    `evaluations` trial trajectories after the starts (the same result on any machine and load:
    with rng, deterministic; ~5 ms each for a 6-joint arm on this 2-core VM). friction, armature:
    the identification's columns (dynamic_identification). ValueError for bad arguments, a
    joint whose amplitude nothing bounds, or a centre pose whose gravity torques exceed the
    effort limits."""
    if not (np.isfinite(duration) and duration > 0) or int(harmonics) != harmonics or harmonics < 2:
        raise ValueError(f"duration must be positive and harmonics an integer >= 2 (the last harmonic keeps the "
                         f"ends at rest), got {duration!r}, {harmonics!r}")
    if not time_budget >= 0 or int(starts) != starts or starts < 1 or (evaluations is not None and evaluations < 0):
        raise ValueError(f"time_budget must be >= 0 s, starts an integer >= 1 and evaluations >= 0, got "
                         f"{time_budget!r}, {starts!r}, {evaluations!r}")
    clock = time.monotonic()
    rng = np.random.default_rng(rng)
    limits = _limits(model, velocity_limits, acceleration_limits, effort_limits, center)
    base = identification_base(model, tuple(friction), armature)
    nj, L = len(model.joint_names), int(harmonics)
    m = max(20 * L, -(-3 * len(base.columns) // nj))      # rows enough for a clear condition number
    fit = np.linspace(0.0, duration, m, endpoint=False)

    free = 2 * L - 2 + (center is None)                # the last column moves the centre (fourier_trajectory)
    search = _Search(lambda x: condition_number(model, fourier_trajectory(model, duration, x.reshape(nj, free), limits,
                                                                          fit), base, fit, friction, armature),
                     clock + time_budget, np.inf if evaluations is None else int(evaluations) + int(starts))
    starts_x = [np.c_[rng.normal(size=(nj, 2 * L - 2)), np.zeros((nj, free - 2 * L + 2))] for _ in range(int(starts))]
    tried = [search(x.ravel()) for x in starts_x]       # the random starts: centred, every one evaluated
    search.floor = len(tried)
    x = starts_x[int(np.argmin(tried))].ravel()
    from scipy.optimize import minimize
    try:
        while True:                                    # Powell's search, restarted (fresh directions) until the budget
            before = search.best[0]
            minimize(lambda y: min(np.log(search(y)), 100.0), search.best[1], method="Powell",   # inf: no motion
                     options={"xtol": 1e-2, "ftol": 1e-4})
            if not search.best[0] < before * (1 - 1e-3):
                break
    except _Spent:
        pass
    x = search.best[1].reshape(nj, free)
    dense = np.linspace(0.0, duration, max(CHECK_SAMPLES, 400 * L) + 1)
    traj = fourier_trajectory(model, duration, x, limits, dense)
    traj.condition_number = condition_number(model, traj, base, fit, friction, armature)
    traj.start_condition_numbers, traj.samples, traj.evaluations = tuple(tried), m, search.count
    return traj


class _Spent(Exception):
    """The search's budget is spent."""


class _Search:
    """The objective with the best point so far, raising _Spent past the deadline or the count
    (the random starts are always evaluated: `floor`)."""

    def __init__(self, f, deadline, limit):
        self.f, self.deadline, self.limit, self.count, self.floor = f, deadline, limit, 0, np.inf
        self.best = (np.inf, None)

    def __call__(self, x):
        if self.count >= self.floor and (self.count >= self.limit or time.monotonic() > self.deadline):
            raise _Spent
        self.count += 1
        value = self.f(x)
        if value < self.best[0]:
            self.best = (value, np.array(x, float))
        return value


def fourier_trajectory(model, duration, x, limits, t):
    """The trajectory of free coefficients x (joints, 2 (harmonics - 1) [+ 1]: a then b without
    the last harmonic's [then the centre's position: within the range lo + (hi - lo) (1/2 + 0.45
    tanh x), about the given centre c + pi tanh x for an unbounded joint]) scaled within `limits`
    (excitation._limits) at the times t."""
    nj = len(model.joint_names)
    x = np.asarray(x, float).reshape(nj, -1)
    L = x.shape[1] // 2 + 1
    ls = np.arange(1, L + 1)
    a = np.concatenate((x[:, :L - 1], -x[:, :L - 1].sum(axis=1, keepdims=True)), axis=1)
    b = np.concatenate((x[:, L - 1:2 * L - 2], -(x[:, L - 1:2 * L - 2] @ ls[:-1] / L)[:, None]), axis=1)
    unit = ExcitationTrajectory(list(model.joint_names), float(duration), np.zeros(nj), a, b)
    h, hv, ha = unit.sample(t)
    lo, hi, vmax, amax, emax, c = limits
    if x.shape[1] % 2:
        s = np.tanh(x[:, -1])
        with np.errstate(invalid="ignore"):
            c = np.where(np.isfinite(hi - lo), lo + (hi - lo) * (0.5 + 0.45 * s), c + np.pi * s)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.nanmin([(hi - c) / h.max(axis=0), (c - lo) / -h.min(axis=0), vmax / np.abs(hv).max(axis=0),
                           amax / np.abs(ha).max(axis=0)], axis=0)
    gamma = np.where(np.isfinite(gamma) & (gamma > 0), gamma, 0.0) * (1 - SPARE)
    def within_effort(kappa):
        k = kappa * gamma
        tau = inverse_dynamics(model, c + k * h, k * hv, k * ha) + friction_torques(model, k * hv)
        return np.all(np.abs(tau) <= emax * (1 - SPARE))
    kappa = 1.0
    if not within_effort(1.0):                         # all joints together: the largest kappa within effort
        low, high = 0.0, 1.0                           # at kappa = 0 (still at the centre) it holds (_limits)
        for _ in range(12):
            low, high = ((low + high) / 2, high) if within_effort((low + high) / 2) else (low, (low + high) / 2)
        kappa = low
    unit.center, unit.a, unit.b = c.copy(), a * (kappa * gamma)[:, None], b * (kappa * gamma)[:, None]
    return unit


def condition_number(model, traj, base, t, friction=FRICTION_TERMS, armature=True):
    """Condition number of the base identification matrix along traj at times t, its columns
    scaled to unit norm (inf when a column is zero)."""
    q, v, a = traj.sample(t)
    W = identification_regressor(model, q, v, a, tuple(friction), armature)[..., base.columns]
    W = W.reshape(-1, W.shape[-1])
    norms = np.linalg.norm(W, axis=0)
    if not np.all(norms > 0):
        return float("inf")
    s = np.linalg.svd(W / norms, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _limits(model, velocity, acceleration, effort, center):
    """(lower, upper, velocity, acceleration, effort, centre) per joint, checked."""
    if model.nv != len(model.joint_names) or not model.joint_names:
        raise ValueError("excitation_trajectory needs a fixed-base model with joints, none of them planar or floating")
    nj = len(model.joint_names)

    def per_joint(x, default, name):
        x = np.broadcast_to(np.asarray(default if x is None else x, float).reshape(-1), (nj,)) \
            if np.size(default if x is None else x) in (1, nj) else None
        if x is None or np.any(np.isnan(x)) or np.any(x <= 0):
            raise ValueError(f"{name} takes one positive value or one per joint ({nj}), got {x!r}")
        return x.copy()
    vmax = per_joint(velocity, model.velocity_limits, "velocity_limits")
    amax = per_joint(acceleration, np.inf, "acceleration_limits")
    emax = per_joint(effort, model.effort_limits, "effort_limits")
    lo, hi = model.lower_limits.copy(), model.upper_limits.copy()
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo[bounded], hi[bounded] = lo[bounded] + POSITION_MARGIN * (hi - lo)[bounded], \
        hi[bounded] - POSITION_MARGIN * (hi - lo)[bounded]
    middle = (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0)) / 2        # 0 for an unbounded joint
    c = middle if center is None else np.asarray(center, float).reshape(-1)
    if c.shape != (nj,) or not np.all(np.isfinite(c)) or np.any(c <= lo) or np.any(c >= hi):
        raise ValueError(f"center must be {nj} positions strictly inside the joints' ranges (less "
                         f"{POSITION_MARGIN:.0%} each side), got {center!r}")
    free = ~(bounded | np.isfinite(vmax) | np.isfinite(amax))
    if np.any(free):
        raise ValueError(f"nothing bounds the motion of joints {[model.joint_names[j] for j in np.flatnonzero(free)]}"
                         " (no position range, velocity or acceleration limit): give velocity_limits")
    g = np.abs(inverse_dynamics(model, c, np.zeros(nj), np.zeros(nj)) + friction_torques(model, np.zeros(nj)))
    if np.any(g > emax):
        j = int(np.argmax(g / emax))
        raise ValueError(f"at the centre pose joint {model.joint_names[j]!r} needs {g[j]:.4g} to hold still, more "
                         f"than its effort limit {emax[j]:.4g}: give another center or effort_limits")
    return lo, hi, vmax, amax, emax, c
