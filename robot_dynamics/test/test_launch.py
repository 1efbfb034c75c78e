"""launch/dynamics.launch.py against the real launch / launch_ros API (ROS installs only:
neither package is on PyPI, so this is skipped here)."""
import importlib.util
import os

import pytest

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

launch_ros = pytest.importorskip("launch_ros")
from launch import LaunchContext  # noqa: E402
from launch.actions import DeclareLaunchArgument  # noqa: E402
from launch_ros.utilities import evaluate_parameters, normalize_parameters  # noqa: E402

LAUNCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "launch", "dynamics.launch.py")


def load():
    spec = importlib.util.spec_from_file_location("dynamics_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_description_declares_the_arguments_and_the_node():
    module = load()
    description = module.generate_launch_description()
    arguments = {a.name: a for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    assert {"urdf_file", "description_topic", "joint_states", "namespace", "use_sim_time", "params_file"} <= set(arguments)
    (node,) = [e for e in description.entities if isinstance(e, launch_ros.actions.Node)]
    assert node.node_package == "robot_dynamics"
    assert node.node_executable == "dynamics_node"

    context = LaunchContext()
    for name, argument in arguments.items():
        context.launch_configurations[name] = argument.default_value and \
            "".join(s.perform(context) for s in argument.default_value)
    context.launch_configurations.update(urdf_file="/tmp/arm.urdf", namespace="arm", use_sim_time="true")
    node._perform_substitutions(context)
    assert node.node_name.endswith("robot_dynamics")
    assert node.expanded_node_namespace == "/arm"
    assert ("robot_description", "robot_description") in [tuple(r) for r in node.expanded_remapping_rules]
    params_file = context.launch_configurations["params_file"]
    assert params_file.endswith(os.path.join("config", "dynamics.yaml")) and os.path.exists(params_file)
    evaluated = evaluate_parameters(context, normalize_parameters(module.node_parameters()))
    assert [str(p) for p in evaluated[:1]] == [params_file]
    assert evaluated[1] == {"urdf_file": "/tmp/arm.urdf", "use_sim_time": True}
