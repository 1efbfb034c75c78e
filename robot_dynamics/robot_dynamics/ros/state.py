"""The robot's measured state, as joint_states and ~/base_pose tell it, in model coordinates (no
rclpy). joint_states messages may be partial (an arm driver and a gripper driver) and are merged;
a floating or planar root takes its coordinates from ~/base_pose; multi-coordinate joints below the
root stay at their neutral configuration (config.unmeasured_notice says so)."""
import numpy as np

from .. import dynamics as rd
from .messages import JointStateMap, root_coordinates

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
