"""Requests mapped onto the model without DDS (robot_dynamics.ros.messages: no rclpy)."""
import os
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics.ros.messages import RequestState
from rosconfig import configured

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def test_request_state_maps_names_and_the_planar_base():
    path = os.path.join(DATA, "planar_base_arm.urdf")
    model = configured(path, urdf_file=path).model
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
