"""joint_states and ~/base_pose (no rclpy): the robot's measured state in model coordinates. joint_states
messages may be partial (an arm driver and a gripper driver) and are merged; a floating or planar root
takes its coordinates from ~/base_pose; multi-coordinate joints below the root stay at their neutral
configuration (`unmeasured_notice` says so). The part (part.py: JointStatesInput) takes each message on
a bare helper node and runs every answering part's on_state; its status "dynamics" reports rate,
latency, missing and stale input (parameter joint_states_timeout)."""
import math

import numpy as np

from ... import dynamics as rd
from ..messages import root_coordinates
from ..parameters import ParameterSpec, in_range

PARAMETERS = {
    "joint_states_timeout": ParameterSpec(
        1.0, "/diagnostics reports stale input (WARN) when no joint_states came for this long [s], or some model "
             "joint was not in any message for this long", "a number of seconds in (0, 3600]",
        in_range(0.0, 3600.0, low_open=True)),
}
#: what the node assumes for a coordinate joint_states cannot give
ASSUMED = {"floating": "at its origin, unrotated, at rest", "planar": "at its origin, at rest"}


def settings(params, config):
    """The joints joint_states cannot give (multi-coordinate, below the root) and the stale-input timeout."""
    root = config.model.root_joint
    return {"unmeasured": [j for j in config.model.joints if j.kind in ASSUMED and j is not root],
            "joint_states_timeout": params["joint_states_timeout"]}


def parts():
    from .part import JointStatesInput
    return (JointStatesInput,)


def unmeasured_notice(config):
    """What the node says once about the coordinates joint_states cannot give, or None."""
    if not config.unmeasured:
        return None
    assumed = [f"{j.name} ({j.kind}: q[{j.idx_q}:{j.idx_q + j.nq}], v[{j.idx_v}:{j.idx_v + j.nv}]) "
               f"{ASSUMED[j.kind]}" for j in config.unmeasured]
    return ("joint_states carries one position per joint name, so these multi-coordinate joints below the "
            "root are not measured; the node assumes " + "; ".join(assumed) +
            ". Services take them in the request's positions only where the model has them at the root.")


MAX_MAPS = 64       # name lists remembered (one per publisher, usually)


class MeasuredState:
    """q and v of the model from the messages so far; `complete` once every model joint was heard,
    but for the `optional` ones (a closed chain's passive joints, which the node assembles)."""

    def __init__(self, model):
        self.model = model
        self.q, self.v = rd.neutral(model), np.zeros(model.nv)
        self.seen = np.zeros(len(model.joint_names), bool)      # the joints some message taken named
        self.optional = np.zeros(len(model.joint_names), bool)
        self.seen_changes = 0   # counts the changes of `seen` (a part keeping what depends on it)
        self.complete, self.missing = False, list(model.joint_names)
        self.maps = {}
        self.jmap = None        # the JointStateMap of the last message taken
        self.base_frame = ""    # the header.frame_id of the last ~/base_pose taken: the world frame's name

    def allow_missing(self, optional):
        """The model joints (a boolean mask) that may never come in joint_states."""
        self.optional = np.array(optional, bool)
        self._check_complete()

    def _check_complete(self):
        needed = self.seen | self.optional
        self.complete = bool(needed.all())
        self.missing = [n for n, s in zip(self.model.joint_names, needed) if not s]

    def take(self, names, position, velocity, effort=()):
        """One joint_states message (names, and positions, velocities and efforts as float arrays):
        None, or what is wrong with it (it is then rejected whole). Unknown names are ignored.
        Efforts are only checked for their length here (external.EffortSample takes them)."""
        jmap = self.maps.get(tuple(names))
        if jmap is None:
            if len(self.maps) >= MAX_MAPS:
                self.maps.clear()
            jmap = self.maps[tuple(names)] = JointStateMap(self.model, names)
        problem = ("duplicate joint names" if jmap.duplicates else
                   f"{len(position)} positions for {jmap.count} names" if len(position) != jmap.count else
                   f"{len(velocity)} velocities for {jmap.count} names" if len(velocity) not in (0, jmap.count) else
                   f"{len(effort)} efforts for {jmap.count} names" if len(effort) not in (0, jmap.count) else
                   "NaN or inf values" if not (np.isfinite(position).all() and np.isfinite(velocity).all()) else None)
        if problem:
            return problem
        self.jmap = jmap
        self.q[jmap.iq] = position[jmap.src]
        self.v[jmap.iv] = velocity[jmap.src] if len(velocity) else 0.0
        if not jmap.taken:      # a name list taken for the first time
            jmap.taken = True
            self.seen[jmap.joint] = True
            self.seen_changes += 1
            self._check_complete()
        return None

    def take_base_pose(self, pose, frame_id=""):
        """A geometry_msgs Pose of the root link in the world frame `frame_id`; ValueError naming the
        problem (the state is then unchanged), or if the model has no floating or planar root."""
        root = self.model.root_joint
        if root is None:
            raise ValueError(f"model {self.model.name!r} has no floating or planar root joint")
        self.q[:root.nq] = root_coordinates(self.model, pose)
        self.base_frame = frame_id


class JointStateMap:
    """Maps a joint_states name list onto model coordinates; built once per distinct list. `known`:
    the list names some model joint; `heard`: when a message with this list was last taken
    (time.perf_counter(), set by the node; -inf: never); `taken`: one was."""

    def __init__(self, model, names):
        known = [(k, model.joint_index[n]) for k, n in enumerate(names) if n in model.joint_index]
        self.names = tuple(names)
        self.duplicates = len(set(names)) != len(names)
        self.src = np.array([k for k, _ in known], dtype=np.intp)
        idx = np.array([j for _, j in known], dtype=np.intp)
        self.iq, self.iv, self.joint = model.joint_offset[0] + idx, model.joint_offset[1] + idx, idx
        self.count = len(names)
        self.known = bool(known)
        self.heard = -math.inf
        self.taken = False      # a message with this list was taken (MeasuredState)
