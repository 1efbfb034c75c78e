"""Friction compensation in the node's outputs without DDS (robot_dynamics.ros.friction: no rclpy): the
parameters, and the torques each mode adds, against the library's rd.friction_torques."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.parameters import ParameterError
from rosconfig import configured, params

PUMA = bundled_urdf("puma560")


@pytest.mark.parametrize("name", ["friction.compensate", "friction.compensate_gravity"])
def test_the_modes_are_checked_by_name(name):
    with pytest.raises(ParameterError) as info:
        params(**{name.replace(".", "__"): "coulomb"})
    assert info.value.name == name and "one of off, viscous, full" in str(info.value)


def test_each_mode_adds_the_models_friction():
    assert params()["friction.compensate"] == "full" and params()["friction.compensate_gravity"] == "off"
    config = configured(PUMA)
    friction = np.c_[np.linspace(2.0, 0.4, 6), np.linspace(3.0, 0.6, 6), np.linspace(0.8, -0.3, 6)]
    config.model.friction = friction
    v = np.array([0.3, -0.2, 0.005, 1.0, -1.0, 0.0])
    from robot_dynamics.ros import friction as compensation
    values = compensation.settings(params(friction__compensate_gravity="viscous"), config)["friction"]
    assert np.array_equal(values.feedforward(v), rd.friction_torques(config.model, v))
    assert np.allclose(values.gravity(v), friction[:, 0] * v, rtol=1e-15, atol=0)
    assert np.array_equal(values.rest, friction[:, 2])      # at rest: the offset
    off = compensation.settings(params(friction__compensate="off"), config)["friction"]
    assert off.feedforward is None and off.gravity is None and off.rest is None
    config.model.friction = 0 * friction       # a URDF without <dynamics>: nothing to add, at no cost
    none = compensation.settings(params(friction__compensate_gravity="full"), config)["friction"]
    assert none.feedforward is None and none.gravity is None and none.rest is None
