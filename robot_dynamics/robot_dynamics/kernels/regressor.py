"""The joint torque regressor Y(q, v, a), tau = Y theta, linear in the bodies' inertial parameters
(Atkeson, An and Hollerbach, Estimation of inertial parameters of manipulator loads and links, 1986),
by a Newton-Euler pass in world axes (Luh, Walker and Paul, 1980; Featherstone, Rigid Body Dynamics
Algorithms, ch. 5).

Body i's parameters theta_i = [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (Pinocchio's
order: the inertia about the body frame's origin, in the body frame) enter only its own force
f_i = I_i a_i + v_i x* I_i v_i, which is linear in them: f_i = A_i theta_i, ten spatial forces
(columns), taken here in world axes about the reference point o. Joint j carries the forces of its
subtree, so Y[j, block i] = S_j^T A_i for every j on i's path to the root, and zero elsewhere.
"""

from ..layout import AXES, MIMIC, NQ, NV, VSCALE
from .batch import Algorithm
from .access import at1
from .blocks import finite_block
from .columns import KINEMATICS_END, W_P, W_R, W_S, layout
from .common import NONFINITE, OK, OVERFLOW, body_rows, enter, ndofs, parent, root_acceleration, sized, usable, user_v
from .jit import allocating, fast, inline
from .kinematics import kinematics
from .spatial import ZERO6, axpy, cross3, cross_motion, dot6, get3, get6, get9, matvec3, plus, set6

#: per body: velocity and acceleration in world axes about o
W_V, W_A, WIDTH = layout((("V", 6), ("A", 6)), KINEMATICS_END)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def regressor(model, q, v, a, body, Y, W):
    """Y(q, v, a) of one state into Y (all of it). body < 0: every body's ten columns (Y is
    nv x 10 nb); body >= 0: only that body's (Y is nv x 10). NONFINITE for NaN or inf in the
    inputs, OVERFLOW for inputs so large that Y is not finite (see `regressor_passes`)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, a, NV) and usable(q) and usable(v)
            and usable(a)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    Y[:] = 0.0      # bodies off a joint's path add nothing to its row
    regressor_passes(model, v, a, body, Y, W)
    return OK if all_finite(Y) else OVERFLOW    # finite inputs, yet v^2 beyond a double


@fast
def regressor_lanes(model, Q, V, A, body, Y, W, lanes):
    """`regressor` of L states in lanes (the batch drivers' lane step, batch.py: Y's lanes zeroed
    once, entries off the joints' paths stay zero and the others are all written: `enter`)."""
    if kinematics(model, Q, W, -1, False, lanes) != OK:
        return False
    if model[-1, MIMIC]:
        Y[:] = 0.0      # shared coordinates add to their entries
    regressor_passes(model, V, A, body, Y, W, lanes)
    return finite_block(Y)


@fast
def regressor_passes(model, v, a, body, Y, W, l=None):
    """After `kinematics`, into Y zeroed before, for one state or L states in lanes l (see
    lanes.py): velocities and accelerations go from the root to the leaves in world axes about o:
    v_i = v_p + S qd, a_i = a_p + S qdd + v_i x S qd (the base moves up at g); a world S is fixed
    in its body, so its derivative is v_i x S (Featherstone, RBDA ch. 2). Then `body_columns`
    gives A_i and every joint j above i gets S_j . A_i (times its mimic scale, added to its
    leader's row: tau = G^T tau_full)."""
    shared = model[-1, MIMIC] != 0.0
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        vJ, aJ = ZERO6, ZERO6
        for d in range(ndofs(model, i)):
            S, k, s = get6(W, i, W_S + 6 * d, l), user_v(model, i, d), model[i, VSCALE]
            vJ, aJ = axpy(s * at1(v, k, l), S, vJ), axpy(s * at1(a, k, l), S, aJ)
        vi = plus(get6(W, par, W_V, l), vJ) if par >= 0 else vJ
        ai = plus(plus(get6(W, par, W_A, l) if par >= 0 else root_acceleration(model), aJ), cross_motion(vi, vJ))
        set6(W, i, W_V, vi, l)
        set6(W, i, W_A, ai, l)
        if body < 0 or i == body:
            body_to_joints(model, i, 10 * i if body < 0 else 0, vi, ai, Y, W, shared, l)


@fast
def all_finite(Y):
    """No NaN or inf in the 2-D Y: x - x is 0 for every finite x. An AND of booleans vectorizes;
    common.finite's sum is one chain of dependent adds (talos' 12540 entries: 17 us, this 1.7)."""
    ok = True
    for row in range(Y.shape[0]):
        for k in range(Y.shape[1]):
            ok &= (Y[row, k] - Y[row, k]) == 0.0
    return ok


@inline
def body_to_joints(model, i, col, vi, ai, Y, W, shared, l):
    """Y[j, col:col+10] = S_j . A_i for every joint j from body i up to the root (`body_columns`
    gives A_i; its inertia columns are couples: their linear part is zero; mimic joints add to
    their leader's row)."""
    fm, fx, fy, fz, txx, txy, tyy, txz, tyz, tzz = body_columns(model, i, vi, ai, W, l)
    j = i
    while j >= 0:
        g = model[j, VSCALE]
        for e in range(ndofs(model, j)):
            S, row = get6(W, j, W_S + 6 * e, l), user_v(model, j, e)
            enter(Y, row, col, g * dot6(S, fm), shared, l)
            enter(Y, row, col + 1, g * dot6(S, fx), shared, l)
            enter(Y, row, col + 2, g * dot6(S, fy), shared, l)
            enter(Y, row, col + 3, g * dot6(S, fz), shared, l)
            enter(Y, row, col + 4, g * (S[3] * txx[0] + S[4] * txx[1] + S[5] * txx[2]), shared, l)
            enter(Y, row, col + 5, g * (S[3] * txy[0] + S[4] * txy[1] + S[5] * txy[2]), shared, l)
            enter(Y, row, col + 6, g * (S[3] * tyy[0] + S[4] * tyy[1] + S[5] * tyy[2]), shared, l)
            enter(Y, row, col + 7, g * (S[3] * txz[0] + S[4] * txz[1] + S[5] * txz[2]), shared, l)
            enter(Y, row, col + 8, g * (S[3] * tyz[0] + S[4] * tyz[1] + S[5] * tyz[2]), shared, l)
            enter(Y, row, col + 9, g * (S[3] * tzz[0] + S[4] * tzz[1] + S[5] * tzz[2]), shared, l)
        j = parent(model, j)


@inline
def body_columns(model, i, vi, ai, W, l):
    """A_i: the force f = I a + v x* I v of body i per unit of each of its parameters, in world
    axes about o, from its velocity and acceleration (v, a, about o). With P the body origin
    (from o), r_k its axes in the world (the joint frame's R times Q^T), w, alpha the angular
    velocity and acceleration and beta = a_P + w x v_P the acceleration of the origin (the base
    moving up at g), f = [m beta + alpha x h + w x (w x h); h x beta + Ibar alpha + w x Ibar w]
    about P, shifted to o by n_o = n_P + P x f_lin:
        m:      [beta; P x beta]
        m c_k:  [l_k; r_k x beta + P x l_k],  l_k = alpha x r_k + w x (w x r_k)
        I_kl:   [0; E alpha + w x E w],  E = r_k r_l^T + r_l r_k^T (k != l) or r_k r_k^T."""
    P = get3(W, i, W_P, l)
    w, al = (vi[3], vi[4], vi[5]), (ai[3], ai[4], ai[5])
    vP = plus3(vi, cross3(w, P))
    aP = plus3(ai, cross3(al, P))
    beta = plus3(aP, cross3(w, vP))
    R, Q = get9(W, i, W_R, l), get9(model, i, AXES)
    r0, r1, r2 = matvec3(R, (Q[0], Q[1], Q[2])), matvec3(R, (Q[3], Q[4], Q[5])), matvec3(R, (Q[6], Q[7], Q[8]))
    w0, w1, w2 = cross3(w, r0), cross3(w, r1), cross3(w, r2)
    fm = beta + cross3(P, beta)
    fx, fy, fz = first_moment(P, al, w, r0, w0, beta), first_moment(P, al, w, r1, w1, beta), \
        first_moment(P, al, w, r2, w2, beta)
    a0, a1, a2 = dot3(r0, al), dot3(r1, al), dot3(r2, al)      # alpha and w in body axes
    o0, o1, o2 = dot3(r0, w), dot3(r1, w), dot3(r2, w)
    txx = couple(r0, a0, w0, o0)
    tyy = couple(r1, a1, w1, o1)
    tzz = couple(r2, a2, w2, o2)
    txy = plus3(couple(r0, a1, w0, o1), couple(r1, a0, w1, o0))
    txz = plus3(couple(r0, a2, w0, o2), couple(r2, a0, w2, o0))
    tyz = plus3(couple(r1, a2, w1, o2), couple(r2, a1, w2, o1))
    return fm, fx, fy, fz, txx, txy, tyy, txz, tyz, tzz


@inline
def first_moment(P, al, w, r, wr, beta):
    """The column of m c_k (r = r_k, wr = w x r_k): [l; r x beta + P x l], l = alpha x r + w x wr."""
    lin = plus3(cross3(al, r), cross3(w, wr))
    return lin + plus3(cross3(r, beta), cross3(P, lin))


@inline
def couple(r, ar, wr, wo):
    """r (r . alpha) + (w x r)(r' . w): one half of an inertia column's couple."""
    return (r[0] * ar + wr[0] * wo, r[1] * ar + wr[1] * wo, r[2] * ar + wr[2] * wo)


@inline
def plus3(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inline
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


#: for the batch drivers: q, v, a in, the body (-1: all) shared, Y out
Algorithm(regressor, "iiiso", regressor_lanes)
