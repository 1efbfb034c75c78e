"""Placements, motion subspaces and inertias of every body (Lynch and Park, Modern Robotics,
ch. 4: placements as products of exponentials; Featherstone, Rigid Body Dynamics Algorithms,
ch. 2: inertias carried between frames).

Everything is taken in world axes about one reference point o, the joint origin of
layout.ORIGIN_BODY (on the robot; the world origin when only a chain is placed, for a Jacobian):
an inertia about a point d away carries m d^2, and a robot 1 km out would lose eps m d^2.
"""
from ..layout import (ANGLE, FREE, INERTIA, JTYPE, ORIGIN_BODY, PLANAR, POS, PRISMATIC, QOFF, QSCALE, QSRC,
                      QUATERNION_TOL, REVOLUTE, ROT, SUBTREE_END, VSCALE)
from .columns import W_I, W_JOINT, W_ORIGIN, W_P, W_R, W_S
from .common import BAD_QUATERNION, F_BODY, F_POS, F_REF, F_ROT, F_WRENCH, LOCAL, OK, WORLD, fail, ndofs, parent, user_v
from .jit import fast
from .access import at, at1, first, first1
from .lanes import any_lane
from .spatial import (IDENTITY3, ZERO3, axpy, column, cross3, get3, get6, get9, get10, matmul3, matvec3, quaternion_matrix,
                      rotate_z, set3, set6, set9, set10, world_inertia)
from .trig import sin_cos


@fast
def joint_angle(model, q, W, i, l=None):
    """Body i's joint angle (or displacement) from the user's q (a mimic joint's from its
    leader's; a planar joint's third coordinate), with its sine and cosine, into
    W[i, W_JOINT:W_JOINT + 3]. A floating joint has none (what it writes is not read)."""
    th = at1(q, int(model[i, ANGLE]), l) * model[i, QSCALE] + model[i, QOFF]
    set3(W, i, W_JOINT, (th,) + sin_cos(th), l)


@fast
def on_chain(model, i, body):
    """Body i <= body is body or one of its ancestors (its subtree reaches body); body -1: all."""
    return body < 0 or model[i, SUBTREE_END] > body


@fast
def origin(W, l=None):
    """The reference point o that the last `kinematics` took S and the inertias about."""
    return get3(W, 0, W_ORIGIN, l)


@fast
def body_velocity(model, v, W, i, v_parent, l=None):
    """v_i = v_parent + sum_d S_d qd_d: body i's spatial velocity (world axes) from its parent's and
    its joint's coordinates (mimic joints scaled), after `kinematics` placed S."""
    for d in range(ndofs(model, i)):
        v_parent = axpy(at1(v, user_v(model, i, d), l) * model[i, VSCALE], get6(W, i, W_S + 6 * d, l), v_parent)
    return v_parent


@fast
def kinematics(model, q, W, body=-1, base_frame=False, l=None):
    """World placement (R, p) of every body's joint frame, the S of their coordinates and their
    inertias in world axes about the reference point o (layout.ORIGIN_BODY's joint origin), or
    only the placements and S from the root to `body`, about the world origin (Lynch and Park,
    Modern Robotics, ch. 4: placements as products of exponentials; Featherstone, Rigid Body
    Dynamics Algorithms, ch. 2 for the inertia). Positions are kept relative to o (W_P holds
    p - o, W_ORIGIN holds o), so nothing far from the robot enters a product. A revolute
    joint's S is [r x u; u] for its axis u through r = p - o, a prismatic one's [u; 0]; a
    floating joint's coordinates move the body along and about its own axes e_d ([e_d; 0],
    [r x e_d; e_d]), a planar one's along its x and y and about its z. base_frame: a floating
    root stays at the origin, unrotated, so that its S is the identity (M and C do not depend
    on where the base is). l: one state (None) or L states in lanes (see lanes.py).
    Returns BAD_QUATERNION (with the body) for a floating joint whose quaternion is not unit."""
    n = model.shape[0] - 1 if body < 0 else body + 1
    o = reference_point(model, q, int(model[-1, ORIGIN_BODY]), base_frame, l) if body < 0 else ZERO3
    for i in range(n):  # the joints' q, sin q, cos q first: off the placements' dependency chain
        if on_chain(model, i, body):
            joint_angle(model, q, W, i, l)
    for i in range(n):
        if not on_chain(model, i, body):
            continue
        # the joint frame's placement: R_i = R_p R_T R_J, p_i = p_p + R_p p_T + (the joint's slide)
        par, jt, iq = parent(model, i), model[i, JTYPE], int(model[i, QSRC])
        Rp = get9(W, par, W_R, l) if par >= 0 else IDENTITY3
        pp = get3(W, par, W_P, l) if par >= 0 else (-o[0], -o[1], -o[2])
        A = matmul3(Rp, get9(model, i, ROT))
        u = (A[2], A[5], A[8])      # the joint axis z, in the world
        th = at(W, i, W_JOINT, l)
        t = matvec3(Rp, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p = (pp[0] + t[0], pp[1] + t[1], pp[2] + t[2])
        if jt == REVOLUTE:
            R = rotate_z(A, at(W, i, W_JOINT + 1, l), at(W, i, W_JOINT + 2, l))
        elif jt == PRISMATIC:
            R, p = A, (p[0] + th * u[0], p[1] + th * u[1], p[2] + th * u[2])
        elif jt == FREE:
            x, y, z, w = at1(q, iq + 3, l), at1(q, iq + 4, l), at1(q, iq + 5, l), at1(q, iq + 6, l)
            if any_lane(abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL):
                return fail(BAD_QUATERNION, i)
            if base_frame and par < 0:
                R, p = IDENTITY3, ZERO3
            else:
                R = matmul3(A, quaternion_matrix(x, y, z, w))
                t = matvec3(A, (at1(q, iq, l), at1(q, iq + 1, l), at1(q, iq + 2, l)))
                p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        else:                       # planar: along the joint frame's x and y, about its z
            R, x, y = rotate_z(A, at(W, i, W_JOINT + 1, l), at(W, i, W_JOINT + 2, l)), at1(q, iq, l), at1(q, iq + 1, l)
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        set9(W, i, W_R, R, l)
        set3(W, i, W_P, p, l)
        # S of each coordinate, about o: [r x u; u] for a turn about u through r, [u; 0] for a slide
        if jt == REVOLUTE:
            set6(W, i, W_S, cross3(p, u) + u, l)
        elif jt == PRISMATIC:
            set6(W, i, W_S, u + ZERO3, l)
        elif jt == FREE:
            for d in range(3):
                e = column(R, d)
                set6(W, i, W_S + 6 * d, e + ZERO3, l)
                set6(W, i, W_S + 18 + 6 * d, cross3(p, e) + e, l)
        else:
            set6(W, i, W_S, column(R, 0) + ZERO3, l)
            set6(W, i, W_S + 6, column(R, 1) + ZERO3, l)
            set6(W, i, W_S + 12, cross3(p, u) + u, l)
        if body < 0:    # I_i about o, in world axes
            set10(W, i, W_I, world_inertia(R, p, get10(model, i, INERTIA)), l)
    set3(W, 0, W_ORIGIN, o, l)
    return OK


@fast
def reference_point(model, q, ob, base_frame, l=None):
    """World position of body ob's joint origin, the kernels' reference point o (the world
    origin for ob = -1). The bodies above ob are prismatic: they slide but do not turn."""
    R, p = IDENTITY3, ZERO3
    for i in range(ob + 1):
        if not on_chain(model, i, ob):
            continue
        A = get9(model, i, ROT) if i == 0 else matmul3(R, get9(model, i, ROT))
        t = matvec3(R, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p, jt, iq = (p[0] + t[0], p[1] + t[1], p[2] + t[2]), model[i, JTYPE], int(model[i, QSRC])
        if jt == PRISMATIC:
            th = at1(q, iq, l) * model[i, QSCALE] + model[i, QOFF]
            p = (p[0] + th * A[2], p[1] + th * A[5], p[2] + th * A[8])
        elif jt == FREE:
            if base_frame and parent(model, i) < 0:
                return ZERO3
            t = matvec3(A, (at1(q, iq, l), at1(q, iq + 1, l), at1(q, iq + 2, l)))
            p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        elif jt == PLANAR:
            x, y = at1(q, iq, l), at1(q, iq + 1, l)
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        R = A
    return p


@fast
def spec_rotation(spec, l=None):
    """The rotation of a frame spec row (common.F_ROT), shared by every lane or one per lane."""
    return (at1(spec, F_ROT, l), at1(spec, F_ROT + 1, l), at1(spec, F_ROT + 2, l), at1(spec, F_ROT + 3, l),
            at1(spec, F_ROT + 4, l), at1(spec, F_ROT + 5, l), at1(spec, F_ROT + 6, l), at1(spec, F_ROT + 7, l),
            at1(spec, F_ROT + 8, l))


@fast
def frame_about_origin(spec, W, l=None):
    """Placement (R, p - o) of the frame described by a spec row, its position about the
    reference point o of the last `kinematics`; body -1 is the world."""
    b = int(first1(spec, F_BODY, l))
    R = spec_rotation(spec, l)
    p = (at1(spec, F_POS, l), at1(spec, F_POS + 1, l), at1(spec, F_POS + 2, l))
    if b < 0:
        o = origin(W, l)
        return R, (p[0] - o[0], p[1] - o[1], p[2] - o[2])
    Rb = get9(W, b, W_R, l)
    t = matvec3(Rb, p)
    Pb = get3(W, b, W_P, l)
    return matmul3(Rb, R), (Pb[0] + t[0], Pb[1] + t[1], Pb[2] + t[2])


@fast
def frame_in_world(spec, W, l=None):
    """World placement (R, p) of the frame described by a spec row; body -1 is the world."""
    if first1(spec, F_BODY, l) < 0:
        return spec_rotation(spec, l), (at1(spec, F_POS, l), at1(spec, F_POS + 1, l), at1(spec, F_POS + 2, l))
    R, p = frame_about_origin(spec, W, l)
    o = origin(W, l)
    return R, (o[0] + p[0], o[1] + p[1], o[2] + p[2])


@fast
def world_wrench(ext, e, W, l=None):
    """External wrench row e about the reference point o, in world axes, from the frame it is
    given in (after `kinematics`)."""
    R, p = frame_about_origin(ext[e], W, l)
    f = (at(ext, e, F_WRENCH, l), at(ext, e, F_WRENCH + 1, l), at(ext, e, F_WRENCH + 2, l))
    n = (at(ext, e, F_WRENCH + 3, l), at(ext, e, F_WRENCH + 4, l), at(ext, e, F_WRENCH + 5, l))
    ref = first(ext, e, F_REF, l)
    if ref == LOCAL:         # rotate the frame's axes onto the world's
        f, n = matvec3(R, f), matvec3(R, n)
    if ref != WORLD:         # applied at the frame origin, p - o from o: n_o = n + (p - o) x f
        pf = cross3(p, f)
    else:                    # given about the world origin: n_o = n - o x f
        pf = cross3(f, origin(W, l))
    return f + (n[0] + pf[0], n[1] + pf[1], n[2] + pf[2])
