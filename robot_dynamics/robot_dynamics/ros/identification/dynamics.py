"""Whole-robot identification in the node (no rclpy): the joint_states buffer, the requests of
~/excitation_trajectory and ~/identify_dynamics checked, the library's answers (rd.excitation_trajectory,
rd.identify_dynamics, robot_dynamics.bags) into the responses, and `Correction`, an applied estimate
as it composes with the node's configuration. The part is part.py's DynamicsIdentification.

The buffer (`Buffer`): every joint_states message that is a complete sample (external.EffortSample:
position, velocity and effort of every model joint, finite) is appended on the joint_states path under
the node's lock, a row of preallocated chunks (no copy, no allocation but one chunk every CHUNK
messages); chunks older than identification.buffer_seconds (by the stamps) are dropped, and so is all
of it when a stamp goes back (a restarted simulation or driver). A request takes the chunks' references
under the lock (`Snapshot`: the full chunks and the rows written of the last, no copy: rows once written
are never written again) and the heavy-request process copies its window out of them: the node's own
interpreter copies nothing (a 30 s window of panda at 1 kHz, 6 MB, took 2-11 ms there, back to back
with the identifications).

An applied estimate (`Correction`) is kept as the change it makes to the model the parameters build:
each body's ten inertial parameters and the armature identified minus the model's, the friction as
identified (the parameters set no friction). Every later configuration of the same robot (the same
URDF, root_link, tip_link and floating_base) gets it again (config.build_config): a gravity change keeps
it; a payload.* or armature change goes on under it (refused, with the reason, where the sum would not
be physical); a new URDF (robot_description, urdf_file, root_link, tip_link or floating_base) drops it,
said in the log, on /diagnostics and by an empty ~/robot_description_identified.
"""
import copy
import math
import os
from dataclasses import dataclass

import numpy as np

from ... import dynamics as rd
from ...physical_consistency import body_problems
from ...urdf_export import urdf_with_dynamics
from ..parameters import ParameterError

CHUNK = 1024                # rows per buffer chunk
MAX_VALUES = 8_000_000      # floats the buffer holds at most (64 MB): 5 min of 1 kHz joint_states of 7 joints
MAX_WINDOW = 600.0          # s, a request's window at most (the .srv)
MAX_BAG_MESSAGES = 2_000_000    # JointState messages a bag's topic may have (its metadata.yaml)
MIN_SAMPLES = 50            # a window with fewer samples is refused before the library is asked
MIN_STRETCH = 20            # samples: a shorter stretch between gaps (over 3 sample periods) is left out
# ~/excitation_trajectory's bounds (the .srv)
DURATION = (1.0, 300.0)     # s
HARMONICS = (2, 10)
MAX_TIME_BUDGET = 60.0      # s
RATE = (1.0, 1000.0)        # points per second
MAX_POINTS = 30_000
MAX_LEAD_IN = 60.0          # s


class Buffer:
    """The latest complete joint_states samples (see the module): `add` on the joint_states path (lock
    held), `take` a request's Snapshot (lock held)."""

    def __init__(self, model, seconds):
        self.nq, self.nv = model.nq, model.nv
        self.width = 1 + model.nq + 2 * model.nv
        self.seconds = float(seconds)
        self.max_chunks = max(2, MAX_VALUES // (CHUNK * self.width))
        self.clear()

    def clear(self):
        self.chunks, self.count = [], CHUNK     # count: rows written in the last chunk
        self.epoch = self.last = None            # ns: the first stamp (row times are after it), the last

    def add(self, stamp_ns, q, v, tau):
        last = self.last
        if last is not None and stamp_ns <= last:
            if stamp_ns == last:                 # the same state again
                return
            self.clear()                         # a stamp went back: another run
        if self.epoch is None:
            self.epoch = stamp_ns
        if self.count == CHUNK:
            self._next_chunk(stamp_ns)
        row = self.chunks[-1][self.count]
        row[0] = (stamp_ns - self.epoch) * 1e-9
        row[1:1 + self.nq] = q
        row[1 + self.nq:1 + self.nq + self.nv] = v
        row[1 + self.nq + self.nv:] = tau
        self.count += 1
        self.last = stamp_ns

    def _next_chunk(self, stamp_ns):
        """A fresh chunk; the oldest ones dropped while the rest spans the buffer's seconds, or past the cap."""
        oldest = (stamp_ns - self.epoch) * 1e-9 - self.seconds
        while self.chunks and (len(self.chunks) >= self.max_chunks or self.chunks[0][-1, 0] < oldest):
            self.chunks.pop(0)
        self.chunks.append(np.empty((CHUNK, self.width)))
        self.count = 0

    def take(self):
        """What a request reads (lock held): a Snapshot of the full chunks and the rows written of the last."""
        if not self.chunks:
            return Snapshot((), np.empty((0, self.width)), self.nq, self.nv, self.seconds)
        return Snapshot(tuple(self.chunks[:-1]), self.chunks[-1][:self.count], self.nq, self.nv, self.seconds)

    def span(self):
        """(samples, seconds) held."""
        if not self.chunks:
            return 0, 0.0
        rows = CHUNK * (len(self.chunks) - 1) + self.count
        return rows, float(self.chunks[-1][self.count - 1, 0] - self.chunks[0][0, 0])



@dataclass(frozen=True)
class Snapshot:
    """A request's view of the buffer (Buffer.take): `full` chunks and the `tail` rows of the last (views,
    no copy: pickled to the heavy-request process as they are), the model's nq and nv, buffer_seconds."""
    full: tuple
    tail: np.ndarray
    nq: int
    nv: int
    seconds: float

    @property
    def rows(self):
        return CHUNK * len(self.full) + len(self.tail)

    def window(self, seconds):
        """(t [s], q, v, tau) of the last `seconds` (0: all of it, within buffer_seconds): copies."""
        data = np.concatenate(self.full + (self.tail,)) if self.full else self.tail
        if not len(data):
            return self._split(data)
        span = self.seconds if seconds == 0 else min(seconds, self.seconds)
        return self._split(data[np.searchsorted(data[:, 0], data[-1, 0] - span):])

    def _split(self, data):
        nq, nv = self.nq, self.nv
        return (data[:, 0].copy(), np.ascontiguousarray(data[:, 1:1 + nq]),
                np.ascontiguousarray(data[:, 1 + nq:1 + nq + nv]), np.ascontiguousarray(data[:, 1 + nq + nv:]))


NOT_IDENTIFIABLE = ("model {name!r} has a floating or planar joint, or no joint: whole-robot identification takes a "
                    "fixed base and one-coordinate joints (a free base's equations need the contact forces)")


def identifiable(model):
    """A fixed base with one-coordinate joints (what identification and excitation take): the buffer is
    kept only then."""
    return bool(model.joint_names) and model.nv == len(model.joint_names)


# --- ~/excitation_trajectory -------------------------------------------------------------------------
def _within(value, low, high, name, unit=""):
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name} takes a number in [{low:g}, {high:g}]{unit}; got {value!r}")
    return float(value)


def excitation_arguments(request, model):
    """The request's fields (checked, defaults filled) -> (rd.excitation_trajectory's keyword
    arguments, rate, lead_in); ValueError naming the field."""
    duration = _within(request.duration, *DURATION, "duration", " s")
    harmonics = int(request.harmonics) or 5
    if not HARMONICS[0] <= harmonics <= HARMONICS[1]:
        raise ValueError(f"harmonics takes an integer in [{HARMONICS[0]}, {HARMONICS[1]}] (0: 5); got {harmonics}")
    scaling = request.limit_scaling or 1.0
    if not (math.isfinite(scaling) and 0.0 < scaling <= 1.0):
        raise ValueError(f"limit_scaling takes a number in (0, 1] (0: 1); got {request.limit_scaling!r}")
    budget = request.time_budget or 5.0
    if not (math.isfinite(budget) and 0.0 < budget <= MAX_TIME_BUDGET):
        raise ValueError(f"time_budget takes a number of seconds in (0, {MAX_TIME_BUDGET:g}] (0: 5); "
                         f"got {request.time_budget!r}")
    rate = _within(request.rate or 50.0, *RATE, "rate", " points per second (0: 50)")
    if duration * rate + 1 > MAX_POINTS:
        raise ValueError(f"duration x rate gives {math.floor(duration * rate) + 1} points, more than {MAX_POINTS}: "
                         "lower rate")
    lead_in = _within(request.lead_in, 0.0, MAX_LEAD_IN, "lead_in", " s")
    if not identifiable(model):
        raise ValueError(NOT_IDENTIFIABLE.format(name=model.name))
    for name, limits in (("velocity", model.velocity_limits), ("effort", model.effort_limits)):
        unset = [j for j, x in zip(model.joint_names, limits) if not x > 0]
        if unset:
            raise ValueError(f"the URDF gives joints {unset} no {name} limit (<limit {name}=...>): the excitation "
                             "is scaled within them")
    return dict(duration=duration, harmonics=harmonics, velocity_limits=scaling * model.velocity_limits,
                effort_limits=scaling * model.effort_limits, rng=int(request.seed), time_budget=budget), rate, lead_in


def excite(model, arguments, rate, lead_in):
    """~/excitation_trajectory's work (the node's heavy-request process): the search, and the message."""
    traj = rd.excitation_trajectory(model, **arguments)
    return traj, joint_trajectory(traj.to_joint_trajectory(rate, lead_in))


def fill_excitation(response, traj, message):
    """The excitation's numbers into the response (message: the JointTrajectory the part answers)."""
    response.condition_number = float(traj.condition_number)
    response.random_condition_number = float(np.median(traj.start_condition_numbers))
    response.evaluations = int(traj.evaluations)
    response.message = (f"{len(message.points)} points over {traj.duration:g} s ({traj.harmonics} harmonics), "
                        f"condition number {traj.condition_number:.4g} (random starts within the same limits: "
                        f"median {response.random_condition_number:.4g}; {traj.evaluations} trials)")


# --- ~/identify_dynamics ------------------------------------------------------------------------------
def identify_arguments(request):
    """(window [s], bag folder or '', topic); ValueError naming the field."""
    window = _within(request.window, 0.0, MAX_WINDOW, "window", " s (0: all buffered)")
    bag, topic = request.bag, request.topic or "/joint_states"
    if bag:
        if len(bag) > 4096 or not os.path.isdir(bag) or not os.path.isfile(os.path.join(bag, "metadata.yaml")):
            raise ValueError(f"bag: {bag[:200]!r} is not a rosbag2 folder on the node's machine (a folder with "
                             "metadata.yaml)")
        count = bag_messages(bag, topic)
        if count > MAX_BAG_MESSAGES:
            raise ValueError(f"bag: {count} messages on {topic!r}, more than {MAX_BAG_MESSAGES}: identify from a "
                             "shorter recording (robot-dynamics identify has no limit)")
    return window, bag, topic


def bag_messages(bag, topic):
    """The message count of `topic` in a rosbag2 folder's metadata.yaml (0 if it does not say)."""
    import yaml
    try:
        with open(os.path.join(bag, "metadata.yaml")) as f:
            info = yaml.safe_load(f)["rosbag2_bagfile_information"]
        return sum(int(t.get("message_count", 0)) for t in info.get("topics_with_message_count", [])
                   if t.get("topic_metadata", {}).get("name") == topic)
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bag: cannot read {os.path.join(bag, 'metadata.yaml')!r}: {exc}") from None


def read_bag(model, bag, topic):
    """(t, q, v, tau) of a bag's joint_states in model.joint_names order (a sample with the same or an
    earlier stamp left out)."""
    from ...bags import read_joint_states
    t, _, q, v, tau = read_joint_states(bag, topic, model.joint_names)
    later = np.r_[True, np.diff(t) > 0]
    return t[later], q[later], v[later], tau[later]


def stretches(t, minimum=MIN_STRETCH):
    """A mask of the samples in stretches of at least `minimum` between gaps (an interval over 3 times the
    median: where identify_dynamics filters each stretch on its own, and a lost message or two at 1 kHz
    would leave a stretch too short to differentiate)."""
    keep = np.ones(len(t), bool)
    if len(t) < 2:
        return keep
    dt = np.diff(t)
    cuts = np.r_[0, np.flatnonzero(dt > 3 * np.median(dt)) + 1, len(t)]
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi - lo < minimum:
            keep[lo:hi] = False
    return keep


def identify(model, t, q, v, tau, what):
    """rd.identify_dynamics on a window (what: where it came from, for the messages; the samples of
    stretches too short between gaps left out: `stretches`); ValueError saying why the window cannot
    identify the robot."""
    left_out = 0
    for _ in range(10):         # the median interval of what is kept may cut new gaps: again until none
        keep = stretches(t)
        if keep.all():
            break
        t, q, v, tau, left_out = t[keep], q[keep], v[keep], tau[keep], left_out + int((~keep).sum())
    if left_out:
        what = f"{what}, {left_out} samples in stretches of fewer than {MIN_STRETCH} between gaps left out"
    if len(t) < MIN_SAMPLES:
        raise ValueError(f"{what}: {len(t)} samples with positions, velocities and efforts of every model joint, "
                         f"fewer than {MIN_SAMPLES}: record longer")
    k = model.joint_offset[1]
    rest = 2 * model.coulomb_band
    moving = np.abs(v[:, k:]) >= rest
    if not moving.any():
        raise ValueError(f"{what}: the robot was at rest ({len(t)} samples over {t[-1] - t[0]:.3g} s, every |velocity| "
                         f"below {rest.max():.3g}): run an excitation (~/excitation_trajectory) while joint_states "
                         "are buffered")
    still = [j for j, m in zip(model.joint_names, moving.any(axis=0)) if not m]
    if still:
        raise ValueError(f"{what}: joints {still} did not move (|velocity| below {rest.max():.3g} throughout): their "
                         "friction and the inertias they carry cannot be identified; run an excitation "
                         "(~/excitation_trajectory)")
    try:
        return rd.identify_dynamics(model, q, v, tau, t=t, threads=1)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def identified(config, bag, topic, snapshot, window, what):
    """~/identify_dynamics' work (the node's heavy-request process): the samples (the last `window` s of
    the buffer's Snapshot, or the bag's), the estimate, its URDF: (est, seconds the samples span, what,
    URDF text)."""
    model = config.model
    t, q, v, tau = read_bag(model, bag, topic) if bag else snapshot.window(window)
    est = identify(model, t, q, v, tau, what)
    return est, float(t[-1] - t[0]), what, urdf_with_dynamics(config.nominal, est.model)


def fill_identification(response, est, urdf, duration, what):
    """The estimate into an IdentifyDynamics response (success and applied: the part's)."""
    names = list(est.model.joint_names)
    response.joint_names = names
    response.residual = [float(x) for x in est.residual]
    for term in ("viscous", "coulomb", "offset"):
        setattr(response, term, [float(est.friction[j][term]) for j in names])
    response.armature = [float(est.armature[j]) for j in names]
    response.condition_number = float(est.condition_number)
    response.physical = bool(est.physical)
    response.samples = int(est.samples)
    response.duration = float(duration)
    response.urdf = urdf
    response.message = (f"identified from {est.samples} samples over {response.duration:.3g} s of {what} "
                        f"({est.rows} equations): residual RMS per joint "
                        f"{[float(f'{x:.3g}') for x in est.residual]}, condition number {est.condition_number:.3g}, "
                        f"{'physically consistent' if est.physical else 'NOT physically consistent'}")


RESPONSE_NUMBERS = ("residual", "viscous", "coulomb", "offset", "armature", "condition_number", "duration")


def response_finite(response):
    return all(math.isfinite(x) for name in RESPONSE_NUMBERS for x in np.ravel(getattr(response, name)))


# --- an applied estimate -------------------------------------------------------------------------------
def robot_key(params, description):
    """What makes two configurations' models the same robot (an estimate of one is valid for the other)."""
    return (description, params["floating_base"], params["root_link"], params["tip_link"])


@dataclass
class Correction:
    """An applied estimate (see the module): key, robot_key of the configuration it was identified on;
    inertia (nb, 10) and armature (joints,) identified minus the parameters' model; friction (joints, 3)
    identified; at: the payload.* and armature parameters then (a refusal names those that changed);
    urdf: the identified URDF text; summary: what /diagnostics says of it."""
    key: tuple
    inertia: np.ndarray
    armature: np.ndarray
    friction: np.ndarray
    at: dict
    urdf: str
    summary: str

    @classmethod
    def of(cls, est, config, params, urdf, summary):
        """The correction of estimate `est`, identified on config.model, relative to config.nominal (the
        parameters' model: a correction already applied is replaced, not added to); urdf: its URDF text."""
        nominal = config.nominal
        return cls(robot_key(params, config.description), est.model.inertia - nominal.inertia,
                   est.model.armature - nominal.armature, est.model.friction,
                   {name: params[name] for name in WATCHED}, urdf, summary)

    def applied(self, model, params):
        """A copy of `model` (the parameters' model of the same robot) corrected; ParameterError naming
        the parameter whose change leaves a body or an armature non-physical."""
        out = copy.deepcopy(model)
        out.inertia[:] += self.inertia
        out.friction = self.friction
        armature = model.armature + self.armature
        changed = [name for name in WATCHED if params[name] != self.at[name]] or ["payload.mass"]
        problems = [f"joint {j!r}'s armature {a:.4g} kg m^2" for j, a in zip(model.joint_names, armature)
                    if a < -1e-12 * max(1.0, np.abs(armature).max())]
        out.armature = np.maximum(armature, 0.0)        # also _pack()s the inertias set above
        problems += [f"body {body!r}: {problem}" for body, problem in body_problems(out)]
        if problems:
            culprit = "armature" if any("armature" in p for p in problems) and "armature" in changed else changed[0]
            raise ParameterError(culprit, f"parameter {culprit}: with the identified model applied "
                                          f"(~/identify_dynamics) the model would not be physical: "
                                          f"{'; '.join(problems[:3])}")
        return out


#: the parameters an applied estimate composes with (a change goes on under it)
WATCHED = ("payload.mass", "payload.com", "payload.inertia", "payload.link", "armature")


def joint_trajectory(content):
    """ExcitationTrajectory.to_joint_trajectory's content -> a trajectory_msgs/JointTrajectory."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint      # message types: no rclpy
    msg = JointTrajectory(joint_names=content["joint_names"])
    points = []
    for p in content["points"]:
        point = JointTrajectoryPoint(positions=p["positions"], velocities=p["velocities"],
                                     accelerations=p["accelerations"])
        point.time_from_start.sec, point.time_from_start.nanosec = p["time_from_start"]["sec"], \
            p["time_from_start"]["nanosec"]
        points.append(point)
    msg.points = points
    return msg
