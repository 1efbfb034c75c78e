"""ROS 2 node `robot_dynamics`: messages <-> arrays around `robot_dynamics.dynamics`.

Topics (relative, so `namespace` and remapping work):
  in  joint_states            sensor_msgs/JointState (SensorDataQoS, overridable)
  in  robot_description       std_msgs/String (transient local), used when no description parameter
  in  ~/reference             trajectory_msgs/JointTrajectory, first point used
  in  ~/base_pose             geometry_msgs/PoseStamped, floating-base models only
  out ~/gravity_torques       sensor_msgs/JointState     g(q)
  out ~/gravity_commands      std_msgs/Float64MultiArray g(q) in `joints` order
  out ~/feedforward_torques   sensor_msgs/JointState     computed-torque feedforward
  out ~/feedforward_commands  std_msgs/Float64MultiArray the same in `joints` order
  out /diagnostics            diagnostic_msgs/DiagnosticArray
Services ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics, ~/wrench_to_joint_torques.
Every parameter is documented in config/dynamics.yaml; `PARAMETERS` below checks each one.

joint_states is taken by a second, bare node `<name>_joint_states` on its own executor and thread:
rclpy's executor rebuilds its wait set in Python on every wake-up, which with this node's services,
parameters and timer was ~70 % of its CPU at 1 kHz.

Nothing non-finite leaves the node as a success: inputs are checked (a free-flyer quaternion is
normalised, or refused, by `model.unit_quaternion`), and so is every published or returned number
(a finite input can still overflow).
"""
import signal
import sys

if __name__ == "__main__":      # `python -m robot_dynamics.node`: see StopSignals
    _EARLY_SIGNALS = []
    for _signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signum, lambda signum, frame: _EARLY_SIGNALS.append(signum))

import array  # noqa: E402
import copy  # noqa: E402
import math  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
import yaml  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult  # noqa: E402
from rclpy.event_handler import PublisherEventCallbacks  # noqa: E402
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import (DurabilityPolicy, QoSProfile, ReliabilityPolicy,  # noqa: E402
                       qos_profile_sensor_data)
from robot_dynamics_interfaces import srv  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from . import dynamics as rd  # noqa: E402
from .model import REFERENCES, inertia_about_origin, transform_inertia, unit_quaternion  # noqa: E402
from .urdf import load_urdf  # noqa: E402

EVALUATE_AT = ("desired", "measured")
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
JOIN_TIMEOUT = 5.0      # s to wait for the joint_states thread at exit (it is woken; it never took long)


# --- parameters: each value checked on its own, then the whole configuration built ------------------
class ParameterError(ValueError):
    """A parameter value refused; the message names the parameter and the form it takes."""

    def __init__(self, name, message):
        super().__init__(message)
        self.name = name


class StartupError(Exception):
    """The node cannot start as configured (a parameter, the URDF); main() logs it and exits 1."""


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _from_string(value):
    """A number or a list of numbers written as a string (`ros2 param set` sends a list that mixes
    integers and floats, like [0, 0, -9.81], as a string), or the string itself."""
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    try:
        if isinstance(parsed, str):
            return float(parsed)            # 'nan', 'inf', '1e3' (YAML 1.1 reads these as text)
        if isinstance(parsed, list):
            return [v if _is_number(v) else float(v) if isinstance(v, str) else v for v in parsed]
    except ValueError:
        return value
    return parsed


def _floats(value, sizes=None, scalar=False):
    """Parameter value -> list of finite floats (or one float if scalar); TypeError / ValueError.
    sizes: allowed list lengths (None: any). A number is taken as a list of one where lists are."""
    if isinstance(value, str):
        value = _from_string(value)
    if _is_number(value):
        value = [value]
    elif not isinstance(value, (list, tuple, array.array)) or not all(_is_number(v) for v in value):
        raise TypeError
    x = [float(v) for v in value]
    if not all(math.isfinite(v) for v in x):
        raise ValueError
    if scalar:
        if len(x) != 1:
            raise ValueError
        return x[0]
    if sizes is not None and len(x) not in sizes:
        raise ValueError
    return x


def _non_negative(x):
    if any(v < 0 for v in (x if isinstance(x, list) else [x])):
        raise ValueError
    return x


def _text(value):
    if not isinstance(value, str):
        raise TypeError
    return value


def _boolean(value):
    if not isinstance(value, bool):
        raise TypeError
    return value


def _names(value):
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError
    if len(set(value)) != len(value):
        raise ValueError("the names must be distinct")
    return list(value)


def _choice(*choices):
    def check(value):
        if value not in choices:
            raise ValueError
        return value
    return check


def _payload_inertia(value):
    """ixx iyy izz ixy ixz iyz of a rigid body about its centre of mass: positive semi-definite, and
    its principal moments satisfy the triangle inequality (I1 + I2 >= I3)."""
    ixx, iyy, izz, ixy, ixz, iyz = _floats(value, (6,))
    eig = np.linalg.eigvalsh(np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    tol = 1e-12 + 1e-9 * float(np.abs(eig).max())
    if eig[0] < -tol or eig[0] + eig[1] < eig[2] - tol:
        raise ValueError(f"its principal moments {', '.join(f'{e:.6g}' for e in eig)} are not a rigid body's")
    return [ixx, iyy, izz, ixy, ixz, iyz]


def _period(value):
    x = _floats(value, scalar=True)
    if not 0.01 <= x <= 3600.0:
        raise ValueError
    return x


@dataclass(frozen=True)
class ParameterSpec:
    default: object
    description: str
    form: str               # what it takes: in refusals and in `ros2 param describe` (constraints)
    check: Callable         # value -> the value as used (floats as floats), or TypeError / ValueError
    read_only: bool = False  # only read at start-up


#: every parameter of the node. Numbers take integers or floats (a list of them all one type: rcl's
#: YAML reader refuses a list that mixes them); they are stored as floats. Checked at start-up and
#: on every change, before anything takes effect.
PARAMETERS = {
    "robot_description": ParameterSpec(
        "", "URDF text; wins over urdf_file. Empty: use urdf_file or the robot_description topic",
        "a string (URDF XML)", _text),
    "urdf_file": ParameterSpec("", "path of a .urdf or .xacro file", "a string (a file path)", _text),
    "root_link": ParameterSpec("", "take the subtree below this link (empty: the URDF root)",
                               "a link name (a string)", _text),
    "tip_link": ParameterSpec("", "keep only the chain root_link -> tip_link (empty: the whole tree)",
                              "a link name (a string)", _text),
    "floating_base": ParameterSpec(False, "give the root a free-flyer joint (base pose on ~/base_pose)",
                                   "true or false", _boolean),
    "joints": ParameterSpec([], "output joint order (empty: the model's actuated joints)",
                            "a list of distinct joint names of the model", _names),
    "gravity": ParameterSpec([0.0, 0.0, -9.81], "gravity in the world frame [m/s^2]",
                             "3 finite numbers [m/s^2], e.g. [0.0, 0.0, -9.81]",
                             lambda v: _floats(v, (3,))),
    "armature": ParameterSpec(
        [], "rotor inertia Ir*gr^2 [kg m^2]: empty, one value for all joints or one per model joint",
        "empty, one finite number >= 0 [kg m^2] for every joint, or one per model joint",
        lambda v: _non_negative([] if isinstance(v, (list, tuple, array.array)) and not len(v)
                                else _floats(v))),
    "payload.mass": ParameterSpec(0.0, "payload mass [kg] (0: no payload)",
                                  "a finite number >= 0 [kg]",
                                  lambda v: _non_negative(_floats(v, scalar=True))),
    "payload.com": ParameterSpec([0.0, 0.0, 0.0], "payload centre of mass in the payload link frame [m]",
                                 "3 finite numbers [m]", lambda v: _floats(v, (3,))),
    "payload.inertia": ParameterSpec(
        [0.0] * 6, "payload inertia about its COM, ixx iyy izz ixy ixz iyz [kg m^2]",
        "6 finite numbers ixx iyy izz ixy ixz iyz [kg m^2] of a rigid body (positive semi-definite, "
        "principal moments I1 + I2 >= I3)", _payload_inertia),
    "payload.link": ParameterSpec("", "link carrying the payload (empty: tip_link)",
                                  "a link name of the model (a string)", _text),
    "feedforward.evaluate_at": ParameterSpec(
        "desired", "evaluate M, C, g at the 'desired' or the 'measured' state",
        f"one of {', '.join(EVALUATE_AT)}", _choice(*EVALUATE_AT)),
    "feedforward.kp": ParameterSpec(
        [0.0], "computed-torque position gain [1/s^2]: one value or one per `joints` entry",
        "one finite number >= 0 [1/s^2], or one per `joints` entry", lambda v: _non_negative(_floats(v))),
    "feedforward.kd": ParameterSpec(
        [0.0], "computed-torque velocity gain [1/s]: one value or one per `joints` entry",
        "one finite number >= 0 [1/s], or one per `joints` entry", lambda v: _non_negative(_floats(v))),
    "diagnostics_period": ParameterSpec(1.0, "seconds between /diagnostics messages (read at start-up)",
                                        "a number of seconds in [0.01, 3600]", _period, read_only=True),
}


def _shown(value):
    if isinstance(value, array.array):
        value = value.tolist()
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def check_parameter(name, value):
    """The value of parameter `name` as the node uses it (numbers as floats), or ParameterError
    naming the parameter, the form it takes and the value refused."""
    spec = PARAMETERS[name]
    if value is None:       # not set: rcl reads an empty list in a parameter file ([]) so
        value = spec.default
    try:
        return spec.check(value)
    except (TypeError, ValueError) as exc:
        detail = f" ({exc})" if str(exc) else ""
        raise ParameterError(name, f"parameter {name} takes {spec.form}; got {_shown(value)}{detail}") from None


def check_parameters(values):
    """{name: value} -> {name: value as used}; ParameterError for the first bad one."""
    return {name: check_parameter(name, value) for name, value in values.items()}


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


def _per_entry(values, n, name, what):
    """1 or n values (checked by check_parameter) as an array of n."""
    if len(values) not in (1, n):
        raise ParameterError(name, f"parameter {name} takes one value or one per {what} ({n}); "
                                   f"got {len(values)} values")
    return np.broadcast_to(np.asarray(values, float), (n,)).copy()


def _load(load_cache, description, floating_base, root, tip):
    """A parsed model, cached (a gravity change does not re-parse; at most 4 kept)."""
    key = (description, floating_base, root, tip)
    if key not in load_cache:
        if len(load_cache) >= 4:
            load_cache.pop(next(iter(load_cache)))
        load_cache[key] = load_urdf(*key)
    return load_cache[key]


def build_config(params, description, load_cache):
    """Checked parameter values (check_parameters) and URDF text or path -> Config; a ValueError
    naming the parameter or the URDF problem otherwise. Nothing is changed on failure."""
    root, tip = params["root_link"] or None, params["tip_link"] or None
    source = ("parameter robot_description" if params["robot_description"] else
              f"parameter urdf_file ({params['urdf_file']!r})" if params["urdf_file"] else
              "the URDF from the robot_description topic")
    try:
        model = copy.deepcopy(_load(load_cache, description, params["floating_base"], root, tip))
    except ValueError as exc:       # URDFError: the file, the text, or the links named
        text = str(exc)
        culprit = ("root_link" if root and repr(root) in text else "tip_link" if tip and repr(tip) in text
                   else "urdf_file" if params["urdf_file"] and not params["robot_description"]
                   else "robot_description")
        named = "".join(f" with {n} {v!r}" for n, v in (("root_link", root), ("tip_link", tip)) if v)
        raise ParameterError(culprit, f"{source}{named}: {text}") from None
    model.gravity = params["gravity"]
    if params["armature"]:
        model.armature = _per_entry(params["armature"], len(model.joint_names), "armature",
                                    f"model joint {model.joint_names}")
    _add_payload(model, params)
    joints = params["joints"] or list(model.joint_names)
    unknown = [j for j in joints if j not in model.joint_index]
    if unknown:
        raise ParameterError("joints", f"parameter joints: unknown joints {unknown}; the model's "
                                       f"joints are {model.joint_names}")
    out_v = model.joint_offset[1] + np.array([model.joint_index[j] for j in joints], dtype=np.intp)
    gains = {}
    for name in ("feedforward.kp", "feedforward.kd"):
        gains[name] = np.zeros(model.nv)
        gains[name][out_v] = _per_entry(params[name], len(joints), name, "`joints` entry")
    # loads the compiled kernels now, not on the first message; and a last check of the numbers
    if not np.isfinite(rd.gravity_torques(model, _neutral(model))).all():
        raise ParameterError("gravity", "parameters gravity and payload.mass: the gravity torques "
                                        "they give are not finite (values too large)")
    kp, kd = gains["feedforward.kp"], gains["feedforward.kd"]
    return Config(model, joints, out_v, kp, kd, bool(kp.any() or kd.any()), params["feedforward.evaluate_at"])


def _add_payload(model, params):
    """The payload's inertia added to the body of payload.link (tip_link if empty). The link is
    checked even without a payload, so that a wrong name is refused when it is set."""
    mass, link = params["payload.mass"], params["payload.link"]
    if link and link not in model.frames:
        raise ParameterError("payload.link", f"parameter payload.link: no link {link!r} in the model; "
                                             f"its links are {model.frame_names}")
    if mass == 0.0:
        return
    link = link or params["tip_link"]
    if not link:
        raise ParameterError("payload.link", "parameter payload.link (or tip_link) must name the link "
                                             "carrying a payload of non-zero payload.mass")
    frame = model.frame(link)
    if frame.body < 0:
        raise ParameterError("payload.link", f"parameter payload.link: link {link!r} is fixed to the world")
    ixx, iyy, izz, ixy, ixz, iyz = params["payload.inertia"]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    added = transform_inertia(inertia_about_origin(mass, params["payload.com"], inertia),
                              frame.rotation, frame.translation)
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


def base_pose(position, orientation, what="base_pose"):
    """geometry_msgs Point and Quaternion -> q[:7] (x y z qx qy qz qw), the quaternion normalised by
    the library's one rule (model.unit_quaternion); ValueError naming `what` otherwise."""
    p, o = position, orientation
    return np.concatenate((_finite([p.x, p.y, p.z], f"{what}.position"),
                           unit_quaternion([o.x, o.y, o.z, o.w], f"{what}.orientation")))


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

    def q(self, positions, pose=None):
        q = _neutral(self.model)
        q[self.iq] = self.joint_array(positions, "positions", optional=False)
        if self.model.floating_base and pose is not None:
            q[:7] = base_pose(pose.position, pose.orientation)
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


#: numeric fields of the services' responses: all must be finite for success=true
RESPONSE_ARRAYS = ("efforts", "accelerations", "jacobian")
RESPONSE_TWISTS = ("base_wrench", "base_acceleration")


def check_response_finite(response):
    """ValueError if a number of the response is NaN or inf (a finite request can overflow)."""
    for field in RESPONSE_ARRAYS:
        if hasattr(response, field) and not math.isfinite(sum(getattr(response, field))):
            raise ValueError(f"the {field} computed are not finite (the request's values are too large)")
    for field in RESPONSE_TWISTS:
        if hasattr(response, field) and not math.isfinite(sum(_twist(getattr(response, field)))):
            raise ValueError(f"the {field} computed is not finite (the request's values are too large)")


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
            description=f"{policy} for subscription `{topic}` with id `None`", read_only=True,
            dynamic_typing=True)).value
        if enum is None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParameterError(name, f"parameter {name} takes an integer >= 1; got {_shown(value)}")
            qos.depth = value
            continue
        try:
            setattr(qos, policy, enum.get_from_short_key(value))
        except (KeyError, AttributeError, TypeError):
            raise ParameterError(name, f"parameter {name} takes one of {', '.join(enum.short_keys())}; "
                                       f"got {_shown(value)}") from None
    return qos


class DynamicsNode(Node):
    """The node; joint_states arrives on `joint_states_node`, spun by main() on a thread of its own.
    self._lock guards what the two threads share: the configuration, the measured state and the
    reference, the joint maps, the counters, the output messages, and every dynamics computation
    (single-state calls reuse the model's scratch buffers). Nothing is logged while it is held.

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
        self.config = None
        self._load_cache, self._maps, self._pending = {}, {}, None
        self._topic_description = None
        self._reference = None
        self._stats = _period_stats()
        self._last_error = ""
        self._missing = []
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
            raise StartupError(_error_text(exc)) from None
        self._store_as_used(params)

        # no QoS event handlers on the outputs: each costs the executor ~2 us on every wake-up at 1 kHz
        publish = lambda kind, topic: self.create_publisher(  # noqa: E731
            kind, topic, 10, event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        self.gravity_out = (publish(JointState, "~/gravity_torques"), JointState(),
                            publish(Float64MultiArray, "~/gravity_commands"), Float64MultiArray())
        self.feedforward_out = (publish(JointState, "~/feedforward_torques"), JointState(),
                                publish(Float64MultiArray, "~/feedforward_commands"), Float64MultiArray())
        self.pub_diag = publish(DiagnosticArray, "/diagnostics")
        self.joint_states_node = Node(  # nothing but the subscription (its logging is this node's)
            f"{self.get_name()}_joint_states", namespace=self.get_namespace(), context=self.context,
            use_global_arguments=False,     # a __node:= remap would rename it too
            enable_rosout=False, start_parameter_services=False,
            parameter_overrides=[Parameter("start_type_description_service", value=False)])
        self.joint_states_node.create_subscription(JointState, topic, self.on_joint_states, qos)
        self.create_subscription(JointTrajectory, "~/reference", self.on_reference, 1)   # only the latest counts
        self.create_subscription(PoseStamped, "~/base_pose", self.on_base_pose, qos_profile_sensor_data)
        for name, kind, handler in (("inverse_dynamics", srv.InverseDynamics, self.inverse_dynamics),
                                    ("forward_dynamics", srv.ForwardDynamics, self.forward_dynamics),
                                    ("hybrid_dynamics", srv.HybridDynamics, self.hybrid_dynamics),
                                    ("wrench_to_joint_torques", srv.WrenchToJointTorques, self.wrench_to_joint_torques)):
            self.create_service(kind, f"~/{name}", self._guarded(handler))

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
            return SetParametersResult(successful=False, reason=_error_text(exc) or type(exc).__name__)
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
                warning = self._reject(f"joint_states rejected: {_error_text(exc) or type(exc).__name__}")
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
        warning = self._publish(self.gravity_out, rd.gravity_torques(config.model, self._q), stamp, "gravity")
        if self._reference is not None:
            warning = self._publish_feedforward(stamp) or warning
        self._record(time.perf_counter() - t0)
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

    def _record(self, seconds):
        s = self._stats
        s["computed"] += 1
        s["latency_sum"] += seconds
        s["latency_max"] = max(s["latency_max"], seconds)

    def on_base_pose(self, msg):
        try:
            pose, problem = base_pose(msg.pose.position, msg.pose.orientation), None
        except ValueError as exc:
            pose, problem = None, str(exc)
        with self._lock:
            if self.config is None or not self.config.model.floating_base:
                return
            if problem is None:
                self._q[:7] = pose
                return
            warning = self._reject(f"base_pose rejected: {problem}")
        self._warn(warning)

    # --- reference -> computed-torque feedforward -----------------------------------------------------
    def on_reference(self, msg):
        with self._lock:
            try:
                warning = self._take_reference(msg)
            except Exception as exc:
                warning = self._reject(f"reference rejected: {_error_text(exc) or type(exc).__name__}")
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
            return self._publish_feedforward(msg.header.stamp)
        return None

    def _publish_feedforward(self, stamp):
        """tau = M(q_e)(qdd_d + kp (q_d - q) + kd (qd_d - qd)) + C(q_e, qd_e) qd_e + g(q_e), one RNEA
        (computed-torque control); q_e is the desired or the measured state."""
        config = self.config
        q_d, v_d, a_d = self._reference
        a = a_d
        if self._complete and config.feedback:
            error_q = np.zeros(config.model.nv)
            error_q[config.model.joint_offset[1]:] = (q_d - self._q)[config.model.joint_offset[0]:]
            a = a_d + config.kp * error_q + config.kd * (v_d - self._v)
        q_e, v_e = (q_d, v_d) if config.evaluate_at == "desired" else (self._q, self._v)
        return self._publish(self.feedforward_out, rd.inverse_dynamics(config.model, q_e, v_e, a), stamp,
                             "feedforward")

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
            status.level, status.message = DiagnosticStatus.ERROR, self._no_model()
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
        if not self._destroyed:
            self._destroyed = True
            if hasattr(self, "joint_states_node"):
                self.joint_states_node.destroy_node()
            super().destroy_node()


def _stored(parameter, value):
    """The Parameter to store for a value as used (floats, not integers or a string), or the
    parameter itself if it is stored that way already (an empty list is left as it came)."""
    if isinstance(value, list) and not value:
        return parameter
    stored = Parameter(parameter.name, value=value)
    if stored.type_ == parameter.type_ and stored.value == parameter.value:
        return parameter
    return stored


# --- the process: signals, executors, exit ------------------------------------------------------------
class StopSignals:
    """SIGINT and SIGTERM, from main()'s first line to its return, as one request to stop.

    The first signal raises KeyboardInterrupt in the main thread while armed (the main executor spins
    there; rclpy's handler, which is chained after this one, wakes the executors so that the main
    thread gets to run it). Before that (start-up, model loading) it is only recorded, and main()
    stops before spinning. Every later signal is ignored: a terminal's Ctrl-C signals the whole
    process group and ros2 launch forwards one more SIGINT, and the second must not interrupt the
    cleanup. Signals that came before main() (see the executable) are passed in `received`."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, received=()):
        self.received = list(received)
        self.armed = False
        for signum in self.SIGNALS:
            signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        self.received.append(signum)
        if self.armed and len(self.received) == 1:
            self.armed = False
            raise KeyboardInterrupt

    def ignore(self):
        """From now on ignore SIGINT and SIGTERM at the OS level: the process is ending, and Python's
        finalisation would put back their default handlers (a late second Ctrl-C would then kill it
        with SIGINT instead of letting it exit 0)."""
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    @contextmanager
    def raising(self):
        """Within: the first signal raises KeyboardInterrupt (at once, if one came already)."""
        self.armed = True
        try:
            if self.received:
                raise KeyboardInterrupt
            yield
        finally:
            self.armed = False


def _spin_joint_states(executor, main_executor, failure):
    """The joint_states thread. An error in it stops the main executor too; main() raises it."""
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
    except Exception as exc:
        failure.append(exc)
        main_executor.shutdown(timeout_sec=0)


def _startup_hint(text):
    if "Sequence should be of same type" in text:
        return (" (rcl reads each list of a parameter file or -p override as one type: write every number "
                "of a list of floats with a decimal point, e.g. [0.0, 0.0, -9.81], not [0, 0, -9.81])")
    return ""


def main(args=None, signals_received=()):
    """Run the node until SIGINT or SIGTERM: exit code 0, or 1 if it cannot start as configured.
    signals_received: SIGINT / SIGTERM caught before main() (the executable's first lines)."""
    stop = StopSignals(signals_received)     # before rclpy.init: rclpy chains its handler to these
    logger = rclpy.logging.get_logger("robot_dynamics")
    try:
        rclpy.init(args=args)
    except Exception as exc:    # e.g. a parameter file rcl cannot read: rcl said why, add what to do
        text = str(exc)
        logger.fatal(f"cannot start: {text}{_startup_hint(text)}")
        stop.ignore()
        return 1
    # the executors before the node: a signal during start-up then finds them whole
    executor, joint_states_executor = SingleThreadedExecutor(), SingleThreadedExecutor()
    node, failure, code = None, [], 0
    thread = threading.Thread(target=_spin_joint_states, args=(joint_states_executor, executor, failure),
                              name="joint_states", daemon=True)
    try:
        if not stop.received:
            node = DynamicsNode()
            joint_states_executor.add_node(node.joint_states_node)
            thread.start()
            executor.add_node(node)
            with stop.raising():
                executor.spin()
            if failure:
                raise failure[0]
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except StartupError as exc:
        if not stop.received:
            logger.fatal(f"cannot start: {exc}")
            code = 1
    except Exception:
        if not stop.received:    # else a signal during start-up shut the context down under it
            raise
    finally:
        stop.armed = False
        # shutdown first: it joins rclpy's signal thread, which triggers every executor's SIGINT
        # guard condition unsynchronised (destroying one under it crashed ~1 exit in 10). That thread
        # wakes the executors *before* it shuts the context down, and then nobody wakes them: wake
        # the joint_states executor here (it has no timer), so that it sees the context down
        rclpy.try_shutdown()
        joint_states_executor.wake()
        if thread.is_alive():
            thread.join(JOIN_TIMEOUT)
            if thread.is_alive():
                logger.error(f"the joint_states thread did not stop within {JOIN_TIMEOUT} s")
        executor.shutdown()
        joint_states_executor.shutdown()
        if node is not None:
            node.destroy_node()
        stop.ignore()
    return code


if __name__ == "__main__":
    sys.exit(main(signals_received=_EARLY_SIGNALS))
