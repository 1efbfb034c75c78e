"""External torques (external/__init__.py): the momentum observer run on joint_states that carry the
position, velocity and effort of every model joint, after the gravity torques are published (the
control path first); each such sample answered, with its stamp, on ~/external_torques, and to their
subscribers ~/external_wrench and ~/contact; the status "external torques" on /diagnostics.

One observer per configuration (a parameter change restarts it). `sample` is the current message's
efforts in model order when it is a complete sample (else None): payload identification records it."""
import array
import math

from geometry_msgs.msg import WrenchStamped
from robot_dynamics_interfaces.msg import Contact
from sensor_msgs.msg import JointState

from ... import dynamics as rd
from .. import external
from ..base import Part, publisher, warm_state
from ..messages import set_twist


class ExternalTorquesOutput(Part):

    def __init__(self, node):
        super().__init__(node)
        self.pub_r, self.msg_r = publisher(node, JointState, "~/external_torques"), JointState()
        self.pub_w, self.msg_w = publisher(node, WrenchStamped, "~/external_wrench"), WrenchStamped()
        self.pub_c, self.msg_c = publisher(node, Contact, "~/contact"), Contact()
        self.observer = None        # external.ExternalTorques of the configuration
        self.efforts = None         # external.EffortSample of the configuration
        self.sample = None          # this message's efforts, model order, if it is a complete sample
        self.why_not = ""           # why the observer publishes nothing, if it is so

    @staticmethod
    def warm(config):
        model, frame, q, v = warm_state(config)
        if frame is None:
            return []

        def observe():      # the compiled update and the wrench estimate, as run per message
            observer = rd.MomentumObserver(model, 50.0)
            observer.reset(q, v)
            observer.update(q, v, v, 1e-3)
            for components in ("wrench", "force", "torque"):
                observer.wrench(frame, "local", components=components)
        return [("momentum observer", observe)]

    def configure(self, config, keep):
        self.observer = external.ExternalTorques(config)
        self.efforts = external.EffortSample(config.model)
        self.sample, self.why_not = None, ""
        self.msg_r.name = config.joints

    def announce(self, config, keep):
        s = config.observer
        if s.enabled and s.unsupported:
            self.node.get_logger().info(f"momentum observer off: {s.unsupported}")

    def on_state(self, config, state, stamp, velocity, effort):
        """The observer on one joint_states message: r, the wrench and the contact flag to their
        subscribers; a warning to log, or None."""
        node = self.node
        self.sample = sample = self.efforts.take(state.jmap, velocity, effort)
        observer = self.observer
        if sample is None:
            notice = self.efforts.notice
            if notice is None:
                return None
            if notice[0] == "nan":
                observer.stats["skipped"] += 1
                return node.reject(notice[1])
            self.why_not = notice[1]
            if notice[0] in ("no efforts", "no velocities") and not self.subscribed():
                return None     # said on /diagnostics; logged once someone wants what needs the efforts
            return node.once(notice)
        if not observer.running:
            return None
        answered = observer.update(state.q, state.v, sample, stamp.sec * 1_000_000_000 + stamp.nanosec)
        notice = None if observer.notice is None else node.once(observer.notice)
        if not answered:
            return notice
        self.why_not = ""
        r = array.array("d", observer.r[config.out_v].tobytes())
        if not math.isfinite(sum(r)):       # the library refuses these; never published
            return node.reject("external torques not finite for this state: not published")
        if self.pub_r.get_subscription_count():
            self.msg_r.header.stamp = stamp
            self.msg_r.effort = r
            self.pub_r.publish(self.msg_r)
        settings = config.observer
        if settings.wrench_frame and self.pub_w.get_subscription_count():
            try:
                F = observer.wrench()
            except ValueError as exc:
                return node.reject(f"external wrench not published: {exc}")
            self.msg_w.header.stamp, self.msg_w.header.frame_id = stamp, settings.wrench_frame
            set_twist(self.msg_w.wrench, F)
            self.pub_w.publish(self.msg_w)
        if settings.detect and self.pub_c.get_subscription_count():
            self.msg_c.header.stamp = stamp
            self.msg_c.contact, self.msg_c.joint_names = observer.contact, observer.contact_joints
            self.pub_c.publish(self.msg_c)
        return notice

    def subscribed(self):
        """Anyone subscribes to an output of the observer."""
        return bool(self.pub_r.get_subscription_count() or self.pub_w.get_subscription_count()
                    or self.pub_c.get_subscription_count())

    def status(self):
        config = self.node.config
        stats = self.observer.take_stats() if self.observer is not None else None
        level, message, values = external.diagnostic(config, stats, self.why_not)
        return "external torques", level, message, values
