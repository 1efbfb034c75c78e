"""Frame placements and Jacobians (Lynch and Park, Modern Robotics, ch. 5)."""
import numpy as np

from ..layout import VSCALE
from .columns import KINEMATICS_END, W_S
from .access import add, put
from .blocks import gather, lane_scratch, scatter, view2, view3
from .common import F_BODY, F_REF, LOCAL, NONFINITE, OK, WORLD, chunk, ndofs, usable, user_v, body_rows
from .jit import allocating, fast, parallel, prange
from .lanes import lanes_count
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
    if not usable(q):
        return NONFINITE
    status = kinematics(model, q, W, int(spec[F_BODY]))
    if status != OK:
        return status
    placed_jacobian(model, spec, J, H, W)
    return OK


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


@fast
def frame_jacobian_rows(model, Q, spec, J, H, status, lo, hi, W):
    """`frame_jacobian` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = frame_jacobian(model, Q[s], spec, J[s], H[s], W)


@fast
def frame_jacobian_lanes(model, Q, spec, J, H, status, lo, hi, W, B, lanes):
    """`frame_jacobian` over states lo..hi, L at a time (lanes, see rnea.rnea_lanes); a block with
    an unusable q or a bad quaternion in some lane runs again one state at a time."""
    nb, nv = model.shape[0] - 1, J.shape[2]
    WL, start = view3(B, 0, max(nb, 1), WIDTH, lanes)
    JL, start = view3(B, start, 6, nv, lanes)
    HL, start = view3(B, start, 4, 4, lanes)
    QL = view2(B, start, Q.shape[1], lanes)[0]
    body = int(spec[F_BODY])
    for s0 in range(lo, hi, lanes_count(lanes)):
        n = min(lanes_count(lanes), hi - s0)
        if gather(Q, s0, n, QL, lanes) and kinematics(model, QL, WL, body, False, lanes) == OK:
            placed_jacobian(model, spec, JL, HL, WL, lanes)
            scatter(JL, J, s0, n, lanes)
            scatter(HL, H, s0, n, lanes)
            status[s0:s0 + n] = OK
        else:
            frame_jacobian_rows(model, Q, spec, J, H, status, s0, s0 + n, W)


@fast
def frame_jacobian_lane_size(model, Q, spec, J, H, lanes):
    """Doubles of lane scratch `frame_jacobian_lanes` needs: the workspace, J, H and q."""
    return lanes_count(lanes) * (max(model.shape[0] - 1, 1) * WIDTH + 6 * J.shape[2] + 16 + Q.shape[1])


@parallel
def frame_jacobian_batch(model, Q, spec, J, H, nthreads, lanes):
    """`frame_jacobian` over a batch on nthreads threads (a workspace each), L states at a time."""
    status = np.zeros(len(Q), np.int64)
    size = frame_jacobian_lane_size(model, Q, spec, J, H, lanes)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        frame_jacobian_lanes(model, Q, spec, J, H, status, lo, hi, workspace(model), lane_scratch(size, lanes),
                             lanes)
    return status
