"""Forward dynamics integrated in time on the joints' Lie groups (the simulator's compiled loop,
for torques given as arrays and constant external wrenches; simulation.py drives callables).

Methods, for M(q) qdd + C(q, v) v + g(q) = tau + J^T f and q' = q . v (v in the joints' own
frames, `rd.integrate`):
- EULER (explicit, as Kajita et al., Humanoid Robots, section 6.1.2): q1 = q0 (+) dt v0,
  v1 = v0 + dt a(q0, v0);
- SEMI_IMPLICIT (symplectic Euler): v1 = v0 + dt a(q0, v0), q1 = q0 (+) dt v1;
- RK4: the classical Runge-Kutta tableau in the Lie-algebra coordinates of the step
  (Runge-Kutta-Munthe-Kaas, Munthe-Kaas, BIT 1998): stage i sits at q0 (+) theta_i, theta_i =
  dt sum_j a_ij k_j, with k_j = dexp^-1_theta_j v_j (`configuration.tangent_rate`), and the step
  ends at q0 (+) dt (k1 + 2 k2 + 2 k3 + k4) / 6: fourth order on the groups, unit quaternions kept.
The torque of step s, TAU[s] (or TAU[0] for a constant one), is held over the step.
"""
import numpy as np

from ..layout import NQ, NV
from .batch import Algorithm
from .common import OK
from .configuration import integrate, tangent_rate
from .aba import WIDTH, aba
from .jit import allocating, fast

EULER, SEMI_IMPLICIT, RK4 = 0, 1, 2
#: rows of the scratch (width max(nq, nv)): stage accelerations and rates, theta, stage q and v, mask
R_A, R_K, R_THETA, R_Q, R_V, R_KNOWN = 0, 4, 8, 9, 10, 11
ROWS = 12


@allocating
def workspace(model):
    """One state's scratch: the loop's vectors, the ABA kernel's workspace and its mask of known
    coordinates (none)."""
    nb, nq, nv = model.shape[0] - 1, int(model[-1, NQ]), int(model[-1, NV])
    return np.zeros((ROWS, max(nq, nv, 1))), np.empty((max(nb + nv, 1), max(WIDTH, 2 * nv + 4))), np.zeros(nv, np.bool_)


@fast
def acceleration(model, q, v, tau, ext, qdd, known, W):
    """qdd = forward dynamics at (q, v) under tau and the external wrenches (the ABA kernel,
    nothing known)."""
    return aba(model, q, v, known, qdd, tau, ext, W)


@fast
def step(model, q, v, tau, ext, dt, method, q1, v1, S, W, known):
    """One step from (q, v) to (q1, v1); returns the status of the first failing evaluation."""
    nq, nv = q.shape[0], v.shape[0]
    A, K, theta, qs, vs = S[R_A:R_A + 4, :nv], S[R_K:R_K + 4, :nv], S[R_THETA, :nv], S[R_Q, :nq], S[R_V, :nv]
    status = acceleration(model, q, v, tau, ext, A[0], known, W)
    if status != OK:
        return status
    if method == EULER:
        integrate(model, q, v, dt, q1)
        for k in range(nv):
            v1[k] = v[k] + dt * A[0, k]
        return OK
    if method == SEMI_IMPLICIT:
        for k in range(nv):
            v1[k] = v[k] + dt * A[0, k]
        integrate(model, q, v1, dt, q1)
        return OK
    for k in range(nv):                 # RK4 on the groups: stage 1 at theta = 0, k1 = v
        K[0, k] = v[k]
    for i in range(1, 4):
        c = dt if i == 3 else 0.5 * dt
        for k in range(nv):
            theta[k] = c * K[i - 1, k]
            vs[k] = v[k] + c * A[i - 1, k]
        integrate(model, q, theta, 1.0, qs)
        status = acceleration(model, qs, vs, tau, ext, A[i], known, W)
        if status != OK:
            return status
        tangent_rate(model, theta, vs, K[i])
    for k in range(nv):
        theta[k] = dt / 6.0 * (K[0, k] + 2.0 * K[1, k] + 2.0 * K[2, k] + K[3, k])
        v1[k] = v[k] + dt / 6.0 * (A[0, k] + 2.0 * A[1, k] + 2.0 * A[2, k] + A[3, k])
    integrate(model, q, theta, 1.0, q1)
    return OK


@fast
def trajectory(model, q0, v0, TAU, ext, dt, method, Q, V, S, W, known):
    """Q[0], V[0] = q0, v0, then len(Q) - 1 steps; returns (status, the failing step or -1)."""
    for k in range(q0.shape[0]):
        Q[0, k] = q0[k]
    for k in range(v0.shape[0]):
        V[0, k] = v0[k]
    for s in range(Q.shape[0] - 1):
        status = step(model, Q[s], V[s], TAU[min(s, TAU.shape[0] - 1)], ext, dt, method, Q[s + 1], V[s + 1], S, W, known)
        if status != OK:
            return status, s
    return OK, -1


@fast
def simulation(model, q0, v0, TAU, ext, dt, method, Q, V, failed, S, W, known):
    """`trajectory` of one initial state, the failing step (or -1) into failed[0]; returns the status."""
    status, failed[0] = trajectory(model, q0, v0, TAU, ext, dt, method, Q, V, S, W, known)
    return status


#: for the batch drivers: q0, v0 in, the torques (one schedule for all or one per state), the wrenches, dt
#: and the method shared, the trajectories and the failing step out
Algorithm(simulation, "iirsssooo")
