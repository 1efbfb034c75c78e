"""The Coriolis matrix C(q, v) with Mdot - 2C skew-symmetric (Echeandia and Wensing's
recursion over composite inertias), in world axes about the reference point."""

from ..layout import NQ, NV, VSCALE
from .batch import Algorithm
from .columns import KINEMATICS_END, W_I, W_S, layout
from .common import NONFINITE, OK, body_rows, ndofs, parent, sized, usable, user_v
from .jit import allocating, fast
from .kinematics import body_velocity, kinematics
from .spatial import ZERO6, axpy, cross_force, cross_motion, dot6, get6, inertia_times, mat6_times, plus, set6

#: per body: velocity, Sdot = v x S for each coordinate, and B (6x6, row-major)
W_V, W_SDOT, W_B, WIDTH = layout((("V", 6), ("SDOT", 36), ("B", 36)), KINEMATICS_END)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def coriolis(model, q, v, C, W):
    """Coriolis matrix C(q, v) with Mdot - 2C skew-symmetric: C = sum_k J_k^T (I_k Jdot_k +
    B_k J_k) over bodies, gathered with composite inertias Ic and composite B (Echeandia &
    Wensing's recursion), where the world-frame Sdot of a joint is v_body x S (kept in W_SDOT)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and usable(q) and usable(v)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    nb = model.shape[0] - 1
    for i in range(nb):     # root to leaves: v_i = v_p + S qd, Sdot = v_i x S, B_i
        par = parent(model, i)
        vi = body_velocity(model, v, W, i, get6(W, par, W_V) if par >= 0 else ZERO6)
        set6(W, i, W_V, vi)
        for d in range(ndofs(model, i)):
            set6(W, i, W_SDOT + 6 * d, cross_motion(vi, get6(W, i, W_S + 6 * d)))
        coriolis_body(W, i, vi)
    C[:, :] = 0.0
    for i in range(nb - 1, -1, -1):     # leaves to root, over composite Ic and Bc
        par, si = parent(model, i), model[i, VSCALE]
        for d in range(ndofs(model, i)):
            S, b = get6(W, i, W_S + 6 * d), user_v(model, i, d)
            h = inertia_times(W, i, W_I, S)                                         # Ic S_b
            f1 = plus(inertia_times(W, i, W_I, get6(W, i, W_SDOT + 6 * d)), mat6_times(W, i, W_B, S))
            f3 = ZERO6                                                              # Bc^T S_b
            for r in range(6):
                f3 = axpy(S[r], get6(W, i, W_B + 6 * r), f3)
            j = i
            while j >= 0:       # C[a, b] = S_a . (Ic Sdot_b + Bc S_b), a at or above b
                sj = si * model[j, VSCALE]
                for e in range(ndofs(model, j)):
                    a = user_v(model, j, e)
                    C[a, b] += sj * dot6(get6(W, j, W_S + 6 * e), f1)
                    if j != i:   # b below a: C[b, a] = (Ic S_b) . Sdot_a + (Bc^T S_b) . S_a
                        C[b, a] += sj * (dot6(h, get6(W, j, W_SDOT + 6 * e)) + dot6(f3, get6(W, j, W_S + 6 * e)))
                j = parent(model, j)
        if par >= 0:            # Ic_p += Ic_i, Bc_p += Bc_i
            for k in range(10):
                W[par, W_I + k] += W[i, W_I + k]
            for k in range(36):
                W[par, W_B + k] += W[i, W_B + k]
    return OK


@fast
def coriolis_body(W, i, vel):
    """W[i, W_B] (6x6, row-major) = B = (v x* I - I v x + (I v) xbar*) / 2, so that Mdot = C + C^T
    and C v = v x* I v (the Christoffel-consistent split that makes Mdot - 2C skew-symmetric, per body); its
    column k is (v x* (I e_k) - I (v x e_k) + e_k x* (I v)) / 2, as (I v) xbar* m = m x* (I v)."""
    h = inertia_times(W, i, W_I, vel)
    for k in range(6):
        e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
             1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)
        col = plus(axpy(-1.0, inertia_times(W, i, W_I, cross_motion(vel, e)),
                        cross_force(vel, inertia_times(W, i, W_I, e))), cross_force(e, h))
        W[i, W_B + k], W[i, W_B + 6 + k], W[i, W_B + 12 + k] = 0.5 * col[0], 0.5 * col[1], 0.5 * col[2]
        W[i, W_B + 18 + k], W[i, W_B + 24 + k], W[i, W_B + 30 + k] = 0.5 * col[3], 0.5 * col[4], 0.5 * col[5]


#: for the batch drivers: q, v in, C out
Algorithm(coriolis, "iio")
