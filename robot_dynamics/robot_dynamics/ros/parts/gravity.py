"""~/gravity_torques and ~/gravity_commands: the law's gravity torques (g(q), or with contacts the
torques that hold the robot on them) for every joint_states message that completes the state,
stamped with it. The control path: the first part to answer each message."""
from ... import dynamics as rd
from ..messages import error_text
from .base import Part, TorqueTopics


class GravityOutput(Part):

    def __init__(self, node):
        super().__init__(node)
        self.out = TorqueTopics(node, "gravity")
        self.current_law = None

    @staticmethod
    def warm(config):
        model = config.model
        return [("gravity_torques", lambda: rd.gravity_torques(model, rd.neutral(model)))]

    def configure(self, config, keep):
        self.out.configure(config)
        self.current_law = self.node.law

    def on_state(self, config, state, stamp, velocity, effort):
        law = self.current_law
        try:
            tau = law.gravity(config, state.q)
        except ValueError as exc:       # e.g. contacts that cannot hold the base at this state
            return self.node.reject(f"{law.kind}gravity torques not published: {error_text(exc)}")
        warning = self.out.publish(config, tau, stamp)
        if warning is None:
            law.published(config, stamp)
        return warning
