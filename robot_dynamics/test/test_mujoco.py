"""MuJoCo as the independent check: the simulated arm's MuJoCo model of the bundled PUMA 560 (built
by robot_dynamics.demo.mujoco_model from the same URDF) has our inverse dynamics, bias forces and mass matrix."""
import mujoco
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.urdf import urdf_text

N_STATES = 100
RTOL = 1e-9


@pytest.fixture(scope="module")
def arms():
    from robot_dynamics.demo.mujoco_model import mujoco_arm

    path = bundled_urdf("puma560")
    model = load_urdf(path)
    mj_model = mujoco_arm(urdf_text(path), joints=model.joint_names)
    mj_model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # joint limits off
    return model, mj_model


def random_states(model, rng):
    low, high = model.lower_limits, model.upper_limits
    q = rng.uniform(low, high, (N_STATES, model.nq))
    v = rng.uniform(-2.0, 2.0, (N_STATES, model.nv))
    a = rng.uniform(-5.0, 5.0, (N_STATES, model.nv))
    return q, v, a


def mujoco_dofs(model, mj_model):
    """MuJoCo's dof index of each of our joints, matched by name."""
    return np.array([mj_model.jnt_dofadr[mj_model.joint(name).id] for name in model.joint_names])


def assert_close(ours, theirs):
    scale = max(1.0, np.abs(theirs).max())
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=RTOL * scale)


def test_model_is_the_urdf_without_damping_friction_or_armature(arms):
    model, mj_model = arms
    dofs = mujoco_dofs(model, mj_model)
    assert mj_model.nv == model.nv == 6
    assert not mj_model.dof_damping.any() and not mj_model.dof_frictionloss.any()
    assert not mj_model.dof_armature.any()
    assert mj_model.body_mass.sum() == pytest.approx(model.total_mass, rel=1e-12)
    assert [mj_model.actuator(i).name for i in range(mj_model.nu)] == list(model.joint_names)
    np.testing.assert_array_equal(mj_model.actuator_trnid[:, 0], mj_model.dof_jntid[dofs])


def test_inverse_dynamics_matches_mj_inverse(arms):
    model, mj_model = arms
    data, dofs = mujoco.MjData(mj_model), mujoco_dofs(model, mj_model)
    q, v, a = random_states(model, np.random.default_rng(4))
    ours = rd.inverse_dynamics(model, q, v, a)
    for i in range(N_STATES):
        data.qpos[dofs], data.qvel[dofs], data.qacc[dofs] = q[i], v[i], a[i]
        mujoco.mj_inverse(mj_model, data)
        assert_close(ours[i], data.qfrc_inverse[dofs])


def test_bias_gravity_and_mass_matrix_match_mujoco(arms):
    model, mj_model = arms
    data, dofs = mujoco.MjData(mj_model), mujoco_dofs(model, mj_model)
    q, v, _ = random_states(model, np.random.default_rng(5))
    bias, gravity, mass = rd.bias_forces(model, q, v), rd.gravity_torques(model, q), rd.mass_matrix(model, q)
    full_mass = np.zeros((mj_model.nv, mj_model.nv))
    for i in range(N_STATES):
        data.qpos[dofs], data.qvel[dofs] = q[i], v[i]
        mujoco.mj_forward(mj_model, data)
        assert_close(bias[i], data.qfrc_bias[dofs])
        mujoco.mj_fullM(mj_model, data, full_mass)
        assert_close(mass[i], full_mass[np.ix_(dofs, dofs)])
        data.qvel[:] = 0
        mujoco.mj_forward(mj_model, data)
        assert_close(gravity[i], data.qfrc_bias[dofs])
