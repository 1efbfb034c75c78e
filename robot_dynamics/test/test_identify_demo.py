"""The identification demo's pieces without the closed loop (demo/identify_demo.py, make demo-identify):
the simulated arm (sim_arm's MuJoCo model with the demo's mass_scale, tool, damping and armature) is the
library's `real_arm()` model, the test trajectory is one the real arm can follow within its effort limits,
and the demo's figures (tracking and torque prediction per joint) computed from a recording."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.demo.mujoco_model import Payload, mujoco_arm

demo = pytest.importorskip("robot_dynamics.demo.identify_demo")       # rclpy, matplotlib
mujoco = pytest.importorskip("mujoco")


def simulated():
    with open(demo.URDF) as f:
        urdf = f.read()
    tool = Payload(demo.TOOL["payload.link"], demo.TOOL["payload.mass"], demo.TOOL["payload.com"],
                   demo.TOOL["payload.inertia"])
    return mujoco_arm(urdf, None, 1e-3, demo.DAMPING, demo.FRICTION, demo.ARMATURE, tool, None, demo.MASS_SCALE)


def test_the_simulated_arm_is_the_real_arm_model():
    mj, real = simulated(), demo.real_arm()
    data, M = mujoco.MjData(mj), np.zeros((mj.nv, mj.nv))
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v = rng.uniform(-1, 1, 6), rng.normal(size=6)
        data.qpos[:], data.qvel[:] = q, v
        mujoco.mj_forward(mj, data)
        mujoco.mj_fullM(mj, data, M)
        assert np.allclose(M, rd.mass_matrix(real, q), rtol=1e-9, atol=1e-9)       # armature included
        assert np.allclose(data.qfrc_bias, rd.bias_forces(real, q, v), rtol=1e-9, atol=1e-9)
        assert np.allclose(data.qfrc_passive, -np.asarray(demo.DAMPING) * v, rtol=1e-12, atol=1e-12)
    assert np.allclose(mj.dof_frictionloss, demo.FRICTION) and real.total_mass == pytest.approx(
        demo.MASS_SCALE * load_urdf(demo.URDF).total_mass + demo.TOOL["payload.mass"])


def test_the_test_trajectory_is_within_the_real_arms_limits():
    real = demo.real_arm()
    times, q, v, a = demo.sampled(demo.test_trajectory, demo.SEGMENT * (len(demo.TEST_POSES) - 1), 0.002)
    assert np.all(q >= real.lower_limits) and np.all(q <= real.upper_limits)
    assert np.all(np.abs(v) <= real.velocity_limits)
    tau = rd.inverse_dynamics(real, q, v, a) + rd.friction_torques(real, v)
    assert np.all(np.abs(tau) <= 0.8 * real.effort_limits)      # room for the PD
    assert np.allclose(q[[0, -1]], demo.TEST_POSES[[0, -1]]) and not np.any(v[[0, -1]])


def test_the_figures_of_a_recording():
    real, urdf = demo.real_arm(), load_urdf(demo.URDF)
    times, q, v, a = demo.sampled(demo.test_trajectory, 3.0, 0.001)
    effort = rd.inverse_dynamics(real, q, v, a) + rd.friction_torques(real, v)
    run = demo.trajectory_run("test", list(urdf.joint_names), times, q, v, a)

    class Recording:        # the harness's fields the figures read: the arm exactly on the trajectory
        pass
    rec = Recording()
    rec.run, rec.t, rec.q, rec.v, rec.effort = run, times + demo.START, q + 1e-3, v, effort
    rec.error = np.array([run.desired(t)[0] for t in rec.t]) - rec.q
    urdf_error, real_error = demo.predictions(rec, (urdf, real))
    assert np.all(real_error < 0.05 * urdf_error) and np.all(urdf_error > 0.5)
    rms, worst = demo.tracking(rec)
    assert np.allclose(rms, 1.0) and np.allclose(worst, 1.0)
