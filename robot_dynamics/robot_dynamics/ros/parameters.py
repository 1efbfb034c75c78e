"""The node's parameter machinery and its shared parameters (no rclpy): `ParameterSpec` (default,
description, the form it takes, its check), the value checks the features' specs are made of, and the
parameters every feature reads: the model's (the URDF, its subtree, the floating base, gravity,
armature, a payload) and the joints. Each feature declares its own parameters beside its code (its
PARAMETERS); features.PARAMETERS gathers them all. The node declares them and runs `check_parameter`
on every value at start-up and on every change, before anything takes effect.

Numbers take integers or floats (a list of them all one type: rcl's YAML reader refuses a list that
mixes them); they are stored as floats."""
import array
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import yaml

from ..urdf import inertia_problem


class ParameterError(ValueError):
    """A parameter value refused; the message names the parameter and the form it takes."""

    def __init__(self, name, message):
        super().__init__(message)
        self.name = name


class StartupError(Exception):
    """The node cannot start as configured (a parameter, the URDF); main() logs it and exits 1."""


@dataclass(frozen=True)
class ParameterSpec:
    default: object
    description: str
    form: str               # what it takes: in refusals and in `ros2 param describe` (constraints)
    check: Callable         # value -> the value as used (floats as floats), or TypeError / ValueError
    read_only: bool = False  # only read at start-up


# --- the value checks: value -> the value as used, or TypeError / ValueError ------------------------
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


def floats(value, sizes=None, scalar=False):
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


def non_negative(x):
    if any(v < 0 for v in (x if isinstance(x, list) else [x])):
        raise ValueError
    return x


def positive(x):
    if any(not v > 0 for v in x):
        raise ValueError
    return x


def a_string(value):
    if not isinstance(value, str):
        raise TypeError
    return value


def a_boolean(value):
    if not isinstance(value, bool):
        raise TypeError
    return value


def distinct_names(value):
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError
    if len(set(value)) != len(value):
        raise ValueError("the names must be distinct")
    return list(value)


def one_of(*choices):
    def check(value):
        if value not in choices:
            raise ValueError
        return value
    return check


def in_range(low, high, low_open=False):
    """One finite number in [low, high] ((low, high] if low_open)."""
    def check(value):
        x = floats(value, scalar=True)
        if x > high or x < low or (low_open and x == low):
            raise ValueError
        return x
    return check


def _payload_inertia(value):
    """ixx iyy izz ixy ixz iyz of a rigid body about its centre of mass: positive semi-definite, and
    its principal moments satisfy the triangle inequality (I1 + I2 >= I3), as the URDF loader asks."""
    ixx, iyy, izz, ixy, ixz, iyz = floats(value, (6,))
    problem = inertia_problem(1.0, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
    if problem:
        raise ValueError(problem)
    return [ixx, iyy, izz, ixy, ixz, iyz]


def per_entry(values, n, name, what):
    """1 or n values (checked by check_parameter) as an array of n; ParameterError naming `name`."""
    if len(values) not in (1, n):
        raise ParameterError(name, f"parameter {name} takes one value or one per {what} ({n}); "
                                   f"got {len(values)} values")
    return np.broadcast_to(np.asarray(values, float), (n,)).copy()


#: the parameters every feature reads: the model (config.build_config) and the joints
SHARED = {
    "robot_description": ParameterSpec(
        "", "URDF text; wins over urdf_file. Empty: use urdf_file or the robot_description topic",
        "a string (URDF XML)", a_string),
    "urdf_file": ParameterSpec("", "path of a .urdf or .xacro file", "a string (a file path)", a_string),
    "root_link": ParameterSpec("", "take the subtree below this link (empty: the URDF root)",
                               "a link name (a string)", a_string),
    "tip_link": ParameterSpec("", "keep only the chain root_link -> tip_link (empty: the whole tree)",
                              "a link name (a string)", a_string),
    "floating_base": ParameterSpec(False, "give the root a free-flyer joint (base pose on ~/base_pose)",
                                   "true or false", a_boolean),
    "actuated_joints": ParameterSpec(
        [], "the joints with motors, the others passive (free, zero torque), with loops (empty: every joint "
            "joint_states carries)", "a list of distinct joint names of the model", distinct_names),
    "joints": ParameterSpec([], "output joint order (empty: the model's actuated joints)",
                            "a list of distinct joint names of the model", distinct_names),
    "gravity": ParameterSpec([0.0, 0.0, -9.81], "gravity in the world frame [m/s^2]",
                             "3 finite numbers [m/s^2], e.g. [0.0, 0.0, -9.81]",
                             lambda v: floats(v, (3,))),
    "armature": ParameterSpec(
        [], "rotor inertia Ir*gr^2 [kg m^2]: empty, one value for all joints or one per model joint",
        "empty, one finite number >= 0 [kg m^2] for every joint, or one per model joint",
        lambda v: non_negative([] if isinstance(v, (list, tuple, array.array)) and not len(v)
                               else floats(v))),
    "payload.mass": ParameterSpec(0.0, "payload mass [kg] (0: no payload)",
                                  "a finite number >= 0 [kg]",
                                  lambda v: non_negative(floats(v, scalar=True))),
    "payload.com": ParameterSpec([0.0, 0.0, 0.0], "payload centre of mass in the payload link frame [m]",
                                 "3 finite numbers [m]", lambda v: floats(v, (3,))),
    "payload.inertia": ParameterSpec(
        [0.0] * 6, "payload inertia about its COM, ixx iyy izz ixy ixz iyz [kg m^2]",
        "6 finite numbers ixx iyy izz ixy ixz iyz [kg m^2] of a rigid body (positive semi-definite, "
        "principal moments I1 + I2 >= I3)", _payload_inertia),
    "payload.link": ParameterSpec("", "link carrying the payload (empty: tip_link)",
                                  "a link name of the model (a string)", a_string),
    "drive_compensates_gravity": ParameterSpec(
        False, "the drives add g(q) themselves (UR, Franka): the feedforward outputs and the efforts of timed "
               "trajectories leave it out (~/gravity_torques unchanged; torque limits still apply to the full "
               "torque)", "true or false", a_boolean),
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


def check_parameter(name, value, specs):
    """The value of parameter `name` (one of `specs`: {name: ParameterSpec}) as the node uses it
    (numbers as floats), or ParameterError naming the parameter, the form it takes and the value refused."""
    spec = specs[name]
    if value is None:       # not set: rcl reads an empty list in a parameter file ([]) so
        value = spec.default
    elif isinstance(spec.default, list) and isinstance(value, str) and value.strip() in NULLS:
        value = spec.default    # a dump of a list that was not set, read back: null, as a string
    try:
        return spec.check(value)
    except (TypeError, ValueError) as exc:
        detail = f" ({exc})" if str(exc) else ""
        raise ParameterError(name, f"parameter {name} takes {spec.form}; got {shown(value)}{detail}") from None


def check_parameters(values, specs):
    """{name: value} -> {name: value as used}; ParameterError for the first bad one."""
    return {name: check_parameter(name, value, specs) for name, value in values.items()}
