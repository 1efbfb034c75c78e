"""Frame placements and Jacobians (Lynch and Park, Modern Robotics, ch. 5)."""
import numpy as np

from ..layout import VSCALE
from .columns import KINEMATICS_END, W_S
from .common import F_BODY, F_REF, LOCAL, NONFINITE, OK, WORLD, chunk, ndofs, usable, user_v, workspace
from .jit import fast, parallel, prange
from .kinematics import frame_in_world, kinematics, on_chain
from .spatial import cross3, get6, matvec3, transpose3

#: nothing past the placements
WIDTH = KINEMATICS_END


@fast
def frame_jacobian(model, q, spec, J, H, W):
    """Placement H (4x4) of a frame and its Jacobian J (6 x nv, rows [linear; angular]) in the
    spec's reference: the space Jacobian's columns are the joints' world screws S, about the
    world origin (kinematics of a chain takes o there); LOCAL_WORLD_ALIGNED shifts them to the
    frame origin p, v_p = v_0 + w x p, and LOCAL rotates them into the frame's axes."""
    if not usable(q):
        return NONFINITE
    status = kinematics(model, q, W, int(spec[F_BODY]))
    if status != OK:
        return status
    R, p = frame_in_world(spec, W)
    for r in range(3):
        H[r, 0], H[r, 1], H[r, 2], H[r, 3] = R[3 * r], R[3 * r + 1], R[3 * r + 2], p[r]
    H[3, 0], H[3, 1], H[3, 2], H[3, 3] = 0.0, 0.0, 0.0, 1.0
    J[:, :] = 0.0
    ref, RT, body = spec[F_REF], transpose3(R), int(spec[F_BODY])
    for j in range(body + 1):
        if not on_chain(model, j, body):
            continue
        g = model[j, VSCALE]
        for e in range(ndofs(model, j)):
            s = get6(W, j, W_S + 6 * e)
            lin, ang = (s[0], s[1], s[2]), (s[3], s[4], s[5])
            if ref != WORLD:
                wp = cross3(ang, p)
                lin = (lin[0] + wp[0], lin[1] + wp[1], lin[2] + wp[2])
            if ref == LOCAL:    # R^T times each half
                lin, ang = matvec3(RT, lin), matvec3(RT, ang)
            k = user_v(model, j, e)
            J[0, k] += g * lin[0]
            J[1, k] += g * lin[1]
            J[2, k] += g * lin[2]
            J[3, k] += g * ang[0]
            J[4, k] += g * ang[1]
            J[5, k] += g * ang[2]
    return OK


@fast
def frame_jacobian_rows(model, Q, spec, J, H, status, lo, hi, W):
    """`frame_jacobian` over states lo..hi of the batch, on one thread, with one workspace."""
    for s in range(lo, hi):
        status[s] = frame_jacobian(model, Q[s], spec, J[s], H[s], W)


@parallel
def frame_jacobian_batch(model, Q, spec, J, H, nthreads):
    """`frame_jacobian` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        frame_jacobian_rows(model, Q, spec, J, H, status, lo, hi, workspace(model, WIDTH))
    return status
