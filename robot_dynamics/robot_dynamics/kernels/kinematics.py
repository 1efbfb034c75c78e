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
from .spatial import (IDENTITY3, ZERO3, axpy, column, cross3, get6, get9, get10, matmul3, matvec3, quaternion_matrix,
                      rotate_z, set6, set9, set10, world_inertia)
from .trig import sin_cos


@fast
def joint_angle(model, q, W, i):
    """Body i's joint angle (or displacement) from the user's q (a mimic joint's from its
    leader's; a planar joint's third coordinate), with its sine and cosine, into
    W[i, W_JOINT:W_JOINT + 3]. A floating joint has none (what it writes is not read)."""
    th = q[int(model[i, ANGLE])] * model[i, QSCALE] + model[i, QOFF]
    W[i, W_JOINT], W[i, W_JOINT + 1], W[i, W_JOINT + 2] = (th,) + sin_cos(th)


@fast
def on_chain(model, i, body):
    """Body i <= body is body or one of its ancestors (its subtree reaches body); body -1: all."""
    return body < 0 or model[i, SUBTREE_END] > body


@fast
def origin(W):
    """The reference point o that the last `kinematics` took S and the inertias about."""
    return (W[0, W_ORIGIN], W[0, W_ORIGIN + 1], W[0, W_ORIGIN + 2])


@fast
def body_velocity(model, v, W, i, v_parent):
    """v_i = v_parent + sum_d S_d qd_d: body i's spatial velocity (world axes) from its parent's and
    its joint's coordinates (mimic joints scaled), after `kinematics` placed S."""
    for d in range(ndofs(model, i)):
        v_parent = axpy(v[user_v(model, i, d)] * model[i, VSCALE], get6(W, i, W_S + 6 * d), v_parent)
    return v_parent


@fast
def kinematics(model, q, W, body=-1, base_frame=False):
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
    on where the base is).
    Returns BAD_QUATERNION (with the body) for a floating joint whose quaternion is not unit."""
    n = model.shape[0] - 1 if body < 0 else body + 1
    o = reference_point(model, q, int(model[-1, ORIGIN_BODY]), base_frame) if body < 0 else ZERO3
    for i in range(n):  # the joints' q, sin q, cos q first: off the placements' dependency chain
        if on_chain(model, i, body):
            joint_angle(model, q, W, i)
    for i in range(n):
        if not on_chain(model, i, body):
            continue
        # the joint frame's placement: R_i = R_p R_T R_J, p_i = p_p + R_p p_T + (the joint's slide)
        par, jt, iq = parent(model, i), model[i, JTYPE], int(model[i, QSRC])
        Rp = get9(W, par, W_R) if par >= 0 else IDENTITY3
        pp = (W[par, W_P], W[par, W_P + 1], W[par, W_P + 2]) if par >= 0 else (-o[0], -o[1], -o[2])
        A = matmul3(Rp, get9(model, i, ROT))
        u = (A[2], A[5], A[8])      # the joint axis z, in the world
        th = W[i, W_JOINT]
        t = matvec3(Rp, (model[i, POS], model[i, POS + 1], model[i, POS + 2]))
        p = (pp[0] + t[0], pp[1] + t[1], pp[2] + t[2])
        if jt == REVOLUTE:
            R = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2])
        elif jt == PRISMATIC:
            R, p = A, (p[0] + th * u[0], p[1] + th * u[1], p[2] + th * u[2])
        elif jt == FREE:
            x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            if abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL:
                return fail(BAD_QUATERNION, i)
            if base_frame and par < 0:
                R, p = IDENTITY3, ZERO3
            else:
                R, t = matmul3(A, quaternion_matrix(x, y, z, w)), matvec3(A, (q[iq], q[iq + 1], q[iq + 2]))
                p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        else:                       # planar: along the joint frame's x and y, about its z
            R, x, y = rotate_z(A, W[i, W_JOINT + 1], W[i, W_JOINT + 2]), q[iq], q[iq + 1]
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        set9(W, i, W_R, R)
        W[i, W_P], W[i, W_P + 1], W[i, W_P + 2] = p
        # S of each coordinate, about o: [r x u; u] for a turn about u through r, [u; 0] for a slide
        if jt == REVOLUTE:
            set6(W, i, W_S, cross3(p, u) + u)
        elif jt == PRISMATIC:
            set6(W, i, W_S, u + ZERO3)
        elif jt == FREE:
            for d in range(3):
                e = column(R, d)
                set6(W, i, W_S + 6 * d, e + ZERO3)
                set6(W, i, W_S + 18 + 6 * d, cross3(p, e) + e)
        else:
            set6(W, i, W_S, column(R, 0) + ZERO3)
            set6(W, i, W_S + 6, column(R, 1) + ZERO3)
            set6(W, i, W_S + 12, cross3(p, u) + u)
        if body < 0:    # I_i about o, in world axes
            set10(W, i, W_I, world_inertia(R, p, get10(model, i, INERTIA)))
    W[0, W_ORIGIN], W[0, W_ORIGIN + 1], W[0, W_ORIGIN + 2] = o
    return OK


@fast
def reference_point(model, q, ob, base_frame):
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
            th = q[iq] * model[i, QSCALE] + model[i, QOFF]
            p = (p[0] + th * A[2], p[1] + th * A[5], p[2] + th * A[8])
        elif jt == FREE:
            if base_frame and parent(model, i) < 0:
                return ZERO3
            t = matvec3(A, (q[iq], q[iq + 1], q[iq + 2]))
            p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
        elif jt == PLANAR:
            x, y = q[iq], q[iq + 1]
            p = (p[0] + x * A[0] + y * A[1], p[1] + x * A[3] + y * A[4], p[2] + x * A[6] + y * A[7])
        R = A
    return p


@fast
def frame_about_origin(spec, W):
    """Placement (R, p - o) of the frame described by a spec row, its position about the
    reference point o of the last `kinematics`; body -1 is the world."""
    b = int(spec[F_BODY])
    R = (spec[F_ROT], spec[F_ROT + 1], spec[F_ROT + 2], spec[F_ROT + 3], spec[F_ROT + 4], spec[F_ROT + 5],
         spec[F_ROT + 6], spec[F_ROT + 7], spec[F_ROT + 8])
    p = (spec[F_POS], spec[F_POS + 1], spec[F_POS + 2])
    if b < 0:
        o = origin(W)
        return R, (p[0] - o[0], p[1] - o[1], p[2] - o[2])
    Rb = get9(W, b, W_R)
    t = matvec3(Rb, p)
    return matmul3(Rb, R), (W[b, W_P] + t[0], W[b, W_P + 1] + t[1], W[b, W_P + 2] + t[2])


@fast
def frame_in_world(spec, W):
    """World placement (R, p) of the frame described by a spec row; body -1 is the world."""
    if spec[F_BODY] < 0:
        return (spec[F_ROT], spec[F_ROT + 1], spec[F_ROT + 2], spec[F_ROT + 3], spec[F_ROT + 4], spec[F_ROT + 5],
                spec[F_ROT + 6], spec[F_ROT + 7], spec[F_ROT + 8]), (spec[F_POS], spec[F_POS + 1], spec[F_POS + 2])
    R, p = frame_about_origin(spec, W)
    o = origin(W)
    return R, (o[0] + p[0], o[1] + p[1], o[2] + p[2])


@fast
def world_wrench(ext, e, W):
    """External wrench row e about the reference point o, in world axes, from the frame it is
    given in (after `kinematics`)."""
    R, p = frame_about_origin(ext[e], W)
    f = (ext[e, F_WRENCH], ext[e, F_WRENCH + 1], ext[e, F_WRENCH + 2])
    n = (ext[e, F_WRENCH + 3], ext[e, F_WRENCH + 4], ext[e, F_WRENCH + 5])
    ref = ext[e, F_REF]
    if ref == LOCAL:         # rotate the frame's axes onto the world's
        f, n = matvec3(R, f), matvec3(R, n)
    if ref != WORLD:         # applied at the frame origin, p - o from o: n_o = n + (p - o) x f
        pf = cross3(p, f)
    else:                    # given about the world origin: n_o = n - o x f
        pf = cross3(f, origin(W))
    return f + (n[0] + pf[0], n[1] + pf[1], n[2] + pf[2])
