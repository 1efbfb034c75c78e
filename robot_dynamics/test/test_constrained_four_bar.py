"""A closed four-bar linkage (test/data/four_bar.urdf, a crank-rocker closed by a point loop) against
its closed forms: the position analysis by direct geometry, the velocity ratios, the
one-degree-of-freedom Lagrangian. Constrained forward dynamics simulated for a second; constrained
inverse dynamics with the crank alone actuated (the unique case) and loop assembly of the coupler
and rocker from the crank angle."""
import numpy as np

from oracle import FOUR_BAR_LOOPS, Pair, rel_err
from robot_dynamics import dynamics as rd

TOL = 1e-9

# test/data/four_bar.urdf: ground pivots at x = 0 (crank) and x = D (rocker), in the x-z plane
A_, B_, C_, D_ = 0.1, 0.35, 0.3, 0.4            # crank, coupler, rocker, ground
MASS = (0.5, 1.0, 0.8)
INERTIA = tuple(mass * length ** 2 / 12 for mass, length in zip(MASS, (A_, B_, C_)))   # uniform rods, about the COM
G = 9.81


def unit(th):
    return np.array([np.cos(th), np.sin(th)])


def normal(th):
    return np.array([-np.sin(th), np.cos(th)])


def four_bar_position(t2):
    """Position analysis by direct geometry: the coupler's and the rocker's absolute angles for
    crank angle t2 (the branch with the joint C above the line BD)."""
    B, D = A_ * unit(t2), np.array([D_, 0.0])
    BD = D - B
    e = np.linalg.norm(BD)
    x = (B_ ** 2 - C_ ** 2 + e ** 2) / (2 * e)          # along BD from B, then across it
    C = B + x * BD / e + np.sqrt(B_ ** 2 - x ** 2) * np.array([-BD[1], BD[0]]) / e
    return np.arctan2(*(C - B)[::-1]), np.arctan2(*(C - D)[::-1])


def four_bar_velocity_ratios(t2):
    """k3 = dt3/dt2, k4 = dt4/dt2 and their derivatives, from the loop B + b e(t3) = D + c e(t4)
    differentiated once and twice (closed form)."""
    t3, t4 = four_bar_position(t2)
    K = np.column_stack((B_ * normal(t3), -C_ * normal(t4)))
    k3, k4 = np.linalg.solve(K, -A_ * normal(t2))
    rhs = A_ * unit(t2) + B_ * k3 ** 2 * unit(t3) - C_ * k4 ** 2 * unit(t4)
    k3d, k4d = np.linalg.solve(K, rhs)
    return (t3, t4), (k3, k4), (k3d, k4d)


def four_bar_terms(t2):
    """The one-degree-of-freedom Lagrangian's terms: the crank torque is
    I(t2) t2'' + c(t2) t2'^2 + dV/dt2, with I = sum over links of m J . J + I_c k^2,
    c = sum of m J . J' + I_c k k' and dV/dt2 = g sum of m J_z; J is the link COM's velocity per
    unit t2', J' its derivative along t2, k the link's angular rate per unit t2'."""
    (t3, t4), (k3, k4), (k3d, k4d) = four_bar_velocity_ratios(t2)
    J = [A_ / 2 * normal(t2), A_ * normal(t2) + B_ / 2 * k3 * normal(t3), C_ / 2 * k4 * normal(t4)]
    Jd = [-A_ / 2 * unit(t2), -A_ * unit(t2) + B_ / 2 * (k3d * normal(t3) - k3 ** 2 * unit(t3)),
          C_ / 2 * (k4d * normal(t4) - k4 ** 2 * unit(t4))]
    k, kd = (1.0, k3, k4), (0.0, k3d, k4d)
    inertia = sum(MASS[i] * J[i] @ J[i] + INERTIA[i] * k[i] ** 2 for i in range(3))
    c = sum(MASS[i] * J[i] @ Jd[i] + INERTIA[i] * k[i] * kd[i] for i in range(3))
    return inertia, c, G * sum(MASS[i] * J[i][1] for i in range(3))


def four_bar_acceleration(t2, w2):
    """t2'' of the free linkage (no crank torque), from `four_bar_terms`."""
    inertia, c, dV = four_bar_terms(t2)
    return -(c * w2 ** 2 + dV) / inertia


def closed_four_bar(t2, w2=0.0, t2dd=0.0):
    """Joint positions, velocities and accelerations [crank, coupler relative to crank, rocker] of
    the closed linkage (the accelerations only if asked for: t2dd given)."""
    (t3, t4), (k3, k4), (k3d, k4d) = four_bar_velocity_ratios(t2)
    q, v = np.array([t2, t3 - t2, t4]), w2 * np.array([1.0, k3 - 1.0, k4])
    return q, v, t2dd * np.array([1.0, k3 - 1.0, k4]) + w2 ** 2 * np.array([0.0, k3d, k4d])


def rk4(f, x, dt):
    k1 = f(x)
    k2 = f(x + dt / 2 * k1)
    k3 = f(x + dt / 2 * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def test_four_bar_holds_its_loop_and_follows_its_closed_form_motion():
    """Released at rest from crank angle 0.3 under gravity: one second of RK4 (0.5 ms) on our
    constrained forward dynamics (a point loop where the coupler meets the rocker: the plane's normal
    row is redundant) with Baumgarte's stabilisation (critically damped at 20 rad/s: stiffer gains
    raise RK4's truncation error more than they correct; without, the gap grows to ~1e-9). The loop
    closes to 1e-10 all along, the energy stays, and the crank follows the closed-form
    one-degree-of-freedom motion (Lagrangian from the position analysis, integrated at 0.1 ms) while
    the coupler and rocker follow the position analysis."""
    m = Pair("four_bar", False).model
    loop = [("coupler_tip", "rocker_tip", "point")]
    gains = (20.0 ** 2, 2 * 20.0)
    q, v, _ = closed_four_bar(0.3)

    def qdd(q, v):
        return rd.constrained_forward_dynamics(m, q, v, np.zeros(3), [], loop, baumgarte=gains)[0]

    def energy(q, v):
        M = rd.mass_matrix(m, q)
        coms = [rd.frame_placement(m, q, link)[:3, :3] @ [length / 2, 0, 0] + rd.frame_placement(m, q, link)[:3, 3]
                for link, length in zip(("crank", "coupler", "rocker"), (A_, B_, C_))]
        return 0.5 * v @ M @ v + G * sum(mass * c[2] for mass, c in zip(MASS, coms))

    oracle = np.array([0.3, 0.0])
    e0, dt, worst_loop, worst_energy, worst_crank, worst_shape = energy(q, v), 5e-4, 0.0, 0.0, 0.0, 0.0
    for step in range(2000):
        x = rk4(lambda x: np.concatenate((x[3:], qdd(x[:3], x[3:]))), np.concatenate((q, v)), dt)
        q, v = x[:3], x[3:]
        for _ in range(5):
            oracle = rk4(lambda y: np.array([y[1], four_bar_acceleration(y[0], y[1])]), oracle, dt / 5)
        gap = rd.frame_placement(m, q, "coupler_tip")[:3, 3] - rd.frame_placement(m, q, "rocker_tip")[:3, 3]
        worst_loop = max(worst_loop, np.abs(gap).max())
        worst_energy = max(worst_energy, abs(energy(q, v) - e0))
        worst_crank = max(worst_crank, abs(q[0] - oracle[0]), abs(v[0] - oracle[1]))
        expected_q, expected_v, _ = closed_four_bar(q[0], v[0])
        worst_shape = max(worst_shape, np.abs(q - expected_q).max(), np.abs(v - expected_v).max() / 10)
    assert worst_loop < 1e-10
    assert worst_energy < 1e-8     # J, of ~2 J: RK4 at 0.5 ms (9e-10 measured)
    assert worst_crank < 5e-8      # RK4's own error: 2.4e-7 at 1 ms, 1.7e-8 at 0.5 ms, 1.1e-9 at 0.25 ms (measured)
    assert worst_shape < 1e-9      # positions to 1e-9 rad, velocities (up to 26 rad/s) to 1e-8 rad/s
    assert abs(q[0] - 0.3) > 0.5                    # it did move (through the bottom of its swing)


def test_four_bar_inverse_dynamics_with_the_crank_alone_actuated():
    """The unique case (one actuator, two passive joints, a planar point loop of rank 2): the crank
    torque that makes the linkage follow (t2, t2', t2'') equals the Lagrangian's
    I t2'' + c t2'^2 + dV/dt2, tau and the forces solve the equations of motion built from
    Pinocchio's M, nonLinearEffects and frame Jacobians ([E_a, J^T] [tau_a; f] = M a + b, the
    least-norm f: the loop's force along the plane's normal is zero), and either objective gives
    the same answer."""
    P = Pair("four_bar", False)
    m = P.model
    rng = np.random.default_rng(11)
    for t2 in np.linspace(-np.pi, np.pi, 13):
        w2, t2dd = rng.uniform(-5, 5), rng.uniform(-20, 20)
        q, v, a = closed_four_bar(t2, w2, t2dd)
        inertia, c, dV = four_bar_terms(t2)
        tau, f = rd.constrained_inverse_dynamics(m, q, v, a, ["crank_joint"], loops=FOUR_BAR_LOOPS)
        assert abs(tau[0] - (inertia * t2dd + c * w2 ** 2 + dV)) < TOL * max(1.0, abs(tau[0]))
        np.testing.assert_array_equal(tau[1:], 0.0)
        M, b, J, drift = P.constraint_terms(q, v, (), FOUR_BAR_LOOPS)
        assert np.abs(J @ a + drift).max() < 1e-12 * max(1.0, np.abs(drift).max())   # the closed form's motion
        x = np.linalg.lstsq(np.column_stack((np.eye(3)[:, :1], J.T)), M @ a + b, rcond=1e-13)[0]
        assert rel_err(tau[0], x[0]) < TOL and rel_err(f, x[1:]) < TOL and f[1] == 0.0
        np.testing.assert_allclose(rd.constrained_inverse_dynamics(m, q, v, a, ["crank_joint"], loops=FOUR_BAR_LOOPS,
                                                                    objective="min_torque")[0], tau, rtol=TOL, atol=TOL)
    q, _, _ = closed_four_bar(0.3)    # at rest: the gravity torque, from the virtual work alone
    tau, f = rd.constrained_inverse_dynamics(m, q, 0, 0, ["crank_joint"], loops=FOUR_BAR_LOOPS)
    assert rel_err(tau[0], four_bar_terms(0.3)[2]) < TOL


def test_four_bar_assembles_the_coupler_and_rocker_from_the_crank_angle():
    """From guesses 0.3 rad off on the coupler and the rocker, assemble with the crank fixed closes
    the loop to 1e-12 m and lands on the position analysis's configuration (the same branch)."""
    m = Pair("four_bar", False).model
    rng = np.random.default_rng(12)
    for t2 in np.linspace(-np.pi, np.pi, 25):
        exact = closed_four_bar(t2)[0]
        guess = exact + np.concatenate(([0.0], rng.uniform(-0.3, 0.3, 2)))
        q = rd.assemble(m, guess, FOUR_BAR_LOOPS, fixed=["crank_joint"])
        assert q[0] == t2
        gap = rd.frame_placement(m, q, "coupler_tip")[:3, 3] - rd.frame_placement(m, q, "rocker_tip")[:3, 3]
        assert np.abs(gap).max() <= 1e-12
        np.testing.assert_allclose(q, exact, rtol=0, atol=1e-10)
