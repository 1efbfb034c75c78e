"""A joint's <dynamics damping friction> and the <robot_dynamics> extension read by load_urdf, and a
model's identified dynamics written back into the user's URDF (urdf_export): loaded again it is
the same model; Pinocchio and MuJoCo load it (their damping and friction are ours); the
meaningless refused by name, the suspect warned about."""
import re

import numpy as np
import pytest

import identification_truth as truth_data
from oracle import pin
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.dynamic_identification import standard_parameters
from robot_dynamics.urdf import URDFError

ARM = """<?xml version="1.0"?>
<!-- a two-link arm -->
<robot name="arm">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.2 0 0"/><mass value="2"/>
      <inertia ixx="0.01" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="lower">
    <inertial><origin xyz="0.15 0 0"/><mass value="1"/>
      <inertia ixx="0.005" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="tool">
    <inertial><origin xyz="0.02 0 0"/><mass value="0.5"/>
      <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/>
    <dynamics damping="0.5" friction="1.25" D="1" K="7000"/>
    <robot_dynamics armature="0.2" friction_offset="-0.1" coulomb_band="0.02"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="30" velocity="3"/>
  </joint>
  <joint name="flange" type="fixed"><parent link="lower"/><child link="tool"/><origin xyz="0.3 0 0"/></joint>
</robot>
"""


def test_load_urdf_reads_the_joint_dynamics():
    m = load_urdf(ARM)
    np.testing.assert_array_equal(m.friction, [[0.5, 1.25, -0.1], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(m.armature, [0.2, 0.0])
    np.testing.assert_array_equal(m.coulomb_band, [0.02, 0.01])
    assert not m.warnings and m.urdf == ARM
    # the armature is the model's: inverse dynamics has it, friction does not enter it
    q, v, a = np.zeros(2), np.array([1.0, 0.0]), np.array([1.0, 0.0])
    bare = load_urdf(ARM.replace('armature="0.2"', ""))
    assert rd.inverse_dynamics(m, q, v, a)[0] - rd.inverse_dynamics(bare, q, v, a)[0] == pytest.approx(0.2)
    assert rd.friction_torques(m, v)[0] == pytest.approx(0.5 + 1.25 - 0.1)
    # Pinocchio reads the standard part the same way
    p = pin.buildModelFromXML(ARM)
    np.testing.assert_array_equal(p.damping, [0.5, 0.0])
    np.testing.assert_array_equal(p.friction, [1.25, 0.0])


@pytest.mark.parametrize("given, value, message", [
    ('armature="0.2"', 'armature="-0.1"', "joint 'shoulder' .* armature> is negative"),
    ('coulomb_band="0.02"', 'coulomb_band="0"', "coulomb_band> must be positive"),
    ('friction_offset="-0.1"', 'friction_offset="nan"', "<robot_dynamics friction_offset>: expected a finite number"),
    ('armature="0.2"', 'armature="heavy"', "<robot_dynamics armature>: expected a finite number, got 'heavy'"),
])
def test_meaningless_values_are_refused_by_name(given, value, message):
    text = ARM.replace(given, value)
    with pytest.raises(URDFError, match=message):
        load_urdf(text)


def test_negative_friction_is_a_warning():
    m = load_urdf(ARM.replace('damping="0.5"', 'damping="-0.5"'))
    assert m.friction[0, 0] == -0.5
    assert any("negative <dynamics damping>" in w and "'shoulder'" in w for w in m.warnings)
    with pytest.raises(URDFError, match="strict loading refused"):
        load_urdf(ARM.replace('damping="0.5"', 'damping="-0.5"'), strict=True)


def identified_arm(lighter=False):
    """The arm's model with new inertias, friction and armature, as identification makes one."""
    prior = load_urdf(ARM)
    model = load_urdf(ARM)
    for b in range(model.nb):
        model.set_body_inertia(b, model.inertia[b] * (0.3 if lighter and b == 1 else 1.3))
    model.friction = [[0.7, 1.5, 0.05], [0.3, 0.9, -0.2]]
    model.armature = [0.25, 0.1]
    model.coulomb_band = [0.02, 0.03]
    return prior, model


@pytest.mark.parametrize("lighter", [False, True], ids=["heavier", "lighter than the welded tool"])
def test_export_round_trips_and_keeps_the_users_text(lighter):
    from robot_dynamics.urdf_export import urdf_with_dynamics
    prior, model = identified_arm(lighter)
    text = urdf_with_dynamics(prior, model)
    back = load_urdf(text)
    np.testing.assert_allclose(back.inertia, model.inertia, rtol=1e-14, atol=1e-15)
    for name in ("friction", "armature", "coulomb_band"):
        np.testing.assert_array_equal(getattr(back, name), getattr(model, name))
    assert not back.warnings
    assert "<!-- a two-link arm -->" in text and 'K="7000"' in text and 'D="1"' in text
    tool = text[text.index('<link name="tool">'):].split("</link>")[0]
    # a body's change goes to its own link; if that would leave it non-physical, it takes the whole body
    assert ("<inertial>" in tool) != lighter
    assert ("links tool included" in text) == lighter


def test_pinocchio_and_mujoco_load_the_export_with_our_friction():
    mujoco = pytest.importorskip("mujoco")
    est_model = truth_data.truth("ur5")
    text = rd.DynamicsEstimate(est_model, {}, {}, None, None, 0.0, None, None, None, 0, 0, True,
                               truth_data.prior("ur5")).to_urdf()
    p = pin.buildModelFromXML(text)
    np.testing.assert_allclose(p.damping, est_model.friction[:, 0], rtol=1e-15)
    np.testing.assert_allclose(p.friction, est_model.friction[:, 1], rtol=1e-15)
    # Pinocchio's inertias are ours (its inverse dynamics agrees once our armature is left out)
    q = np.random.default_rng(0).uniform(-1, 1, 6)
    no_armature = load_urdf(text)
    no_armature.armature = 0.0
    np.testing.assert_allclose(pin.computeGeneralizedGravity(p, p.createData(), q), rd.gravity_torques(no_armature, q),
                               rtol=1e-10, atol=1e-10)
    mj = mujoco.MjModel.from_xml_string(re.sub(r"<(visual|collision)>.*?</\1>", "", text, flags=re.S))  # no meshes
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(mj.njnt)]
    order = [names.index(j) for j in est_model.joint_names]
    np.testing.assert_allclose(mj.dof_damping[order], est_model.friction[:, 0], rtol=1e-12)
    np.testing.assert_allclose(mj.dof_frictionloss[order], est_model.friction[:, 1], rtol=1e-12)


def test_export_needs_the_urdf_text():
    from robot_dynamics.urdf_export import urdf_with_dynamics
    prior, model = identified_arm()
    prior.urdf = None
    with pytest.raises(ValueError, match="not loaded by load_urdf"):
        urdf_with_dynamics(prior, model)
    with pytest.raises(ValueError, match="not of the same robot"):
        urdf_with_dynamics(load_urdf(ARM), truth_data.prior("ur5"))


def test_standard_parameters_follow_the_model():
    prior, model = identified_arm()
    x = standard_parameters(model)
    assert x[-2:].tolist() == [0.25, 0.1] and x[20:26].tolist() == [0.7, 1.5, 0.05, 0.3, 0.9, -0.2]
