"""The node's logic without DDS: configuration from parameters, the measured state from joint_states
and base poses, request mapping (robot_dynamics.ros.config / state / messages: no rclpy)."""
import os
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.config import build_config, unmeasured_notice
from robot_dynamics.ros.messages import RequestState
from robot_dynamics.ros.parameters import PARAMETERS, ParameterError, check_parameters
from robot_dynamics.ros.state import MeasuredState

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def params(**changes):
    values = {name: spec.default for name, spec in PARAMETERS.items()}
    values.update({k.replace("__", "."): v for k, v in changes.items()})
    return check_parameters(values)


def pose(position, quaternion):
    return Msg(position=Msg(x=position[0], y=position[1], z=position[2]),
               orientation=Msg(x=quaternion[0], y=quaternion[1], z=quaternion[2], w=quaternion[3]))


def test_build_config_and_a_refusal_naming_the_parameter():
    puma = bundled_urdf("puma560")
    config = build_config(params(urdf_file=puma, gravity=[0.0, 0.0, -1.62], armature=0.1), puma, {})
    assert list(config.model.gravity) == [0.0, 0.0, -1.62] and np.all(config.model.armature == 0.1)
    assert config.unmeasured == [] and unmeasured_notice(config) is None
    with pytest.raises(ParameterError, match="parameter payload.link: no link 'nowhere'") as info:
        build_config(params(urdf_file=puma, payload__mass=1.0, payload__link="nowhere"), puma, {})
    assert info.value.name == "payload.link"


def test_multi_coordinate_joints_below_the_root_are_announced():
    path = os.path.join(DATA, "floating_object_arm.urdf")
    config = build_config(params(urdf_file=path), path, {})
    assert [j.name for j in config.unmeasured] == ["table_planar", "part_float"]
    notice = unmeasured_notice(config)
    assert "table_planar (planar: q[7:10], v[6:9]) at its origin, at rest" in notice
    assert "part_float (floating: q[10:17], v[9:15]) at its origin, unrotated, at rest" in notice


def test_measured_state_merges_partial_messages_and_rejects_bad_ones():
    path = os.path.join(DATA, "planar_base_arm.urdf")
    model = build_config(params(urdf_file=path), path, {}).model
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


def test_request_state_maps_names_and_the_planar_base():
    path = os.path.join(DATA, "planar_base_arm.urdf")
    model = build_config(params(urdf_file=path), path, {}).model
    rs = RequestState(model, ["j3", "j1", "j2"])
    default = Msg(position=Msg(x=0.0, y=0.0, z=0.0), orientation=Msg(x=0.0, y=0.0, z=0.0, w=1.0))
    q = rs.q([0.3, 0.1, 0.2], default)                   # an unset pose: the base at its neutral configuration
    np.testing.assert_array_equal(q, [0.0, 0.0, 0.0, 0.1, 0.2, 0.3])
    twist = Msg(linear=Msg(x=0.5, y=-0.1, z=0.0), angular=Msg(x=0.0, y=0.0, z=0.25))
    np.testing.assert_allclose(rs.v([1.0, 2.0, 3.0], "velocities", twist), [0.5, -0.1, 0.25, 2.0, 3.0, 1.0])
    with pytest.raises(ValueError, match="base velocities: .*moves in its plane only"):
        rs.v([], "velocities", Msg(linear=Msg(x=0.0, y=0.0, z=1.0), angular=Msg(x=0.0, y=0.0, z=0.0)))
    with pytest.raises(ValueError, match="joint_names: unknown joints \\['base_planar'\\]"):
        RequestState(model, ["base_planar"])


def test_a_dumped_null_list_is_not_set_and_other_values_stay_refused():
    """`ros2 param dump` writes a list parameter that is not set as null, which rcl reads back as the
    string 'null': for a list parameter, taken as not set (its default); a number or a flag refuses it."""
    checked = params(joints="null", armature="~", contacts__frames="null", contacts__kind="NULL", gravity="null")
    assert (checked["joints"], checked["armature"], checked["contacts.frames"], checked["contacts.kind"],
            checked["gravity"]) == ([], [], [], ["point"], [0.0, 0.0, -9.81])
    assert params(joints="None")["joints"] == []        # a null through `ros2 param load`
    for name in ("payload.mass", "floating_base", "observer.max_interval"):
        with pytest.raises(ParameterError, match=f"parameter {name} takes"):
            params(**{name.replace(".", "__"): "null"})


def test_diagnostics_say_stale_input_and_the_names_that_came():
    from robot_dynamics.ros.diagnostics import period_stats, summary
    stats = period_stats()
    level, message, values = summary(stats, 1.0, "puma560", ["joint1"], "", "", "", ["finger"])
    assert level == "WARN" and message == "waiting for joint_states of ['joint1']; joint_states came naming none " \
                                          "of them: ['finger']" and values["joint_states names not in the model"] == "finger"
    level, message, values = summary(stats, 1.0, "puma560", [], "", "", "no joint_states for 2 s")
    assert (level, message, values["stale input"]) == ("WARN", "stale input: no joint_states for 2 s",
                                                       "no joint_states for 2 s")
    assert summary(stats, 1.0, "puma560", [], "", "")[:2] == ("OK", "serving")
