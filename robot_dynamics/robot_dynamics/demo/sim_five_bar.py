"""Simulated five-bar parallel robot, the Gazebo stand-in of the five-bar demo: urdf/five_bar.urdf in
MuJoCo with its loop closed by a weld equality constraint (five_bar.py), stepped in real time or in
lockstep with its controller.

Interface of a ros2_control parallel robot with encoders on its two motors only and one effort
controller:
- publishes, after every physics step, `end_point` (geometry_msgs/PointStamped: the end effector's
  origin in the world, as MuJoCo computes it: what an external tracker would measure), `joint_states`
  (the motors' positions, velocities and applied efforts: the passive joints are not measured) and
  `/clock`, stamped with sim time;
- takes the motors' efforts on `<controller>/commands` (std_msgs/Float64MultiArray, left_base_joint
  then right_base_joint), clamped at the URDF's 5 N m; a command holds until the next one.

Parameters: `initial_positions` (the two motor angles [rad]; the passive joints are assembled on the
loop by rd.assemble), `controller`, `rate`, `wait_for_command` and `lockstep` as in sim_arm. No joint
damping, friction or armature.

Run: `python -m robot_dynamics.demo.sim_five_bar --ros-args -p "initial_positions:=[0.3, -0.2]"`.
"""
import sys

import mujoco
from geometry_msgs.msg import PointStamped
from rcl_interfaces.msg import ParameterDescriptor

from . import simulator
from ..urdf import load_urdf
from .five_bar import END_POINT, HOLD_POSE, URDF, closed, mujoco_five_bar, set_configuration
from .simulator import numbers


class SimFiveBar(simulator.SimulatedRobot):
    def __init__(self):
        super().__init__("sim_five_bar")
        for name, default in (("controller", "effort_controller"), ("wait_for_command", True), ("lockstep", False)):
            self.declare_parameter(name, default)
        for name, default in (("rate", 1000.0), ("initial_positions", HOLD_POSE.tolist())):   # ints accepted too
            self.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True))
        self.period_ns = round(1e9 / float(self.param("rate")))
        self.attach(mujoco_five_bar(self.period_ns * 1e-9))
        model = load_urdf(URDF)
        motors = numbers(self.param("initial_positions"), "initial_positions", 2)
        set_configuration(self.model, self.data, model.joint_names, closed(model, motors))
        self.site = self.model.site(END_POINT).id
        self.point_msg = PointStamped()
        self.point_msg.header.frame_id = "world"
        self.point_pub = self.create_publisher(PointStamped, "end_point", 10)
        self.start(f"five-bar, motors {', '.join(self.joint_names)} at {motors.tolist()} rad, loop welded")

    def publish_state(self):
        stamp = self.stamp()
        mujoco.mj_kinematics(self.model, self.data)      # after mj_step the positions are a step old
        p = self.point_msg.point
        p.x, p.y, p.z = map(float, self.data.site_xpos[self.site])
        self.point_msg.header.stamp = stamp
        self.point_pub.publish(self.point_msg)
        self.publish_measured(stamp)


def main(args=None):
    """Run until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter): simulator.main."""
    return simulator.main(SimFiveBar, "sim_five_bar", args)


if __name__ == "__main__":
    sys.exit(main())
