"""The node's configuration without DDS (robot_dynamics.ros.parameters, features, config: no rclpy): the
parameters every feature declares, each in config/dynamics.yaml with its default; their checks; the
configuration they build and a refusal naming the parameter."""
import os

import numpy as np
import pytest
import yaml

from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.features import FEATURES, PARAMETERS
from robot_dynamics.ros.joint_states import unmeasured_notice
from robot_dynamics.ros.parameters import SHARED, ParameterError, ParameterSpec
from rosconfig import configured, params

DYNAMICS_YAML = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "dynamics.yaml")


def test_build_config_and_a_refusal_naming_the_parameter():
    puma = bundled_urdf("puma560")
    config = configured(puma, urdf_file=puma, gravity=[0.0, 0.0, -1.62], armature=0.1)
    assert list(config.model.gravity) == [0.0, 0.0, -1.62] and np.all(config.model.armature == 0.1)
    assert config.unmeasured == [] and unmeasured_notice(config) is None
    with pytest.raises(ParameterError, match="parameter payload.link: no link 'nowhere'") as info:
        configured(puma, urdf_file=puma, payload__mass=1.0, payload__link="nowhere")
    assert info.value.name == "payload.link"
    links = str(info.value).split("its links are ")[1]
    model = config.model
    assert "'link6'" in links and not any(f"'{j}'" in links for j in model.joint_names)     # links, no joints


def test_drive_compensates_gravity_computes_the_feedforward_without_gravity_and_is_refused_with_contacts():
    puma = bundled_urdf("puma560")
    config = configured(puma, urdf_file=puma, drive_compensates_gravity=True)
    assert config.drive_compensates_gravity and list(config.model.gravity) == [0.0, 0.0, -9.81]
    assert list(config.feedforward_model.gravity) == [0.0, 0.0, 0.0]
    assert configured(puma, urdf_file=puma).feedforward_model is not None
    biped = bundled_urdf("floating_base_biped")
    with pytest.raises(ParameterError, match="drive_compensates_gravity is for drives") as info:
        configured(biped, urdf_file=biped, floating_base=True, contacts__frames=["left_sole", "right_sole"],
                   contacts__kind="6d", drive_compensates_gravity=True)
    assert info.value.name == "drive_compensates_gravity"


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


def flattened(tree, prefix=""):
    """A YAML mapping with nested keys (a: {b: 1}) as dotted names ({'a.b': 1}), as rcl reads them."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flattened(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_parameter_the_features_declare_is_documented_in_dynamics_yaml_with_its_default():
    with open(DYNAMICS_YAML) as f:
        documented = flattened(yaml.safe_load(f)["/**"]["ros__parameters"])
    assert sorted(documented) == sorted(PARAMETERS)
    assert {name: spec.default for name, spec in PARAMETERS.items()} == documented


def test_each_feature_declares_its_own_parameters_and_parts():
    declared = [name for feature in FEATURES for name in feature.PARAMETERS]
    assert len(set(declared)) == len(declared) and not set(declared) & set(SHARED)
    assert len(PARAMETERS) == len(SHARED) + len(declared)
    for feature in FEATURES:
        assert feature.__doc__ and all(isinstance(s, ParameterSpec) for s in feature.PARAMETERS.values()), feature
        assert callable(feature.parts) and feature.__name__.startswith("robot_dynamics.ros."), feature
