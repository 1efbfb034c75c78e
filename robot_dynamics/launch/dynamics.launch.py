"""Start the robot_dynamics node.

    ros2 launch robot_dynamics dynamics.launch.py urdf_file:=/path/robot.urdf
    ros2 launch robot_dynamics dynamics.launch.py          # URDF from the robot_description topic
    ros2 launch robot_dynamics dynamics.launch.py namespace:=arm use_sim_time:=true \
        params_file:=/path/dynamics.yaml joint_states:=/arm/joint_states
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def node_parameters():
    """The params file, then the launch arguments that override it."""
    return [
        LaunchConfiguration("params_file"),
        {"urdf_file": LaunchConfiguration("urdf_file"),
         "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool)},
    ]


def generate_launch_description():
    # config/ beside launch/: in share/robot_dynamics once installed, and in the repository, so that
    # `ros2 launch <path>/dynamics.launch.py` works too
    default_params = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "config", "dynamics.yaml")
    default_params = os.path.normpath(default_params)
    arguments = [
        DeclareLaunchArgument("urdf_file", default_value="",
                              description="URDF or xacro file; empty: read the robot_description topic"),
        DeclareLaunchArgument("description_topic", default_value="robot_description",
                              description="topic carrying the URDF when urdf_file is empty"),
        DeclareLaunchArgument("joint_states", default_value="joint_states",
                              description="joint_states topic to follow"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="use /clock"),
        DeclareLaunchArgument("params_file", default_value=default_params,
                              description="parameter file (see config/dynamics.yaml)"),
    ]
    node = Node(
        package="robot_dynamics",
        executable="dynamics_node",
        name="robot_dynamics",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        emulate_tty=True,
        parameters=node_parameters(),
        remappings=[("robot_description", LaunchConfiguration("description_topic")),
                    ("joint_states", LaunchConfiguration("joint_states"))],
    )
    return LaunchDescription(arguments + [node])
