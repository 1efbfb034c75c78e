"""Joint trajectories in the node (no rclpy, plain Python on the messages' fields: tested without DDS):
a trajectory_msgs/JointTrajectory as the library's `Trajectory` over the model's joints (Columns,
Following), the schedule of ~/reference with joint_trajectory_controller's semantics (Schedule), and
the services ~/time_parameterize and ~/check_trajectory (request -> library -> response).

A trajectory names its joints in any order; every joint the node outputs (parameter `joints`) must be
named. A model joint that is neither output nor named stays where it was measured (its neutral
position before any joint_states), at rest. Multi-coordinate joints (a floating or planar root) are
not part of a trajectory: the feedforward takes them as measured, at rest.
"""
import array
import math

import numpy as np

from .. import dynamics as rd

NS = 1_000_000_000
#: gridpoints of ~/time_parameterize's answer when the request gives 0
GRIDPOINTS = 100
#: the most samples ~/check_trajectory takes along the interpolation (sample_period too short: refused)
MAX_SAMPLES = 200_000


def stamp_ns(stamp):
    """builtin_interfaces/Time -> integer nanoseconds."""
    return stamp.sec * NS + stamp.nanosec


def seconds(duration):
    """builtin_interfaces/Duration -> float seconds."""
    return duration.sec + duration.nanosec * 1e-9


def set_duration(msg, t):
    """Fill a builtin_interfaces/Duration with t seconds (>= 0), to the nanosecond."""
    ns = round(t * NS)
    msg.sec, msg.nanosec = divmod(ns, NS)


class Following:
    """One trajectory as the node follows it: its start [ns], the Trajectory over the model's joints
    (model.joint_names columns) and the reference arrays (q_d, v_d, a_d over the model's coordinates)
    it is sampled into; multi-coordinate joints' entries are the caller's (neutral, at rest)."""

    def __init__(self, model, start, times, positions, velocities, accelerations, points):
        self.start, self.points = int(start), points
        self.trajectory = rd.Trajectory(times, positions, velocities, accelerations)
        self.interpolation = self.trajectory.interpolation
        self.duration = float(times[-1])
        qo, vo = model.joint_offset
        self.reference = (rd.neutral(model), np.zeros(model.nv), np.zeros(model.nv))
        q_d, v_d, a_d = self.reference
        self.tail = (q_d[qo:], v_d[vo:], a_d[vo:])      # C-contiguous views: Trajectory.sample's out

    @property
    def end(self):
        """ns of the last point."""
        return self.start + round(self.duration * NS)

    def sample(self, ns):
        """The reference (q_d, v_d, a_d) at time ns (integer nanoseconds, the node's clock): the
        trajectory at ns - start, as joint_trajectory_controller samples it (one compiled call)."""
        self.trajectory.sample((ns - self.start) * 1e-9, self.tail)
        return self.reference


class Schedule:
    """What ~/reference serves when, with joint_trajectory_controller's semantics: a trajectory that
    arrives while none serves serves at once (before its start: its first point, at rest); one that
    arrives while another serves replaces it from its start time on (the old one serves the times
    before; pending ones that would start later are dropped); an empty trajectory cancels all.
    Times are the stamps of the messages answered, integer nanoseconds."""

    def __init__(self):
        self.clear()

    def clear(self):
        self.following, self.pending, self.cancelled, self.last = None, [], False, None

    def take(self, following):
        """A new trajectory (a Following)."""
        if self.following is None:
            self.following, self.pending = following, []
        else:
            self.pending = [f for f in self.pending if f.start < following.start] + [following]
            if self.last is not None:
                self._promote(self.last)
        self.cancelled = False

    def cancel(self):
        """An empty trajectory: every trajectory dropped. True if it was not cancelled already."""
        was = self.cancelled
        self.following, self.pending, self.cancelled = None, [], True
        return not was

    def at(self, ns):
        """The Following that serves a message stamped ns (None: none, cancelled or not)."""
        if self.pending and ns >= self.pending[0].start:
            self._promote(ns)
        self.last = ns
        return self.following

    def _promote(self, ns):
        while self.pending and ns >= self.pending[0].start:
            self.following = self.pending.pop(0)

    @property
    def done(self):
        """The last message answered came after the serving trajectory's last point."""
        return self.following is not None and self.last is not None and self.last > self.following.end


class Columns:
    """A trajectory's joint_names -> the model's joints (model.joint_names order: the columns of the
    library's Trajectory, the tail q[joint_offset[0]:] and v[joint_offset[1]:] of a state). `what`
    names the message in errors ("reference", "waypoints", "trajectory"); optional: a mask over the
    model's joints that may be left out although the node outputs them (a closed chain's loop joints
    that joint_states does not carry: completed from the loops)."""

    def __init__(self, config, names, what, optional=None):
        model = config.model
        names = list(names)
        self.what = what
        if not names:
            raise ValueError(f"{what}.joint_names is empty: name the joints (at least {config.joints})")
        if len(set(names)) != len(names):
            raise ValueError(f"{what}.joint_names: duplicate joint names {sorted({n for n in names if names.count(n) > 1})}")
        unknown = [n for n in names if n not in model.joint_index]
        if unknown:
            raise ValueError(f"{what}.joint_names: unknown joints {unknown}; the model's joints are {model.joint_names}")
        missing = [n for n in config.joints if n not in names and n in model.joint_index
                   and (optional is None or not optional[model.joint_index[n]])]
        if missing:
            raise ValueError(f"{what}.joint_names: missing joints {missing} (every joint the node outputs must be "
                             f"named: {config.joints})")
        self.names = names
        self.column = np.array([model.joint_index[n] for n in names], dtype=np.intp)
        self.count = len(model.joint_names)
        self.qo, self.vo = model.joint_offset

    def points(self, points, held_q):
        """times (M,) from time_from_start and positions, velocities, accelerations (M, model joints)
        (velocities / accelerations None where no point has them); columns not named: held_q's
        position, at rest. ValueError naming the point and the field."""
        what, n = self.what, len(self.names)
        if not len(points):
            raise ValueError(f"{what} has no points")
        times = np.array([seconds(p.time_from_start) for p in points])
        fields = {}
        for field in ("positions", "velocities", "accelerations"):
            sizes = np.array([len(getattr(p, field)) for p in points])
            if field != "positions" and not sizes.any():
                fields[field] = None
                continue
            bad = np.flatnonzero(sizes != n)
            if len(bad):
                k = int(bad[0])
                given = "every point" if field == "positions" else "every point or none"
                raise ValueError(f"{what}.points[{k}].{field} has {sizes[k]} values for {n} joint_names ({field}: "
                                 f"{given})")
            x = np.array([getattr(p, field) for p in points], dtype=float)
            bad = np.argwhere(~np.isfinite(x))
            if len(bad):
                k, j = bad[0]
                raise ValueError(f"{what}.points[{k}].{field} contains NaN or inf (joint {self.names[j]!r})")
            full = np.zeros((len(points), self.count))
            if field == "positions":
                full[:] = held_q[self.qo:]
            full[:, self.column] = x
            fields[field] = full
        if fields["accelerations"] is not None and fields["velocities"] is None:
            raise ValueError(f"{what}: the points have accelerations but no velocities (joint_trajectory_controller's "
                             "quintic segments need both)")
        if times[0] < 0.0:
            raise ValueError(f"{what}.points[0].time_from_start is negative ({times[0]:g} s)")
        steps = np.flatnonzero(~(np.diff(times) > 0.0))
        if len(steps):
            k = int(steps[0]) + 1
            raise ValueError(f"{what}.points[{k}].time_from_start ({times[k]:.9g} s) must come after points[{k - 1}]'s "
                             f"({times[k - 1]:.9g} s)")
        return times, fields["positions"], fields["velocities"], fields["accelerations"]

    def limits(self, config, values, name, urdf, scaling=1.0):
        """A limit per velocity coordinate: the request's per-joint values (empty: the URDF's for the
        model joints, none for multi-coordinate ones) times scaling; .inf: none. ValueError naming
        the request field, or the joint whose URDF limit is missing."""
        model = config.model
        out = np.full(model.nv, np.inf)
        given = np.asarray(values, dtype=float)
        if len(given) and len(given) != len(self.names):
            raise ValueError(f"{name} has {len(given)} values for {len(self.names)} joint_names (one per joint, or none)")
        if urdf is not None:
            out[self.vo:] = urdf
        if len(given):
            bad = np.flatnonzero(~(given > 0.0))
            if len(bad):
                k = int(bad[0])
                raise ValueError(f"{name}[{k}] (joint {self.names[k]!r}) must be positive or .inf (none), got {given[k]!r}")
            out[self.vo + self.column] = given
        bad = np.flatnonzero(~(out > 0.0))
        if len(bad):
            joint = model.joint_names[int(bad[0]) - self.vo]
            raise ValueError(f"the URDF gives joint {joint!r} no {name.split('_')[0]} limit (0): give {name}")
        return out * scaling

    def out(self, x):
        """Model-joint columns (k, model joints) or a model-order vector tail -> the request's order."""
        return x[..., self.column]


def scaling(value, name):
    """A scaling factor: (0, 1], 0 meaning 1 (not given)."""
    x = float(value)
    if x == 0.0:
        return 1.0
    if not 0.0 < x <= 1.0:
        raise ValueError(f"{name} must be in (0, 1] (0: 1, not given), got {value!r}")
    return x


def _points(msg, times, *fields):
    """msg.points = one JointTrajectoryPoint per time, the fields (positions, velocities, accelerations,
    effort: (M, n) arrays or None) filled."""
    from trajectory_msgs.msg import JointTrajectoryPoint      # a message type: no rclpy
    names = ("positions", "velocities", "accelerations", "effort")
    points = []
    for k, t in enumerate(times):
        point = JointTrajectoryPoint()
        set_duration(point.time_from_start, float(t))
        for name, x in zip(names, fields):
            if x is not None:
                setattr(point, name, array.array("d", x[k].tobytes()))
        points.append(point)
    msg.points = points


def time_parameterize(config, model, held_q, req, res, data=None):
    """~/time_parameterize: waypoints -> the time-optimal trajectory (TOPP-RA, interpolation scheme) of
    the path through them. data: the caller's buffers (rd.Data of the model), None: the thread's."""
    waypoints = req.waypoints
    cols = Columns(config, waypoints.joint_names, "waypoints")
    W = _waypoints(cols, waypoints, held_q)
    gridpoints = int(req.gridpoints) or GRIDPOINTS
    if gridpoints < len(W):
        raise ValueError(f"gridpoints ({gridpoints}) must be at least the number of waypoints ({len(W)})")
    velocity = cols.limits(config, req.velocity_limits, "velocity_limits", model.velocity_limits,
                           scaling(req.velocity_scaling, "velocity_scaling"))
    acceleration = cols.limits(config, req.acceleration_limits, "acceleration_limits", None,
                               scaling(req.acceleration_scaling, "acceleration_scaling"))
    effort = cols.limits(config, req.effort_limits, "effort_limits", model.effort_limits,
                         scaling(req.effort_scaling, "effort_scaling"))
    s, q, dq, ddq = rd.path_through_waypoints(W, gridpoints)
    tp = rd.time_parameterize(model, s, q, dq, ddq, velocity_limits=velocity, acceleration_limits=acceleration,
                              effort_limits=effort, discretization="interpolation", data=data)
    a, tau = point_accelerations(model, tp, dq, ddq, data)
    for x, name in ((tp.v, "velocities"), (a, "accelerations"), (tau, "efforts")):
        if not np.isfinite(x).all():
            raise ValueError(f"the {name} computed are not finite (the request's values are too large)")
    res.trajectory.joint_names = cols.names
    _points(res.trajectory, tp.t, cols.out(tp.q), cols.out(tp.v), cols.out(a), cols.out(tau))
    res.duration = float(tp.duration)
    res.active_limits = tp.limits
    return tp


def point_accelerations(model, tp, dq, ddq, data=None):
    """The accelerations and torques a trajectory point carries: the profile's path acceleration is
    constant on each segment (sdd_i, s_i to s_i+1) and jumps at the gridpoints, so gridpoint i gets the
    mean of sdd_i-1 and sdd_i (the first sdd_0, the last the mean of sdd_N-1 and sdd_end): qdd = q' sdd
    + q'' sd^2, and its torques, the mean of the torques on either side, both within the limits with
    the interpolation scheme. A quintic segment between points (joint_trajectory_controller with
    accelerations) must pass a jump within one segment and overshoots it; with the mean, by half as
    much as with either side's value (the demo's path: 12 % above the limits instead of 16 %)."""
    right = np.append(tp.sdd, tp.sdd_end)
    left = np.concatenate((tp.sdd[:1], tp.sdd))
    a = dq * (0.5 * (left + right))[:, None] + ddq * (tp.sd ** 2)[:, None]
    return a, rd.inverse_dynamics(model, tp.q, tp.v, a, data=data)


def _waypoints(cols, waypoints, held_q):
    """The waypoints' positions (W, model joints): timing and the other fields ignored."""
    points = waypoints.points
    if len(points) < 2:
        raise ValueError(f"waypoints has {len(points)} points: give at least 2")
    n = len(cols.names)
    for k, p in enumerate(points):
        if len(p.positions) != n:
            raise ValueError(f"waypoints.points[{k}].positions has {len(p.positions)} values for {n} joint_names")
    x = np.array([p.positions for p in points], dtype=float)
    bad = np.argwhere(~np.isfinite(x))
    if len(bad):
        k, j = bad[0]
        raise ValueError(f"waypoints.points[{k}].positions contains NaN or inf (joint {cols.names[j]!r})")
    W = np.empty((len(points), cols.count))
    W[:] = held_q[cols.qo:]
    W[:, cols.column] = x
    same = np.flatnonzero(~np.any(np.diff(W, axis=0) != 0.0, axis=1))
    if len(same):
        k = int(same[0])
        raise ValueError(f"waypoints.points[{k}] and [{k + 1}] are the same: the path cannot pass from one to the other")
    return W


def check_trajectory(config, model, held_q, req, res, data=None):
    """~/check_trajectory: the torques a timed trajectory needs at its points (and every sample_period
    along its interpolation) against the effort limits. data: as time_parameterize's."""
    cols = Columns(config, req.trajectory.joint_names, "trajectory")
    times, P, V, A = cols.points(req.trajectory.points, held_q)
    period = float(req.sample_period)
    if not (period >= 0.0 and math.isfinite(period)):
        raise ValueError(f"sample_period must be a finite number >= 0 (0: at the points only), got {req.sample_period!r}")
    effort = cols.limits(config, req.effort_limits, "effort_limits", model.effort_limits)
    ts = times
    if period > 0.0:
        count = math.floor((times[-1] - times[0]) / period) + 1
        if count + len(times) > MAX_SAMPLES:
            raise ValueError(f"sample_period {period:g} s gives {count} samples over {times[-1] - times[0]:g} s, more "
                             f"than {MAX_SAMPLES}: take a longer period")
        ts = np.union1d(times, times[0] + period * np.arange(count))
        ts = ts[ts <= times[-1]]
    q_cols, v_cols, a_cols = rd.Trajectory(times, P, V, A).sample(ts)
    qo, vo = cols.qo, cols.vo
    Q = np.empty((len(ts), model.nq))
    Q[:, :qo], Q[:, qo:] = held_q[:qo], q_cols
    Vf, Af = np.zeros((len(ts), model.nv)), np.zeros((len(ts), model.nv))
    Vf[:, vo:], Af[:, vo:] = v_cols, a_cols
    check = rd.check_trajectory(model, ts, Q, Vf, Af, effort_limits=effort, data=data)
    if not np.isfinite(check.tau).all():
        raise ValueError("the efforts computed are not finite (the request's values are too large)")
    at_points = np.searchsorted(ts, times)
    tau = cols.out(check.tau[at_points, vo:])
    res.trajectory.header = req.trajectory.header
    res.trajectory.joint_names = cols.names
    _points(res.trajectory, times, *(None if x is None else cols.out(x) for x in (P, V, A)), tau)
    res.peak_ratio = array.array("d", cols.out(check.peak[vo:]).tobytes())
    res.peak_time = array.array("d", cols.out(check.peak_time[vo:]).tobytes())
    res.feasible = bool(check.feasible)
    res.first_violation_time = -1.0 if check.feasible else check.first_violation_time
    res.first_violation_joint = "" if check.feasible else check.first_violation_joint
    return check
