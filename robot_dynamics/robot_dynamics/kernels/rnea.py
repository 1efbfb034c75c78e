"""Inverse dynamics: the recursive Newton-Euler algorithm (Luh, Walker and Paul, 1980), in each
body's joint frame, where a one-coordinate joint moves along or about z and the inertia is
constant: it needs no placements and no inertias in the world.

Featherstone's ID (Rigid Body Dynamics Algorithms, table 5.1; Pinocchio's RneaForwardStep and
RneaBackwardStep), the base moving up at g (a_0 = -g, RBDA ch. 5):

    forward_pass       X_i, v_i, a_i = jcalc(i, v_p, a_p)          root to leaves
                       f_i = I_i a_i + v_i x* I_i v_i
    external_wrenches  f_i -= f_ext_i                             in body i's joint frame
    backward_pass      tau_i = S_i^T f_i + armature qdd_i          leaves to root
                       f_p += X_i^T f_i
    g(q) (`gravity`): the forward pass at rest (`static_pass`: a_i = X_i a_p, f_i = I_i a_i)

The joint model, where the joint's kind is decided (its S, Featherstone's table 4.1): `jcalc` gives
X_i = X_J(q_i) X_T(i) = (E, r), the transform from the parent's joint frame to body i's (E its
rotation, r the body's origin in the parent: the joint placement times the joint's motion), and
the body's motion v_i = X_i v_p + S_i qd_i, a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i; its
transpose `joint_torque` gives tau_i = S_i^T f_i. A one-coordinate joint's S is e_z (angular for a
revolute joint, linear for a prismatic one), written out: v_i x S qd has four non-zero terms. A
floating joint's S is the identity in its own frame, a planar joint's picks x, y and the turn about z.
"""

from ..layout import (ARMATURE, FREE, INERTIA, JTYPE, NQ, NV, PLANAR, POS, PRISMATIC, QSRC, QUATERNION_TOL, REVOLUTE,
                      ROT, VSCALE)
from .columns import KINEMATICS_END, W_JOINT, W_P, W_R, layout
from .batch import Algorithm
from .common import (BAD_QUATERNION, F_BODY, NONFINITE, OK, add_torque, body_rows, fail, parent, root_acceleration,
                     sized, usable, usable_rows, user_v)
from .jit import allocating, fast, inline
from .access import at, at1, first
from .lanes import any_lane
from .kinematics import joint_angle, kinematics, world_wrench
from .spatial import (ZERO6, axpy, cross3, cross_force, cross_motion, get3, get6, get9, inertia_times, matmul3, matvec3,
                      plus, quaternion_matrix, rotate_z, set3, set6, set9, transpose3)

#: per body: velocity, acceleration, force, and X, the transform from the parent's joint frame (E, r)
W_V, W_A, W_F, W_X, WIDTH = layout((("V", 6), ("A", 6), ("F", 6), ("X", 12)), KINEMATICS_END)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body."""
    return body_rows(model, WIDTH)


@fast
def rnea(model, q, v, a, ext, tau, W):
    """Inverse dynamics tau = M a + C v + g - J^T f_ext of one state (see `newton_euler`)."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, a, NV) and usable(q) and usable(v)
            and usable(a) and usable_rows(ext)):
        return NONFINITE
    if ext.shape[0]:        # wrenches are placed in the world
        status = kinematics(model, q, W)
        if status != OK:
            return status
    return newton_euler(model, q, v, a, ext, tau, W, ext.shape[0] > 0)


@fast
def gravity(model, q, zero, tau, W):
    """g(q) of one state: `rnea` with v = qdd = 0 (`zero`: nv zeros) and no external wrench, its
    forward pass without the velocity terms (`static_pass`; Pinocchio's computeGeneralizedGravity)."""
    if not (sized(model, q, NQ) and sized(model, zero, NV) and usable(q)):
        return NONFINITE
    for i in range(model.shape[0] - 1):
        joint_angle(model, q, W, i, None)
    status = static_pass(model, q, W, None)
    if status != OK:
        return status
    backward_pass(model, zero, tau, W, None)
    return OK


@fast
def rnea_lanes(model, Q, V, A, EXT, TAU, W, lanes):
    """`rnea` of L states in lanes (the batch drivers' lane step, batch.py; inputs checked there)."""
    if EXT.shape[0] and kinematics(model, Q, W, -1, False, lanes) != OK:
        return False
    return newton_euler(model, Q, V, A, EXT, TAU, W, EXT.shape[0] > 0, lanes) == OK


@fast
def newton_euler(model, q, v, a, ext, tau, W, placed, l=None):
    """Recursive Newton-Euler of one state, or of L states in lanes l (see lanes.py): the passes
    of the module docstring. `placed`: `kinematics` has run (external wrenches need it), which
    leaves the joints' angles in W. Returns BAD_QUATERNION (with the body) for a floating joint
    whose quaternion is not unit (in some lane)."""
    for i in range(0 if placed else model.shape[0] - 1):
        joint_angle(model, q, W, i, l)  # sines first: on the recursion's dependency chain they cost 20 %
    status = forward_pass(model, q, v, a, W, l)
    if status != OK:
        return status
    external_wrenches(ext, W, l)
    backward_pass(model, a, tau, W, l)
    return OK


@inline
def forward_pass(model, q, v, a, W, l):
    """Root to leaves: each body's transform from its parent, velocity, acceleration and force,
    in its joint frame. BAD_QUATERNION (with the body) for a floating joint whose quaternion is
    not unit."""
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        # X_i, v_i = X_i v_p + S qd, a_i = X_i a_p + S qdd + v_i x S qd (v_0 = 0, a_0 = -g)
        not_unit, E, r, vi, ai = jcalc(model, q, v, a, W, i, get6(W, par, W_V, l) if par >= 0 else ZERO6,
                                       get6(W, par, W_A, l) if par >= 0 else root_acceleration(model), l)
        if any_lane(not_unit):
            return fail(BAD_QUATERNION, i)
        set9(W, i, W_X, E, l)
        set3(W, i, W_X + 9, r, l)
        set6(W, i, W_V, vi, l)
        set6(W, i, W_A, ai, l)
        # f_i = I_i a_i + v_i x* I_i v_i
        set6(W, i, W_F, plus(inertia_times(model, i, INERTIA, ai), cross_force(vi, inertia_times(model, i, INERTIA, vi))), l)
    return OK


@inline
def static_pass(model, q, W, l):
    """`forward_pass` at rest (v = qdd = 0): a_i = X_i a_p (a_0 = -g) and f_i = I_i a_i."""
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        not_unit, E, r = joint_transform(model, q, W, i, l)
        if any_lane(not_unit):
            return fail(BAD_QUATERNION, i)
        ai = to_child(E, r, get6(W, par, W_A, l) if par >= 0 else root_acceleration(model))
        set9(W, i, W_X, E, l)
        set3(W, i, W_X + 9, r, l)
        set6(W, i, W_A, ai, l)
        set6(W, i, W_F, inertia_times(model, i, INERTIA, ai), l)
    return OK


@inline
def joint_transform(model, q, W, i, l):
    """X_i = X_J(q_i) X_T(i) = (E, r) of body i after the joint angles (`joint_angle`): with (R, p)
    the joint's placement and its motion applied after it, E = R^T and r = p. First: True (in some
    lane) for a floating joint whose quaternion is not unit."""
    jt, iq = model[i, JTYPE], int(model[i, QSRC])
    R, p = get9(model, i, ROT), get3(model, i, POS)
    not_unit = False
    if jt == REVOLUTE:          # a turn about z
        R = rotate_z(R, at(W, i, W_JOINT + 1, l), at(W, i, W_JOINT + 2, l))
    elif jt == PRISMATIC:       # a slide along z
        th = at(W, i, W_JOINT, l)
        p = (p[0] + th * R[2], p[1] + th * R[5], p[2] + th * R[8])
    elif jt == FREE:            # a translation, then the turn of a unit quaternion
        x, y, z, w = at1(q, iq + 3, l), at1(q, iq + 4, l), at1(q, iq + 5, l), at1(q, iq + 6, l)
        not_unit = abs(x * x + y * y + z * z + w * w - 1.0) > QUATERNION_TOL
        R, t = matmul3(R, quaternion_matrix(x, y, z, w)), matvec3(R, (at1(q, iq, l), at1(q, iq + 1, l), at1(q, iq + 2, l)))
        p = (p[0] + t[0], p[1] + t[1], p[2] + t[2])
    else:                       # planar: a slide in x-y, then a turn about z
        t = matvec3(R, (at1(q, iq, l), at1(q, iq + 1, l), 0.0))
        R, p = rotate_z(R, at(W, i, W_JOINT + 1, l), at(W, i, W_JOINT + 2, l)), (p[0] + t[0], p[1] + t[1], p[2] + t[2])
    return not_unit, transpose3(R), p


@inline
def jcalc(model, q, v, a, W, i, vp, ap, l):
    """The joint model of body i (Featherstone's jcalc, RBDA table 4.1; Pinocchio's JointModel calc):
    X_i = X_J(q_i) X_T(i) = (E, r) (`joint_transform`), and the parent's velocity and acceleration
    v_p, a_p carried into the body with the joint's motion added, v_i = X_i v_p + S qd and
    a_i = X_i a_p + S qdd + v_i x S qd. First: True (in some lane) for a floating joint whose
    quaternion is not unit."""
    jt, k = model[i, JTYPE], user_v(model, i, 0)
    not_unit, E, p = joint_transform(model, q, W, i, l)
    vi, ai = to_child(E, p, vp), to_child(E, p, ap)
    if jt == REVOLUTE:          # S = e_z angular
        qd, qdd = at1(v, k, l) * model[i, VSCALE], at1(a, k, l) * model[i, VSCALE]
        vi = (vi[0], vi[1], vi[2], vi[3], vi[4], vi[5] + qd)
        ai = (ai[0] + vi[1] * qd, ai[1] - vi[0] * qd, ai[2], ai[3] + vi[4] * qd, ai[4] - vi[3] * qd, ai[5] + qdd)
    elif jt == PRISMATIC:       # S = e_z linear
        qd, qdd = at1(v, k, l) * model[i, VSCALE], at1(a, k, l) * model[i, VSCALE]
        vi = (vi[0], vi[1], vi[2] + qd, vi[3], vi[4], vi[5])
        ai = (ai[0] + vi[4] * qd, ai[1] - vi[3] * qd, ai[2] + qdd, ai[3], ai[4], ai[5])
    else:                       # floating: S = 1; planar: S picks x, y and the turn about z
        if jt == FREE:
            vJ = get_coordinates(v, k, l)
            aJ = get_coordinates(a, k, l)
        else:
            vJ = (at1(v, k, l), at1(v, k + 1, l), 0.0, 0.0, 0.0, at1(v, k + 2, l))
            aJ = (at1(a, k, l), at1(a, k + 1, l), 0.0, 0.0, 0.0, at1(a, k + 2, l))
        vi, ai = plus(vi, vJ), plus(ai, aJ)
        if parent(model, i) >= 0:   # at the root v_i = S qd: v_i x S qd = 0
            ai = plus(ai, cross_motion(vi, vJ))
    return not_unit, E, p, vi, ai


@inline
def joint_torque(model, a, f, tau, i, l):
    """tau_i += S_i^T f_i for body i's joint (the transpose of `jcalc`'s S), plus armature qdd_i for
    one coordinate, into the user's coordinates (mimic joints: times their scale, to their leader's)."""
    jt = model[i, JTYPE]
    if jt == FREE:
        for d in range(6):
            add_torque(model, i, d, f[d], tau, l)
    elif jt == PLANAR:
        add_torque(model, i, 0, f[0], tau, l)
        add_torque(model, i, 1, f[1], tau, l)
        add_torque(model, i, 2, f[5], tau, l)
    else:
        qdd = at1(a, user_v(model, i, 0), l) * model[i, VSCALE]
        add_torque(model, i, 0, (f[2] if jt == PRISMATIC else f[5]) + model[i, ARMATURE] * qdd, tau, l)


@fast
def get_coordinates(x, k, l):
    """The six coordinates x[k:k+6] of a floating joint."""
    return (at1(x, k, l), at1(x, k + 1, l), at1(x, k + 2, l), at1(x, k + 3, l), at1(x, k + 4, l), at1(x, k + 5, l))


@fast
def external_wrenches(ext, W, l=None):
    """f_i -= f_ext for each wrench, carried from the reference point o and world axes into its
    body's joint frame (after `kinematics`)."""
    for e in range(ext.shape[0]):
        b = int(first(ext, e, F_BODY, l))
        if b >= 0:
            f = world_wrench(ext, e, W, l)
            RT, p = transpose3(get9(W, b, W_R, l)), get3(W, b, W_P, l)
            pf = cross3(p, (f[0], f[1], f[2]))
            local = matvec3(RT, (f[0], f[1], f[2])) + matvec3(RT, (f[3] - pf[0], f[4] - pf[1], f[5] - pf[2]))
            set6(W, b, W_F, axpy(-1.0, local, get6(W, b, W_F, l)), l)


@inline
def backward_pass(model, a, tau, W, l):
    """Leaves to root: each joint's torque, and its body's force handed to the parent."""
    tau[:] = 0.0
    for i in range(model.shape[0] - 2, -1, -1):
        par, fi = parent(model, i), get6(W, i, W_F, l)
        # tau_i = S_i^T f_i + armature qdd_i
        joint_torque(model, a, fi, tau, i, l)
        # f_p += X_i^T f_i
        if par >= 0:
            set6(W, par, W_F, plus(get6(W, par, W_F, l), to_parent(get9(W, i, W_X, l), get3(W, i, W_X + 9, l), fi)), l)


@fast
def to_child(E, r, m):
    """A motion m in the parent's joint frame, in the child's: (E (m_lin - r x m_ang), E m_ang)."""
    rw = cross3(r, (m[3], m[4], m[5]))
    return matvec3(E, (m[0] - rw[0], m[1] - rw[1], m[2] - rw[2])) + matvec3(E, (m[3], m[4], m[5]))


@fast
def to_parent(E, r, f):
    """A force f in the child's joint frame, in the parent's: (E^T f_lin, E^T f_ang + r x E^T f_lin)."""
    ET = transpose3(E)
    fl, n = matvec3(ET, (f[0], f[1], f[2])), matvec3(ET, (f[3], f[4], f[5]))
    rf = cross3(r, fl)
    return fl + (n[0] + rf[0], n[1] + rf[1], n[2] + rf[2])


#: for the batch drivers: q, v, a and the external wrenches in, tau out
Algorithm(rnea, "iiiio", rnea_lanes)
