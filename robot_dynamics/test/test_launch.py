"""launch/dynamics.launch.py against the real launch / launch_ros API (ROS installs only:
neither package is on PyPI, so this is skipped here)."""
import importlib.util
import os

import pytest

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

launch_ros = pytest.importorskip("launch_ros")
from launch import LaunchContext  # noqa: E402
from launch.actions import DeclareLaunchArgument, OpaqueFunction  # noqa: E402
from launch_ros.utilities import evaluate_parameters, normalize_parameters  # noqa: E402

LAUNCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "launch", "dynamics.launch.py")


def load():
    spec = importlib.util.spec_from_file_location("dynamics_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def context_of(module, **given):
    """A LaunchContext with every argument's default, then `given` (as on the command line)."""
    description = module.generate_launch_description()
    arguments = {a.name: a for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    context = LaunchContext()
    for name, argument in arguments.items():
        context.launch_configurations[name] = argument.default_value and \
            "".join(s.perform(context) for s in argument.default_value)
    context.launch_configurations.update(given)
    return description, arguments, context


def test_launch_description_declares_the_arguments_and_the_node():
    module = load()
    description, arguments, context = context_of(module, urdf_file="/tmp/arm.urdf", namespace="arm",
                                                 use_sim_time="true")
    assert {"urdf_file", "description_topic", "joint_states", "namespace", "use_sim_time", "params_file",
            "gravity_commands", "feedforward_commands"} <= set(arguments)
    (node,) = [e for entity in description.entities if isinstance(entity, OpaqueFunction)
               for e in entity.execute(context)]
    assert node.node_package == "robot_dynamics"
    assert node.node_executable == "dynamics_node"
    node._perform_substitutions(context)
    assert node.node_name.endswith("robot_dynamics")
    assert node.expanded_node_namespace == "/arm"
    assert ("robot_description", "robot_description") in [tuple(r) for r in node.expanded_remapping_rules]
    params_file = context.launch_configurations["params_file"]
    assert params_file.endswith(os.path.join("config", "dynamics.yaml")) and os.path.exists(params_file)
    evaluated = evaluate_parameters(context, normalize_parameters(module.node_parameters(context)))
    assert [str(p) for p in evaluated[:1]] == [params_file]
    assert evaluated[1] == {"urdf_file": "/tmp/arm.urdf", "use_sim_time": True}


def test_a_params_file_keeps_urdf_file_and_use_sim_time_unless_given_on_the_command_line():
    """Launch arguments left empty pass nothing: the params file's urdf_file and use_sim_time stand."""
    module = load()
    _, _, context = context_of(module, params_file="/tmp/mine.yaml")
    assert module.node_parameters(context) == ["/tmp/mine.yaml"]
    _, _, context = context_of(module, params_file="/tmp/mine.yaml", use_sim_time="True")
    assert module.node_parameters(context) == ["/tmp/mine.yaml", {"use_sim_time": True}]
    _, _, context = context_of(module, use_sim_time="yes")
    with pytest.raises(ValueError, match="use_sim_time takes true or false"):
        module.node_parameters(context)


def test_output_arguments_remap_the_commands_onto_a_controller():
    module = load()
    _, _, context = context_of(module)
    assert [r[0] for r in module.node_remappings(context)] == ["robot_description", "joint_states"]
    _, _, context = context_of(module, feedforward_commands="/effort_controller/commands",
                               gravity_commands="/gravity_controller/commands")
    assert module.node_remappings(context)[2:] == [("~/gravity_commands", "/gravity_controller/commands"),
                                                   ("~/feedforward_commands", "/effort_controller/commands")]
