"""~/gravity_torques and ~/gravity_commands: the law's gravity torques (g(q), or with contacts the
torques that hold the robot on them) for every joint_states message that completes the state,
stamped with it, plus the friction at the measured velocity with friction.compensate_gravity (friction/).
The control path: the first part to answer each message."""
from ... import dynamics as rd
from ..base import HELD, Part, TorqueTopics
from ..messages import error_text


class GravityOutput(Part):

    def __init__(self, node):
        super().__init__(node)
        self.out = TorqueTopics(node, "gravity")
        self.current_law = self.torques = self.published = self.friction = None

    @staticmethod
    def warm(config):
        model = config.model
        return [("gravity_torques", lambda: rd.gravity_torques(model, rd.neutral(model)))]

    def configure(self, config, keep):
        law = self.current_law = self.node.law
        self.out.configure(config)
        self.torques = law.gravity
        self.friction = config.friction.gravity         # v -> friction torques, or None (off)
        self.published = None if law is HELD else law.published      # HELD publishes nothing more

    def on_state(self, config, state, stamp, velocity, effort):
        try:
            tau = self.torques(config, state.q)
        except ValueError as exc:       # e.g. contacts that cannot hold the base at this state
            return self.node.reject(f"{self.current_law.kind}gravity torques not published: {error_text(exc)}")
        if self.friction is not None:
            tau = tau + self.friction(state.v)
        warning = self.out.publish(config, tau, stamp)
        if warning is None and self.published is not None:
            self.published(config, stamp)
        return warning
