"""~/reference -> ~/feedforward_torques and ~/feedforward_commands: the computed torque (the law's:
control.computed_torque, or with contacts the contact inverse dynamics) for the first point of the
last reference, answered to every joint_states message that completes the state, with its stamp.

A new reference is answered at once, with the reference's stamp, only when the feedforward does not
depend on the measured state (evaluated at the desired state, no feedback gains, no floating or
planar base whose pose is measured): an output computed from the last measured state, which may be
old, never carries a new message's stamp. Otherwise the next joint_states message is answered."""
import numpy as np
from trajectory_msgs.msg import JointTrajectory

from ... import dynamics as rd
from ...control import computed_torque
from ..messages import RequestState, error_text
from .base import Part, TorqueTopics


class ReferenceFeedforward(Part):

    def __init__(self, node):
        super().__init__(node)
        self.out = TorqueTopics(node, "feedforward")
        self.current_law = None
        self.reference = None       # (q_d, v_d, a_d) over the model's coordinates
        node.create_subscription(JointTrajectory, "~/reference", self.on_reference, 1)   # only the latest counts

    @staticmethod
    def warm(config):
        model = config.model
        q, zero = rd.neutral(model), np.zeros(model.nv)
        return [(f"computed_torque ({evaluate_at}, gains {gain:g})",
                 lambda e=evaluate_at, g=gain: computed_torque(model, q, zero, q, zero, zero, g, g, e))
                for evaluate_at in ("desired", "measured") for gain in (0.0, 1.0)]

    def configure(self, config, keep):
        self.out.configure(config)
        self.current_law = self.node.law
        if not keep:
            self.reference = None

    @property
    def answering(self):
        return self.reference is not None

    def on_state(self, config, state, stamp, velocity, effort):
        return self._publish(config, state, stamp)

    def _publish(self, config, state, stamp):
        """The law's feedforward for the reference; the feedback gains act once every joint has been measured."""
        law = self.current_law
        try:
            tau = law.feedforward(config, state, self.reference, state.complete and config.feedback)
        except ValueError as exc:
            return self.node.reject(f"{law.kind}feedforward torques not published: {error_text(exc)}")
        return self.out.publish(config, tau, stamp)

    def on_reference(self, msg):
        node = self.node
        with node.lock:
            try:
                warning = self._take(msg)
            except Exception as exc:
                warning = node.reject(f"reference rejected: {error_text(exc) or type(exc).__name__}")
        node.warn(warning)

    def _take(self, msg):
        """on_reference under the lock; a warning to log, or None."""
        node = self.node
        config, state = node.config, node.state
        if config is None:
            return None
        try:
            if not msg.points:
                raise ValueError("the trajectory has no points")
            # a closed chain's loop joints that joint_states does not carry either may be left out: completed
            # from the loops (loops.feedforward); the measured (actuated) joints must come
            optional = config.loops.optional & ~np.asarray(state.seen, bool) if config.loops else None
            request = RequestState(config.model, msg.joint_names, optional)
            point = msg.points[0]
            q_d = request.q(point.positions, None)
            base = config.model.joint_offset[0]      # the multi-coordinate joints: as measured
            q_d[:base] = state.q[:base]
            first, self.reference = self.reference is None, (q_d, request.v(point.velocities, "velocities"),
                                                             request.v(point.accelerations, "accelerations"))
            if first:
                node.restep()
        except ValueError as exc:
            return node.reject(f"reference rejected: {error_text(exc)}")
        if config.evaluate_at == "desired" and not config.feedback and config.model.root_joint is None:
            return self._publish(config, state, msg.header.stamp)     # a function of the reference alone
        return None
