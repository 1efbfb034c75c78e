"""The centre of mass, its Jacobian, the centroidal momentum, its matrix and the energies (Kajita et
al., Introduction to Humanoid Robotics, ch. 3: momentum, angular momentum and the centre of mass;
Orin and Goswami, Centroidal momentum matrix of a humanoid robot, IROS 2008), in world axes about
the reference point o, from the bodies' placements and inertias there (kernels/placements.py).

With I_i = (m_i, m_i (c_i - o), Ibar_i) body i's inertia about o and v_i its spatial velocity
(world axes, about o), m = sum m_i and c = o + sum m_i (c_i - o) / m. The momentum of the whole
robot about o is h_o = sum I_i v_i; about the centre of mass h_G = (h_lin, h_ang - (c - o) x h_lin)
(its linear part m cdot: the centre of mass moves at h_lin / m). Coordinate d of joint j moves
j's subtree with S_d: Ic_j S_d is that subtree's momentum (Ic_j its composite inertia about o,
Featherstone, RBDA ch. 6, as in CRBA), so
    A_G column = (F_lin, F_ang - (c - o) x F_lin), F = Ic_j S_d          (h_G = A_G v)
    J_com column = F_lin / m = (m_j S_lin + S_ang x m_j (c_j - o)) / m   (the first four
                   parameters of Ic_j suffice: the subtree's mass and first moment)
Mimic joints add their scale times their column to their leader's. T = 1/2 sum v_i . I_i v_i
+ 1/2 sum armature (scale v)^2 = 1/2 v^T M v, and the potential energy -sum m_i g . c_i =
-g . (m o + sum m_i (c_i - o)). The world-fixed root link is no body: its mass is not counted (as
in Pinocchio, where it belongs to the universe). Bodies come depth-first, so a backward pass over
them meets each body after its whole subtree: composites and columns in one pass.
"""

from ..layout import ARMATURE, FREE, GRAVITY, JTYPE, MIMIC, NQ, NV, PRISMATIC, REVOLUTE, VSCALE
from .batch import Algorithm
from .common import NONFINITE, OK, OVERFLOW, finite, ndofs, parent, sized, usable, user_v
from .access import at, put
from .blocks import finite_block
from .jit import allocating, fast, inline
from .lanes import all_lanes
from .placements import W_I, W_M, W_P, W_R, W_V, motion_subspace, origin, placements, placements_workspace
from .spatial import ZERO3, ZERO6, axpy, column, cross3, dot6, get10, get3, get6, get9, inertia_times, plus, set10, set6

#: a status of these kernels: the bodies have no mass, so there is no centre of mass
MASSLESS = 5
#: what `centroidal` writes: centre of mass, its velocity, h_G [linear; angular], kinetic energy
OUT_COM, OUT_VCOM, OUT_H, OUT_T, OUT_LEN = 0, 3, 6, 12, 13


@allocating
def workspace(model):
    """One state's scratch: the placements' (placements.py)."""
    return placements_workspace(model)


@fast
def mass_and_moment(W, l=None):
    """(m, m (c - o)): the bodies' total mass and first moment about o (`placements` summed them)."""
    return at(W, 0, W_M, l), get3(W, 0, W_M + 1, l)


@fast
def write_com(W, m, moment, c):
    """c = o + m (c - o) / m."""
    o = origin(W)
    c[0], c[1], c[2] = o[0] + moment[0] / m, o[1] + moment[1] / m, o[2] + moment[2] / m


@inline
def placed(model, q, W, inertia):
    """`placements` of one state after checking q, and the bodies' mass and first moment about o:
    (status, m, m (c - o)), the status MASSLESS where the bodies have no mass."""
    if not (sized(model, q, NQ) and usable(q)):
        return NONFINITE, 0.0, ZERO3
    status = placements(model, q, W, inertia)
    if status != OK:
        return status, 0.0, ZERO3
    m, moment = mass_and_moment(W)
    return (OK if m > 0.0 else MASSLESS), m, moment


@fast
def center_of_mass(model, q, c, W):
    """The centre of mass c (3) of one state."""
    status, m, moment = placed(model, q, W, False)
    if status != OK:
        return status
    write_com(W, m, moment, c)
    return OK if finite(c) else OVERFLOW


@fast
def potential_energy(model, q, e, W):
    """e[0] = -sum m_i g . c_i, the potential energy of one state (g the model's gravity)."""
    status, m, moment = placed(model, q, W, False)
    if status != OK and status != MASSLESS:
        return status
    o, g = origin(W), model.shape[0] - 1
    e[0] = -(model[g, GRAVITY] * (moment[0] + m * o[0]) + model[g, GRAVITY + 1] * (moment[1] + m * o[1])
             + model[g, GRAVITY + 2] * (moment[2] + m * o[2]))
    return OK if finite(e) else OVERFLOW


@fast
def com_jacobian(model, q, J, W):
    """The Jacobian J (3 x nv) of the centre of mass of one state: column S_lin m_j / m +
    S_ang x m_j (c_j - o) / m for subtree j (module docstring), written per joint type from its
    placement: u x m_j (c_j - p) / m about an axis u through p, m_j u / m along it."""
    status, m, _ = placed(model, q, W, False)
    if status != OK:
        return status
    J[:, :] = 0.0
    inv = 1.0 / m
    for j in range(model.shape[0] - 2, -1, -1):    # leaves first: j's subtree is summed when j comes
        mj, hx, hy, hz = W[j, W_I], W[j, W_I + 1], W[j, W_I + 2], W[j, W_I + 3]
        par = parent(model, j)
        if par >= 0:
            W[par, W_I] += mj
            W[par, W_I + 1] += hx
            W[par, W_I + 2] += hy
            W[par, W_I + 3] += hz
        f, jt, k, R = mj * inv, model[j, JTYPE], user_v(model, j, 0), get9(W, j, W_R)
        r = ((hx - mj * W[j, W_P]) * inv, (hy - mj * W[j, W_P + 1]) * inv, (hz - mj * W[j, W_P + 2]) * inv)
        if jt == REVOLUTE:          # r = m_j (c_j - p) / m
            add_column(J, k, model[j, VSCALE], cross3(column(R, 2), r))
        elif jt == PRISMATIC:
            add_column(J, k, model[j, VSCALE] * f, column(R, 2))
        elif jt == FREE:
            for d in range(3):
                add_column(J, k + d, f, column(R, d))
                add_column(J, k + 3 + d, 1.0, cross3(column(R, d), r))
        else:
            add_column(J, k, f, column(R, 0))
            add_column(J, k + 1, f, column(R, 1))
            add_column(J, k + 2, 1.0, cross3(column(R, 2), r))
    return OK


@fast
def add_column(J, k, s, x):
    """J[:, k] += s x (a mimic joint adds to its leader's column)."""
    J[0, k] += s * x[0]
    J[1, k] += s * x[1]
    J[2, k] += s * x[2]


@fast
def centroidal_matrix(model, q, A, W):
    """The centroidal momentum matrix A (6 x nv, h_G = A v) of one state (`momentum_columns`)."""
    status, m, moment = placed(model, q, W, True)
    if status != OK:
        return status
    momentum_columns(model, A, W, m, moment)
    return OK


@fast
def centroidal_matrix_lanes(model, Q, A, W, lanes):
    """`centroidal_matrix` of L states in lanes (the batch drivers' lane step, batch.py)."""
    if not (Q.shape[0] == int(model[-1, NQ]) and placements(model, Q, W, True, lanes) == OK):
        return False
    m, moment = mass_and_moment(W, lanes)
    if not all_lanes(m > 0.0):
        return False
    momentum_columns(model, A, W, m, moment, lanes)
    return finite_block(A)


@inline
def momentum_columns(model, A, W, m, moment, l=None):
    """A's columns (module docstring) from `placements` with the inertias, the bodies' total mass
    m and first moment m (c - o); turns W's inertias into composite ones. One state, or L states
    in lanes l (see lanes.py). Inlined, as it was part of `centroidal_matrix` (single calls ~2 %
    faster, A/B)."""
    r = (moment[0] / m, moment[1] / m, moment[2] / m)      # c - o
    mimic = model[-1, MIMIC] != 0.0     # then columns add up (a mimic joint's onto its leader's)
    if mimic:
        A[:] = 0.0
    for j in range(model.shape[0] - 2, -1, -1):    # leaves first: j's inertia is its subtree's when j comes
        par, g, I = parent(model, j), model[j, VSCALE], get10(W, j, W_I, l)
        if par >= 0:
            set10(W, par, W_I, add10(get10(W, par, W_I, l), I), l)
        for d in range(ndofs(model, j)):
            F = inertia10_times(I, motion_subspace(model, W, j, d, l))
            rf = cross3(r, (F[0], F[1], F[2]))
            col = (g * F[0], g * F[1], g * F[2], g * (F[3] - rf[0]), g * (F[4] - rf[1]), g * (F[5] - rf[2]))
            k = user_v(model, j, d)
            if mimic:
                col = plus(col, (at(A, 0, k, l), at(A, 1, k, l), at(A, 2, k, l), at(A, 3, k, l), at(A, 4, k, l),
                                 at(A, 5, k, l)))
            put(A, 0, k, l, col[0])
            put(A, 1, k, l, col[1])
            put(A, 2, k, l, col[2])
            put(A, 3, k, l, col[3])
            put(A, 4, k, l, col[4])
            put(A, 5, k, l, col[5])


@fast
def add10(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5], a[6] + b[6], a[7] + b[7],
            a[8] + b[8], a[9] + b[9])


@fast
def inertia10_times(I, m):
    """I m for a 10-parameter inertia held in registers (spatial.inertia_times reads it from an array)."""
    mass, hx, hy, hz = I[0], I[1], I[2], I[3]
    return (mass * m[0] - hy * m[5] + hz * m[4],
            mass * m[1] - hz * m[3] + hx * m[5],
            mass * m[2] - hx * m[4] + hy * m[3],
            hy * m[2] - hz * m[1] + I[4] * m[3] + I[7] * m[4] + I[8] * m[5],
            hz * m[0] - hx * m[2] + I[7] * m[3] + I[5] * m[4] + I[9] * m[5],
            hx * m[1] - hy * m[0] + I[8] * m[3] + I[9] * m[4] + I[6] * m[5])


@fast
def centroidal(model, q, v, out, W):
    """out (OUT_LEN) = the centre of mass, its velocity, the centroidal momentum h_G [linear;
    angular] and the kinetic energy of one state, in one pass over the bodies (module docstring):
    v_i = v_parent + sum_d S_d qd_d, h_o = sum I_i v_i, 2 T = sum v_i . I_i v_i + armature qd^2."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and usable(q) and usable(v)):
        return NONFINITE
    status = placements(model, q, W, True)
    if status != OK:
        return status
    h, twice_t = ZERO6, 0.0
    for i in range(model.shape[0] - 1):
        par, g = parent(model, i), model[i, VSCALE]
        vi = get6(W, par, W_V) if par >= 0 else ZERO6
        for d in range(ndofs(model, i)):
            vi = axpy(g * v[user_v(model, i, d)], motion_subspace(model, W, i, d), vi)
        set6(W, i, W_V, vi)
        hi = inertia_times(W, i, W_I, vi)
        h = plus(h, hi)
        twice_t += dot6(vi, hi)
        if ndofs(model, i) == 1:
            qd = g * v[user_v(model, i, 0)]
            twice_t += model[i, ARMATURE] * qd * qd
    m, moment = mass_and_moment(W)
    out[OUT_T] = 0.5 * twice_t
    if not m > 0.0:                 # the kinetic energy alone (of the rotors) is defined
        out[:OUT_T] = 0.0
        return MASSLESS if finite(out) else OVERFLOW
    write_com(W, m, moment, out[OUT_COM:OUT_COM + 3])
    rf = cross3((moment[0] / m, moment[1] / m, moment[2] / m), (h[0], h[1], h[2]))
    out[OUT_VCOM], out[OUT_VCOM + 1], out[OUT_VCOM + 2] = h[0] / m, h[1] / m, h[2] / m
    out[OUT_H], out[OUT_H + 1], out[OUT_H + 2] = h[0], h[1], h[2]
    out[OUT_H + 3], out[OUT_H + 4], out[OUT_H + 5] = h[3] - rf[0], h[4] - rf[1], h[5] - rf[2]
    return OK if finite(out) else OVERFLOW


#: for the batch drivers: q (and v) in, the outputs out
Algorithm(center_of_mass, "io")
Algorithm(potential_energy, "io")
Algorithm(com_jacobian, "io")
Algorithm(centroidal_matrix, "io", centroidal_matrix_lanes)
Algorithm(centroidal, "iio")
