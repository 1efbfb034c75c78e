"""The joint-space inertia matrix M(q): the composite-rigid-body algorithm (Featherstone, Rigid
Body Dynamics Algorithms, ch. 6), in world axes about the reference point."""
from ..layout import ARMATURE, MIMIC, MULTI, NQ, SUBTREE_END, VSCALE
from .columns import KINEMATICS_END, W_I, W_S, layout
from .access import add, at, put
from .batch import Algorithm
from .common import NONFINITE, OK, body_rows, enter, ndofs, parent, sized, usable, user_v
from .jit import allocating, fast
from .kinematics import kinematics
from .spatial import dot6, get6, inertia_times, set6

#: per body: F = Ic S for each coordinate of its joint
W_F, WIDTH = layout((("F", 36),), KINEMATICS_END)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def crba(model, q, M, W):
    """Mass matrix M(q) of one state (see `composite_inertia`)."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status == OK:
        M[:] = 0.0      # bodies on different branches do not couple
        composite_inertia(model, M, W)
    return status


@fast
def crba_lanes(model, Q, M, W, lanes):
    """`crba` of L states in lanes (the batch drivers' lane step, batch.py: M's lanes zeroed once)."""
    if kinematics(model, Q, W, -1, True, lanes) != OK:
        return False
    if model[-1, MIMIC]:
        M[:] = 0.0      # shared coordinates add to their entries
    composite_inertia(model, M, W, lanes)
    return True


@fast
def composite_inertia(model, M, W, l=None):
    """Composite-rigid-body algorithm (Featherstone, RBDA ch. 6) after `kinematics` in the
    base frame: Ic_p += Ic_i from the leaves up and F = Ic_i S_i, then M_ji = S_j^T F_i for every
    i in j's subtree, a contiguous range of bodies (no walk to the root), plus armature on the
    diagonal, into M zeroed before (each entry is written once, or added to where mimic joints
    share a coordinate). Turns W's inertias into composite ones; F is left in W_F. One state, or
    L states in lanes l (see lanes.py)."""
    nb = model.shape[0] - 1
    for i in range(nb - 1, -1, -1):     # leaves to root: F = Ic_i S_i, Ic_p += Ic_i
        for d in range(ndofs(model, i)):
            set6(W, i, W_F + 6 * d, inertia_times(W, i, W_I, get6(W, i, W_S + 6 * d, l), l), l)
        par = parent(model, i)
        if par >= 0:
            for k in range(10):
                add(W, par, W_I + k, l, at(W, i, W_I + k, l))
    multi, shared = model[-1, MULTI] != 0.0, model[-1, MIMIC] != 0.0
    for j in range(nb):                 # M_ji = S_j^T F_i for i in j's subtree, j .. SUBTREE_END - 1
        end, nj = int(model[j, SUBTREE_END]), ndofs(model, j)
        if nj == 1:                     # one coordinate: M_jj = S_j^T F_j + armature, then the row
            S, a, sj = get6(W, j, W_S, l), user_v(model, j, 0), model[j, VSCALE]
            enter(M, a, a, sj * sj * (dot6(S, get6(W, j, W_F, l)) + model[j, ARMATURE]), shared, l)
            for i in range(j + 1, end):     # each body's first coordinate
                add_symmetric(M, a, user_v(model, i, 0), sj * model[i, VSCALE] * dot6(S, get6(W, i, W_F, l)), shared, l)
            if multi:
                other_coordinates(model, M, W, j, end, a, S, shared, l)
        elif nj == 6 and parent(model, j) < 0:  # the free root, at the origin: S = 1, its rows are Ic and the F below
            r = user_v(model, j, 0)
            for d in range(6):
                set6(M, r + d, r, get6(W, j, W_F + 6 * d, l), l)
            for i in range(j + 1, end):
                for d in range(ndofs(model, i)):
                    F, b, x = get6(W, i, W_F + 6 * d, l), user_v(model, i, d), model[i, VSCALE]
                    add_symmetric(M, r, b, x * F[0], shared, l)
                    add_symmetric(M, r + 1, b, x * F[1], shared, l)
                    add_symmetric(M, r + 2, b, x * F[2], shared, l)
                    add_symmetric(M, r + 3, b, x * F[3], shared, l)
                    add_symmetric(M, r + 4, b, x * F[4], shared, l)
                    add_symmetric(M, r + 5, b, x * F[5], shared, l)
        else:                       # several coordinates: its own block, then the bodies below
            for e in range(nj):
                S, a = get6(W, j, W_S + 6 * e, l), user_v(model, j, e)
                for d in range(e, nj):
                    x = dot6(S, get6(W, j, W_F + 6 * d, l))
                    put(M, a, user_v(model, j, d), l, x)
                    put(M, user_v(model, j, d), a, l, x)
                for i in range(j + 1, end):
                    for d in range(ndofs(model, i)):
                        add_symmetric(M, a, user_v(model, i, d), model[i, VSCALE] * dot6(S, get6(W, i, W_F + 6 * d, l)), shared, l)


@fast
def other_coordinates(model, M, W, j, end, a, S, shared, l=None):
    """M_ab += S . F for the coordinates after the first of the multi-coordinate joints in
    j's subtree (a: j's coordinate, S its motion)."""
    for i in range(j + 1, end):
        for d in range(1, ndofs(model, i)):
            add_symmetric(M, a, user_v(model, i, d), dot6(S, get6(W, i, W_F + 6 * d, l)), shared, l)


@fast
def add_symmetric(M, a, b, x, shared, l=None):
    """M[a, b] and M[b, a] get x (`enter`; twice x on the diagonal: a mimic joint below its leader)."""
    enter(M, a, b, x, shared, l)
    enter(M, b, a, x, shared, l)


#: for the batch drivers: q in, M out
Algorithm(crba, "io", crba_lanes)
