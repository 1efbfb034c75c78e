"""Start the robot_dynamics node.

    ros2 launch robot_dynamics dynamics.launch.py urdf_file:=/path/robot.urdf
    ros2 launch robot_dynamics dynamics.launch.py          # URDF from the robot_description topic
    ros2 launch robot_dynamics dynamics.launch.py namespace:=arm use_sim_time:=true \
        params_file:=/path/dynamics.yaml joint_states:=/arm/joint_states
    ros2 launch robot_dynamics dynamics.launch.py urdf_file:=puma560 \
        feedforward_commands:=/effort_controller/commands    # onto a forward_command_controller

The params file comes first; urdf_file and use_sim_time given on the command line override it, and
only then: a params file that sets them is used as written.
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

#: launch arguments that, given, remap an output of the node onto another topic (e.g. a controller's
#: `commands`, std_msgs/Float64MultiArray in the order of the parameter `joints`)
OUTPUT_REMAPS = {"gravity_commands": "~/gravity_commands", "feedforward_commands": "~/feedforward_commands"}


def node_parameters(context):
    """The params file, then the launch arguments given on the command line (an empty one is not given)."""
    value = {name: LaunchConfiguration(name).perform(context) for name in ("params_file", "urdf_file", "use_sim_time")}
    overrides = {}
    if value["urdf_file"]:
        overrides["urdf_file"] = value["urdf_file"]
    if value["use_sim_time"]:
        if value["use_sim_time"].lower() not in ("true", "false"):
            raise ValueError(f"use_sim_time takes true or false, got {value['use_sim_time']!r}")
        overrides["use_sim_time"] = value["use_sim_time"].lower() == "true"
    return [value["params_file"]] + ([overrides] if overrides else [])


def node_remappings(context):
    """robot_description and joint_states always; the outputs given a topic."""
    rules = [("robot_description", LaunchConfiguration("description_topic").perform(context)),
             ("joint_states", LaunchConfiguration("joint_states").perform(context))]
    for argument, topic in OUTPUT_REMAPS.items():
        target = LaunchConfiguration(argument).perform(context)
        if target:
            rules.append((topic, target))
    return rules


def node(context):
    return [Node(package="robot_dynamics", executable="dynamics_node", name="robot_dynamics",
                 namespace=LaunchConfiguration("namespace"), output="screen", emulate_tty=True,
                 parameters=node_parameters(context), remappings=node_remappings(context))]


def generate_launch_description():
    # config/ beside launch/: in share/robot_dynamics once installed, and in the repository, so that
    # `ros2 launch <path>/dynamics.launch.py` works too
    default_params = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "config", "dynamics.yaml")
    default_params = os.path.normpath(default_params)
    arguments = [
        DeclareLaunchArgument("urdf_file", default_value="",
                              description="URDF or xacro file, or a bundled robot's name (puma560); empty: the "
                                          "params file's, else the robot_description topic"),
        DeclareLaunchArgument("description_topic", default_value="robot_description",
                              description="topic carrying the URDF when urdf_file is empty"),
        DeclareLaunchArgument("joint_states", default_value="joint_states",
                              description="joint_states topic to follow"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("use_sim_time", default_value="",
                              description="true: use /clock; empty: the params file's (else false)"),
        DeclareLaunchArgument("params_file", default_value=default_params,
                              description="parameter file (see config/dynamics.yaml)"),
        DeclareLaunchArgument("gravity_commands", default_value="",
                              description="topic to publish ~/gravity_commands on (e.g. /effort_controller/commands)"),
        DeclareLaunchArgument("feedforward_commands", default_value="",
                              description="topic to publish ~/feedforward_commands on (e.g. "
                                          "/effort_controller/commands)"),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=node)])
