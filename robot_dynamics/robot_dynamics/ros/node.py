"""ROS 2 node `robot_dynamics`: topics, services, parameters and diagnostics wired to the library.

Topics (relative, so `namespace` and remapping work):
  in  joint_states            sensor_msgs/JointState (SensorDataQoS, overridable)
  in  robot_description       std_msgs/String (transient local), used when no description parameter
  in  ~/reference             trajectory_msgs/JointTrajectory, first point used
  in  ~/base_pose             geometry_msgs/PoseStamped, models with a floating or planar root
  out ~/gravity_torques       sensor_msgs/JointState     g(q)
  out ~/gravity_commands      std_msgs/Float64MultiArray g(q) in `joints` order
  out ~/feedforward_torques   sensor_msgs/JointState     computed-torque feedforward
  out ~/feedforward_commands  std_msgs/Float64MultiArray the same in `joints` order
  out ~/external_torques      sensor_msgs/JointState     the momentum observer's r (joint_states with efforts)
  out ~/external_wrench       geometry_msgs/WrenchStamped the wrench at observer.wrench_frame explaining r
  out ~/contact               robot_dynamics_interfaces/Contact  some |r_i| over observer.contact_threshold
  out /diagnostics            diagnostic_msgs/DiagnosticArray
Services ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics, ~/wrench_to_joint_torques,
~/identify_payload (asynchronous: it records joint_states for a while, see _identify_payload).
Every parameter is documented in config/dynamics.yaml and checked by parameters.py.

Contacts (contacts.py): with contacts.frames set on a floating-base model, gravity and feedforward
torques are contact-consistent (the base's weight shared among the contacts), and
  out ~/contact_forces        robot_dynamics_interfaces/ContactForces, the forces of ~/gravity_torques
  srv ~/constrained_forward_dynamics  any contacts and loops (empty: the node's contacts.frames).

joint_states is taken by a second, bare node `<name>_joint_states` on its own executor and thread:
rclpy's executor rebuilds its wait set in Python on every wake-up, which with this node's services,
parameters and timer was ~70 % of its CPU at 1 kHz.

Nothing non-finite leaves the node as a success: inputs are checked (a quaternion is normalised, or
refused, by `model.unit_quaternion`), and so is every published or returned number (a finite input
can still overflow).
"""
import array
import copy
import math
import threading
import time
from dataclasses import dataclass

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.task import Future
from robot_dynamics_interfaces import srv
from robot_dynamics_interfaces.msg import Contact, ContactForces, LinkWrench
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from .. import dynamics as rd
from ..control import computed_torque
from . import contacts, diagnostics, external, identification, services
from .config import build_config, unmeasured_notice
from .messages import RequestState, check_response_finite, error_text, set_twist
from .parameters import PARAMETERS, ParameterError, StartupError, check_parameter, check_parameters, shown
from .state import MeasuredState

DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
SERVICES = (("inverse_dynamics", srv.InverseDynamics, services.inverse_dynamics),
            ("forward_dynamics", srv.ForwardDynamics, services.forward_dynamics),
            ("hybrid_dynamics", srv.HybridDynamics, services.hybrid_dynamics),
            ("wrench_to_joint_torques", srv.WrenchToJointTorques, services.wrench_to_joint_torques))


class DynamicsNode(Node):
    """The node; joint_states arrives on `joint_states_node`, spun by main() on a thread of its own.
    self._lock guards what the two threads share: the configuration, the measured state and the
    reference, the counters, the output messages, and every dynamics computation (single-state calls
    reuse the model's workspace). Nothing is logged while it is held.

    Raises StartupError if a parameter or the URDF given as a parameter is invalid at start-up (the
    message names it); later, an invalid change is refused with that message and the previous
    configuration serves on."""

    def __init__(self, **kwargs):
        super().__init__("robot_dynamics", **kwargs)
        self._destroyed = False
        for name, spec in PARAMETERS.items():
            self.declare_parameter(name, spec.default, ParameterDescriptor(
                description=spec.description, additional_constraints=f"takes {spec.form}",
                read_only=spec.read_only, dynamic_typing=True))
        self._lock = threading.Lock()
        self.config, self._state = None, None
        self._load_cache, self._pending = {}, None
        self._topic_description = None
        self._reference = None
        self._stats = diagnostics.period_stats()
        self._last_error = ""
        self._warned = {}
        try:
            params = self._params()
            config = None
            if self._description(params) is not None:
                config = build_config(params, self._description(params), self._load_cache)
            topic = self.resolve_topic_name("joint_states")     # with the user's remaps and namespace
            qos = _subscription_qos(self, topic, qos_profile_sensor_data)
        except ValueError as exc:       # ParameterError, URDFError
            self.destroy_node()
            raise StartupError(error_text(exc)) from None
        self._store_as_used(params)

        # no QoS event handlers on the outputs: each costs the executor ~2 us on every wake-up at 1 kHz
        publish = lambda kind, topic: self.create_publisher(  # noqa: E731
            kind, topic, 10, event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        self.gravity_out = (publish(JointState, "~/gravity_torques"), JointState(),
                            publish(Float64MultiArray, "~/gravity_commands"), Float64MultiArray())
        self.feedforward_out = (publish(JointState, "~/feedforward_torques"), JointState(),
                                publish(Float64MultiArray, "~/feedforward_commands"), Float64MultiArray())
        self.pub_diag = publish(DiagnosticArray, "/diagnostics")
        self._init_external(publish)
        self.joint_states_node = Node(  # nothing but the subscription (its logging is this node's)
            f"{self.get_name()}_joint_states", namespace=self.get_namespace(), context=self.context,
            use_global_arguments=False,     # a __node:= remap would rename it too
            enable_rosout=False, start_parameter_services=False,
            parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.joint_states_node.create_subscription(JointState, topic, self.on_joint_states, qos)
        self.create_subscription(JointTrajectory, "~/reference", self.on_reference, 1)   # only the latest counts
        self.create_subscription(PoseStamped, "~/base_pose", self.on_base_pose, qos_profile_sensor_data)
        for name, kind, handler in SERVICES:
            self.create_service(kind, f"~/{name}", self._guarded(handler))
        self._init_contacts(publish)

        if config is not None:
            self._apply(config)
        else:
            self.get_logger().info("no robot_description or urdf_file parameter: waiting for a URDF on "
                                   f"{self.resolve_topic_name('robot_description')}; publishing nothing until then")
        # always: a description parameter emptied at run time falls back to the topic's
        self.create_subscription(String, "robot_description", self.on_description, DESCRIPTION_QOS)
        self.add_pre_set_parameters_callback(self._as_used)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)
        self._diag_time = time.monotonic()
        self.create_timer(params["diagnostics_period"], self.publish_diagnostics)

    # --- configuration ----------------------------------------------------------------------------
    def _params(self, changes=()):
        """Every parameter's value as used, with `changes` applied; ParameterError for a bad one."""
        values = {name: self.get_parameter(name).value for name in PARAMETERS}
        values.update({p.name: p.value for p in changes})
        return check_parameters(values)

    def _as_used(self, changes):
        """rclpy's pre-set callback: numbers stored as floats (an integer list as a float list, a list
        `ros2 param set` sent as a string as numbers). Bad values pass unchanged, to be refused by
        _on_set_parameters with their reason."""
        out = []
        for p in changes:
            if p.name in PARAMETERS:
                try:
                    p = _stored(p, check_parameter(p.name, p.value))
                except ValueError:
                    pass
            out.append(p)
        return out

    def _store_as_used(self, params):
        """At start-up (no callbacks yet): store the values as used, as _as_used does on a change."""
        stored = [_stored(self.get_parameter(name), value) for name, value in params.items()
                  if not PARAMETERS[name].read_only]
        self.set_parameters([p for p in stored if p is not self.get_parameter(p.name)])

    def _description(self, params):
        return params["robot_description"] or params["urdf_file"] or self._topic_description

    def _reconfigure(self, params):
        """Build and swap in a configuration; False, with the error counted and logged, if that fails."""
        try:
            config = build_config(params, self._description(params), self._load_cache)
        except Exception as exc:   # a bad URDF or parameter must not stop the node
            error = f"model not (re)built: {error_text(exc)}"
            with self._lock:
                self._last_error = error
                self._stats["rejected"] += 1
            self.get_logger().error(error)
            return False
        self._apply(config)
        return True

    def _apply(self, config, keep_state=False):
        """Swap in a configuration (its model is new: build_config computed on it without the lock).
        keep_state: keep the measured state and the reference if the coordinates are the same."""
        model = config.model
        with self._lock:
            old = self.config.model if self.config is not None else None
            if keep_state and old is not None and (model.joint_names, model.nq) == (old.joint_names, old.nq):
                self._state.model = model
            else:
                self._state, self._reference = MeasuredState(model), None
            self.config, self._last_error = config, ""
            self.gravity_out[1].name = self.feedforward_out[1].name = config.joints
            stopped = self._apply_external(config)
        self._announce_external(config, stopped)
        standing = "" if config.contacts is None else "; standing on " + ", ".join(
            f"{frame} ({kind})" for frame, kind in config.contacts.spec)
        self.get_logger().info(f"model {model.name!r}: {len(model.joint_names)} joints, nq={model.nq}, "
                               f"nv={model.nv}, total mass {model.total_mass:.3f} kg; output joints {config.joints}"
                               f"{standing}")
        notice = unmeasured_notice(config)
        if notice and not keep_state:
            self.get_logger().warning(notice)

    def _on_set_parameters(self, changes):
        """Check the changed values and build the configuration they give; refuse naming the problem."""
        known = [p for p in changes if p.name in PARAMETERS]
        if not known:
            return SetParametersResult(successful=True)
        try:
            params = self._params(known)
            description = self._description(params)
            if description is None:
                if self.config is not None:
                    raise ParameterError("urdf_file", "parameters robot_description and urdf_file cannot both "
                                                      "be empty: no URDF came on the robot_description topic")
                pending = None      # no URDF yet: the model-dependent checks run when one arrives
            else:
                pending = build_config(params, description, self._load_cache)
        except Exception as exc:
            for p in known:     # rclpy set the dynamic descriptor's type to the refused value's: put it back
                self.describe_parameter(p.name).type = self.get_parameter(p.name).type_.value
            return SetParametersResult(successful=False, reason=error_text(exc) or type(exc).__name__)
        self._pending = pending
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, changes):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._apply(pending, keep_state=True)   # e.g. a gravity change keeps the measured state

    def on_description(self, msg):
        params = self._params()
        if params["robot_description"] or params["urdf_file"]:
            self._topic_description = msg.data      # kept: used if both parameters are emptied
            return      # a description parameter wins over the topic
        previous, self._topic_description = self._topic_description, msg.data
        if not self._reconfigure(params):
            self._topic_description = previous

    # --- joint_states -> gravity (and feedforward) --------------------------------------------------
    def on_joint_states(self, msg):
        """On the joint_states thread."""
        t0 = time.perf_counter()
        with self._lock:
            try:
                warning = self._take_joint_states(msg, t0)
            except Exception as exc:    # never let the thread die: count it, say it, go on
                warning = self._reject(f"joint_states rejected: {error_text(exc) or type(exc).__name__}")
        self._warn(warning)
        if self._recording_finished:
            self._signal_recording()

    def _take_joint_states(self, msg, t0):
        """on_joint_states under the lock; a warning to log, or None."""
        self._stats["messages"] += 1
        config, state = self.config, self._state
        if config is None:
            return None
        velocity, effort = np.frombuffer(msg.velocity), np.frombuffer(msg.effort)
        problem = state.take(msg.name, np.frombuffer(msg.position), velocity, effort)
        if problem:
            return self._reject(f"joint_states rejected: {problem}")
        if not state.complete:
            return self._throttled("waiting", f"waiting for joint_states of {state.missing}; publishing nothing", 5.0)
        stamp = msg.header.stamp
        if config.contacts is None:
            warning = self._publish(self.gravity_out, rd.gravity_torques(config.model, state.q), stamp, "gravity")
        else:
            warning = self._publish_contact_gravity(config, state.q, stamp)
        if self._reference is not None:
            warning = self._publish_feedforward(stamp) or warning
        warning = self._observe(stamp, velocity, effort) or warning
        diagnostics.record(self._stats, time.perf_counter() - t0)
        return warning

    def _publish(self, outputs, tau, stamp, what):
        """One torque vector to a JointState and a Float64MultiArray publisher; the messages are
        built once per configuration and only refilled here. Nothing is published if a torque is
        not finite (a finite state can still overflow): the warning to log is returned."""
        pub_state, state, pub_command, command = outputs
        effort = array.array("d", tau[self.config.out_v].tobytes())
        if not math.isfinite(sum(effort)):      # NaN and inf survive the sum; ~0.2 us
            return self._reject(f"{what} torques not finite for this state (values too large): not published")
        if pub_state.get_subscription_count():
            state.header.stamp = stamp
            state.effort = effort
            pub_state.publish(state)
        if pub_command.get_subscription_count():
            command.data = effort
            pub_command.publish(command)
        return None

    def _reject(self, text):
        """Count a bad input (lock held); the text to log, each distinct one at most every 2 s."""
        self._stats["rejected"] += 1
        self._last_error = text
        return self._throttled(text, text, 2.0)

    def _throttled(self, key, text, period):
        """text, or None if `key` had its text logged less than `period` s ago (lock held)."""
        now = time.monotonic()
        if now - self._warned.get(key, -1e9) <= period:
            return None
        if len(self._warned) > 256:
            self._warned.clear()
        self._warned[key] = now
        return text

    def _warn(self, text):
        """Log a warning returned from under the lock (logging may block: never under it)."""
        if text:
            self.get_logger().warning(text)

    def on_base_pose(self, msg):
        with self._lock:
            if self.config is None or self.config.model.root_joint is None:
                return
            try:
                self._state.take_base_pose(msg.pose)
                return
            except ValueError as exc:
                warning = self._reject(f"base_pose rejected: {exc}")
        self._warn(warning)

    # --- contacts (contacts.py): contact-consistent gravity and feedforward, ~/contact_forces, ---------
    # --- ~/constrained_forward_dynamics ----------------------------------------------------------------
    def _init_contacts(self, publish):
        self.contact_forces_out = (publish(ContactForces, "~/contact_forces"), ContactForces())
        self._contact_forces_frames = None      # the contacts the message's wrenches were made for

        def constrained_forward_dynamics(model, request, response):     # run by _guarded, lock held
            contacts.constrained_forward_dynamics(model, request, response, self.config.contacts, LinkWrench)
        self.create_service(srv.ConstrainedForwardDynamics, "~/constrained_forward_dynamics",
                            self._guarded(constrained_forward_dynamics))

    def _publish_contact_gravity(self, config, q, stamp):
        """Contact-consistent gravity torques (and their contact forces to ~/contact_forces) for the
        measured state (lock held); nothing is published where the contacts cannot hold the base or
        a number is not finite: the warning to log is returned."""
        try:
            tau, forces = contacts.gravity(config.model, q, config.contacts)
        except ValueError as exc:       # ConstraintError, or values too large
            return self._reject(f"contact-consistent gravity torques not published: {error_text(exc)}")
        if not contacts.all_finite(forces):
            return self._reject("contact forces not finite for this state (values too large): not published")
        warning = self._publish(self.gravity_out, tau, stamp, "gravity")
        if warning is None:
            self._publish_contact_forces(config.contacts, forces, stamp)
        return warning

    def _publish_contact_forces(self, config_contacts, forces, stamp):
        pub, msg = self.contact_forces_out
        if not pub.get_subscription_count():
            return
        if self._contact_forces_frames is not config_contacts:     # a new configuration: new wrenches
            msg.wrenches = [LinkWrench() for _ in config_contacts.frames]
            self._contact_forces_frames = config_contacts
        msg.header.stamp = stamp
        contacts.fill_wrenches(msg.wrenches, config_contacts.frames, config_contacts.sizes, forces)
        pub.publish(msg)

    def _publish_contact_feedforward(self, config, state, feedback, stamp):
        """The contact-consistent computed torque for the reference (contacts.feedforward)."""
        q_d, v_d, a_d = self._reference
        zero = np.zeros(config.model.nv)
        try:
            tau, _ = contacts.feedforward(config.model, config.contacts, state.q, state.v, q_d, v_d, a_d,
                                          config.kp if feedback else zero, config.kd if feedback else zero,
                                          config.evaluate_at)
        except ValueError as exc:
            return self._reject(f"contact-consistent feedforward torques not published: {error_text(exc)}")
        return self._publish(self.feedforward_out, tau, stamp, "feedforward")

    # --- reference -> computed-torque feedforward -----------------------------------------------------
    def on_reference(self, msg):
        with self._lock:
            try:
                warning = self._take_reference(msg)
            except Exception as exc:
                warning = self._reject(f"reference rejected: {error_text(exc) or type(exc).__name__}")
        self._warn(warning)

    def _take_reference(self, msg):
        """on_reference under the lock; a warning to log, or None."""
        config = self.config
        if config is None:
            return None
        try:
            if not msg.points:
                raise ValueError("the trajectory has no points")
            request = RequestState(config.model, msg.joint_names)
            point = msg.points[0]
            q_d = request.q(point.positions, None)
            base = config.model.joint_offset[0]      # the multi-coordinate joints: as measured
            q_d[:base] = self._state.q[:base]
            self._reference = (q_d, request.v(point.velocities, "velocities"),
                               request.v(point.accelerations, "accelerations"))
        except ValueError as exc:
            return self._reject(f"reference rejected: {error_text(exc)}")
        if self._state.complete or (config.evaluate_at == "desired" and not config.feedback):
            return self._publish_feedforward(msg.header.stamp)
        return None

    def _publish_feedforward(self, stamp):
        """The computed torque for the reference (control.computed_torque); the feedback gains act
        once every joint has been measured."""
        config, state = self.config, self._state
        q_d, v_d, a_d = self._reference
        feedback = state.complete and config.feedback
        if config.contacts is not None:
            return self._publish_contact_feedforward(config, state, feedback, stamp)
        tau = computed_torque(config.model, state.q, state.v, q_d, v_d, a_d, config.kp if feedback else 0.0,
                              config.kd if feedback else 0.0, config.evaluate_at)
        return self._publish(self.feedforward_out, tau, stamp, "feedforward")

    # --- services -------------------------------------------------------------------------------------
    def _no_model(self):
        """Why there is no model, for a service answer."""
        if self._last_error:
            return f"no robot model: {self._last_error}"
        return ("no robot model loaded yet (set robot_description or urdf_file, or publish the URDF on "
                f"{self.resolve_topic_name('robot_description')})")

    def _guarded(self, handler):
        """Run a service handler; any error, or a result that is not finite, becomes success=false with
        a message naming it."""
        def serve(request, response):
            try:
                with self._lock:
                    if self.config is None:
                        raise ValueError(self._no_model())
                    handler(self.config.model, request, response)
                check_response_finite(response)
                response.success, response.message = True, "ok"
            except Exception as exc:
                response = type(response)()      # nothing half-computed goes back with a refusal
                response.success, response.message = False, error_text(exc) or type(exc).__name__
                with self._lock:
                    self._stats["rejected"] += 1
                self.get_logger().warning(f"{handler.__name__}: {response.message}", throttle_duration_sec=1.0)
            return response
        serve.__name__ = handler.__name__
        return serve

    # --- external torques: the momentum observer on joint_states efforts (external.py) --------------------
    def _init_external(self, publish):
        """Publishers and state of the observer, and the ~/identify_payload service."""
        self.external_out = (publish(JointState, "~/external_torques"), JointState(),
                             publish(WrenchStamped, "~/external_wrench"), WrenchStamped(),
                             publish(Contact, "~/contact"), Contact())
        self._external = None           # external.ExternalTorques of the configuration
        self._efforts = None            # external.EffortSample of the configuration
        self._observer_state = ""       # why the observer publishes nothing, if it is so
        self._said = set()              # notices said once (keys)
        self._recording = None          # _Recording while ~/identify_payload records
        self._recording_finished = False
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        # its own (reentrant) callback group: a pending call holds its group, and the default group's
        # (every other entity of this node) must run meanwhile; a second call is refused, not queued
        self.create_service(srv.IdentifyPayload, "~/identify_payload", self._identify_payload,
                            callback_group=ReentrantCallbackGroup())

    def _apply_external(self, config):
        """A new observer for a new configuration (lock held); a recording in progress stops (returns it)."""
        self._external = external.ExternalTorques(config)
        self._efforts = external.EffortSample(config.model)
        self._observer_state = ""
        self.external_out[1].name = config.joints
        recording = self._recording
        if recording is not None and not recording.recorder.finished:
            recording.recorder.fail("the node's configuration changed during the recording (a parameter or the "
                                    "robot description): record again")
            return recording
        return None

    def _announce_external(self, config, stopped):
        s = config.observer
        if s.enabled and s.unsupported:
            self.get_logger().info(f"momentum observer off: {s.unsupported}")
        if stopped is not None:
            self._signal_recording()

    def _observe(self, stamp, velocity, effort):
        """The observer (and a recording) on one joint_states message (lock held): publishes r, the
        wrench and the contact flag to their subscribers; a warning to log, or None."""
        config, state, sample = self.config, self._state, None
        if state.jmap is not None:
            sample = self._efforts.take(state.jmap, velocity, effort)
        external_torques = self._external
        if sample is None:
            notice = self._efforts.notice
            if notice is None:
                return None
            if notice[0] == "nan":
                external_torques.stats["skipped"] += 1
                return self._reject(notice[1])
            self._observer_state = notice[1]
            return self._once(notice)
        stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        if self._recording is not None and self._recording.recorder.add(stamp_ns, state.q, state.v, sample):
            self._recording_finished = True
        if not external_torques.running:
            return None
        answered = external_torques.update(state.q, state.v, sample, stamp_ns)
        notice = None if external_torques.notice is None else self._once(external_torques.notice)
        if not answered:
            return notice
        self._observer_state = ""
        pub_r, msg_r, pub_w, msg_w, pub_c, msg_c = self.external_out
        r = array.array("d", external_torques.r[config.out_v].tobytes())
        if not math.isfinite(sum(r)):       # the library refuses these; never published
            return self._reject("external torques not finite for this state: not published")
        if pub_r.get_subscription_count():
            msg_r.header.stamp = stamp
            msg_r.effort = r
            pub_r.publish(msg_r)
        settings = config.observer
        if settings.wrench_frame and pub_w.get_subscription_count():
            try:
                F = external_torques.wrench()
            except ValueError as exc:
                return self._reject(f"external wrench not published: {exc}")
            msg_w.header.stamp, msg_w.header.frame_id = stamp, settings.wrench_frame
            set_twist(msg_w.wrench, F)
            pub_w.publish(msg_w)
        if settings.detect and pub_c.get_subscription_count():
            msg_c.header.stamp = stamp
            msg_c.contact, msg_c.joint_names = external_torques.contact, external_torques.contact_joints
            pub_c.publish(msg_c)
        return notice

    def _once(self, notice):
        """A notice's text the first time its key comes (lock held), else None."""
        key, text = notice
        if key in self._said:
            return None
        self._said.add(key)
        return text

    # --- payload identification: ~/identify_payload (identification.py) ---------------------------------
    async def _identify_payload(self, request, response):
        """Record joint_states for request.duration, estimate the payload, answer, apply if asked.

        Asynchronous, on the main executor (single-threaded): the handler awaits two futures, the end
        of the recording (set from the joint_states thread, or by a watchdog timer if samples stop
        coming) and the estimate (computed on a worker thread, outside the lock); meanwhile the
        executor serves the other services, parameters and timers (the service is in a callback
        group of its own: a pending coroutine holds its group). Applying goes through the node's
        own set_parameters_atomically, so the parameters are checked as any change and reflect it."""
        try:
            with self._lock:
                config, busy = self.config, self._recording is not None
            if config is None:
                raise ValueError(self._no_model())
            if busy:
                raise ValueError("an identification is recording already: one at a time")
            params = self._params()
            checked = identification.Request(request, params, config.model)
            # the model without the configured payload: the estimate is the whole payload on the link
            bare = build_config({**params, "payload.mass": 0.0}, self._description(params), self._load_cache).model
            recording = _Recording(identification.Recorder(config.model, checked.duration_ns,
                                                           config.observer.max_interval_ns),
                                   Future(executor=self.executor))
            with self._lock:
                if self.config is not config:
                    raise ValueError("the node's configuration changed while the request was checked: ask again")
                self._recording = recording
            self.get_logger().info(f"identify_payload: recording {request.duration:g} s of joint_states for the "
                                   f"{checked.method} method (payload on {checked.link!r})")
            watchdog = self.create_timer(0.25, lambda: self._watch_recording(recording), clock=self._steady_clock)
            try:
                await recording.done
            finally:
                self.destroy_timer(watchdog)
                with self._lock:
                    self._recording, self._recording_finished = None, False
            estimated = Future(executor=self.executor)
            threading.Thread(target=self._estimate, args=(bare, checked, recording.recorder, config.observer, estimated),
                             name="identify_payload", daemon=True).start()
            est, used = await estimated
            identification.fill_response(response, est, used)
            if not identification.response_finite(response):
                raise ValueError("the estimate is not finite (the recorded values are too large)")
            if recording.recorder.capped:
                response.message += f"; the recording stopped at {recording.recorder.count} samples (memory cap)"
            problem = identification.found(est)
            if problem:     # the estimate is still given, for inspection
                response.message = f"{problem}. The estimate: {response.message}"
                return self._answered(response)
            response.success = True
            if checked.apply:
                self._apply_payload(response, est, checked.point_mass)
        except Exception as exc:
            response = srv.IdentifyPayload.Response(success=False, message=error_text(exc) or type(exc).__name__)
        return self._answered(response)

    def _answered(self, response):
        if response.success:
            self.get_logger().info(f"identify_payload: {response.message}")
        else:
            with self._lock:
                self._stats["rejected"] += 1
            self.get_logger().warning(f"identify_payload: {response.message}")
        return response

    def _apply_payload(self, response, est, point_mass):
        """Set payload.* to the estimate through the node's own parameter checks; a refusal is
        answered with success=false and the estimate for inspection."""
        try:
            values = identification.parameters_to_apply(est, point_mass)
            result = self.set_parameters_atomically([Parameter(k, value=v) for k, v in values.items()])
            if not result.successful:
                raise ValueError(f"not applied: {result.reason}")
        except ValueError as exc:
            response.success, response.message = False, f"{exc}. The estimate: {response.message}"
            return
        response.applied = True
        response.message += "; applied to payload.*" + (" as a point mass" if point_mass else "")

    def _estimate(self, model, checked, recorder, settings, done):
        """The worker thread of _identify_payload: the library's estimate into the future."""
        try:
            done.set_result(identification.estimate(model, checked, recorder, settings.window,
                                                    settings.still_velocity))
        except Exception as exc:
            done.set_exception(ValueError(error_text(exc) or type(exc).__name__))
        self._wake_main()

    def _watch_recording(self, recording):
        """Watchdog timer (steady clock): a recording that gets no usable sample for STALL_TIMEOUT fails."""
        with self._lock:
            recorder = recording.recorder
            if not recorder.finished and time.monotonic() - recorder.last_sample_wall > identification.STALL_TIMEOUT:
                why = f": {self._observer_state}" if self._observer_state else ""
                recorder.fail(f"no joint_states with the positions, velocities and efforts of every model joint came "
                              f"for {identification.STALL_TIMEOUT:g} s ({recorder.count} samples recorded){why}")
        self._signal_recording()

    def _signal_recording(self):
        """Complete the recording's future once it is finished (from any thread)."""
        with self._lock:
            recording, self._recording_finished = self._recording, False
            if recording is None or not recording.recorder.finished or recording.signalled:
                return
            recording.signalled = True
        recording.done.set_result(None)
        self._wake_main()

    def _wake_main(self):
        executor = self.executor
        if executor is not None:
            executor.wake()

    # --- diagnostics -------------------------------------------------------------------------------------
    def publish_diagnostics(self):
        with self._lock:
            stats, self._stats = self._stats, diagnostics.period_stats()
            config, last_error = self.config, self._last_error
            missing = list(self._state.missing) if self._state is not None else []
            external_stats = self._external.take_stats() if self._external is not None else None
            observer_state = self._observer_state
        now = time.monotonic()
        period, self._diag_time = now - self._diag_time, now
        level, message, values = diagnostics.summary(stats, period, config.model.name if config else None,
                                                     missing, last_error, self._no_model())
        status = DiagnosticStatus(name=f"{self.get_name()}: dynamics", level=getattr(DiagnosticStatus, level),
                                  message=message, hardware_id=values["model"])
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        level, message, values = external.diagnostic(config, external_stats, observer_state)
        observer = DiagnosticStatus(name=f"{self.get_name()}: external torques", level=getattr(DiagnosticStatus, level),
                                    message=message, hardware_id=status.hardware_id)
        observer.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        diag = DiagnosticArray(status=[status, observer])
        diag.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(diag)

    def destroy_node(self):
        if not self._destroyed:
            self._destroyed = True
            if hasattr(self, "joint_states_node"):
                self.joint_states_node.destroy_node()
            super().destroy_node()


@dataclass
class _Recording:
    """A recording of ~/identify_payload: filled by the joint_states thread, `done` completed once."""
    recorder: object
    done: Future
    signalled: bool = False


def _stored(parameter, value):
    """The Parameter to store for a value as used (floats, not integers or a string), or the
    parameter itself if it is stored that way already (an empty list is left as it came)."""
    if isinstance(value, list) and not value:
        return parameter
    stored = Parameter(parameter.name, value=value)
    if stored.type_ == parameter.type_ and stored.value == parameter.value:
        return parameter
    return stored


def _subscription_qos(node, topic, qos):
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
