"""Straight-line motions in SE(3) (Lynch and Park, Modern Robotics, section 9.2: the screw motion and
the decoupled rotation and translation) and the joint path that moves a frame along one by inverse
kinematics. Re-exported by `dynamics` (`rd.se3_interpolate`, `rd.cartesian_path`).

With T_0 and T_1 the placements at s = 0 and 1 (4x4, [[R, p], [0, 1]]):
- screw:     T(s) = T_0 exp6(s X),  X = log6(T_0^-1 T_1): a constant body twist X along s (the frame
             turns about and slides along one screw axis);
- decoupled: p(s) = p_0 + s (p_1 - p_0),  R(s) = R_0 exp3(s w),  w = log3(R_0^T R_1): the origin on
             the straight segment, the rotation on the geodesic; body twist [R(s)^T (p_1 - p_0); w],
             whose derivative along s is [-w x R(s)^T (p_1 - p_0); 0].
Twists are [linear; angular] in the frame's own axes (T^-1 dT/ds), as `lie` and the LOCAL
frame Jacobian write them.
"""
import math

import numpy as np

from . import calling as _call
from .configuration import difference, integrate
from .frame_motion import frame_acceleration
from .inverse_kinematics import inverse_kinematics
from .lie import as_transform, exp3, exp6, inverse, log3, log6
from .rigid_body import frame_jacobian, frame_placement

KINDS = ("screw", "decoupled")


def _kind(kind):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    return kind


def se3_interpolate(T_start, T_end, s, kind="screw", derivatives=False):
    """The placement at s along the straight line from T_start (s = 0) to T_end (s = 1) in SE(3)
    (see the module docstring): 4x4 for a scalar s, (len(s), 4, 4) for an array. derivatives=True
    returns (T, V, dV): also the body twist V = (T^-1 dT/ds)^v [linear; angular] and its derivative
    along s, (6,) or (len(s), 6) each."""
    T0, T1 = as_transform(T_start, "T_start"), as_transform(T_end, "T_end")
    if T0.shape != (4, 4) or T1.shape != (4, 4):
        raise ValueError(f"T_start and T_end must be single 4x4 placements, got shapes {T0.shape} and {T1.shape}")
    s_arr = np.asarray(s, dtype=np.float64)
    if s_arr.ndim > 1 or not np.all(np.isfinite(s_arr)):
        raise ValueError(f"s must be a finite number or a 1-D array of them, got {s!r}" if s_arr.ndim > 1
                         else "s contains NaN or inf")
    S = s_arr.reshape(-1)
    n = len(S)
    if _kind(kind) == "screw":
        X = log6(inverse(T0) @ T1)
        T = T0 @ exp6(S[:, None] * X)
        V, dV = np.broadcast_to(X, (n, 6)).copy(), np.zeros((n, 6))
    else:
        dp, w = T1[:3, 3] - T0[:3, 3], log3(T0[:3, :3].T @ T1[:3, :3])
        R = T0[:3, :3] @ exp3(S[:, None] * w)
        T = np.zeros((n, 4, 4))
        T[:, :3, :3], T[:, :3, 3], T[:, 3, 3] = R, T0[:3, 3] + S[:, None] * dp, 1.0
        v = np.einsum("nji,j->ni", R, dp)      # R(s)^T (p_1 - p_0)
        V = np.concatenate((v, np.broadcast_to(w, (n, 3))), 1)
        dV = np.concatenate((-np.cross(w, v), np.zeros((n, 3))), 1)
    if s_arr.ndim == 0:
        T, V, dV = T[0], V[0], dV[0]
    return (T, V, dV) if derivatives else T


def cartesian_path(model, frame, q_start, T_goal, n, kind="screw", tolerance=1e-10, max_jump=0.2, data=None):
    """(s, q, dq_ds, d2q_ds2) of the joint path that moves `frame` from its placement at q_start to
    T_goal along the straight line in SE(3) (`se3_interpolate`, kind "screw" or "decoupled"), at n
    gridpoints s = 0 .. 1, ready for rd.time_parameterize.

    q at each gridpoint by inverse kinematics to `tolerance` (m, rad), seeded from the previous
    gridpoint's q moved by its dq_ds and d2q_ds2 along s (so the path is continuous in q: no restart
    from random configurations); dq_ds and d2q_ds2 make the frame's velocity and acceleration along s
    those of the line: J dq_ds = V and J d2q_ds2 + dJ/ds dq_ds = dV/ds (J the frame's LOCAL Jacobian,
    V the line's body twist). A redundant arm takes the minimum-norm joint velocity, dq_ds = J^+ V,
    and d2q_ds2 is its derivative along s, the null-space turn included (`_rates`); the seeds follow
    that motion and inverse kinematics corrects each by O(ds^3), so q, dq_ds and d2q_ds2 are one path.
    ValueError naming s where a solve fails (an unreachable placement, a joint limit), where q jumps by
    more than max_jump (rad or m, any coordinate) between gridpoints, or where the Jacobian loses rank
    (a singularity: the smallest singular value below 1e-6 of the largest)."""
    if int(n) != n or n < 2:
        raise ValueError(f"n must be an integer of at least 2 gridpoints, got {n!r}")
    if not (math.isfinite(max_jump) and max_jump > 0):
        raise ValueError(f"max_jump must be a positive number, got {max_jump!r}")
    n = int(n)
    q_start = _call.vector(q_start, model.nq, "q_start", 0)
    T_goal = as_transform(T_goal, "T_goal")
    oq = model.joint_offset[0]
    outside = np.flatnonzero((q_start[oq:] < model.lower_limits) | (q_start[oq:] > model.upper_limits))
    if len(outside):
        k = int(outside[0])
        raise ValueError(f"q_start[{oq + k}] = {q_start[oq + k]:g} is outside joint {model.joint_names[k]!r}'s limits "
                         f"[{model.lower_limits[k]:g}, {model.upper_limits[k]:g}]: inverse kinematics keeps q within them")
    d = _call.of(model, data)
    T_start = frame_placement(model, q_start, frame, data=d)
    s = np.linspace(0.0, 1.0, n)
    T, V, dV = se3_interpolate(T_start, T_goal, s, _kind(kind), derivatives=True)
    q, dq, ddq = np.empty((n, model.nq)), np.empty((n, model.nv)), np.empty((n, model.nv))
    h = s[1] - s[0]
    for i in range(n):
        if i == 0:
            q[0] = q_start
        else:
            seed = integrate(model, q[i - 1], h * dq[i - 1] + 0.5 * h * h * ddq[i - 1])
            result = inverse_kinematics(model, frame, T[i], seed, tolerance=tolerance, restarts=0, data=d)
            if not result.converged:
                raise ValueError(f"cartesian_path: inverse kinematics failed at s = {s[i]:.6g} (gridpoint {i}): "
                                 f"{result.message}")
            q[i] = result.q
            step = np.abs(difference(model, q[i - 1], q[i]))
            if step.max() > max_jump:
                raise ValueError(f"cartesian_path: q jumps by {step.max():.3g} (coordinate {int(step.argmax())}) between "
                                 f"s = {s[i - 1]:.6g} and s = {s[i]:.6g} (more than max_jump = {max_jump:g}): a "
                                 f"singularity or a joint limit on the way; more gridpoints or another kind may pass")
        J = frame_jacobian(model, q[i], frame, "local", data=d)
        sv = np.linalg.svd(J, compute_uv=False)
        if sv[-1] <= 1e-6 * sv[0]:
            raise ValueError(f"cartesian_path: the frame's Jacobian is singular at s = {s[i]:.6g} (gridpoint {i}; "
                             f"singular values {sv[0]:.3g} .. {sv[-1]:.3g}): the line passes through a singularity")
        dq[i], ddq[i] = _rates(model, frame, q[i], J, V[i], dV[i], d)
    return s, q, dq, ddq


def _rates(model, frame, q, J, V, dV, d):
    """dq_ds = J^+ V and its derivative along s, d2q_ds2 = J^+ (dV - dJ dq_ds) + (1 - J^+ J) dJ^T (J J^T)^-1 V
    (the derivative of J^+ = J^T (J J^T)^-1; the second term, zero for a square J, is the minimum-norm
    motion's turn in the null space): dJ dq_ds is the frame's spatial acceleration at zero joint
    acceleration, dJ^T (J J^T)^-1 V the change of J^T along dq_ds (central differences, a step of
    1e-6 rad along dq_ds: ~1e-10 of the term)."""
    Jp = np.linalg.pinv(J)
    dq = Jp @ V
    drift = frame_acceleration(model, q, dq, np.zeros(model.nv), frame, "local", classical=False, data=d)
    ddq = Jp @ (dV - drift)
    if model.nv > 6:
        eps = 1e-6 / max(1.0, np.abs(dq).max())
        dJ = (frame_jacobian(model, integrate(model, q, eps * dq), frame, "local", data=d)
              - frame_jacobian(model, integrate(model, q, -eps * dq), frame, "local", data=d)) / (2 * eps)
        w = dJ.T @ (Jp.T @ dq)
        ddq += w - Jp @ (J @ w)
    return dq, ddq
