"""Frame placements and Jacobians (Lynch and Park, Modern Robotics, ch. 5)."""

from ..layout import NQ, VSCALE
from .batch import Algorithm
from .columns import KINEMATICS_END, W_S
from .access import add, put
from .common import F_BODY, F_REF, LOCAL, NONFINITE, OK, WORLD, body_rows, ndofs, sized, usable, user_v
from .jit import allocating, fast
from .kinematics import frame_in_world, kinematics, on_chain
from .spatial import cross3, get6, matvec3, transpose3

#: nothing past the placements
WIDTH = KINEMATICS_END


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def frame_jacobian(model, q, spec, J, H, W):
    """Placement H (4x4) of a frame and its Jacobian J (6 x nv, rows [linear; angular]) in the
    spec's reference (see `placed_jacobian`)."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE
    status = kinematics(model, q, W, int(spec[F_BODY]))
    if status != OK:
        return status
    placed_jacobian(model, spec, J, H, W)
    return OK


@fast
def frame_jacobian_lanes(model, Q, spec, J, H, W, lanes):
    """`frame_jacobian` of L states in lanes (the batch drivers' lane step, batch.py)."""
    if kinematics(model, Q, W, int(spec[F_BODY]), False, lanes) != OK:
        return False
    placed_jacobian(model, spec, J, H, W, lanes)
    return True


@fast
def placed_jacobian(model, spec, J, H, W, l=None):
    """H and J after `kinematics` of the frame's chain, for one state or L states in lanes l (see
    lanes.py): the space Jacobian's columns are the joints' world screws S, about the world origin
    (kinematics of a chain takes o there); LOCAL_WORLD_ALIGNED shifts them to the frame origin p,
    v_p = v_0 + w x p, and LOCAL rotates them into the frame's axes."""
    R, p = frame_in_world(spec, W, l)
    for r in range(3):
        put(H, r, 0, l, R[3 * r])
        put(H, r, 1, l, R[3 * r + 1])
        put(H, r, 2, l, R[3 * r + 2])
        put(H, r, 3, l, p[r])
    put(H, 3, 0, l, 0.0)
    put(H, 3, 1, l, 0.0)
    put(H, 3, 2, l, 0.0)
    put(H, 3, 3, l, 1.0)
    J[:] = 0.0
    ref, RT, body = spec[F_REF], transpose3(R), int(spec[F_BODY])
    for j in range(body + 1):
        if not on_chain(model, j, body):
            continue
        g = model[j, VSCALE]
        for e in range(ndofs(model, j)):
            s = get6(W, j, W_S + 6 * e, l)
            lin, ang = (s[0], s[1], s[2]), (s[3], s[4], s[5])
            if ref != WORLD:
                wp = cross3(ang, p)
                lin = (lin[0] + wp[0], lin[1] + wp[1], lin[2] + wp[2])
            if ref == LOCAL:    # R^T times each half
                lin, ang = matvec3(RT, lin), matvec3(RT, ang)
            k = user_v(model, j, e)
            add(J, 0, k, l, g * lin[0])
            add(J, 1, k, l, g * lin[1])
            add(J, 2, k, l, g * lin[2])
            add(J, 3, k, l, g * ang[0])
            add(J, 4, k, l, g * ang[1])
            add(J, 5, k, l, g * ang[2])


#: for the batch drivers: q in, the frame spec shared, J and H out
Algorithm(frame_jacobian, "isoo", frame_jacobian_lanes)
