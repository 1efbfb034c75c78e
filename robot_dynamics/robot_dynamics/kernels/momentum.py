"""The generalized momentum p = M(q) v and beta = g(q) - C(q, v)^T v in one pass, what the
momentum observer integrates (De Luca and Mattone, 2005), from the bodies' spatial momenta
(Featherstone, Rigid Body Dynamics Algorithms, ch. 2 and 6), in world axes about the reference point.

With J_i body i's Jacobian and h_i = I_i v_i its spatial momentum, M v = sum_i J_i^T h_i, so
p_j = S_j . hc_j with hc_j the momenta of j's subtree summed. For any C with Mdot = C + C^T (the
one of the Coriolis kernel: C = sum_i J_i^T (I_i Jdot_i + B_i J_i), B_i^T v_i = 0),
C^T v = sum_i Jdot_i^T h_i, and a world S is fixed in its body, Sdot_j = v_j x S_j, so
(C^T v)_j = (v_j x S_j) . hc_j = -S_j . (v_j x* hc_j). Gravity: g_j = S_j . sum_i I_i a_g over
the subtree (a_g = [-g; 0], the base moving up at g). Hence
    p_j = S_j . hc_j,   beta_j = S_j . (gc_j + v_j x* hc_j),
one forward pass for the velocities and one backward pass summing two spatial vectors per body,
no mass or Coriolis matrix. Rotor inertia adds armature * qd to p (it is constant: no beta).
"""

from ..layout import ARMATURE, NQ, NV, VSCALE
from .batch import Algorithm
from .columns import KINEMATICS_END, W_I, W_S, layout
from .common import (NONFINITE, OK, OVERFLOW, add_torque, body_rows, finite, ndofs, parent, root_acceleration, sized,
                     usable, user_v)
from .jit import allocating, fast
from .kinematics import body_velocity, kinematics
from .spatial import ZERO6, cross_force, dot6, get6, inertia_times, plus, set6

#: per body: velocity, then the momenta h and gravity forces of its subtree (world axes about o)
W_V, W_H, W_G, WIDTH = layout((("V", 6), ("H", 6), ("G", 6)), KINEMATICS_END)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def momentum(model, q, v, p, beta, W):
    """p = M(q) v and beta = g(q) - C(q, v)^T v of one state (see the module docstring);
    NONFINITE for NaN or inf in the inputs, OVERFLOW for a result beyond a double."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and usable(q) and usable(v)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    nb, ag = model.shape[0] - 1, root_acceleration(model)
    for i in range(nb):
        par = parent(model, i)
        vi = body_velocity(model, v, W, i, get6(W, par, W_V) if par >= 0 else ZERO6)
        set6(W, i, W_V, vi)
        set6(W, i, W_H, inertia_times(W, i, W_I, vi))
        set6(W, i, W_G, inertia_times(W, i, W_I, ag))
    p[:] = 0.0
    beta[:] = 0.0
    for i in range(nb - 1, -1, -1):
        h, gc = get6(W, i, W_H), get6(W, i, W_G)
        f = plus(gc, cross_force(get6(W, i, W_V), h))
        n = ndofs(model, i)
        for d in range(n):
            S = get6(W, i, W_S + 6 * d)
            add_torque(model, i, d, dot6(S, h), p)
            add_torque(model, i, d, dot6(S, f), beta)
        if n == 1:
            add_torque(model, i, 0, model[i, ARMATURE] * model[i, VSCALE] * v[user_v(model, i, 0)], p)
        par = parent(model, i)
        if par >= 0:
            set6(W, par, W_H, plus(get6(W, par, W_H), h))
            set6(W, par, W_G, plus(get6(W, par, W_G), gc))
    return OK if finite(p) and finite(beta) else OVERFLOW   # finite inputs, yet v^2 beyond a double


#: for the batch drivers: q, v in, p and beta out
Algorithm(momentum, "iioo")
