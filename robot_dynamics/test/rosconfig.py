"""The node's configuration without rclpy, for the ROS layer's unit tests (no DDS): every parameter
at its default with some changed, checked as the node checks them, and the Config they build."""
from robot_dynamics.ros.config import build_config
from robot_dynamics.ros.features import PARAMETERS
from robot_dynamics.ros.parameters import check_parameters


def params(**changes):
    """Every parameter's value as used: the defaults, changes applied (name__sub for name.sub)."""
    values = {name: spec.default for name, spec in PARAMETERS.items()}
    values.update({k.replace("__", "."): v for k, v in changes.items()})
    return check_parameters(values, PARAMETERS)


def configured(description, **changes):
    """The configuration the node builds from `description` (a URDF file or text) and the changes."""
    return build_config(params(**changes), description, {})
