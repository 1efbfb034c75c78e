"""The node's parameters as rclpy holds them: declared with descriptors that say what each takes (they
survive `ros2 param dump` and `describe`), and every value stored as the node uses it (numbers as
floats), so that a dump loads back. The checks themselves are parameters.py's, without rclpy."""
import numpy as np

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

from .parameters import check_parameter


def declare(node, specs):
    """Every parameter of specs ({name: ParameterSpec}) on node, dynamically typed: rclpy's own type
    check would answer "Wrong parameter type" without naming the parameter; the node's checks name it."""
    for name, spec in specs.items():
        node.declare_parameter(name, spec.default, ParameterDescriptor(
            description=spec.description, additional_constraints=f"takes {spec.form}",
            read_only=spec.read_only, dynamic_typing=True))


def as_used(changes, specs):
    """rclpy's pre-set callback: numbers stored as floats (an integer list as a float list, a list
    `ros2 param set` sent as a string as numbers). Bad values pass unchanged, to be refused by the
    on-set callback with their reason."""
    out = []
    for p in changes:
        if p.name in specs:     # also one not set (null from a dump, `ros2 param load`): its default
            try:
                p = _stored(p, check_parameter(p.name, p.value, specs))
            except ValueError:
                pass
        out.append(p)
    return out


def store_as_used(node, params, specs):
    """At start-up (no callbacks yet): store the values as used, as as_used does on a change."""
    stored = [_stored(node.get_parameter(name), value) for name, value in params.items()
              if not specs[name].read_only]
    node.set_parameters([p for p in stored if p is not node.get_parameter(p.name)])


def restore_types(node, changes):
    """After a refusal: rclpy set each refused value's type into its dynamic descriptor; put it back."""
    for p in changes:
        node.describe_parameter(p.name).type = node.get_parameter(p.name).type_.value


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


def unchanged(new, old, changes):
    """The changed parameters have the values in use (as used: checked, numbers as floats)."""
    def same(a, b):
        if isinstance(a, str) or isinstance(b, str):
            return a == b
        try:
            return bool(np.array_equal(a, b))
        except (TypeError, ValueError):
            return False
    return all(same(new[p.name], old[p.name]) for p in changes)
