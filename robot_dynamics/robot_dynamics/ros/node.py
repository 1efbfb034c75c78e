"""ROS 2 node `robot_dynamics`: the configuration (parameters and the URDF) and the parts that serve it.

Topics (relative, so `namespace` and remapping work):
  in  joint_states            sensor_msgs/JointState (SensorDataQoS, overridable)
  in  robot_description       std_msgs/String (transient local), used when no description parameter
  in  ~/reference             trajectory_msgs/JointTrajectory, followed in time (parts/feedforward.py)
  in  ~/base_pose             geometry_msgs/PoseStamped, models with a floating or planar root
  in  ~/base_twist            geometry_msgs/TwistStamped, the same models: the base's velocity for ~/centroidal
  out ~/gravity_torques       sensor_msgs/JointState     g(q)
  out ~/gravity_commands      std_msgs/Float64MultiArray g(q) in `joints` order
  out ~/feedforward_torques   sensor_msgs/JointState     computed-torque feedforward
  out ~/feedforward_commands  std_msgs/Float64MultiArray the same in `joints` order
  out ~/external_torques      sensor_msgs/JointState     the momentum observer's r (joint_states with efforts)
  out ~/external_wrench       geometry_msgs/WrenchStamped the wrench at observer.wrench_frame explaining r
  out ~/contact               robot_dynamics_interfaces/Contact  some |r_i| over observer.contact_threshold
  out ~/contact_forces        robot_dynamics_interfaces/ContactForces  with contacts.frames
  out ~/centroidal            robot_dynamics_interfaces/CentroidalState  floating or planar root: c, cdot, h_G
  out /diagnostics            diagnostic_msgs/DiagnosticArray
Services ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics, ~/wrench_to_joint_torques,
~/constrained_forward_dynamics, ~/constrained_inverse_dynamics, ~/identify_payload (asynchronous: it
records joint_states for a while), ~/inverse_kinematics, ~/time_parameterize, ~/check_trajectory
(outside the lock: parts/trajectory_services.py).
Every parameter is documented in config/dynamics.yaml and checked by parameters.py.

Each feature is a part (ros/parts/): its publishers, subscriptions and services, its state, its status
and its reaction to a new configuration. The node holds what they share (the configuration, the lock,
the law of gravity and feedforward torques, the reporting) and wires them: PARTS, in the order in
which they answer each joint_states message. Before the node says it is ready, every part has run
what it serves once (`Part.warm`), so no answer waits for numba to compile or load a kernel.

Nothing non-finite leaves the node as a success: inputs are checked, and so is every published or
returned number (a finite input can still overflow).
"""
import threading
import time

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from . import diagnostics
from .config import build_config
from .messages import check_response_finite, error_text
from .parameters import PARAMETERS, ParameterError, StartupError, check_parameter, check_parameters
from .parts.base import HELD
from .parts.centroidal import CentroidalOutput
from .parts.closed_chain import ClosedChain
from .parts.diagnostics import Diagnostics
from .parts.external import ExternalTorquesOutput
from .parts.feedforward import ReferenceFeedforward
from .parts.gravity import GravityOutput
from .parts.identification import PayloadIdentification
from .parts.inverse_kinematics import InverseKinematicsService
from .parts.joint_states import JointStatesInput
from .parts.services import DynamicsServices
from .parts.standing import Standing
from .parts.trajectory_services import TrajectoryServices

DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


#: the node's parts, made in this order (each may use those before it) and answering each joint_states
#: message in this order (gravity first: the control path). A feature is one more line here.
PARTS = (JointStatesInput, ClosedChain, GravityOutput, ReferenceFeedforward, Standing, ExternalTorquesOutput,
         PayloadIdentification, DynamicsServices, TrajectoryServices, Diagnostics, CentroidalOutput,
         InverseKinematicsService)


class DynamicsNode(Node):
    """The node; joint_states arrives on a helper node (`joint_states_node`), spun by main() on a
    thread of its own. `lock` guards what the threads share: the configuration, the measured state,
    the parts' state, the counters, the output messages, and every dynamics computation (single-state
    calls of this thread share its rd.Data of the model). Nothing is logged while it is held.

    interrupted: a callable, true once the process was asked to stop (checked between the warm-up's
    calls). Raises StartupError if a parameter or the URDF given as a parameter is invalid at start-up
    (the message names it); later, an invalid change is refused with that message and the previous
    configuration serves on."""

    def __init__(self, interrupted=None, **kwargs):
        super().__init__("robot_dynamics", **kwargs)
        self._destroyed = False
        for name, spec in PARAMETERS.items():
            self.declare_parameter(name, spec.default, ParameterDescriptor(
                description=spec.description, additional_constraints=f"takes {spec.form}",
                read_only=spec.read_only, dynamic_typing=True))
        self.lock = threading.Lock()
        self.config, self.law, self.state, self.parts = None, HELD, None, []
        self.load_cache, self._pending = {}, None
        self.topic_description, self._refused_description = None, None
        self.stats, self.last_error = diagnostics.period_stats(), ""
        self.after_message = []         # what a part's on_state asks to run once the lock is released
        self.steps = ()                 # the on_state of every answering part, in PARTS order (restep)
        self._warned, self._said = {}, set()
        self.ready, self._warm_seconds = False, None
        try:
            params = self.params()
            config = None
            if self.description(params) is not None:
                config = build_config(params, self.description(params), self.load_cache)
                self._warm_seconds = self.warm(config, interrupted)     # before any service or topic exists
            self._store_as_used(params)
            for kind in PARTS:
                self.parts.append(kind(self))
        except ValueError as exc:       # ParameterError, URDFError
            self.destroy_node()
            raise StartupError(error_text(exc)) from None
        except BaseException:
            self.destroy_node()
            raise
        self.joint_states_node = self.part(JointStatesInput).helper
        if config is not None:
            self.apply(config, warmed=self._warm_seconds)
        else:
            self.get_logger().info("no robot_description or urdf_file parameter: waiting for a URDF on "
                                   f"{self.resolve_topic_name('robot_description')}; publishing nothing until then")
        # always: a description parameter emptied at run time falls back to the topic's
        self.create_subscription(String, "robot_description", self.on_description, DESCRIPTION_QOS)
        self.add_pre_set_parameters_callback(self._as_used)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)

    # --- configuration ----------------------------------------------------------------------------
    def params(self, changes=()):
        """Every parameter's value as used, with `changes` applied; ParameterError for a bad one."""
        values = {name: self.get_parameter(name).value for name in PARAMETERS}
        values.update({p.name: p.value for p in changes})
        return check_parameters(values)

    def description(self, params):
        return params["robot_description"] or params["urdf_file"] or self.topic_description

    def _as_used(self, changes):
        """rclpy's pre-set callback: numbers stored as floats (an integer list as a float list, a list
        `ros2 param set` sent as a string as numbers). Bad values pass unchanged, to be refused by
        _on_set_parameters with their reason."""
        out = []
        for p in changes:
            if p.name in PARAMETERS:     # also one not set (null from a dump, `ros2 param load`): its default
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

    def warm(self, config, interrupted=None):
        """Every part's warm-up calls on config (numba compiles or loads each kernel on its first call);
        seconds taken. A call that fails has compiled what it reached: the real call will say why."""
        t0 = time.perf_counter()
        for part in PARTS:
            for name, call in part.warm(config):
                if interrupted is not None and interrupted():
                    raise KeyboardInterrupt
                t = time.perf_counter()
                try:
                    call()
                except Exception as exc:
                    self.get_logger().debug(f"warm-up of {name}: {error_text(exc) or type(exc).__name__}")
                self.get_logger().debug(f"warm-up: {name} {time.perf_counter() - t:.3f} s")
        return time.perf_counter() - t0

    def apply(self, config, keep_state=False, warmed=None):
        """Swap in a configuration (its model is new: build_config computed on it without the lock).
        keep_state: keep what was measured if the coordinates are the same (a parameter change);
        warmed: the seconds config's warm-up took, if it ran already."""
        warm = self.warm(config) if warmed is None else warmed     # after the first: ~1 ms
        law = next((law for part in self.parts if (law := part.law(config)) is not None), HELD)
        with self.lock:
            old = self.config.model if self.config is not None else None
            keep = keep_state and old is not None and (config.model.joint_names, config.model.nq) == (
                old.joint_names, old.nq)
            self.config, self.law, self.last_error = config, law, ""
            for part in self.parts:
                part.configure(config, keep)
            self.restep()
        model = config.model
        standing = "" if config.contacts is None else "; standing on " + ", ".join(
            f"{frame} ({kind})" for frame, kind in config.contacts.spec)
        self.get_logger().info(f"model {model.name!r}: {len(model.joint_names)} joints, nq={model.nq}, "
                               f"nv={model.nv}, total mass {model.total_mass:.3f} kg; output joints {config.joints}"
                               f"{standing}")
        for part in self.parts:
            part.announce(config, keep)
        if not self.ready:
            self.ready = True
            self.get_logger().info(f"ready: every answer for {model.name!r} compiled or loaded ({warm:.2f} s)")

    def _reconfigure(self, params):
        """Build and swap in a configuration; False, with the error counted and logged, if that fails."""
        try:
            config = build_config(params, self.description(params), self.load_cache)
        except Exception as exc:   # a bad URDF or parameter must not stop the node
            error = f"model not (re)built: {error_text(exc)}"
            with self.lock:
                self.last_error = error
                self.stats["rejected"] += 1
            self.get_logger().error(error)
            return False
        self.apply(config)
        return True

    def _on_set_parameters(self, changes):
        """Check the changed values and build the configuration they give; refuse naming the problem."""
        known = [p for p in changes if p.name in PARAMETERS]
        if not known:
            return SetParametersResult(successful=True)
        try:
            params = self.params(known)
            description = self.description(params)
            if description is None:
                if self.config is not None:
                    raise ParameterError("urdf_file", "parameters robot_description and urdf_file cannot both "
                                                      "be empty: no URDF came on the robot_description topic")
                pending = None      # no URDF yet: the model-dependent checks run when one arrives
            else:
                pending = build_config(params, description, self.load_cache)
        except Exception as exc:
            for p in known:     # rclpy set the dynamic descriptor's type to the refused value's: put it back
                self.describe_parameter(p.name).type = self.get_parameter(p.name).type_.value
            return SetParametersResult(successful=False, reason=error_text(exc) or type(exc).__name__)
        self._pending = pending
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, changes):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.apply(pending, keep_state=True)   # e.g. a gravity change keeps the measured state

    def on_description(self, msg):
        """A URDF on the robot_description topic: the model is rebuilt when it differs from the one
        served (a description republished unchanged, or refused already, changes nothing)."""
        params, text = self.params(), msg.data
        given = "robot_description" if params["robot_description"] else "urdf_file" if params["urdf_file"] else None
        if given is not None:
            self.topic_description = text       # kept: used if both parameters are emptied
            notice = self.once(("description ignored", given, params[given]), (
                f"a URDF came on {self.resolve_topic_name('robot_description')} and is not used: parameter {given} "
                "is set and wins (the topic's URDF is kept, and used if robot_description and urdf_file are both "
                "emptied)"))
            if notice:
                self.get_logger().info(notice)
            else:
                self.get_logger().debug(f"robot_description: a URDF came, not used (parameter {given} is set)")
            return
        if (self.config is not None and self.config.description == text) or text == self._refused_description:
            self.get_logger().debug("robot_description: the same URDF again, nothing to rebuild")
            return
        previous, self.topic_description = self.topic_description, text
        if not self._reconfigure(params):
            self.topic_description, self._refused_description = previous, text

    # --- what the parts share ----------------------------------------------------------------------
    def no_model(self):
        """Why there is no model, for a service answer."""
        if self.last_error:
            return f"no robot model: {self.last_error}"
        return ("no robot model loaded yet (set robot_description or urdf_file, or publish the URDF on "
                f"{self.resolve_topic_name('robot_description')})")

    def serve(self, kind, name, handler, **kwargs):
        """Service ~/name: handler(model, request, response) runs under the lock; any error, or a
        result that is not finite, becomes success=false with a message naming it."""
        def serve(request, response):
            try:
                with self.lock:
                    if self.config is None:
                        raise ValueError(self.no_model())
                    handler(self.config.model, request, response)
                check_response_finite(response)
                response.success, response.message = True, "ok"
            except Exception as exc:
                response = type(response)()      # nothing half-computed goes back with a refusal
                response.success, response.message = False, error_text(exc) or type(exc).__name__
                with self.lock:
                    self.stats["rejected"] += 1
                self.get_logger().warning(f"{handler.__name__}: {response.message}", throttle_duration_sec=1.0)
            return response
        serve.__name__ = handler.__name__
        return self.create_service(kind, f"~/{name}", serve, **kwargs)

    def restep(self):
        """The joint_states steps again: every part's on_state that has something to do (lock held)."""
        self.steps = tuple(part.on_state for part in self.parts if part.on_state is not None and part.answering)

    def part(self, kind):
        """The node's part of this class."""
        return next(part for part in self.parts if isinstance(part, kind))

    def reject(self, text):
        """Count a bad input (lock held); the text to log, each distinct one at most every 2 s."""
        self.stats["rejected"] += 1
        self.last_error = text
        return self.throttled(text, text, 2.0)

    def throttled(self, key, text, period):
        """text, or None if `key` had its text logged less than `period` s ago (lock held)."""
        now = time.monotonic()
        if now - self._warned.get(key, -1e9) <= period:
            return None
        if len(self._warned) > 256:
            self._warned.clear()
        self._warned[key] = now
        return text

    def once(self, notice, text=None):
        """A notice's text the first time its key comes, else None; notice: (key, text), or a key and text."""
        key, text = notice if text is None else (notice, text)
        if key in self._said:
            return None
        if len(self._said) > 256:
            self._said.clear()
        self._said.add(key)
        return text

    def warn(self, text):
        """Log a warning returned from under the lock (logging may block: never under it)."""
        if text:
            self.get_logger().warning(text)

    def destroy_node(self):
        if not self._destroyed:
            self._destroyed = True
            for part in self.parts:
                part.close()
            super().destroy_node()


def _stored(parameter, value):
    """The Parameter to store for a value as used (floats, not integers or a string), or the
    parameter itself if it is stored that way already. An empty list is stored as [] (a dump then
    writes [], which loads back; a parameter not set is dumped as null)."""
    if isinstance(value, list) and not value:
        current = parameter.value
        is_empty = current is not None and not isinstance(current, (str, bool, int, float)) and not len(current)
        return parameter if is_empty else Parameter(parameter.name, value=[])
    stored = Parameter(parameter.name, value=value)
    if stored.type_ == parameter.type_ and stored.value == parameter.value:
        return parameter
    return stored

