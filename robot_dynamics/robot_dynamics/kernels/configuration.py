"""The configuration space on the joints' Lie groups, compiled: q (+) dt v (`integrate`, the same map
as the library's `rd.integrate`) and the rate of the exponential coordinates of a displacement
(`tangent_rate`, the inverse right Jacobian of each joint's exponential) that Runge-Kutta-Munthe-Kaas
integration needs (Munthe-Kaas, BIT 1998; Lynch and Park, Modern Robotics, ch. 3).

A floating joint's q = [p; quaternion] moves by T exp6(dt v) (v = [linear; angular] in its own
frame), a planar joint's [x y theta] by the SE(2) exponential, and one-coordinate joints add."""
import numpy as np

from ..layout import FREE, JTYPE, NQ, NV, PLANAR, QSRC, VSRC
from .jit import fast
from .lie import exp6, jlog2_times, jlog6_times, quaternion_exp, quaternion_multiply, so3_coefficients
from .spatial import matvec3, quaternion_matrix


@fast
def integrate(model, q, v, dt, out):
    """out = q (+) dt v (out may be q itself)."""
    nb, nq = model.shape[0] - 1, int(model[-1, NQ])
    oq = ov = 0
    for i in range(nb):
        jt = model[i, JTYPE]
        iq, iv = int(model[i, QSRC]), int(model[i, VSRC])
        if jt == FREE:
            quat = (q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6])
            _, p = exp6((dt * v[iv], dt * v[iv + 1], dt * v[iv + 2], dt * v[iv + 3], dt * v[iv + 4], dt * v[iv + 5]))
            move = matvec3(quaternion_matrix(quat[0], quat[1], quat[2], quat[3]), p)
            new = quaternion_multiply(quat, quaternion_exp((dt * v[iv + 3], dt * v[iv + 4], dt * v[iv + 5])))
            n = np.sqrt(new[0] * new[0] + new[1] * new[1] + new[2] * new[2] + new[3] * new[3])
            out[iq], out[iq + 1], out[iq + 2] = q[iq] + move[0], q[iq + 1] + move[1], q[iq + 2] + move[2]
            out[iq + 3], out[iq + 4], out[iq + 5], out[iq + 6] = new[0] / n, new[1] / n, new[2] / n, new[3] / n
            oq, ov = oq + 7, ov + 6
        elif jt == PLANAR:
            vx, vy, w = dt * v[iv], dt * v[iv + 1], dt * v[iv + 2]
            a, b, _ = so3_coefficients(abs(w))
            dx, dy = a * vx - w * b * vy, w * b * vx + a * vy       # the SE(2) exponential's V (vx, vy)
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            out[iq], out[iq + 1], out[iq + 2] = q[iq] + c * dx - s * dy, q[iq + 1] + s * dx + c * dy, q[iq + 2] + w
            oq, ov = oq + 3, ov + 3
    for k in range(nq - oq):
        out[oq + k] = q[oq + k] + dt * v[ov + k]


@fast
def tangent_rate(model, theta, v, out):
    """out = dexp^-1_theta v per joint: the rate of the exponential coordinates theta of a
    displacement q0 (+) theta when the joints move with velocity v, Jr(theta_j)^-1 v_j for a
    floating (SE(3)) or planar (SE(2)) joint, v_j itself for a one-coordinate joint."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    ov = 0
    for i in range(nb):
        jt = model[i, JTYPE]
        iv = int(model[i, VSRC])
        if jt == FREE:
            r = jlog6_times((theta[iv], theta[iv + 1], theta[iv + 2], theta[iv + 3], theta[iv + 4], theta[iv + 5]),
                            (v[iv], v[iv + 1], v[iv + 2], v[iv + 3], v[iv + 4], v[iv + 5]))
            for d in range(6):
                out[iv + d] = r[d]
            ov += 6
        elif jt == PLANAR:
            r = jlog2_times((theta[iv], theta[iv + 1], theta[iv + 2]), (v[iv], v[iv + 1], v[iv + 2]))
            out[iv], out[iv + 1], out[iv + 2] = r
            ov += 3
    for k in range(ov, nv):
        out[k] = v[k]


@fast
def integrate_rows(model, Q, V, dt, out):
    for s in range(Q.shape[0]):
        integrate(model, Q[s], V[s], dt, out[s])


@fast
def tangent_rate_rows(model, THETA, V, out):
    for s in range(THETA.shape[0]):
        tangent_rate(model, THETA[s], V[s], out[s])
