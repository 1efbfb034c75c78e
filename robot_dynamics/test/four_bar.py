"""A closed four-bar linkage (test/data/four_bar.urdf, a crank-rocker closed by a point loop) in closed
form: the position analysis by direct geometry, the velocity ratios, the one-degree-of-freedom
Lagrangian. The oracle of the four-bar tests in test_constrained.py (forward dynamics simulated for a
second), test_constrained_inverse.py (the crank alone actuated) and test_assembly.py (the coupler and
rocker from the crank angle)."""
import numpy as np

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
