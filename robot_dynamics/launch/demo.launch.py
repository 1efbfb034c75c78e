"""The closed-loop demo setup: the simulated arm (sim_arm: the URDF in MuJoCo, 1 kHz, Gazebo's
stand-in) and the robot_dynamics node holding it up, its ~/gravity_commands remapped onto the arm's
effort controller. `make demo` (robot_dynamics/demo/closed_loop_demo.py) starts the same two processes
without ros2 launch, records them and adds the tracking scenario.

    ros2 launch robot_dynamics demo.launch.py
    ros2 launch robot_dynamics demo.launch.py urdf_file:=/path/arm.urdf initial_positions:="[0.0, 0.5]"
    ros2 launch robot_dynamics demo.launch.py lockstep:=false     # free-running real time

The arm stays paused at initial_positions until the first effort command arrives, then holds still.
With lockstep (as in `make demo`) each physics step waits for the node's command for the state
before it; without, the simulation runs by the wall clock like Gazebo and the commands arrive when
they arrive.
"""
from typing import List

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    urdf_file = LaunchConfiguration("urdf_file")
    controller = LaunchConfiguration("controller")
    arguments = [
        DeclareLaunchArgument(
            "urdf_file",
            default_value=PathJoinSubstitution([FindPackageShare("robot_dynamics"), "urdf", "puma560.urdf"]),
            description="URDF of the arm, loaded by both the simulation and the dynamics node"),
        DeclareLaunchArgument(
            "controller", default_value="effort_controller",
            description="the simulated arm takes efforts on <controller>/commands"),
        DeclareLaunchArgument(
            "initial_positions", default_value="[0.4, -0.8, 1.2, 0.5, -0.6, 0.3]",  # the demo's START_POSE
            description="start pose, one value per joint [rad]"),
        DeclareLaunchArgument(
            "lockstep", default_value="true",
            description="step the physics only when a command for the last state has arrived"),
    ]
    sim_arm = Node(
        package="robot_dynamics",
        executable="sim_arm",
        name="sim_arm",
        output="screen",
        parameters=[{
            "urdf_file": urdf_file,
            "controller": controller,
            "initial_positions": ParameterValue(LaunchConfiguration("initial_positions"),
                                                value_type=List[float]),
            "lockstep": ParameterValue(LaunchConfiguration("lockstep"), value_type=bool),
        }],
    )
    dynamics = Node(
        package="robot_dynamics",
        executable="dynamics_node",
        name="robot_dynamics",
        output="screen",
        parameters=[{"urdf_file": urdf_file, "use_sim_time": True}],
        remappings=[("~/gravity_commands", ["/", controller, "/commands"])],
    )
    return LaunchDescription(arguments + [sim_arm, dynamics])
