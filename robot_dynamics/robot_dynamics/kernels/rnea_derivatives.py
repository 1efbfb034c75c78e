"""Derivatives of inverse dynamics, d tau / dq and d tau / dv, with the mass matrix d tau / da:
the recursive algorithm of Carpentier and Mansard 2018 (Analytical derivatives of rigid body
dynamics algorithms, RSS), in world axes about the reference point o (kinematics.py); with a free
root, in the root's own axes at its origin (`kinematics(..., base_frame=True)`: its S is the
identity, see `root_partials`) with gravity turned into them.

With respect to q the derivative is taken in the tangent space, as Pinocchio's
computeRNEADerivatives does: coordinate j moves q to q (+) h e_j, which displaces the bodies
below its joint rigidly along the joint's world screw S_j (a free flyer's or a planar joint's
body-frame increments included). In world axes a body's velocity, acceleration (the base moves
up at g) and force are v_i = v_p + S_i qd, a_i = a_p + S_i qdd + v_p x S_i qd and
f_i = I_i a_i + v_i x* I_i v_i, F_i the sum of f over i's subtree and tau_c = S_c^T F_i. Moving
coordinate j of body b (parent p) carries everything below b along S_j (a motion m to S_j x m,
a force to S_j x* f, an inertia to S_j x* I - I S_j x) and adds the terms of its own:

    d v_k = psi_j = v_p x S_j,    d a_k = alpha_j + psi_j x v_k,   alpha_j = a_p x S_j + v_p x psi_j
    d F_k = S_j x* F_k + Ic_k alpha_j + Dc_k psi_j                  (k in b's subtree)

where Dc x = Idotc x + x x* hc over the subtree (Idot = v x* I - I v x the inertia's rate, a
10-parameter inertia, and h = I v the momentum; Pinocchio's doYcrb). Since S_c^T (S_j x* F) and
the rotation of S_c cancel, for c in b's subtree d tau_c / dq_j = P_c . alpha_j + Q_c . psi_j
with P_c = Ic S_c and Q_c = Dc^T S_c = Idotc S_c - S_c x* hc, and for c above b
d tau_c / dq_j = S_c . Fq_j, Fq_j = S_j x* F_b + Ic_b alpha_j + Dc_b psi_j. With respect to v_j:
d v_k = S_j, d a_k = beta_j + S_j x v_k, beta_j = (v_p + v_b) x S_j, so below
d tau_c / dv_j = P_c . beta_j + Q_c . S_j and above S_c . Fv_j, Fv_j = Ic_b beta_j + Dc_b S_j.
M_cj = P_c . S_j (the composite-rigid-body algorithm, Featherstone RBDA ch. 6), armature on the
diagonal. Mimic joints: tau = G^T tau_full, so each entry is G^T (.) G, summed with the scales.
"""
import numpy as np

from ..layout import ARMATURE, FREE, JTYPE, NQ, NV, QSRC, ROT, SUBTREE_END, VSCALE
from .batch import Algorithm
from .columns import KINEMATICS_END, W_I, W_S, layout
from .access import add, at, at1, first, put
from .blocks import finite_block
from .common import NONFINITE, OK, OVERFLOW, add_torque, ndofs, parent, root_acceleration, sized, usable, user_v
from .jit import allocating, fast
from .kinematics import kinematics
from .spatial import (ZERO3, ZERO6, axpy, cross3, cross_force, cross_motion, dot6, get10, get6, get9, inertia_times,
                      matmul3, matvec3, plus, quaternion_matrix, set10, set6, transpose3)

#: per body: velocity, acceleration (gravity included) and momentum h = I v; f, then F (the subtree's
#: force); the subtree's momentum hc, inertia Ic (W_I keeps the body's own) and inertia rate Idotc
#: (10 parameters); the first of its coordinates in tree order (depth-first, a joint's coordinates
#: in turn) and one past its subtree's last
W_V, W_A, W_H, W_F, W_HC, W_IC, W_IDOT, W_T0, W_TEND, WIDTH = layout(
    (("V", 6), ("A", 6), ("H", 6), ("F", 6), ("HC", 6), ("IC", 10), ("IDOT", 10), ("T0", 1), ("TEND", 1)),
    KINEMATICS_END)
#: a dense row per coordinate in tree order, after the bodies' rows: P = Ic S, Q = Dc^T S, Fq and Fv,
#: the coordinate's index in the user's v and its scale (mimic joints), and its psi, alpha and beta
Z_P, Z_Q, Z_FQ, Z_FV, Z_USER, Z_SCALE, Z_PSI, Z_ALPHA, Z_BETA, Z_END = layout(
    (("P", 6), ("Q", 6), ("FQ", 6), ("FV", 6), ("USER", 1), ("SCALE", 1), ("PSI", 6), ("ALPHA", 6), ("BETA", 6)))


@allocating
def workspace(model):
    """Scratch for one state: a row per body, then a row per coordinate in tree order (the full
    coordinates: a mimic joint has its own), and a row for a vector (`vector_row`)."""
    nb, nf = model.shape[0] - 1, 0
    for i in range(nb):
        nf += ndofs(model, i)
    return np.empty((nb + nf + 1, max(WIDTH, Z_END)))


@fast
def vector_row(model):
    """The workspace row after the bodies' and the coordinates' rows (a vector in user order)."""
    nb, nf = model.shape[0] - 1, 0
    for i in range(nb):
        nf += ndofs(model, i)
    return nb + nf


@fast
def rnea_derivatives(model, q, v, a, dtau_dq, dtau_dv, M, W):
    """d tau / dq (tangent space), d tau / dv and M of one state (see the module docstring).
    OVERFLOW where finite inputs give inf."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, a, NV) and usable(q) and usable(v)
            and usable(a)):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status != OK:
        return status
    derivative_passes(model, q, v, a, dtau_dq, dtau_dv, M, W)
    if not (finite_matrix(dtau_dq) and finite_matrix(dtau_dv) and finite_matrix(M)):
        return OVERFLOW     # finite inputs and still inf: absurdly large inputs
    return OK


@fast
def rnea_derivatives_lanes(model, Q, V, A, DQ, DV, M, W, lanes):
    """`rnea_derivatives` of L states in lanes (the batch drivers' lane step, batch.py)."""
    if kinematics(model, Q, W, -1, True, lanes) != OK:
        return False
    derivative_passes(model, Q, V, A, DQ, DV, M, W, lanes)
    return finite_block(DQ) and finite_block(DV) and finite_block(M)


@fast
def derivative_passes(model, q, v, a, dtau_dq, dtau_dv, M, W, l=None):
    """The passes of the module docstring after `kinematics` in the base frame, for one state or
    L states in lanes l (see lanes.py)."""
    a0 = base_gravity(model, q, l)
    velocities(model, v, W, True, l)
    accelerations(model, v, a, a0, W, l)
    composites(model, W, True, True, l)
    coordinate_terms(model, a0, W, True, True, l)
    partials(model, a0, dtau_dq, dtau_dv, M, W, True, False, l)


@fast
def free_root(model):
    """The root is a floating joint: `kinematics(..., base_frame=True)` leaves it at the origin,
    unrotated, so that its S is the identity."""
    return model.shape[0] > 1 and model[0, JTYPE] == FREE


@fast
def base_gravity(model, q, l=None):
    """The base's upward acceleration at g (Featherstone, RBDA ch. 5) in the axes the kinematics
    used: a free root's own (base_frame), where gravity is R^T g, else the world's."""
    if not free_root(model):
        return root_acceleration(model)
    iq, g = int(model[0, QSRC]), root_acceleration(model)
    R = matmul3(get9(model, 0, ROT), quaternion_matrix(at1(q, iq + 3, l), at1(q, iq + 4, l), at1(q, iq + 5, l),
                                                        at1(q, iq + 6, l)))
    return matvec3(transpose3(R), (g[0], g[1], g[2])) + ZERO3


@fast
def velocities(model, v, W, rates, l=None):
    """Root to leaves: velocity v_i = v_p + S qd and momentum h = I v of each body, Ic = I and
    hc = h (`composites` sums them); rates: the inertia's rate Idot = v x* I - I v x too."""
    for i in range(model.shape[0] - 1):
        par, s = parent(model, i), model[i, VSCALE]
        vi = get6(W, par, W_V, l) if par >= 0 else ZERO6
        for d in range(ndofs(model, i)):    # kinematics.body_velocity written out: 2-4 % faster here (A/B)
            vi = axpy(at1(v, user_v(model, i, d), l) * s, get6(W, i, W_S + 6 * d, l), vi)
        set6(W, i, W_V, vi, l)
        h = inertia_times(W, i, W_I, vi, l)
        set6(W, i, W_H, h, l)
        set6(W, i, W_HC, h, l)
        set10(W, i, W_IC, get10(W, i, W_I, l), l)
        if rates:
            inertia_rate(W, i, vi, l)


@fast
def accelerations(model, v, a, a0, W, l=None):
    """Root to leaves (after `velocities`): a_i = a_p + S qdd + v_p x S qd, the base moving at a0
    (up at g), and f_i = I a_i + v_i x* h_i."""
    for i in range(model.shape[0] - 1):
        par, s = parent(model, i), model[i, VSCALE]
        ai = get6(W, par, W_A, l) if par >= 0 else a0
        vp = get6(W, par, W_V, l) if par >= 0 else ZERO6
        vJ = ZERO6
        for d in range(ndofs(model, i)):
            S, k = get6(W, i, W_S + 6 * d, l), user_v(model, i, d)
            vJ = axpy(at1(v, k, l) * s, S, vJ)
            ai = axpy(at1(a, k, l) * s, S, ai)
        ai = plus(ai, cross_motion(vp, vJ))
        set6(W, i, W_A, ai, l)
        set6(W, i, W_F, plus(inertia_times(W, i, W_I, ai, l), cross_force(get6(W, i, W_V, l), get6(W, i, W_H, l))), l)


@fast
def inertia_rate(W, i, vel, l=None):
    """W_IDOT of body i = Idot = v x* I - I v x, the rate of its world inertia about o when it
    moves at vel = [v_o; w], as 10 parameters: mass 0, h' = m v_o + w x h and
    Ibar' = 2 (h . v_o) 1 - (v_o h^T + h v_o^T) + [w] Ibar - Ibar [w]."""
    m, hx, hy, hz, xx, yy, zz, xy, xz, yz = get10(W, i, W_I, l)
    vo, w = (vel[0], vel[1], vel[2]), (vel[3], vel[4], vel[5])
    wh = cross3(w, (hx, hy, hz))
    c0, c1, c2 = cross3(w, (xx, xy, xz)), cross3(w, (xy, yy, yz)), cross3(w, (xz, yz, zz))   # [w] Ibar by columns
    hv = hx * vo[0] + hy * vo[1] + hz * vo[2]
    set10(W, i, W_IDOT, (0.0, m * vo[0] + wh[0], m * vo[1] + wh[1], m * vo[2] + wh[2],
                         2.0 * (hv - vo[0] * hx + c0[0]), 2.0 * (hv - vo[1] * hy + c1[1]), 2.0 * (hv - vo[2] * hz + c2[2]),
                         c1[0] + c0[1] - vo[0] * hy - hx * vo[1], c2[0] + c0[2] - vo[0] * hz - hx * vo[2],
                         c2[1] + c1[2] - vo[1] * hz - hy * vo[2]), l)


@fast
def composites(model, W, inertias, rates, l=None):
    """Leaves to root: each body's subtree sums, by plain sums (every quantity is in the same axes
    about o): F; inertias: Ic too; rates: hc and Idotc too."""
    for i in range(model.shape[0] - 2, -1, -1):
        par = parent(model, i)
        if par < 0:
            continue
        for k in range(6):
            add(W, par, W_F + k, l, at(W, i, W_F + k, l))
        if inertias:
            for k in range(10):
                add(W, par, W_IC + k, l, at(W, i, W_IC + k, l))
        if rates:
            for k in range(6):
                add(W, par, W_HC + k, l, at(W, i, W_HC + k, l))
            for k in range(10):
                add(W, par, W_IDOT + k, l, at(W, i, W_IDOT + k, l))


@fast
def tree_order(model, W, l=None):
    """Number the coordinates depth-first (a joint's in turn): W_T0 is each body's first,
    W_TEND one past its subtree's last; each coordinate's row names its user index and scale.
    Returns the count."""
    nb, t = model.shape[0] - 1, 0
    for i in range(nb):
        put(W, i, W_T0, l, t)
        for d in range(ndofs(model, i)):
            put(W, nb + t, Z_USER, l, user_v(model, i, d))
            put(W, nb + t, Z_SCALE, l, model[i, VSCALE])
            t += 1
    for i in range(nb):
        end = int(model[i, SUBTREE_END])
        put(W, i, W_TEND, l, first(W, end, W_T0, l) if end < nb else t)
    return t


@fast
def coordinate_terms(model, a0, W, inertia, full, l=None):
    """Per coordinate in tree order (after `composites`): inertia: P = Ic S; full: psi = v_p x S,
    alpha = a_p x S + v_p x psi, beta = psi + v_i x S (psi = 0 below the world), Q = Idotc S - S x* hc,
    Fq = S x* F + Ic alpha + Idotc psi + psi x* hc and Fv = Ic beta + Idotc S + S x* hc (P and Ic
    do not depend on the acceleration: aba_derivatives takes P from its first pass)."""
    nb = model.shape[0] - 1
    tree_order(model, W, l)
    for i in range(nb):
        par, t = parent(model, i), nb + int(first(W, i, W_T0, l))
        vp = get6(W, par, W_V, l) if par >= 0 else ZERO6
        ap = get6(W, par, W_A, l) if par >= 0 else a0
        vi, hc, F = get6(W, i, W_V, l), get6(W, i, W_HC, l), get6(W, i, W_F, l)
        for d in range(ndofs(model, i)):
            S = get6(W, i, W_S + 6 * d, l)
            if inertia:
                set6(W, t + d, Z_P, inertia_times(W, i, W_IC, S, l), l)
            if not full:
                continue
            psi = cross_motion(vp, S)
            alpha = plus(cross_motion(ap, S), cross_motion(vp, psi))
            beta = plus(psi, cross_motion(vi, S))
            Sh, IdS = cross_force(S, hc), inertia_times(W, i, W_IDOT, S, l)
            set6(W, t + d, Z_Q, axpy(-1.0, Sh, IdS), l)
            Fq = plus(cross_force(S, F), inertia_times(W, i, W_IC, alpha, l))
            if par >= 0:
                Fq = plus(Fq, plus(inertia_times(W, i, W_IDOT, psi, l), cross_force(psi, hc)))
            set6(W, t + d, Z_FQ, Fq, l)
            set6(W, t + d, Z_FV, plus(inertia_times(W, i, W_IC, beta, l), plus(IdS, Sh)), l)
            set6(W, t + d, Z_PSI, psi, l)
            set6(W, t + d, Z_ALPHA, alpha, l)
            set6(W, t + d, Z_BETA, beta, l)


@fast
def partials(model, a0, dq, dv, M, W, mass, tree_rows, l=None):
    """The entries, pair by pair of coordinates c (body j) and e (in j's subtree: a contiguous
    range of rows in tree order): above the diagonal S_c . Fq_e and S_c . Fv_e, below P_e . alpha_c
    + Q_e . psi_c and P_e . beta_c + Q_e . S_c, and M = P_e . S_c, each times the joints' scales
    (G^T (.) G) into the user's coordinates. A free root at the origin has S = 1 (`root_partials`).
    mass: M too (else M is not touched). tree_rows: the rows of dq and dv in tree order (for
    aba_derivatives' solve; models without mimic joints), the columns in the user's."""
    nb = model.shape[0] - 1
    dq[:] = 0.0
    dv[:] = 0.0
    if mass:
        M[:] = 0.0
    for j in range(nb):
        nj, sj = ndofs(model, j), model[j, VSCALE]
        t0, tend = nb + int(first(W, j, W_T0, l)), nb + int(first(W, j, W_TEND, l))
        for c in range(nj):
            S, kc = get6(W, j, W_S + 6 * c, l), user_v(model, j, c)
            rc = t0 - nb + c if tree_rows else kc
            psi, alpha, beta = get6(W, t0 + c, Z_PSI, l), get6(W, t0 + c, Z_ALPHA, l), get6(W, t0 + c, Z_BETA, l)
            for e in range(nj):         # the joint's own block (c and e move the same body)
                P, Q, ke = get6(W, t0 + e, Z_P, l), get6(W, t0 + e, Z_Q, l), user_v(model, j, e)
                x, re = sj * sj, t0 - nb + e if tree_rows else ke
                add(dq, re, kc, l, x * (dot6(P, alpha) + dot6(Q, psi)))
                add(dv, re, kc, l, x * (dot6(P, beta) + dot6(Q, S)))
                if mass and e >= c:     # computed once per pair: M exactly symmetric
                    m = x * (dot6(P, S) + (model[j, ARMATURE] if e == c else 0.0))
                    add(M, ke, kc, l, m)
                    if e != c:
                        add(M, kc, ke, l, m)
            if j == 0 and free_root(model):
                continue
            for r in range(t0 + nj, tend):
                ke, x = int(first(W, r, Z_USER, l)), sj * first(W, r, Z_SCALE, l)
                re = r - nb if tree_rows else ke
                P, Q = get6(W, r, Z_P, l), get6(W, r, Z_Q, l)
                add(dq, rc, ke, l, x * dot6(S, get6(W, r, Z_FQ, l)))
                add(dv, rc, ke, l, x * dot6(S, get6(W, r, Z_FV, l)))
                add(dq, re, kc, l, x * (dot6(P, alpha) + dot6(Q, psi)))
                add(dv, re, kc, l, x * (dot6(P, beta) + dot6(Q, S)))
                if mass:
                    m = x * dot6(P, S)
                    add(M, kc, ke, l, m)
                    add(M, ke, kc, l, m)
    if free_root(model):
        root_partials(model, a0, dq, dv, M, W, mass, tree_rows, l)


@fast
def mass_pairs(model, M, W, unit_root, tree, l=None):
    """M = G^T M_full G from M_cj = P_e . S_c over the pairs of `partials` (the composite-rigid-body
    algorithm, Featherstone RBDA ch. 6), armature on the diagonal. unit_root: a free root's S is 1
    (the kinematics took it as the base frame). tree: rows and columns in tree order (no mimic
    joint: the factor's order, ltdl.py), else the user's."""
    nb = model.shape[0] - 1
    M[:] = 0.0
    for j in range(nb):
        nj, sj = ndofs(model, j), model[j, VSCALE]
        t0, tend = nb + int(first(W, j, W_T0, l)), nb + int(first(W, j, W_TEND, l))
        root = unit_root and j == 0 and free_root(model)
        for c in range(nj):
            S, kc = get6(W, j, W_S + 6 * c, l), t0 - nb + c if tree else user_v(model, j, c)
            for e in range(c, nj):      # computed once per pair: M exactly symmetric
                ke = t0 - nb + e if tree else user_v(model, j, e)
                m = sj * sj * (dot6(get6(W, t0 + e, Z_P, l), S) + (model[j, ARMATURE] if e == c else 0.0))
                add(M, ke, kc, l, m)
                if e != c:
                    add(M, kc, ke, l, m)
            for r in range(t0 + nj, tend):
                ke = r - nb if tree else int(first(W, r, Z_USER, l))
                m = sj * first(W, r, Z_SCALE, l) * (at(W, r, Z_P + c, l) if root else dot6(get6(W, r, Z_P, l), S))
                add(M, kc, ke, l, m)
                add(M, ke, kc, l, m)


@fast
def bias(model, b, W, l=None):
    """b = G^T (S^T F) after `composites` at qdd = 0: C v + g (d tau at zero acceleration)."""
    b[:] = 0.0
    for i in range(model.shape[0] - 1):
        F = get6(W, i, W_F, l)
        for d in range(ndofs(model, i)):
            add_torque(model, i, d, dot6(get6(W, i, W_S + 6 * d, l), F), b, l)


@fast
def root_partials(model, a0, dq, dv, M, W, mass, tree_rows, l=None):
    """`partials` between a free root's coordinates (S = 1 at the origin: S_c . X = X_c) and
    every other: above Fq_e, Fv_e and P_e (M) themselves; below, with psi = 0, alpha_c = a0 x e_c and
    beta_c = v_0 x e_c: P_e . alpha_c = (P_e_lin x a0_lin)_c for the turns (0 for the slides) and
    P_e . beta_c + Q_e . e_c = (Q_e - v_0 x* P_e)_c."""
    nb, k0 = model.shape[0] - 1, user_v(model, 0, 0)
    v0 = get6(W, 0, W_V, l)
    for r in range(nb + 6, nb + int(first(W, 0, W_TEND, l))):
        ke, x = int(first(W, r, Z_USER, l)), first(W, r, Z_SCALE, l)
        re = r - nb if tree_rows else ke
        P = get6(W, r, Z_P, l)
        Fq, Fv = get6(W, r, Z_FQ, l), get6(W, r, Z_FV, l)
        Y = axpy(-1.0, cross_force(v0, P), get6(W, r, Z_Q, l))
        turn = cross3((P[0], P[1], P[2]), (a0[0], a0[1], a0[2]))
        for c in range(6):
            add(dq, k0 + c, ke, l, x * Fq[c])       # the root's rows: the first in either order
            add(dv, k0 + c, ke, l, x * Fv[c])
            add(dv, re, k0 + c, l, x * Y[c])
            if mass:
                add(M, k0 + c, ke, l, x * P[c])
                add(M, ke, k0 + c, l, x * P[c])
        for c in range(3):
            add(dq, re, k0 + 3 + c, l, x * turn[c])


@fast
def finite_matrix(X):
    """No NaN or inf in a C-contiguous X: no entry has every exponent bit set. An OR over integers,
    which the compiler vectorizes (a sum of x * 0 is a chain of dependent additions: ~1.6x slower)."""
    x = X.reshape(-1).view(np.int64)
    bad = 0
    for k in range(x.shape[0]):
        bad |= (x[k] & 0x7FF0000000000000) == 0x7FF0000000000000
    return bad == 0


#: for the batch drivers: q, v, a in, d tau / dq, d tau / dv and M out
Algorithm(rnea_derivatives, "iiiooo", rnea_derivatives_lanes)
