"""The node's parameters: what each takes, its check, and the refusal that names it. Plain
Python (no rclpy): the node declares them from `PARAMETERS` and runs `check_parameter` on every
value at start-up and on every change, before anything takes effect."""
import array
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import yaml

from ..constrained import KINDS as CONTACT_KINDS
from ..control import EVALUATE_AT
from ..urdf import inertia_problem


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


def _contact_kind(value):
    """contacts.kind: one kind (a string) for every contact, or a non-empty list of kinds; kept as given."""
    if isinstance(value, str):
        if value not in CONTACT_KINDS:
            raise ValueError
        return value
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise TypeError
    unknown = [v for v in value if v not in CONTACT_KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}")
    return list(value)


def _loops(value):
    """loops: a list of strings "frame_a frame_b kind" (kind point or 6d), one per loop; kept as given
    (the frames are checked against the model when the configuration is built: ros/loops.py)."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError
    for text in value:
        words = text.split()
        if len(words) != 3:
            raise ValueError(f"{text!r} is not 'frame_a frame_b kind'")
        if words[2] not in CONTACT_KINDS:
            raise ValueError(f"{text!r}: unknown kind {words[2]!r}")
        if words[0] == words[1]:
            raise ValueError(f"{text!r} holds a frame to itself")
    return list(value)


def _payload_inertia(value):
    """ixx iyy izz ixy ixz iyz of a rigid body about its centre of mass: positive semi-definite, and
    its principal moments satisfy the triangle inequality (I1 + I2 >= I3), as the URDF loader asks."""
    ixx, iyy, izz, ixy, ixz, iyz = _floats(value, (6,))
    problem = inertia_problem(1.0, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    if problem:
        raise ValueError(problem)
    return [ixx, iyy, izz, ixy, ixz, iyz]


def _period(value):
    x = _floats(value, scalar=True)
    if not 0.01 <= x <= 3600.0:
        raise ValueError
    return x


def _in_range(low, high, low_open=False):
    """One finite number in [low, high] ((low, high] if low_open)."""
    def check(value):
        x = _floats(value, scalar=True)
        if x > high or x < low or (low_open and x == low):
            raise ValueError
        return x
    return check


def _positive(x):
    if any(not v > 0 for v in x):
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
    # contacts of a floating-base robot (ros/contacts.py): contact-consistent gravity and feedforward
    "contacts.frames": ParameterSpec(
        [], "frames in contact with the world (feet): gravity and feedforward torques share the base's weight "
            "among them (empty: no contacts, the base assumed held)",
        "a list of distinct frame names of a model with a free-floating base", _names),
    "contacts.kind": ParameterSpec(
        ["point"], "contact kind: 'point' (a force at the frame origin) or '6d' (a wrench: a flat foot), one "
                   "for every contact or one per contacts.frames entry",
        f"one of {', '.join(CONTACT_KINDS)}, or a list of them (one per contacts.frames entry)", _contact_kind),
    # closed kinematic loops (ros/loops.py): constrained gravity and feedforward on the actuated joints
    "loops": ParameterSpec(
        [], "closed kinematic loops, one string 'frame_a frame_b kind' per loop (kind point or 6d): the two "
            "frames are held together; gravity and feedforward torques become the constrained inverse dynamics "
            "on the actuated joints, and loop joints joint_states does not carry are assembled (empty: none)",
        "a list of strings 'frame_a frame_b kind' (two distinct frames of the model, kind point or 6d), "
        "e.g. ['end_effector right_distal_tip 6d']", _loops),
    "actuated_joints": ParameterSpec(
        [], "the joints with motors, the others passive (free, zero torque), with loops (empty: every joint "
            "joint_states carries)", "a list of distinct joint names of the model", _names),
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
    # --- external torques (momentum observer) and payload identification: ros/external.py,
    # ros/identification.py ---------------------------------------------------------------------
    "observer.enabled": ParameterSpec(
        True, "run the momentum observer on joint_states that carry efforts (~/external_torques, "
              "~/external_wrench, ~/contact)", "true or false", _boolean),
    "observer.gain": ParameterSpec(
        [50.0], "observer gain K [1/s] (time constant 1/K): one value or one per `joints` entry",
        "one finite number > 0 [1/s], or one per `joints` entry", lambda v: _positive(_floats(v))),
    "observer.contact_threshold": ParameterSpec(
        [0.0], "contact when some |external torque| exceeds its threshold [N m or N]: one value or one "
               "per `joints` entry; 0: joint not monitored (all 0, the default: no contact detection)",
        "one finite number >= 0 [N m or N], or one per `joints` entry", lambda v: _non_negative(_floats(v))),
    "observer.wrench_frame": ParameterSpec(
        "", "frame of ~/external_wrench, at its origin in its axes (empty: tip_link; both empty: none)",
        "a frame name of the model that moves with a joint (a string)", _text),
    "observer.wrench_components": ParameterSpec(
        "wrench", "what ~/external_wrench estimates: 'wrench' (force and torque), 'force' (a contact "
                  "force at the frame origin, torque 0) or 'torque'",
        "one of wrench, force, torque", _choice("wrench", "force", "torque")),
    "observer.max_interval": ParameterSpec(
        0.1, "a longer interval [s] between joint_states stamps restarts the observer",
        "a number of seconds in (0, 10]", _in_range(0.0, 10.0, low_open=True)),
    "identification.window": ParameterSpec(
        0.02, "momentum identification: window [s] over which the momentum balance is integrated",
        "a number of seconds in (0, 1]", _in_range(0.0, 1.0, low_open=True)),
    "identification.still_velocity": ParameterSpec(
        0.01, "static identification: a sample is still when every |joint velocity| is below this [rad/s or m/s]",
        "a finite number > 0 [rad/s or m/s]", lambda v: _positive([_floats(v, scalar=True)])[0]),
    "diagnostics_period": ParameterSpec(1.0, "seconds between /diagnostics messages (read at start-up)",
                                        "a number of seconds in [0.01, 3600]", _period, read_only=True),
    "joint_states_timeout": ParameterSpec(
        1.0, "/diagnostics reports stale input (WARN) when no joint_states came for this long [s], or some model "
             "joint was not in any message for this long", "a number of seconds in (0, 3600]",
        _in_range(0.0, 3600.0, low_open=True)),
}
#: what a YAML null becomes, a string: `ros2 param dump` writes a parameter that is not set (an empty
#: list in a parameter file arrives so) as `null`; rcl's parameter file reader passes it on as written,
#: `ros2 param load` (rclpy's parameter_dict_from_yaml_file) as 'None'
NULLS = ("null", "Null", "NULL", "~", "None")


def shown(value):
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
    elif isinstance(spec.default, list) and isinstance(value, str) and value.strip() in NULLS:
        value = spec.default    # a dump of a list that was not set, read back: null, as a string
    try:
        return spec.check(value)
    except (TypeError, ValueError) as exc:
        detail = f" ({exc})" if str(exc) else ""
        raise ParameterError(name, f"parameter {name} takes {spec.form}; got {shown(value)}{detail}") from None


def check_parameters(values):
    """{name: value} -> {name: value as used}; ParameterError for the first bad one."""
    return {name: check_parameter(name, value) for name, value in values.items()}
