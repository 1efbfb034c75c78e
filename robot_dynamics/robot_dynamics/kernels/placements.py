"""What the centroidal kernels need of `kinematics`, leaner: every body's placement and its mass and
first moment (or its whole inertia) in world axes about the reference point o, its motion subspace
computed when asked (Lynch and Park, Modern Robotics, ch. 4; Featherstone, Rigid Body Dynamics
Algorithms, ch. 2). The same placements as kinematics.py's (the same o, the same joint conventions),
with the joints' sines and cosines computed first over contiguous memory, where LLVM vectorizes
them: on talos (33 joints) ~0.03 us instead of ~0.26, a quarter of the centre of mass.

The workspace is a row per body (columns below) and, after them, rows holding the joints' angles,
sines and cosines as one contiguous run (`trig_rows`).
"""
import numpy as np
from numba.extending import overload

from ..layout import (ANGLE, FREE, INERTIA, JTYPE, ORIGIN_BODY, POS, PRISMATIC, QOFF, QSCALE, QSRC, QUATERNION_TOL,
                      REVOLUTE, ROT)
from .access import at1, put, put1
from .columns import layout
from .common import BAD_QUATERNION, OK, fail, parent
from .jit import allocating, fast, inline
from .kinematics import reference_point
from .lanes import _one_state, any_lane
from .spatial import (IDENTITY3, ZERO3, column, cross3, get3, get9, get10, matmul3, matvec3, quaternion_matrix,
                      rotate_z, set3, set9, set10, world_inertia)
from .trig import COS_TAYLOR, PIO2_1, PIO2_2, PIO2_3, REDUCE_MAX, SIN_TAYLOR, TWO_OVER_PI, sin_cos

#: per body: world rotation, position about o, inertia about o (mass and first moment only, unless
#: asked for all 10 parameters), spatial velocity (world axes, about o); row 0 also holds o and the
#: bodies' total mass and first moment about o
W_R, W_P, W_I, W_V, W_O, W_M, WIDTH = layout((("R", 9), ("P", 3), ("I", 10), ("V", 6), ("O", 3), ("M", 4)))


@allocating
def placements_workspace(model):
    """Scratch for one state: a row per body, then the rows of its joints' trigonometry."""
    nb = model.shape[0] - 1
    return np.empty((max(nb, 1) + trig_rows(nb), WIDTH))


@fast
def trig_rows(nb):
    return (3 * nb + WIDTH - 1) // WIDTH


@fast
def joint_trig(model, q, T, l=None):
    """T (the rows after the bodies, as one run): T[i] body i's joint angle (or displacement: a mimic joint's from its
    leader's, a planar joint's third coordinate), T[nb + i] its sine, T[2 nb + i] its cosine."""
    nb = model.shape[0] - 1
    for i in range(nb):
        put1(T, i, l, at1(q, int(model[i, ANGLE]), l) * model[i, QSCALE] + model[i, QOFF])
    sines_cosines(T, nb, l)


def sines_cosines(T, nb, l):
    pass


@overload(sines_cosines, inline="always")
def _sines_cosines(T, nb, l):
    """T[nb + i], T[2 nb + i] = sin, cos T[i]: for one state over the run at once (`sin_cos_all`,
    where LLVM vectorizes across the joints), then libm's where the reduction would lose digits (as
    trig.sin_cos); for lanes joint by joint with trig.sin_cos, vectorized across the lanes. Inlined:
    as a call it cost the centre of mass ~3 % of a single call (A/B)."""
    if _one_state(l):
        def one(T, nb, l):
            sin_cos_all(T[:nb], T[nb:2 * nb], T[2 * nb:3 * nb])
            for i in range(nb):
                if not abs(np.floor(T[i] * TWO_OVER_PI + 0.5)) < REDUCE_MAX:
                    T[nb + i], T[2 * nb + i] = np.sin(T[i]), np.cos(T[i])
        return one

    def lanes(T, nb, l):
        for i in range(nb):
            s, c = sin_cos(at1(T, i, l))
            put1(T, nb + i, l, s)
            put1(T, 2 * nb + i, l, c)
    return lanes


@fast
def sin_cos_all(x, s, c):
    """s, c = sin x, cos x by trig.sin_cos's formula (Cody and Waite's reduction, the Taylor series),
    written without its branch (beyond |x| = 2**19 pi/2 the quadrant is clamped: the caller puts
    libm's there). Given as three arrays, not offsets into one, so that LLVM proves they do not
    overlap and vectorizes the loop: 33 angles in ~0.07 us instead of ~0.23."""
    for i in range(x.shape[0]):
        k = np.floor(x[i] * TWO_OVER_PI + 0.5)
        r = ((x[i] - k * PIO2_1) - k * PIO2_2) - k * PIO2_3
        z = r * r
        ps, pc = SIN_TAYLOR[7], COS_TAYLOR[7]
        for n in range(6, -1, -1):
            ps, pc = ps * z + SIN_TAYLOR[n], pc * z + COS_TAYLOR[n]
        sin_r, cos_r = r + r * z * ps, 1.0 + z * pc
        quadrant = np.int64(min(max(k, -REDUCE_MAX), REDUCE_MAX)) & 3
        odd = quadrant & 1
        sin_x, cos_x = odd * cos_r + (1 - odd) * sin_r, odd * sin_r + (1 - odd) * cos_r
        s[i], c[i] = (1 - (quadrant & 2)) * sin_x, (1 - ((quadrant + 1) & 2)) * cos_x


@fast
def placements(model, q, W, inertia, l=None):
    """World placement (R, p - o) of every body's joint frame (W_R, W_P; o in W_O of row 0, the
    kernels' reference point, layout.ORIGIN_BODY's joint origin) and its inertia about o in W_I:
    the 10 parameters (kinematics' world_inertia) if `inertia`, else the mass and the first moment
    m (c - o) = m (p - o) + R (m c) alone; their sums over the bodies in W_M of row 0.
    BAD_QUATERNION (with the body) for a floating joint whose quaternion is not unit, as `kinematics`.
    l: one state (None) or L states in lanes (see lanes.py)."""
    nb = model.shape[0] - 1
    o = reference_point(model, q, int(model[-1, ORIGIN_BODY]), False, l)
    T = W[max(nb, 1):].reshape((-1,) + W.shape[2:])     # the trig rows as one run (T[k], or T[k, 0:L] for lanes)
    joint_trig(model, q, T, l)
    tm, tx, ty, tz = 0.0, 0.0, 0.0, 0.0
    for i in range(nb):
        par, jt, iq = parent(model, i), model[i, JTYPE], int(model[i, QSRC])
        Rp = get9(W, par, W_R, l) if par >= 0 else IDENTITY3
        pp = get3(W, par, W_P, l) if par >= 0 else (-o[0], -o[1], -o[2])
        A = matmul3(Rp, get9(model, i, ROT))
        t = matvec3(Rp, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p = (pp[0] + t[0], pp[1] + t[1], pp[2] + t[2])
        if jt == REVOLUTE:
            R = rotate_z(A, at1(T, nb + i, l), at1(T, 2 * nb + i, l))
        elif jt == PRISMATIC:
            th = at1(T, i, l)
            R, p = A, (p[0] + th * A[2], p[1] + th * A[5], p[2] + th * A[8])
        elif jt == FREE:
            x, y, z, w = at1(q, iq + 3, l), at1(q, iq + 4, l), at1(q, iq + 5, l), at1(q, iq + 6, l)
            if any_lane(abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL):
                return fail(BAD_QUATERNION, i)
            R, t = matmul3(A, quaternion_matrix(x, y, z, w)), matvec3(A, (at1(q, iq, l), at1(q, iq + 1, l),
                                                                           at1(q, iq + 2, l)))
            p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        else:                       # planar: along the joint frame's x and y, about its z
            R, x, y = rotate_z(A, at1(T, nb + i, l), at1(T, 2 * nb + i, l)), at1(q, iq, l), at1(q, iq + 1, l)
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        set9(W, i, W_R, R, l)
        set3(W, i, W_P, p, l)
        if inertia:
            I = world_inertia(R, p, get10(model, i, INERTIA))
            set10(W, i, W_I, I, l)
            m, mx, my, mz = I[0], I[1], I[2], I[3]
        else:
            m = model[i, INERTIA]
            mc = matvec3(R, (model[i, INERTIA + 1], model[i, INERTIA + 2], model[i, INERTIA + 3]))
            mx, my, mz = mc[0] + m * p[0], mc[1] + m * p[1], mc[2] + m * p[2]
            put(W, i, W_I, l, m)
            put(W, i, W_I + 1, l, mx)
            put(W, i, W_I + 2, l, my)
            put(W, i, W_I + 3, l, mz)
        tm, tx, ty, tz = tm + m, tx + mx, ty + my, tz + mz
    set3(W, 0, W_O, o, l)
    put(W, 0, W_M, l, tm)
    put(W, 0, W_M + 1, l, tx)
    put(W, 0, W_M + 2, l, ty)
    put(W, 0, W_M + 3, l, tz)
    return OK


@fast
def origin(W, l=None):
    """The reference point o of the last `placements`."""
    return get3(W, 0, W_O, l)


@inline
def motion_subspace(model, W, i, d, l=None):
    """S of coordinate d of body i's joint, world axes about o, from its placement (as kinematics'
    W_S): about an axis u through p, [p x u; u]; along it [u; 0]; a floating joint along and about
    its own axes, a planar one along its x and y and about its z."""
    jt, R = model[i, JTYPE], get9(W, i, W_R, l)
    if jt == PRISMATIC or (jt != REVOLUTE and d < (3 if jt == FREE else 2)):
        return column(R, 2 if jt == PRISMATIC else d) + ZERO3
    u = column(R, d - 3 if jt == FREE else 2)
    return cross3(get3(W, i, W_P, l), u) + u
