"""ROS 2 node `robot_dynamics`: messages <-> arrays around `robot_dynamics.dynamics`.

Topics (relative, so `namespace` and remapping work):
  in  joint_states            sensor_msgs/JointState (SensorDataQoS, overridable)
  in  robot_description       std_msgs/String (transient local), when no description parameter
  in  ~/reference             trajectory_msgs/JointTrajectory, first point used
  in  ~/base_pose             geometry_msgs/PoseStamped, floating-base models only
  out ~/gravity_torques       sensor_msgs/JointState     g(q)
  out ~/gravity_commands      std_msgs/Float64MultiArray g(q) in `joints` order
  out ~/feedforward_torques   sensor_msgs/JointState     computed-torque feedforward
  out ~/feedforward_commands  std_msgs/Float64MultiArray the same in `joints` order
  out /diagnostics            diagnostic_msgs/DiagnosticArray
Services ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics, ~/wrench_to_joint_torques.
Every parameter is documented in config/dynamics.yaml.

joint_states is taken by a second, bare node `<name>_joint_states` on its own executor and thread:
rclpy's executor rebuilds its wait set in Python on every wake-up, which with this node's services,
parameters and timer was ~70 % of its CPU at 1 kHz.
"""
import array
import copy
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import (DurabilityPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from robot_dynamics_interfaces import srv
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from . import dynamics as rd
from .model import REFERENCES, inertia_about_origin, per_joint, transform_inertia
from .urdf import load_urdf

EVALUATE_AT = ("desired", "measured")
#: name: (default, description); numbers and lists are dynamically typed (ints accepted)
PARAMETERS = {
    "robot_description": ("", "URDF text; wins over urdf_file. Empty: use urdf_file or the topic"),
    "urdf_file": ("", "path of a .urdf or .xacro file"),
    "root_link": ("", "take the subtree below this link (empty: the URDF root)"),
    "tip_link": ("", "keep only the chain root_link -> tip_link (empty: the whole tree)"),
    "floating_base": (False, "give the root a free-flyer joint (base pose on ~/base_pose)"),
    "joints": ([], "output joint order (empty: the model's actuated joints)"),
    "gravity": ([0.0, 0.0, -9.81], "gravity in the world frame [m/s^2]; settable at run time"),
    "armature": ([], "rotor inertia Ir*gr^2 [kg m^2]: one value for all joints or one per model joint"),
    "payload.mass": (0.0, "payload mass [kg]; settable at run time"),
    "payload.com": ([0.0, 0.0, 0.0], "payload centre of mass in the payload link frame [m]"),
    "payload.inertia": ([0.0] * 6, "payload inertia about its COM, ixx iyy izz ixy ixz iyz [kg m^2]"),
    "payload.link": ("", "link carrying the payload (empty: tip_link)"),
    "feedforward.evaluate_at": ("desired", "evaluate M, C, g at the 'desired' or the 'measured' state"),
    "feedforward.kp": ([0.0], "computed-torque position gain [1/s^2]: one value or one per `joints` entry"),
    "feedforward.kd": ([0.0], "computed-torque velocity gain [1/s]: one value or one per `joints` entry"),
    "diagnostics_period": (1.0, "seconds between /diagnostics messages"),
}
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


@dataclass
class Config:
    """Everything derived from the parameters and the description; replaced whole on change."""
    model: object
    joints: list              # output order
    out_v: np.ndarray         # v index of each output joint
    kp: np.ndarray            # per model v, zero on the base
    kd: np.ndarray
    feedback: bool            # any non-zero gain: the feedforward needs the measured state
    evaluate_at: str


def _numbers(value, name, n=None):
    x = np.asarray(value if value is not None else [], dtype=float).reshape(-1)
    if not np.all(np.isfinite(x)) or (n is not None and len(x) != n):
        raise ValueError(f"{name} must be {'' if n is None else f'{n} '}finite numbers, got {value!r}")
    return x


def _gains(value, name, out_v, nv):
    """Gains given for the `joints` entries, as a vector over the model's v (zero elsewhere)."""
    gains = np.zeros(nv)
    gains[out_v] = per_joint(value, len(out_v), f"{name} (for the entries of `joints`)")
    return gains


def build_config(params, description, load_cache):
    """Parameters (name -> value) and URDF text or path -> Config, or ValueError naming the
    problem. load_cache keeps parsed models so that a gravity change does not re-parse."""
    key = (description, bool(params["floating_base"]), params["root_link"] or None, params["tip_link"] or None)
    if key not in load_cache:
        load_cache.clear()
        load_cache[key] = load_urdf(*key)
    model = copy.deepcopy(load_cache[key])
    model.gravity = _numbers(params["gravity"], "gravity", 3)
    if len(params["armature"] or []):
        model.armature = _numbers(params["armature"], "armature")
    _add_payload(model, params)
    joints = list(params["joints"] or model.joint_names)
    _check_names(joints, model, "joints", complete=False)
    out_v = model.joint_offset[1] + np.array([model.joint_index[j] for j in joints], dtype=np.intp)
    if params["feedforward.evaluate_at"] not in EVALUATE_AT:
        raise ValueError(f"feedforward.evaluate_at must be one of {EVALUATE_AT}, "
                         f"got {params['feedforward.evaluate_at']!r}")
    kp = _gains(params["feedforward.kp"], "feedforward.kp", out_v, model.nv)
    kd = _gains(params["feedforward.kd"], "feedforward.kd", out_v, model.nv)
    rd.gravity_torques(model, _neutral(model))      # loads the compiled kernels now, not on the first message
    return Config(model, joints, out_v, kp, kd, bool(kp.any() or kd.any()), params["feedforward.evaluate_at"])


def _add_payload(model, params):
    mass = float(params["payload.mass"])
    if mass == 0.0:
        return
    link = params["payload.link"] or params["tip_link"]
    if not link:
        raise ValueError("a payload needs payload.link or tip_link to say where it is attached")
    com = _numbers(params["payload.com"], "payload.com", 3)
    ixx, iyy, izz, ixy, ixz, iyz = _numbers(params["payload.inertia"], "payload.inertia", 6)
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if mass < 0 or np.linalg.eigvalsh(inertia).min() < -1e-12:
        raise ValueError(f"payload mass must be >= 0 and its inertia positive semi-definite, "
                         f"got mass {mass} and inertia {list(params['payload.inertia'])}")
    frame = model.frame(link)
    if frame.body < 0:
        raise ValueError(f"payload link {link!r} is fixed to the world")
    added = transform_inertia(inertia_about_origin(mass, com, inertia), frame.rotation, frame.translation)
    model.set_body_inertia(frame.body, model.inertia[frame.body] + added)


def _neutral(model):
    q = np.zeros(model.nq)
    if model.floating_base:
        q[6] = 1.0
    return q


def _check_names(names, model, what, complete=True):
    """Duplicate, unknown and (if complete) missing joint names, each named in the error."""
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{what}: duplicate joint names {dup}")
    unknown = [n for n in names if n not in model.joint_index]
    if unknown:
        raise ValueError(f"{what}: unknown joints {unknown}; the model's joints are {model.joint_names}")
    missing = [n for n in model.joint_names if n not in names] if complete else []
    if missing:
        raise ValueError(f"{what}: missing joints {missing}")


class RequestState:
    """The arrays of one service request, mapped by joint name into model coordinates."""

    def __init__(self, model, joint_names):
        self.model = model
        self.names = list(joint_names) or list(model.joint_names)
        _check_names(self.names, model, "joint_names")
        qo, vo = model.joint_offset
        idx = np.array([model.joint_index[n] for n in self.names], dtype=np.intp)
        self.iq, self.iv = qo + idx, vo + idx

    def joint_array(self, values, field, optional=True):
        x = np.asarray(values, dtype=float)
        if optional and len(x) == 0:
            return np.zeros(len(self.names))
        if len(x) != len(self.names):
            raise ValueError(f"{field} has {len(x)} values for {len(self.names)} joints")
        bad = np.flatnonzero(~np.isfinite(x))
        if len(bad):
            raise ValueError(f"{field} contains NaN or inf (joint {self.names[bad[0]]!r})")
        return x

    def q(self, positions, base_pose=None):
        q = _neutral(self.model)
        q[self.iq] = self.joint_array(positions, "positions", optional=False)
        if self.model.floating_base and base_pose is not None:
            p, o = base_pose.position, base_pose.orientation
            q[:7] = _finite([p.x, p.y, p.z, o.x, o.y, o.z, o.w], "base_pose")
        return q

    def v(self, values, field, base=None):
        v = np.zeros(self.model.nv)
        v[self.iv] = self.joint_array(values, field)
        if self.model.floating_base and base is not None:
            v[:6] = _finite(_twist(base), f"base {field}")
        return v

    def out(self, x):
        """Model-order vector -> array.array in request order."""
        return array.array("d", x[self.iv].tobytes())


def _finite(values, what):
    x = np.array(values, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contains NaN or inf")
    return x


def _twist(msg):
    """Twist / Accel / Wrench message -> [linear; angular] (or [force; torque])."""
    a, b = (msg.linear, msg.angular) if hasattr(msg, "linear") else (msg.force, msg.torque)
    return [a.x, a.y, a.z, b.x, b.y, b.z]


def _set_twist(msg, x):
    a, b = (msg.linear, msg.angular) if hasattr(msg, "linear") else (msg.force, msg.torque)
    a.x, a.y, a.z, b.x, b.y, b.z = map(float, x)


def _external_wrenches(model, link_wrenches):
    """LinkWrench[] -> {frame: (wrench, reference)}, every link and reference checked."""
    out = {}
    for lw in link_wrenches:
        model.frame(lw.link)
        reference = lw.reference or "local_world_aligned"
        if reference not in REFERENCES:
            raise ValueError(f"external wrench on {lw.link!r}: reference must be one of "
                             f"{', '.join(REFERENCES)}, got {lw.reference!r}")
        if lw.link in out:
            raise ValueError(f"external_wrenches names link {lw.link!r} twice; give one wrench per link")
        out[lw.link] = (_finite(_twist(lw.wrench), f"external wrench on {lw.link!r}"), reference)
    return out


def _solve_state(model, req, res, solve, given, result):
    """Request (q, qd, one more joint vector, external wrenches) -> solve -> response vector;
    given and result name the joint array and the floating-base field of request and response."""
    rs = RequestState(model, req.joint_names)
    x = solve(model, rs.q(req.positions, req.base_pose), rs.v(req.velocities, "velocities", req.base_twist),
              rs.v(getattr(req, given[0]), given[0], getattr(req, given[1])),
              _external_wrenches(model, req.external_wrenches))
    res.joint_names = rs.names
    setattr(res, result[0], rs.out(x))
    if model.floating_base:
        _set_twist(getattr(res, result[1]), x[:6])


def _error_text(exc):
    return exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)


def _period_stats():
    """Counters of one diagnostics period."""
    return dict(messages=0, rejected=0, latency_sum=0.0, latency_max=0.0, computed=0)


class JointStateMap:
    """Maps a joint_states name list onto model coordinates; built once per distinct list."""

    def __init__(self, model, names):
        known = [(k, model.joint_index[n]) for k, n in enumerate(names) if n in model.joint_index]
        self.duplicates = len(set(names)) != len(names)
        self.src = np.array([k for k, _ in known], dtype=np.intp)
        idx = np.array([j for _, j in known], dtype=np.intp)
        self.iq, self.iv, self.joint = model.joint_offset[0] + idx, model.joint_offset[1] + idx, idx
        self.count = len(names)


def _subscription_qos(node, topic, qos):
    """qos with the read-only parameters qos_overrides.<topic>.subscription.{history,depth,reliability}
    of `node` applied, declared as create_subscription(qos_overriding_options=QoSOverridingOptions.
    with_default_policies()) declares them, for a subscription that lives on another node."""
    qos = copy.copy(qos)
    for policy in ("history", "depth", "reliability"):
        name, default = f"qos_overrides.{topic}.subscription.{policy}", getattr(qos, policy)
        enum = None if policy == "depth" else type(default)    # a policy enum: its short key is the value
        value = node.declare_parameter(name, default.short_key if enum else default, ParameterDescriptor(
            description=f"{policy} for subscription `{topic}` with id `None`", read_only=True)).value
        try:
            setattr(qos, policy, enum.get_from_short_key(value) if enum else value)
        except KeyError:
            raise ValueError(f"{name}: unknown {policy} {value!r}") from None
    return qos


class DynamicsNode(Node):
    """The node; joint_states arrives on `joint_states_node`, spun by main() on a thread of its own.
    self._lock guards what the two threads share: the configuration, the measured state and the
    reference, the joint maps, the counters, the output messages, and every dynamics computation
    (single-state calls reuse the model's scratch buffers). Nothing is logged while it is held."""

    def __init__(self, **kwargs):
        super().__init__("robot_dynamics", **kwargs)
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(
                description=text, dynamic_typing=not isinstance(default, str)))
        self._lock = threading.Lock()
        self.config = None
        self._load_cache, self._maps, self._pending = {}, {}, None
        self._topic_description = None
        self._reference = None
        self._stats = _period_stats()
        self._last_error = ""
        self._missing = []
        self._warned = {}

        # no QoS event handlers on the outputs: each costs the executor ~2 us on every wake-up at 1 kHz
        publish = lambda kind, topic: self.create_publisher(  # noqa: E731
            kind, topic, 10, event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        self.gravity_out = (publish(JointState, "~/gravity_torques"), JointState(),
                            publish(Float64MultiArray, "~/gravity_commands"), Float64MultiArray())
        self.feedforward_out = (publish(JointState, "~/feedforward_torques"), JointState(),
                                publish(Float64MultiArray, "~/feedforward_commands"), Float64MultiArray())
        self.pub_diag = publish(DiagnosticArray, "/diagnostics")
        topic = self.resolve_topic_name("joint_states")     # with the user's remaps and namespace
        self.joint_states_node = Node(  # nothing but the subscription (its logging is this node's)
            f"{self.get_name()}_joint_states", namespace=self.get_namespace(), context=self.context,
            use_global_arguments=False,     # a __node:= remap would rename it too
            enable_rosout=False, start_parameter_services=False,
            parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.joint_states_node.create_subscription(JointState, topic, self.on_joint_states,
                                                   _subscription_qos(self, topic, qos_profile_sensor_data))
        self.create_subscription(JointTrajectory, "~/reference", self.on_reference, 1)   # only the latest counts
        self.create_subscription(PoseStamped, "~/base_pose", self.on_base_pose, qos_profile_sensor_data)
        for name, kind, handler in (("inverse_dynamics", srv.InverseDynamics, self.inverse_dynamics),
                                    ("forward_dynamics", srv.ForwardDynamics, self.forward_dynamics),
                                    ("hybrid_dynamics", srv.HybridDynamics, self.hybrid_dynamics),
                                    ("wrench_to_joint_torques", srv.WrenchToJointTorques, self.wrench_to_joint_torques)):
            self.create_service(kind, f"~/{name}", self._guarded(handler))

        params = self._params()
        if params["robot_description"] or params["urdf_file"]:
            self._reconfigure(params)
        else:
            self.get_logger().info("no robot_description or urdf_file parameter: waiting for a URDF on "
                                   f"{self.resolve_topic_name('robot_description')}; publishing nothing until then")
            self.create_subscription(String, "robot_description", self.on_description, DESCRIPTION_QOS)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)
        self._diag_time = time.monotonic()
        self.create_timer(float(params["diagnostics_period"]), self.publish_diagnostics)

    # --- configuration ----------------------------------------------------------------------------
    def _params(self, changes=()):
        params = {name: self.get_parameter(name).value for name in PARAMETERS}
        params.update({p.name: p.value for p in changes})
        return params

    def _description(self, params):
        return params["robot_description"] or params["urdf_file"] or self._topic_description

    def _reconfigure(self, params):
        """Build and swap in a configuration; False, with the error counted and logged, if that fails."""
        try:
            config = build_config(params, self._description(params), self._load_cache)
        except Exception as exc:   # a bad URDF or parameter must not stop the node
            error = f"model not (re)built: {_error_text(exc)}"
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
            if not (keep_state and old is not None and (model.joint_names, model.nq) == (old.joint_names, old.nq)):
                self._q, self._v = _neutral(model), np.zeros(model.nv)
                self._seen = np.zeros(len(model.joint_names), bool)
                self._complete, self._missing, self._reference = False, list(model.joint_names), None
            self.config, self._maps, self._last_error = config, {}, ""
            self.gravity_out[1].name = self.feedforward_out[1].name = config.joints
        self.get_logger().info(f"model {model.name!r}: {len(model.joint_names)} joints, nq={model.nq}, "
                               f"nv={model.nv}, total mass {model.total_mass:.3f} kg; output joints {config.joints}")

    def _on_set_parameters(self, changes):
        known = [p for p in changes if p.name in PARAMETERS]
        if not known:
            return SetParametersResult(successful=True)
        params = self._params(known)
        if self._description(params) is None:
            self._pending = None        # nothing to build yet; checked when a description arrives
            return SetParametersResult(successful=True)
        try:
            self._pending = build_config(params, self._description(params), self._load_cache)
        except Exception as exc:
            return SetParametersResult(successful=False, reason=_error_text(exc))
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, changes):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._apply(pending, keep_state=True)   # e.g. a gravity change keeps the measured state

    def on_description(self, msg):
        previous, self._topic_description = self._topic_description, msg.data
        params = self._params()
        if params["robot_description"] or params["urdf_file"]:
            return      # a description parameter wins over the topic
        if not self._reconfigure(params):
            self._topic_description = previous

    # --- joint_states -> gravity (and feedforward) --------------------------------------------------
    def on_joint_states(self, msg):
        """On the joint_states thread."""
        t0 = time.perf_counter()
        with self._lock:
            warning = self._take_joint_states(msg, t0)
        self._warn(warning)

    def _take_joint_states(self, msg, t0):
        """on_joint_states under the lock; a warning to log, or None."""
        self._stats["messages"] += 1
        config = self.config
        if config is None:
            return None
        names = msg.name
        key = tuple(names)
        jmap = self._maps.get(key)
        if jmap is None:
            if len(self._maps) > 64:
                self._maps.clear()
            jmap = self._maps[key] = JointStateMap(config.model, names)
        pos, vel = np.frombuffer(msg.position), np.frombuffer(msg.velocity)
        problem = ("duplicate joint names" if jmap.duplicates else
                   f"{len(pos)} positions for {jmap.count} names" if len(pos) != jmap.count else
                   f"{len(vel)} velocities for {jmap.count} names" if len(vel) not in (0, jmap.count) else
                   "NaN or inf values" if not (np.isfinite(pos).all() and np.isfinite(vel).all()) else None)
        if problem:
            return self._reject(f"joint_states rejected: {problem}")
        self._q[jmap.iq] = pos[jmap.src]
        self._v[jmap.iv] = vel[jmap.src] if len(vel) else 0.0
        if not self._complete:
            self._seen[jmap.joint] = True
            self._complete = bool(self._seen.all())
            self._missing = [n for n, s in zip(config.model.joint_names, self._seen) if not s]
            if not self._complete:
                return self._throttled("waiting", f"waiting for joint_states of {self._missing}; "
                                                  "publishing nothing", 5.0)
        stamp = msg.header.stamp
        self._publish(self.gravity_out, rd.gravity_torques(config.model, self._q), stamp)
        if self._reference is not None:
            self._publish_feedforward(stamp)
        self._record(time.perf_counter() - t0)
        return None

    def _publish(self, outputs, tau, stamp):
        """One torque vector to a JointState and a Float64MultiArray publisher; the messages are
        built once per configuration and only refilled here."""
        pub_state, state, pub_command, command = outputs
        effort = array.array("d", tau[self.config.out_v].tobytes())
        if pub_state.get_subscription_count():
            state.header.stamp = stamp
            state.effort = effort
            pub_state.publish(state)
        if pub_command.get_subscription_count():
            command.data = effort
            pub_command.publish(command)

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
        self._warned[key] = now
        return text

    def _warn(self, text):
        """Log a warning returned from under the lock (logging may block: never under it)."""
        if text:
            self.get_logger().warning(text)

    def _record(self, seconds):
        s = self._stats
        s["computed"] += 1
        s["latency_sum"] += seconds
        s["latency_max"] = max(s["latency_max"], seconds)

    def on_base_pose(self, msg):
        p, o = msg.pose.position, msg.pose.orientation
        x = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
        norm = np.linalg.norm(x[3:])
        with self._lock:
            if self.config is None or not self.config.model.floating_base:
                return
            if np.all(np.isfinite(x)) and abs(norm - 1.0) <= 1e-6:
                self._q[:7] = x
                return
            warning = self._reject(f"base_pose rejected: needs finite values and a unit quaternion (norm {norm:.6g})")
        self._warn(warning)

    # --- reference -> computed-torque feedforward -----------------------------------------------------
    def on_reference(self, msg):
        with self._lock:
            warning = self._take_reference(msg)
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
            if config.model.floating_base:
                q_d[:7] = self._q[:7]
            self._reference = (q_d, request.v(point.velocities, "velocities"),
                               request.v(point.accelerations, "accelerations"))
        except ValueError as exc:
            return self._reject(f"reference rejected: {_error_text(exc)}")
        if self._complete or (config.evaluate_at == "desired" and not config.feedback):
            self._publish_feedforward(msg.header.stamp)
        return None

    def _publish_feedforward(self, stamp):
        """tau = M(q_e)(qdd_d + kp (q_d - q) + kd (qd_d - qd)) + C(q_e, qd_e) qd_e + g(q_e), one RNEA
        (seed 001 computed-torque control); q_e is the desired or the measured state."""
        config = self.config
        q_d, v_d, a_d = self._reference
        a = a_d
        if self._complete and config.feedback:
            error_q = np.zeros(config.model.nv)
            error_q[config.model.joint_offset[1]:] = (q_d - self._q)[config.model.joint_offset[0]:]
            a = a_d + config.kp * error_q + config.kd * (v_d - self._v)
        q_e, v_e = (q_d, v_d) if config.evaluate_at == "desired" else (self._q, self._v)
        self._publish(self.feedforward_out, rd.inverse_dynamics(config.model, q_e, v_e, a), stamp)

    # --- services -------------------------------------------------------------------------------------
    def _guarded(self, handler):
        """Run a service handler; any error becomes success=false with a message naming it."""
        def serve(request, response):
            try:
                with self._lock:
                    if self.config is None:
                        raise ValueError("no robot model loaded yet (set robot_description or urdf_file, "
                                         "or publish the URDF on robot_description)")
                    handler(self.config.model, request, response)
                response.success, response.message = True, "ok"
            except Exception as exc:
                response.success, response.message = False, _error_text(exc) or type(exc).__name__
                with self._lock:
                    self._stats["rejected"] += 1
                self.get_logger().warning(f"{handler.__name__}: {response.message}", throttle_duration_sec=1.0)
            return response
        serve.__name__ = handler.__name__
        return serve

    @staticmethod
    def inverse_dynamics(model, req, res):
        """Efforts (and the base wrench) for positions, velocities, accelerations and wrenches."""
        _solve_state(model, req, res, rd.inverse_dynamics, ("accelerations", "base_acceleration"),
                     ("efforts", "base_wrench"))

    @staticmethod
    def forward_dynamics(model, req, res):
        """Accelerations (and the base acceleration) for positions, velocities, efforts and wrenches."""
        _solve_state(model, req, res, rd.forward_dynamics, ("efforts", "base_wrench"),
                     ("accelerations", "base_acceleration"))

    @staticmethod
    def hybrid_dynamics(model, req, res):
        rs = RequestState(model, req.joint_names)
        if len(req.acceleration_known) != len(rs.names):
            raise ValueError(f"acceleration_known has {len(req.acceleration_known)} values "
                             f"for {len(rs.names)} joints")
        known = np.zeros(model.nv, bool)        # a floating base is unactuated: zero wrench, acceleration solved
        known[rs.iv] = np.asarray(req.acceleration_known, bool)
        qdd, tau = rd.hybrid_dynamics(model, rs.q(req.positions, req.base_pose),
                                      rs.v(req.velocities, "velocities", req.base_twist), known,
                                      rs.v(req.accelerations, "accelerations"), rs.v(req.efforts, "efforts"))
        res.joint_names, res.accelerations, res.efforts = rs.names, rs.out(qdd), rs.out(tau)

    @staticmethod
    def wrench_to_joint_torques(model, req, res):
        rs = RequestState(model, req.joint_names)
        reference = req.reference or "local_world_aligned"
        q = rs.q(req.positions, req.base_pose)
        J = rd.frame_jacobian(model, q, req.frame, reference)[:, rs.iv]
        tau = J.T @ _finite(_twist(req.wrench), "wrench")
        res.joint_names, res.efforts = rs.names, array.array("d", tau.tobytes())
        res.jacobian, res.jacobian_rows, res.jacobian_cols = array.array("d", J.tobytes()), 6, len(rs.names)

    # --- diagnostics -------------------------------------------------------------------------------------
    def publish_diagnostics(self):
        with self._lock:
            s, self._stats = self._stats, _period_stats()
            config, missing, last_error = self.config, self._missing, self._last_error
        now = time.monotonic()
        period, self._diag_time = now - self._diag_time, now
        status = DiagnosticStatus(name=f"{self.get_name()}: dynamics")
        computed = max(s["computed"], 1)
        values = {
            "model": config.model.name if config else "none",
            "joint_states rate [Hz]": f"{s['messages'] / period:.1f}",
            "compute latency mean [us]": f"{1e6 * s['latency_sum'] / computed:.1f}",
            "compute latency max [us]": f"{1e6 * s['latency_max']:.1f}",
            "rejected inputs": str(s["rejected"]),
            "missing joints": " ".join(missing) if config else "",
            "last error": last_error,
        }
        if config is None:
            status.level, status.message = DiagnosticStatus.ERROR, "no robot model loaded"
        elif missing:
            status.level, status.message = DiagnosticStatus.WARN, f"waiting for joint_states of {missing}"
        elif s["rejected"]:
            status.level, status.message = DiagnosticStatus.WARN, f"{s['rejected']} inputs rejected"
        else:
            status.level, status.message = DiagnosticStatus.OK, "serving"
        status.hardware_id = values["model"]
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        diag = DiagnosticArray(status=[status])
        diag.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(diag)

    def destroy_node(self):
        self.joint_states_node.destroy_node()
        super().destroy_node()


def _spin_joint_states(executor, main_executor, failure):
    """The joint_states thread. An error in it stops the main executor too; main() raises it."""
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
    except Exception as exc:
        failure.append(exc)
        main_executor.shutdown()


def main(args=None):
    rclpy.init(args=args)
    # the executors before the node: a signal during start-up then finds them whole
    executor, joint_states_executor = SingleThreadedExecutor(), SingleThreadedExecutor()
    node, failure = None, []
    thread = threading.Thread(target=_spin_joint_states, args=(joint_states_executor, executor, failure),
                              name="joint_states")
    try:
        node = DynamicsNode()
        joint_states_executor.add_node(node.joint_states_node)
        thread.start()
        executor.add_node(node)
        executor.spin()
        if failure:
            raise failure[0]
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():      # not a SIGTERM/SIGINT shutdown racing the start-up
            raise
    finally:
        # shutdown first: it joins rclpy's signal thread, which triggers every executor's SIGINT
        # guard condition unsynchronised (destroying one under it crashed ~1 exit in 10), and it
        # wakes both executors
        rclpy.try_shutdown()
        if thread.is_alive():
            thread.join()
        executor.shutdown()
        joint_states_executor.shutdown()
        if node is not None:
            node.destroy_node()
    return 0


if __name__ == "__main__":
    sys.exit(main())
