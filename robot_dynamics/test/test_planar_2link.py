"""The 2-link planar arm (l1 = l2 = 1) against its closed forms: M, g, the skew-symmetric Mdot - 2C
and the statics tau = J^T F (Lynch and Park, Modern Robotics, sections 8.1 and 5.2)."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf

m1 = m2 = 1.0
l1 = l2 = 1.0
lc1 = lc2 = 0.5
I1 = I2 = m1 * l1 ** 2 / 12
G = 9.81


@pytest.fixture(scope="module")
def arm():
    return load_urdf(bundled_urdf("planar_2link"))


def closed_form(q, qd):
    c1, c2, c12, s2 = np.cos(q[0]), np.cos(q[1]), np.cos(q[0] + q[1]), np.sin(q[1])
    M11 = m1 * lc1 ** 2 + I1 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * c2 * l1 * lc2) + I2
    M22 = m2 * lc2 ** 2 + I2
    M12 = m2 * c2 * l1 * lc2 + m2 * lc2 ** 2 + I2
    g = np.array([m1 * G * c1 * lc1 + m2 * G * (c12 * lc2 + c1 * l1),
                  m2 * G * c12 * lc2])
    h = m2 * s2 * l1 * lc2 * (qd[0] + 0.5 * qd[1])
    S = np.array([[0.0, -h], [h, 0.0]])
    Mdot12 = -m2 * s2 * l1 * lc2 * qd[1]
    Mdot = np.array([[2 * Mdot12, Mdot12], [Mdot12, 0.0]])
    return np.array([[M11, M12], [M12, M22]]), g, S, Mdot


def test_mass_matrix_gravity_and_coriolis_match_the_closed_forms(arm):
    rng = np.random.default_rng(2)
    for _ in range(50):
        q, qd, qdd = rng.uniform(-3, 3, 2), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        M, g, S, Mdot = closed_form(q, qd)
        np.testing.assert_allclose(rd.mass_matrix(arm, q), M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rd.gravity_torques(arm, q), g, rtol=0, atol=1e-12)
        # M qdd + (Mdot/2 + S) qd + g = u
        u = M @ qdd + (0.5 * Mdot + S) @ qd + g
        np.testing.assert_allclose(rd.inverse_dynamics(arm, q, qd, qdd), u, rtol=0, atol=1e-12)
        # C = Mdot/2 + S is the Christoffel split: same C, and S = C - Mdot/2 is skew
        C = rd.coriolis_matrix(arm, q, qd)
        np.testing.assert_allclose(C, 0.5 * Mdot + S, rtol=0, atol=1e-12)


def test_contact_example_tau_equals_J_transpose_F(arm):
    """A worked example: q = (0, pi/3), F = (0, -1) at the tip -> tau = (-3/2, -1/2)."""
    q = np.array([0.0, np.pi / 3])
    force_down = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])    # the arm moves in the world x-z plane
    tau = rd.wrench_to_joint_torques(arm, q, "tip", force_down)
    np.testing.assert_allclose(tau, [-1.5, -0.5], rtol=0, atol=1e-12)
    J = rd.frame_jacobian(arm, q, "tip")[[0, 2]]                 # in the x-z plane
    s1, s12, c1, c12 = np.sin(q[0]), np.sin(q.sum()), np.cos(q[0]), np.cos(q.sum())
    np.testing.assert_allclose(J, [[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]], atol=1e-12)
    # a contact force enters the dynamics as + J^T F
    tau_ext = rd.inverse_dynamics(arm, q, np.zeros(2), np.zeros(2), {"tip": force_down})
    np.testing.assert_allclose(tau_ext, rd.gravity_torques(arm, q) - tau, atol=1e-12)
