"""The velocity and acceleration of a frame (Featherstone, Rigid Body Dynamics Algorithms, ch. 2
and 3: spatial velocity and acceleration; Lynch and Park, Modern Robotics, ch. 8), as
Pinocchio's getFrameVelocity, getFrameAcceleration and getFrameClassicalAcceleration define them.

Along the chain to the frame's body, in world axes about the world origin (the Jacobian's
`kinematics` of a chain): v_i = v_p + vJ, vJ = sum_d S_d qd_d, and a_i = a_p + sum_d S_d qdd_d
+ v_i x vJ (a world S is fixed in its body: Sdot = v_i x S), the base at rest and no gravity;
mimic joints follow their leader (qd = scale v, qdd = scale a). At the frame, p its origin and R
its axes: WORLD is (v_o, w) itself, LOCAL_WORLD_ALIGNED the motion of the frame origin,
(v_o + w x p, w) and (a_o + wdot x p, wdot), LOCAL the latter in the frame's axes (R^T). The
classical acceleration adds w x v (both in the chosen reference) to the linear part: with
LOCAL_WORLD_ALIGNED, the second derivative of the frame origin's position.
"""

from ..layout import NQ, NV, VSCALE
from .batch import Algorithm
from .columns import KINEMATICS_END, W_S
from .common import (F_BODY, F_REF, LOCAL, NONFINITE, OK, OVERFLOW, WORLD, body_rows, finite, ndofs, sized, usable,
                     user_v)
from .jit import allocating, fast
from .kinematics import frame_in_world, kinematics, on_chain
from .spatial import ZERO6, axpy, cross3, cross_motion, get6, matvec3, plus, transpose3

#: nothing past the placements
WIDTH = KINEMATICS_END


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


#: what to compute: the velocity, the spatial acceleration or the classical acceleration
VELOCITY, SPATIAL, CLASSICAL = 0, 1, 2


@fast
def frame_motion(model, q, v, a, spec, kind, out, W):
    """out (6) = the velocity (kind VELOCITY; a is not read) or the spatial or classical
    acceleration of the spec's frame in its reference (module docstring)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, a, NV)):
        return NONFINITE    # the wrong size or stride: the API's fast paths leave the check to here
    if not (usable(q) and usable(v) and (kind == VELOCITY or usable(a))):
        return NONFINITE
    body = int(spec[F_BODY])
    status = kinematics(model, q, W, body)   # body -1 (a frame on the world): all, checking q
    if status != OK:
        return status
    vel, acc = ZERO6, ZERO6         # the chain's bodies come in order: each one's parent is the last
    for i in range(body + 1):
        if not on_chain(model, i, body):
            continue
        g, vJ, aJ = model[i, VSCALE], ZERO6, ZERO6
        for d in range(ndofs(model, i)):
            S, k = get6(W, i, W_S + 6 * d), user_v(model, i, d)
            vJ = axpy(g * v[k], S, vJ)
            if kind != VELOCITY:
                aJ = axpy(g * a[k], S, aJ)
        vel = plus(vel, vJ)
        if kind != VELOCITY:
            acc = plus(plus(acc, aJ), cross_motion(vel, vJ))
    R, p = frame_in_world(spec, W)
    ref = spec[F_REF]
    m = vel if kind == VELOCITY else acc
    lin, ang = (m[0], m[1], m[2]), (m[3], m[4], m[5])
    vl, w = (vel[0], vel[1], vel[2]), (vel[3], vel[4], vel[5])
    if ref != WORLD:                # at the frame origin
        lin = plus3(lin, cross3(ang, p))
        vl = plus3(vl, cross3(w, p))
    if ref == LOCAL:                # in the frame's axes
        RT = transpose3(R)
        lin, ang, vl, w = matvec3(RT, lin), matvec3(RT, ang), matvec3(RT, vl), matvec3(RT, w)
    if kind == CLASSICAL:
        lin = plus3(lin, cross3(w, vl))
    out[0], out[1], out[2], out[3], out[4], out[5] = lin + ang
    return OK if finite(out) else OVERFLOW


@fast
def plus3(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


#: for the batch drivers: q, v, a in, the frame spec and what to compute shared, the motion out
Algorithm(frame_motion, "iiisso")
