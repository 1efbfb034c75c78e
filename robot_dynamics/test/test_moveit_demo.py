"""The MoveIt demo's goal and what the node makes of it (demo/moveit_demo.py, make demo-moveit), without
the simulation: MoveIt's timing needs more than the 3 kg arm's drives give; the node with
execution.retime never refuses it naming the time, joint and torque; with when_infeasible it sends on
a timing within EFFORT_SCALE of the limits, every point carrying its inverse dynamics, ending at rest
with the torque that holds it. What the demo's table shows in closed loop."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.follow_joint_trajectory import GoalError, prepared
from rosconfig import configured

demo = pytest.importorskip("robot_dynamics.demo.moveit_demo")      # rclpy, matplotlib, control_msgs
timing = pytest.importorskip("robot_dynamics.demo.timing_demo")


def node_config(retime):
    parameters = {k.replace(".", "__"): v for k, v in timing.PAYLOAD.items()}
    return configured(bundled_urdf("puma560"), urdf_file=bundled_urdf("puma560"), execution__retime=retime,
                      execution__effort_scaling=demo.EFFORT_SCALE, **parameters)


def test_the_node_refuses_or_retimes_moveits_goal_within_the_drives():
    heavy, light = timing.arm(timing.PAYLOAD["payload.mass"]), timing.arm(timing.LIGHT)
    joints = list(heavy.joint_names)
    t, q, v, _ = timing.uniform_timing(rd.path_through_waypoints(timing.WAYPOINTS, timing.GRIDPOINTS), light)
    goal = demo.moveit_goal(joints, t, q, v)
    assert all(not p.effort and not p.accelerations for p in goal.trajectory.points)     # as MoveIt sends it
    assert timing.peak_ratio(heavy, t, q, v, heavy.effort_limits) > 1.1                # beyond the drives
    with pytest.raises(GoalError) as info:
        prepared(node_config("never"), goal, 0, q[0], np.zeros(6))
    assert str(info.value).startswith("the trajectory is beyond the limits and execution.retime is never: at t = 0 s "
                                      "joint 'joint1' needs an effort of")
    config = node_config("when_infeasible")
    _, ex = prepared(config, goal, 0, q[0], np.zeros(6))
    assert ex.retimed and abs(ex.duration - t[-1]) < 0.1 * t[-1]
    assert np.allclose(ex.positions[[0, -1]], q[[0, -1]], atol=1e-12)
    limits = demo.EFFORT_SCALE * heavy.effort_limits
    assert np.all(np.abs(ex.efforts) <= limits * (1 + 1e-6))
    tau = rd.inverse_dynamics(config.model, ex.positions, ex.velocities, ex.accelerations)
    assert np.allclose(ex.efforts, tau, rtol=1e-12, atol=1e-9)
    assert np.allclose(ex.efforts[-1], rd.gravity_torques(config.model, q[-1]), atol=1e-9)
