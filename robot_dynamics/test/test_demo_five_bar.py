"""The five-bar demo's pieces (demo/five_bar.py, five_bar_demo.py): the MuJoCo model closes the URDF's
loop and tends to our rigid constrained dynamics as its weld stiffens; the motors' inverse kinematics
inverts the forward one and the assembled library model; the constrained gravity torques hold the
simulated mechanism (in-process, the node's law, a short horizon) which collapses without them; and,
shortened, the demo's hold over real DDS with the processes `make demo-five-bar` starts."""
import mujoco
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.demo import five_bar as fb
from robot_dynamics.urdf import load_urdf

HOLD_TIME = 1.0          # s of sim time (make demo-five-bar: 5 s)
HOLD_TOLERANCE = 1e-3    # rad (the target for the 5 s hold)
COLLAPSE_MINIMUM = 0.1   # rad: without torques the motors leave the pose by far more


@pytest.fixture(scope="module")
def model():
    return load_urdf(fb.URDF)


@pytest.fixture(scope="module")
def mj():
    mj_model = fb.mujoco_five_bar()
    return mj_model, mujoco.MjData(mj_model)


def motor_index(model):
    return [model.joint_names.index(name) for name in fb.MOTORS]


@pytest.mark.parametrize("motors", [fb.HOLD_POSE, [0.0, 0.0], [-0.2, 0.4], fb.circle_motors(0.7)[0]])
def test_the_mujoco_weld_is_closed_where_the_library_assembles_the_loop(model, mj, motors):
    mj_model, data = mj
    q = fb.closed(model, motors)
    fb.set_configuration(mj_model, data, model.joint_names, q)
    assert data.nefc >= 6 and np.abs(data.efc_pos[:6]).max() < 1e-12
    site = data.site_xpos[mj_model.site(fb.END_POINT).id]
    H = rd.frame_placement(model, q, "end_effector")
    np.testing.assert_allclose(site, H[:3, 3], atol=1e-12)
    np.testing.assert_allclose(fb.end_point(motors), site[[0, 2]], atol=1e-12)
    np.testing.assert_allclose(fb.motor_angles(site[[0, 2]]), motors, atol=1e-10)


def test_mujoco_forward_dynamics_tends_to_ours_as_the_weld_stiffens(model):
    """MuJoCo's soft weld leaves an acceleration error of order (1 - d) along the constraint: it
    shrinks tenfold per tenfold stiffer impedance d, to 1e-3 of |qdd| at the demo's d = 0.9999."""
    q = fb.closed(model, [0.2, -0.3])
    J = rd.constraint_jacobian(model, q, 0, (), fb.LOOPS)[0]
    v = np.array([0.5, -0.3, 0.2, 0.1, -0.4])
    v -= np.linalg.pinv(J) @ (J @ v)        # on the loop
    tau = np.zeros(5)
    tau[motor_index(model)] = [-1.0, 1.5]
    ours = rd.constrained_forward_dynamics(model, q, v, tau, (), fb.LOOPS)[0]
    errors = []
    for d in (0.99, 0.999, 0.9999):
        mj_model = fb.mujoco_five_bar(solimp=(d, d, 0.001, 0.5, 2.0))
        data = mujoco.MjData(mj_model)
        fb.set_configuration(mj_model, data, model.joint_names, q, v)
        data.ctrl[:] = tau[motor_index(model)]
        mujoco.mj_forward(mj_model, data)
        errors.append(np.abs(data.qacc[fb.joint_addresses(mj_model, model.joint_names)] - ours).max())
    assert errors[0] > 5 * errors[1] > 25 * errors[2], errors
    assert errors[2] < 1e-3 * np.abs(ours).max(), errors


def test_the_circle_is_reachable_within_the_joint_limits_and_its_motion_is_the_ik_derivative(model):
    for t in np.linspace(0.0, fb.CIRCLE_TIME, 41):
        q, v, a = fb.circle_motors(t)
        np.testing.assert_allclose(fb.end_point(q), fb.circle_point(t), atol=1e-12)
        full = fb.closed(model, q)
        assert np.all(np.abs(full) < 1.4), full    # URDF limits: 1.5 (motors), 2.6 (passive)
    h = 1e-5
    q1, q0 = fb.circle_motors(0.9 + h)[0], fb.circle_motors(0.9 - h)[0]
    np.testing.assert_allclose(fb.circle_motors(0.9)[1], (q1 - q0) / (2 * h), rtol=1e-5)


def simulate_hold(model, torques, duration):
    """The hold in-process: MuJoCo at the demo's settings, the motors at HOLD_POSE, each step's efforts
    torques(motor angles) (the node's law: assemble the passive joints, then constrained gravity)."""
    mj_model = fb.mujoco_five_bar()
    data = mujoco.MjData(mj_model)
    fb.set_configuration(mj_model, data, model.joint_names, fb.closed(model, fb.HOLD_POSE))
    motors = fb.joint_addresses(mj_model, fb.MOTORS)
    drift = 0.0
    for _ in range(round(duration / mj_model.opt.timestep)):
        data.ctrl[:] = torques(data.qpos[motors])
        mujoco.mj_step(mj_model, data)
        drift = max(drift, np.abs(data.qpos[motors] - fb.HOLD_POSE).max())
    return drift


def test_constrained_gravity_holds_the_simulated_five_bar_that_otherwise_collapses(model):
    index = motor_index(model)

    def gravity(motors):
        q = fb.closed(model, motors)
        return rd.constrained_inverse_dynamics(model, q, 0, 0, fb.MOTORS, loops=fb.LOOPS)[0][index]

    assert simulate_hold(model, gravity, HOLD_TIME) < HOLD_TOLERANCE
    assert simulate_hold(model, lambda motors: np.zeros(2), HOLD_TIME) > COLLAPSE_MINIMUM


@pytest.mark.ros
def test_the_node_holds_the_simulated_five_bar_over_dds(model):
    """The demo's scenario 1, shortened: sim_five_bar (motors only in joint_states) and the node with
    the loop; its efforts are the library's constrained gravity at the measured motors."""
    rclpy = pytest.importorskip("rclpy")
    from robot_dynamics.demo import five_bar_demo as demo   # imports rclpy
    rclpy.init()
    try:
        kp, kd = fb.pd_gains(model)
        hold, collapse = (demo.record(run, kp, kd) for run in demo.scenario_runs(hold_time=HOLD_TIME)[:2])
    finally:
        rclpy.shutdown()
    assert hold.t[0] == 0.0 and hold.t[-1] >= HOLD_TIME and collapse.t[-1] >= HOLD_TIME
    assert np.abs(hold.motor_error).max() < HOLD_TOLERANCE
    assert np.abs(collapse.motor_error).max() > COLLAPSE_MINIMUM
    q = fb.closed(model, hold.q[-1])
    expected = rd.constrained_inverse_dynamics(model, q, 0, 0, fb.MOTORS, loops=fb.LOOPS)[0][motor_index(model)]
    np.testing.assert_allclose(hold.effort[-1], expected, atol=1e-6)
