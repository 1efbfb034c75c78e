"""Simulated legged robot, the Gazebo stand-in of the legged demo: a floating-base URDF in MuJoCo
standing on the ground, stepped in real time (or in lockstep with its controller).

Interface of a ros2_control legged robot with one effort controller and a base state estimator:
- publishes, after every physics step, `base_pose` (geometry_msgs/PoseStamped: the root link in
  the world, frame_id `world_frame`), `base_twist` (geometry_msgs/TwistStamped: its velocity in its
  own frame, linear first), `joint_states` (positions, velocities and the applied efforts) and
  `/clock`, all stamped with sim time, in that order (the dynamics node takes its base pose on
  ~/base_pose: remap `base_pose` there);
- takes efforts on `<controller>/commands` (std_msgs/Float64MultiArray in `joints` order), like
  effort_controllers/JointGroupEffortController; a command holds until the next one.

Contacts (mujoco_legged.py): a sphere of `foot_radius` at the origin of each link in `feet`, a box
on the base (`base_box`, half sizes, centred at `base_box_offset`) so that a collapsing robot lands
on its belly, and the ground plane z = 0 (sliding friction `ground_friction`). The robot starts at
rest at `initial_positions` (joints) and `initial_base_pose` (x y z qx qy qz qw), lowered or raised
so that its lowest foot touches the ground (`place_on_ground`, default true).

Joint `damping` [N m s/rad], dry `friction` [N m] and `armature` (rotor inertia reflected through
the gear, Ir N^2 [kg m^2]): one value per joint or one for all, default 0 (none): set them to what
the real actuators have. `rate`, `wait_for_command` and `lockstep` as in sim_arm: with lockstep, a
physics step waits for a command that arrived after the last state was published, as a controller
inside the physics loop would (the loop then behaves the same however loaded the host is).

Run: `sim_legged --ros-args -p urdf_file:=solo12.urdf -p "feet:=[FL_FOOT, FR_FOOT, HL_FOOT, HR_FOOT]"`
(or `python -m robot_dynamics.demo.sim_legged`).
"""
import sys

import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from . import simulator
from ..model import per_joint
from .mujoco_legged import LeggedSpec, base_pose, base_twist, mujoco_legged, set_state
from .simulator import numbers



class SimLegged(simulator.SimulatedRobot):
    def __init__(self):
        super().__init__("sim_legged")
        for name, default in (("urdf_file", ""), ("robot_description", ""), ("controller", "effort_controller"),
                              ("world_frame", "world"), ("wait_for_command", True), ("lockstep", False),
                              ("place_on_ground", True)):
            self.declare_parameter(name, default)
        for name in ("joints", "feet"):
            self.declare_parameter(name, Parameter.Type.STRING_ARRAY)
        for name, default in (("rate", 1000.0), ("foot_radius", 0.02), ("base_box", [0.0]),
                              ("base_box_offset", [0.0, 0.0, 0.0]), ("ground_friction", 1.0),
                              ("initial_positions", [0.0]), ("initial_base_pose", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
                              ("damping", [0.0]), ("friction", [0.0]), ("armature", [0.0])):   # ints accepted too
            self.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True))
        param = self.param

        urdf, joints = self.urdf_and_joints()
        try:
            feet = param("feet")
        except ParameterUninitializedException:
            raise ValueError("set the parameter feet: the links that stand on the ground") from None
        box = numbers(param("base_box"), "base_box", 1, 3)
        spec = LeggedSpec(tuple(feet), float(param("foot_radius")), tuple(box) if box.size == 3 else (),
                          tuple(numbers(param("base_box_offset"), "base_box_offset", 3)),
                          float(param("ground_friction")))
        self.period_ns = round(1e9 / float(param("rate")))
        self.attach(mujoco_legged(urdf, spec, joints, self.period_ns * 1e-9, param("damping"), param("friction"),
                                  param("armature")))
        pose = numbers(param("initial_base_pose"), "initial_base_pose", 7)
        if abs(np.linalg.norm(pose[3:]) - 1.0) > 1e-3:
            raise ValueError(f"parameter initial_base_pose: its quaternion (qx qy qz qw) must have unit norm, got {pose[3:]}")
        start = set_state(self.model, self.data, pose[:3], pose[3:] / np.linalg.norm(pose[3:]),
                          per_joint(param("initial_positions"), self.model.nu, "initial_positions"),
                          param("place_on_ground"))

        self.root_link = self.model.body(int(self.model.jnt_bodyid[self.model.joint("root").id])).name
        self.start(f"{self.model.nu} joints ({', '.join(self.joint_names)}) on a free base {self.root_link!r}, feet "
                   f"{', '.join(spec.feet)} (r = {spec.foot_radius:g} m), base at z = {start[2]:.4f} m")
        self.pose_msg = PoseStamped()
        self.pose_msg.header.frame_id = param("world_frame")
        self.twist_msg = TwistStamped()
        self.twist_msg.header.frame_id = self.root_link
        self.pose_pub = self.create_publisher(PoseStamped, "base_pose", 10)
        self.twist_pub = self.create_publisher(TwistStamped, "base_twist", 10)

    def publish_state(self):
        stamp = self.stamp()
        position, quaternion = base_pose(self.model, self.data)
        pose = self.pose_msg.pose
        pose.position.x, pose.position.y, pose.position.z = map(float, position)
        o = pose.orientation
        o.x, o.y, o.z, o.w = map(float, quaternion)
        self.pose_msg.header.stamp = stamp
        self.pose_pub.publish(self.pose_msg)
        twist = base_twist(self.model, self.data)
        t = self.twist_msg.twist
        t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = map(float, twist)
        self.twist_msg.header.stamp = stamp
        self.twist_pub.publish(self.twist_msg)
        self.publish_measured(stamp)


def main(args=None):
    """Run until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter or URDF): simulator.main."""
    return simulator.main(SimLegged, "sim_legged", args)


if __name__ == "__main__":
    sys.exit(main())
