"""The measured state without DDS (robot_dynamics.ros.joint_states: no rclpy): joint_states messages
merged into model coordinates, bad ones rejected whole, the base pose, and the multi-coordinate joints
joint_states cannot carry, announced."""
import os
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.joint_states import MeasuredState, unmeasured_notice
from rosconfig import configured

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
PUMA = bundled_urdf("puma560")


def pose(position, quaternion):
    return Msg(position=Msg(x=position[0], y=position[1], z=position[2]),
               orientation=Msg(x=quaternion[0], y=quaternion[1], z=quaternion[2], w=quaternion[3]))


def test_multi_coordinate_joints_below_the_root_are_announced():
    path = os.path.join(DATA, "floating_object_arm.urdf")
    config = configured(path, urdf_file=path)
    assert [j.name for j in config.unmeasured] == ["table_planar", "part_float"]
    notice = unmeasured_notice(config)
    assert "table_planar (planar: q[7:10], v[6:9]) at its origin, at rest" in notice
    assert "part_float (floating: q[10:17], v[9:15]) at its origin, unrotated, at rest" in notice


def test_measured_state_merges_partial_messages_and_rejects_bad_ones():
    path = os.path.join(DATA, "planar_base_arm.urdf")
    model = configured(path, urdf_file=path).model
    state = MeasuredState(model)
    assert state.take(["j2", "nothing"], np.array([0.4, 9.0]), np.array([])) is None
    assert not state.complete and state.missing == ["j1", "j3"]
    assert state.take(["j1", "j3"], np.array([0.1, np.nan]), np.array([])) == "NaN or inf values"
    assert state.take(["j1", "j1"], np.array([0.1, 0.2]), np.array([])) == "duplicate joint names"
    assert state.take(["j3", "j1"], np.array([0.05, 0.1]), np.array([1.0, 2.0])) is None
    assert state.complete
    np.testing.assert_array_equal(state.q[3:], [0.1, 0.4, 0.05])
    np.testing.assert_array_equal(state.v[3:], [2.0, 0.0, 1.0])
    H = rd.frame_placement(model, np.array([0.3, -0.2, 0.7, 0.0, 0.0, 0.0]), "base")   # the base link's pose
    state.take_base_pose(pose(H[:3, 3], yaw_quaternion(H[:3, :3])))
    np.testing.assert_allclose(state.q[:3], [0.3, -0.2, 0.7], atol=1e-12)
    before = state.q.copy()
    with pytest.raises(ValueError, match="base_pose: the pose leaves the plane"):
        state.take_base_pose(pose(H[:3, 3] + [0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0]))
    np.testing.assert_array_equal(state.q, before)


def yaw_quaternion(R):
    """x y z w of a rotation about z (the planar base here turns about z only)."""
    yaw = np.arctan2(R[1, 0], R[0, 0])
    return [0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)]


def test_measured_state_refuses_efforts_of_the_wrong_length():
    state = MeasuredState(configured(PUMA, urdf_file=PUMA).model)
    names = [f"joint{k}" for k in range(1, 7)]
    assert state.take(names, np.zeros(6), np.zeros(6), np.zeros(3)) == "3 efforts for 6 names"
    assert state.take(names, np.zeros(6), np.zeros(6), np.zeros(6)) is None and state.jmap.count == 6
