"""The joint-space inertia matrix M(q): the composite-rigid-body algorithm (Featherstone, Rigid
Body Dynamics Algorithms, ch. 6), in world axes about the reference point."""
import numpy as np

from ..layout import ARMATURE, MULTI, SUBTREE_END, VSCALE
from .columns import KINEMATICS_END, W_I, W_S, layout
from .common import NONFINITE, OK, chunk, ndofs, parent, usable, user_v, workspace
from .jit import fast, parallel, prange
from .kinematics import kinematics
from .spatial import dot6, get6, inertia_times, set6

#: per body: F = Ic S for each coordinate of its joint
W_F, WIDTH = layout((("F", 36),), KINEMATICS_END)


@fast
def crba(model, q, M, W):
    """Mass matrix M(q) of one state (see `composite_inertia`)."""
    if not usable(q):
        return NONFINITE
    status = kinematics(model, q, W, base_frame=True)
    if status == OK:
        composite_inertia(model, M, W)
    return status


@fast
def composite_inertia(model, M, W):
    """Composite-rigid-body algorithm (Featherstone, RBDA ch. 6) after `kinematics` in the
    base frame: Ic_p += Ic_i from the leaves up and F = Ic_i S_i, then M_ji = S_j^T F_i for every
    i in j's subtree, a contiguous range of bodies (no walk to the root), plus armature on the
    diagonal. Turns W's inertias into composite ones; F is left in W_F."""
    nb = model.shape[0] - 1
    for i in range(nb - 1, -1, -1):     # leaves to root: F = Ic_i S_i, Ic_p += Ic_i
        for d in range(ndofs(model, i)):
            set6(W, i, W_F + 6 * d, inertia_times(W, i, W_I, get6(W, i, W_S + 6 * d)))
        par = parent(model, i)
        if par >= 0:
            for k in range(10):
                W[par, W_I + k] += W[i, W_I + k]
    M[:, :] = 0.0       # bodies on different branches do not couple
    multi = model[-1, MULTI] != 0.0
    for j in range(nb):                 # M_ji = S_j^T F_i for i in j's subtree, j .. SUBTREE_END - 1
        end, nj = int(model[j, SUBTREE_END]), ndofs(model, j)
        if nj == 1:                     # one coordinate: M_jj = S_j^T F_j + armature, then the row
            S, a, sj = get6(W, j, W_S), user_v(model, j, 0), model[j, VSCALE]
            M[a, a] += sj * sj * (dot6(S, get6(W, j, W_F)) + model[j, ARMATURE])
            for i in range(j + 1, end):     # each body's first coordinate
                add_symmetric(M, a, user_v(model, i, 0), sj * model[i, VSCALE] * dot6(S, get6(W, i, W_F)))
            if multi:
                other_coordinates(model, M, W, j, end, a, S)
        elif nj == 6 and parent(model, j) < 0:  # the free root, at the origin: S = 1, its rows are Ic and the F below
            r = user_v(model, j, 0)
            for d in range(6):
                set6(M, r + d, r, get6(W, j, W_F + 6 * d))
            for i in range(j + 1, end):
                for d in range(ndofs(model, i)):
                    F, b, x = get6(W, i, W_F + 6 * d), user_v(model, i, d), model[i, VSCALE]
                    add_symmetric(M, r, b, x * F[0])
                    add_symmetric(M, r + 1, b, x * F[1])
                    add_symmetric(M, r + 2, b, x * F[2])
                    add_symmetric(M, r + 3, b, x * F[3])
                    add_symmetric(M, r + 4, b, x * F[4])
                    add_symmetric(M, r + 5, b, x * F[5])
        else:                       # several coordinates: its own block, then the bodies below
            for e in range(nj):
                S, a = get6(W, j, W_S + 6 * e), user_v(model, j, e)
                for d in range(e, nj):
                    M[a, user_v(model, j, d)] = M[user_v(model, j, d), a] = dot6(S, get6(W, j, W_F + 6 * d))
                for i in range(j + 1, end):
                    for d in range(ndofs(model, i)):
                        add_symmetric(M, a, user_v(model, i, d), model[i, VSCALE] * dot6(S, get6(W, i, W_F + 6 * d)))


@fast
def other_coordinates(model, M, W, j, end, a, S):
    """M_ab += S . F for the coordinates after the first of the multi-coordinate joints in
    j's subtree (a: j's coordinate, S its motion)."""
    for i in range(j + 1, end):
        for d in range(1, ndofs(model, i)):
            add_symmetric(M, a, user_v(model, i, d), dot6(S, get6(W, i, W_F + 6 * d)))


@fast
def add_symmetric(M, a, b, x):
    """M[a, b] += x and M[b, a] += x (twice x on the diagonal: a mimic joint below its leader)."""
    M[a, b] += x
    M[b, a] += x


@fast
def crba_rows(model, Q, M, status, lo, hi, W):
    """`crba` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = crba(model, Q[s], M[s], W)


@parallel
def crba_batch(model, Q, M, nthreads):
    """`crba` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        crba_rows(model, Q, M, status, lo, hi, workspace(model, WIDTH))
    return status
