"""Joint trajectories in the node (no rclpy, plain Python on the messages' fields: tested without DDS):
the feedforward of ~/reference and the trajectory services. Here: a trajectory_msgs/JointTrajectory as
the library's `Trajectory` over the model's joints (Columns, Following), the schedule of ~/reference
with joint_trajectory_controller's semantics (Schedule), the feedforward.* parameters; services.py:
~/time_parameterize and ~/check_trajectory (request -> library -> response). The parts (part.py):
ReferenceFeedforward (~/reference -> ~/feedforward_torques, ~/feedforward_commands) and
TrajectoryServices.

A trajectory names its joints in any order; every joint the node outputs (parameter `joints`) must be
named. A model joint that is neither output nor named stays where it was measured (its neutral
position before any joint_states), at rest. Multi-coordinate joints (a floating or planar root) are
not part of a trajectory: the feedforward takes them as measured, at rest.
"""
import copy

import numpy as np

from ... import dynamics as rd
from ...control import EVALUATE_AT
from ..messages import MAGNITUDE, at_most, duplicates, magnitude_problem, quoted_list
from ..parameters import ParameterError, ParameterSpec, floats, non_negative, one_of, per_entry

NS = 1_000_000_000
#: the most points a trajectory message may have (~/reference, ~/check_trajectory; the waypoints of
#: ~/time_parameterize are bounded by its gridpoints)
MAX_POINTS = 10_000

PARAMETERS = {
    "feedforward.evaluate_at": ParameterSpec(
        "desired", "evaluate M, C, g at the 'desired' or the 'measured' state",
        f"one of {', '.join(EVALUATE_AT)}", one_of(*EVALUATE_AT)),
    "feedforward.kp": ParameterSpec(
        [0.0], "computed-torque position gain [1/s^2]: one value or one per `joints` entry",
        "one finite number >= 0 [1/s^2], or one per `joints` entry", lambda v: non_negative(floats(v))),
    "feedforward.kd": ParameterSpec(
        [0.0], "computed-torque velocity gain [1/s]: one value or one per `joints` entry",
        "one finite number >= 0 [1/s], or one per `joints` entry", lambda v: non_negative(floats(v))),
}


def settings(params, config):
    """The computed-torque gains kp, kd (per model v, zero on the multi-coordinate joints), feedback (any
    gain not zero: the feedforward needs the measured state) and evaluate_at; drive_compensates_gravity
    and feedforward_model, the model the feedforward and the efforts of timed trajectories are computed
    on: the model itself, or with drive_compensates_gravity a copy without gravity (M qdd + C qd in one
    inverse dynamics: tau - g(q), g taken where the computed torque is evaluated)."""
    model, gains = config.model, {}
    compensated = params["drive_compensates_gravity"]
    if compensated and (config.contacts is not None or config.loops is not None):
        raise ParameterError("drive_compensates_gravity", "parameter drive_compensates_gravity is for drives that "
                             "hold an arm's g(q) themselves: with contacts or loops the torques that hold the robot "
                             "are not g(q) (set it to false, or remove contacts.* / loops)")
    feedforward_model = model
    if compensated:
        feedforward_model = copy.deepcopy(model)
        feedforward_model.gravity = [0.0, 0.0, 0.0]
    for name in ("feedforward.kp", "feedforward.kd"):
        gains[name] = np.zeros(model.nv)
        gains[name][config.out_v] = per_entry(params[name], len(config.joints), name, "`joints` entry")
    kp, kd = gains["feedforward.kp"], gains["feedforward.kd"]
    return {"kp": kp, "kd": kd, "feedback": bool(kp.any() or kd.any()), "evaluate_at": params["feedforward.evaluate_at"],
            "drive_compensates_gravity": compensated, "feedforward_model": feedforward_model}


def parts():
    from .part import ReferenceFeedforward, TrajectoryServices
    return (ReferenceFeedforward, TrajectoryServices)


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
        unknown = [n for n in names if n not in model.joint_index]
        if unknown:
            raise ValueError(f"{what}.joint_names: unknown joints {quoted_list(unknown)}; the model's joints are "
                             f"{model.joint_names}")
        if len(set(names)) != len(names):
            raise ValueError(f"{what}.joint_names: duplicate joint names {duplicates(names)}")
        missing = [n for n in config.joints if n not in names and n in model.joint_index
                   and (optional is None or not optional[model.joint_index[n]])]
        if missing:
            raise ValueError(f"{what}.joint_names: missing joints {missing} (every joint the node outputs must be "
                             f"named: {config.joints})")
        self.names = names
        self.column = np.array([model.joint_index[n] for n in names], dtype=np.intp)
        self.count = len(model.joint_names)
        self.qo, self.vo = model.joint_offset

    def points(self, points, held_q, most=MAX_POINTS, magnitude=MAGNITUDE):
        """times (M,) from time_from_start and positions, velocities, accelerations (M, model joints)
        (velocities / accelerations None where no point has them); columns not named: held_q's
        position, at rest. At most `most` points, each number within `magnitude`. ValueError naming the
        point and the field."""
        what, n = self.what, len(self.names)
        if not len(points):
            raise ValueError(f"{what} has no points")
        at_most(len(points), most, f"{what}.points")
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
            bad = np.argwhere(~(np.abs(x) <= magnitude))
            if len(bad):
                k, j = bad[0]
                raise ValueError(f"{what}.points[{k}].{field} contains "
                                 f"{magnitude_problem(x[k, j], self.names[j], magnitude)}")
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
