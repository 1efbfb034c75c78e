"""The computed-torque law of robot_dynamics.control, against M, C and g built separately."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.control import computed_torque


pytestmark = pytest.mark.robots("puma560", "talos-freeflyer", "planar_base_arm")


def test_computed_torque_is_the_model_law(pair):
    m, rng = pair.model, np.random.default_rng(3)
    for _ in range(10):
        q, v, _ = pair.random_state(rng)
        q_d, v_d, a_d = pair.random_state(rng)
        kp, kd = rng.uniform(0, 50, m.nv), 7.0
        for evaluate_at, (q_e, v_e) in (("desired", (q_d, v_d)), ("measured", (q, v))):
            a = a_d + kp * rd.difference(m, q, q_d) + kd * (v_d - v)
            expected = rd.mass_matrix(m, q_e) @ a + rd.coriolis_matrix(m, q_e, v_e) @ v_e + rd.gravity_torques(m, q_e)
            got = computed_torque(m, q, v, q_d, v_d, a_d, kp, kd, evaluate_at)
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        np.testing.assert_allclose(computed_torque(m, q, v, q_d, v_d, a_d), rd.inverse_dynamics(m, q_d, v_d, a_d),
                                   rtol=0, atol=1e-12)


def test_batches_and_errors(pair):
    m, rng = pair.model, np.random.default_rng(4)
    S = [pair.random_state(rng) for _ in range(4)]
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    batch = computed_torque(m, Q, V, Q[::-1], V[::-1], A, 3.0, 1.0)
    for k in range(4):
        np.testing.assert_allclose(batch[k], computed_torque(m, Q[k], V[k], Q[3 - k], V[3 - k], A[k], 3.0, 1.0), atol=1e-12)
    with pytest.raises(ValueError, match="evaluate_at must be one of"):
        computed_torque(m, Q[0], V[0], Q[0], V[0], A[0], evaluate_at="later")
    for bad in (-1.0, np.nan, np.ones(m.nv + 1)):
        with pytest.raises(ValueError, match="kp takes one finite non-negative number"):
            computed_torque(m, Q[0], V[0], Q[0], V[0], A[0], kp=bad)
