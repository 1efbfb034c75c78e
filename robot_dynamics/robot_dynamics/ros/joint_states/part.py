"""The measured state and the hot path: joint_states (on a bare helper node with a thread of its own)
and ~/base_pose into `MeasuredState`, then every part's `on_state`, in order, under the node's lock.

joint_states is taken by a second, bare node `<name>_joint_states` (no parameter services, no rosout,
no type-description service) spun on its own executor and thread by main(): rclpy's executor
rebuilds its wait set in Python on every wake-up, and with the main node's services, parameter
services and timer that was ~70 % of the node's CPU at 1 kHz. So that `ros2 param list` (and
`ros2 param dump`) does not wait 5 s for that node's parameter services, they are served by the main
node under the helper's name (`HelperParameters`): the helper's wait set keeps its one subscription.

Staleness (parameter joint_states_timeout): /diagnostics warns when no joint_states came for longer,
or when some model joint was not heard for longer (another driver stopped), naming them. A message
that names none of the model's joints is no measurement of the robot: nothing is published for it
(it would carry the previous state's torques under its new stamp), and the node says which names came.
"""
import copy
import math
import time

import numpy as np
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_service import ParameterService
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from .. import diagnostics
from ..base import Part
from ..messages import error_text
from ..parameters import ParameterError, shown
from . import MeasuredState, unmeasured_notice


class JointStatesInput(Part):
    """joint_states and ~/base_pose -> node.state; each complete state -> every part's on_state."""

    def __init__(self, node):
        super().__init__(node)
        topic = node.resolve_topic_name("joint_states")     # with the user's remaps and namespace
        qos = subscription_qos(node, topic, qos_profile_sensor_data)
        self.helper = Node(  # nothing but the subscription (its logging is the main node's)
            f"{node.get_name()}_joint_states", namespace=node.get_namespace(), context=node.context,
            use_global_arguments=False,     # a __node:= remap would rename it too
            enable_rosout=False, start_parameter_services=False,
            parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.helper_parameters = HelperParameters(self.helper, node)
        self.helper.create_subscription(JointState, topic, self.on_joint_states, qos)
        self.base_pose = None       # ~/base_pose exists only while the model has a floating or planar root
        self.last_message = None    # time.perf_counter() of the last joint_states message
        self.foreign = None         # the JointStateMap of the last message naming no model joint
        self.period_start = time.perf_counter()

    def configure(self, config, keep):
        node = self.node
        if keep:
            node.state.model = config.model
        else:
            node.state, self.foreign = MeasuredState(config.model), None

    def announce(self, config, keep):
        node = self.node
        if config.model.root_joint is not None and self.base_pose is None:
            self.base_pose = node.create_subscription(PoseStamped, "~/base_pose", self.on_base_pose,
                                                      qos_profile_sensor_data)
        elif config.model.root_joint is None and self.base_pose is not None:
            subscription, self.base_pose = self.base_pose, None
            node.destroy_subscription(subscription)
        notice = unmeasured_notice(config)
        if notice and not keep:
            self.node.get_logger().warning(notice)

    # --- the hot path ----------------------------------------------------------------------------
    def on_joint_states(self, msg):
        """On the joint_states thread."""
        t0 = time.perf_counter()
        node = self.node
        with node.lock:
            try:
                warning = self._take(msg, t0)
            except Exception as exc:    # never let the thread die: count it, say it, go on
                warning = node.reject(f"joint_states rejected: {error_text(exc) or type(exc).__name__}")
        node.warn(warning)
        if node.after_message:          # what a part asked to run once the lock is released
            for call in node.after_message:
                call()
            node.after_message.clear()

    def _take(self, msg, t0):
        """on_joint_states under the lock; a warning to log, or None."""
        node = self.node
        stats = node.stats
        stats["messages"] += 1
        self.last_message = t0
        config, state = node.config, node.state
        if config is None:
            return None
        velocity, effort = np.frombuffer(msg.velocity), np.frombuffer(msg.effort)
        problem = state.take(msg.name, np.frombuffer(msg.position), velocity, effort)
        if problem:
            return node.reject(f"joint_states rejected: {problem}")
        jmap = state.jmap
        jmap.heard = t0
        if not jmap.known:
            return self._foreign(state, jmap)
        if not state.complete:
            return node.throttled("waiting", f"waiting for joint_states of {state.missing}; publishing nothing", 5.0)
        stamp = msg.header.stamp
        warning = None
        for step in node.steps:
            warning = step(config, state, stamp, velocity, effort) or warning
        diagnostics.record(stats, time.perf_counter() - t0)
        return warning

    def _foreign(self, state, jmap):
        """A message naming none of the model's joints: no measurement of this robot, nothing published."""
        self.foreign = jmap
        names, model = list(jmap.names), state.model
        if not state.complete:
            return self.node.throttled(
                "waiting", f"joint_states came naming none of the model's joints: {shown(names)}; waiting for "
                           f"joint_states of {state.missing}; publishing nothing", 5.0)
        return self.node.once(("foreign", jmap.names), (
            f"joint_states message names none of the model's joints ({shown(names)}; the model's are "
            f"{model.joint_names}): nothing is published for it, nor for any other message naming only these"))

    def on_base_pose(self, msg):
        node = self.node
        with node.lock:
            if node.config is None or node.config.model.root_joint is None:
                return
            try:
                node.state.take_base_pose(msg.pose, msg.header.frame_id)
                return
            except ValueError as exc:
                warning = node.reject(f"base_pose rejected: {exc}")
        node.warn(warning)

    # --- /diagnostics ------------------------------------------------------------------------------
    def status(self):
        """The status "dynamics" of the last period (lock held): model, rate, latency, rejected inputs,
        missing and stale input."""
        node = self.node
        stats, node.stats = node.stats, diagnostics.period_stats()
        config, state = node.config, node.state
        now = time.perf_counter()
        period, self.period_start = now - self.period_start, now
        missing = list(state.missing) if state is not None else []
        stale = self.stale(now) if config is not None and not missing else ""
        foreign = list(self.foreign.names) if self.foreign is not None else []
        level, message, values = diagnostics.summary(stats, period, config.model.name if config else None, missing,
                                                     node.last_error, node.no_model(), stale, foreign)
        return "dynamics", level, message, values

    def stale(self, now):
        """'' or what is stale: no joint_states, or some model joints not heard, for joint_states_timeout."""
        timeout = self.node.config.joint_states_timeout
        if self.last_message is not None and now - self.last_message > timeout:
            return (f"no joint_states for {now - self.last_message:.3g} s (joint_states_timeout {timeout:g} s): nothing "
                    "is published until they come again")
        state = self.node.state
        heard = np.full(len(state.model.joint_names), -math.inf)
        for jmap in state.maps.values():
            np.maximum.at(heard, jmap.joint, jmap.heard)
        old = np.flatnonzero((now - heard > timeout) & (state.seen | ~state.optional))   # not the assembled ones
        if not len(old):
            return ""
        names = [state.model.joint_names[j] for j in old]
        return (f"joints {names} not heard for {now - heard[old].max():.3g} s (joint_states_timeout {timeout:g} s): "
                "the outputs go on from their last values with each message of the other joints")

    def close(self):
        self.helper.destroy_node()


class HelperParameters:
    """The helper node's parameter services, served by the main node (its executor) under the
    helper's name, so that `ros2 param list` and `dump` get an answer from it at once instead of
    waiting for services it would not have; the helper's own executor waits on its subscription only.
    rclpy's ParameterService makes `<name>/list_parameters` etc. with node.create_service and reads
    the parameters through the node's public methods: this object is the helper for both, but its
    create_service is the main node's."""

    def __init__(self, helper, host):
        self._helper, self._host = helper, host
        self._service = ParameterService(self)

    def __getattr__(self, name):
        return getattr(self._helper, name)

    def create_service(self, *args, **kwargs):
        return self._host.create_service(*args, **kwargs)


def subscription_qos(node, topic, qos):
    """qos with the read-only parameters qos_overrides.<topic>.subscription.{history,depth,reliability}
    of `node` applied, declared as create_subscription(qos_overriding_options=QoSOverridingOptions.
    with_default_policies()) declares them, for a subscription that lives on another node."""
    qos = copy.copy(qos)
    for policy in ("history", "depth", "reliability"):
        name, default = f"qos_overrides.{topic}.subscription.{policy}", getattr(qos, policy)
        enum = None if policy == "depth" else type(default)    # a policy enum: its short key is the value
        value = node.declare_parameter(name, default.short_key if enum else default, ParameterDescriptor(
            description=f"{policy} for subscription `{topic}` with id `None`", read_only=True,
            dynamic_typing=True)).value
        if enum is None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParameterError(name, f"parameter {name} takes an integer >= 1; got {shown(value)}")
            qos.depth = value
            continue
        try:
            setattr(qos, policy, enum.get_from_short_key(value))
        except (KeyError, AttributeError, TypeError):
            raise ParameterError(name, f"parameter {name} takes one of {', '.join(enum.short_keys())}; "
                                       f"got {shown(value)}") from None
    return qos
