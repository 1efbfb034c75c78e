"""Forward and hybrid dynamics: the articulated-body algorithm (Featherstone, Rigid Body Dynamics
Algorithms, ch. 7, and its hybrid form, ch. 9; Kim, Lie group formulation of articulated rigid
body dynamics, for joints of several coordinates), in world axes about the reference point:
children hand their articulated inertias and bias forces to the parent without transforms.
`aba` is the entry point (Pinocchio's name); models with mimic joints, whose coordinates are
coupled, take hybrid.py's reduced system instead.

Three passes after `kinematics`: `velocities` (root to leaves), `articulated_inertias` (leaves to
root) and `accelerations` (root to leaves). A coordinate is unknown (its torque given, its
acceleration sought) or known (the reverse). For a joint with unknown coordinates S_u (some of its
S's columns): U = Ia S_u, D = S_u^T U (+ armature for one coordinate), u = tau_u - S_u^T pA; the
parent gets Ia - U D^-1 U^T and pA + Ia c + U D^-1 (u - U^T c) (with every coordinate known: Ia
and pA + Ia c), where c = v_p x S qd plus S_k qdd_k of the known ones. Forward: a' = a_p + c,
qdd_u = D^-1 (u - U^T a'), a = a' + S_u qdd_u, and tau_k = S_k^T (Ia a + pA) + armature qdd_k.
One coordinate keeps 1 / D; several keep D = L L^T, Y = U L^-T and z = L^-1 u (`project`).
Ia is kept symmetric: its upper triangle (21 numbers).
"""

from ..layout import ARMATURE, JTYPE, MIMIC, NQ, NV, PRISMATIC
from .batch import Algorithm
from .access import add, at, at1, first, put, put1, sub
from .blocks import finite_block
from .columns import KINEMATICS_END, W_I, W_S, layout
from .common import (F_BODY, INPUT_LIMIT, NONFINITE, OK, OVERFLOW, SINGULAR, SINGULAR_TOL, body_rows, fail, finite,
                     ndofs, parent, root_acceleration, sized, usable, usable_given, usable_rows, user_v)
from .hybrid import WIDTH as REDUCED_WIDTH
from .hybrid import reduced_hybrid
from .jit import allocating, fast, inline
from .kinematics import kinematics, world_wrench
from .lanes import all_lanes, sqrt
from .spatial import (ZERO6, axpy, cross_force, cross_motion, dot6, get6, inertia_times, plus, set3, set6,
                      sym6_subtract_outer, sym6_times)

#: per body: velocity, bias acceleration c, bias force pA, acceleration, U (or Y) per unknown
#: coordinate, the articulated inertia Ia (upper triangle), D (1 / D, or its Cholesky factor
#: packed), the unknown coordinates, their count, and u (or z)
W_V, W_C, W_F, W_A, W_U, W_IA, W_D, W_UNK, W_NUNK, W_UU, ARTICULATED_END = layout(
    (("V", 6), ("C", 6), ("F", 6), ("A", 6), ("U", 36), ("IA", 21), ("D", 21), ("UNK", 6), ("NUNK", 1), ("UU", 6)),
    KINEMATICS_END)
#: the articulated-body algorithm, or RNEA then CRBA for mimic models, on the same rows
WIDTH = max(ARTICULATED_END, REDUCED_WIDTH)


@allocating
def workspace(model):
    """One state's scratch: a row of WIDTH columns per body, then the dense rows of mimic models'
    reduced system (hybrid.py)."""
    return body_rows(model, WIDTH, True)


@fast
def aba(model, q, v, known, qdd, tau, ext, W):
    """Forward and hybrid dynamics of one state: coordinates with known[k] keep qdd[k] and get
    tau[k]; the others keep tau[k] (never written) and get qdd[k]. With nothing known it is
    forward dynamics. Mimic joints couple coordinates, which the articulated-body recursion
    cannot handle: models with them solve the reduced dense system instead (hybrid.py). Only
    the given entries are read (qdd[k] where known, tau[k] elsewhere). SINGULAR where the mass
    matrix is not positive definite."""
    if not (sized(model, q, NQ) and sized(model, v, NV) and sized(model, known, NV) and sized(model, qdd, NV)
            and sized(model, tau, NV) and usable(q) and usable(v) and usable_given(known, qdd, tau)
            and usable_rows(ext)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    status = hybrid_dynamics(model, q, v, known, qdd, tau, ext, W)
    if status == OK and not (finite(qdd) and finite(tau)):
        return OVERFLOW     # finite inputs, a positive definite M and still inf: absurdly large inputs
    return status


@fast
def aba_lanes(model, Q, V, known, QDD, TAU, EXT, W, lanes):
    """`aba` of L states in lanes that share their mask of known coordinates (the batch drivers' lane
    step, batch.py): only the given entries of qdd and tau are checked (qdd where known, tau
    elsewhere), and a result that is not finite fails the block."""
    if not (usable_given_lanes(known, QDD, TAU) and kinematics(model, Q, W, -1, False, lanes) == OK):
        return False
    if hybrid_dynamics(model, Q, V, known, QDD, TAU, EXT, W, lanes) != OK:
        return False
    return finite_block(QDD) and finite_block(TAU)


@fast
def hybrid_dynamics(model, q, v, known, qdd, tau, ext, W, l=None):
    """After `kinematics`: the articulated-body algorithm, or the reduced system of mimic models
    (hybrid.py). One state, or L states in lanes l (see lanes.py)."""
    if model[-1, MIMIC]:
        return reduced_hybrid(model, q, v, known, qdd, tau, ext, W, l)
    return articulated_body(model, v, known, qdd, tau, ext, W, l)


@fast
def articulated_body(model, v, known, qdd, tau, ext, W, l=None):
    """Hybrid dynamics after `kinematics`: qdd where not known, tau where known. Returns
    SINGULAR (with the body) where a D is not positive definite (in some lane)."""
    velocities(model, v, known, qdd, W, l)
    subtract_external_wrenches(ext, W, l)
    status = articulated_inertias(model, tau, W, l)
    if status == OK:
        accelerations(model, known, qdd, tau, W, l)
    return status


@inline
def velocities(model, v, known, qdd, W, l):
    """Root to leaves: v_i = v_p + S qd, c_i = v_p x S qd + S_k qdd_k (the known ones),
    pA_i = v_i x* I_i v_i, Ia_i = I_i, and which coordinates are unknown (the same in every lane)."""
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        vp = get6(W, par, W_V, l) if par >= 0 else ZERO6
        vJ, cJ, m = ZERO6, ZERO6, 0     # S qd, S_k qdd_k
        for d in range(ndofs(model, i)):
            S, k = get6(W, i, W_S + 6 * d, l), user_v(model, i, d)
            vJ = axpy(at1(v, k, l), S, vJ)
            if known[k]:
                cJ = axpy(at1(qdd, k, l), S, cJ)
            else:
                put(W, i, W_UNK + m, l, d)
                m += 1
        put(W, i, W_NUNK, l, m)
        vi = plus(vp, vJ)
        set6(W, i, W_V, vi, l)
        set6(W, i, W_C, plus(cross_motion(vp, vJ), cJ), l)
        set6(W, i, W_F, cross_force(vi, inertia_times(W, i, W_I, vi, l)), l)
        symmetric_inertia(W, i, l)


@inline
def articulated_inertias(model, tau, W, l):
    """Leaves to root: each body's U, D and u, and the articulated inertia and bias force it
    hands its parent. SINGULAR (with the body) where D is not positive definite."""
    for i in range(model.shape[0] - 2, -1, -1):
        par, m, one = parent(model, i), int(first(W, i, W_NUNK, l)), model[i, JTYPE] <= PRISMATIC
        pA = get6(W, i, W_F, l)
        if m and one:           # U = Ia S, D = S^T U + armature, u = tau - S^T pA
            S = get6(W, i, W_S, l)
            U = sym6_times(W, i, W_IA, S, l)
            set6(W, i, W_U, U, l)
            lin, ang, arm = S[0] * U[0] + S[1] * U[1] + S[2] * U[2], S[3] * U[3] + S[4] * U[4] + S[5] * U[5], model[i, ARMATURE]
            D = lin + ang + arm
            if not all_lanes(D > SINGULAR_TOL * (abs(lin) + abs(ang) + arm)):
                return fail(SINGULAR, i)
            put(W, i, W_D, l, 1.0 / D)
            put(W, i, W_UU, l, at1(tau, user_v(model, i, 0), l) - dot6(S, pA))
        elif m and not project(model, tau, i, m, pA, W, l):
            return fail(SINGULAR, i)
        if par < 0:
            continue
        # Ia_p += Ia - U D^-1 U^T, pA_p += pA + Ia c + U D^-1 (u - U^T c)
        c = get6(W, i, W_C, l)
        pa = plus(pA, sym6_times(W, i, W_IA, c, l))
        for k in range(21):
            add(W, par, W_IA + k, l, at(W, i, W_IA + k, l))
        if m and one:
            U, dinv = get6(W, i, W_U, l), at(W, i, W_D, l)
            UDinv = (dinv * U[0], dinv * U[1], dinv * U[2], dinv * U[3], dinv * U[4], dinv * U[5])
            pa = axpy(at(W, i, W_UU, l) - dot6(U, c), UDinv, pa)
            sym6_subtract_outer(W, par, W_IA, UDinv, U, l)
        else:
            for a in range(m):       # U D^-1 U^T = Y Y^T, U D^-1 (u - U^T c) = Y (z - Y^T c)
                Y = get6(W, i, W_U + 6 * a, l)
                pa = axpy(at(W, i, W_UU + a, l) - dot6(Y, c), Y, pa)
                sym6_subtract_outer(W, par, W_IA, Y, Y, l)
        set6(W, par, W_F, plus(get6(W, par, W_F, l), pa), l)
    return OK


@inline
def accelerations(model, known, qdd, tau, W, l):
    """Root to leaves: a' = a_p + c, the unknown qdd, a = a' + S_u qdd_u, and the torque of
    every known coordinate."""
    for i in range(model.shape[0] - 1):
        par, m, one = parent(model, i), int(first(W, i, W_NUNK, l)), model[i, JTYPE] <= PRISMATIC
        # a' = a_p + c, qdd_u = D^-1 (u - U^T a'), a = a' + S_u qdd_u
        ai = plus(get6(W, par, W_A, l) if par >= 0 else root_acceleration(model), get6(W, i, W_C, l))
        if m and one:
            x = at(W, i, W_D, l) * (at(W, i, W_UU, l) - dot6(get6(W, i, W_U, l), ai))
            put1(qdd, user_v(model, i, 0), l, x)
            ai = axpy(x, get6(W, i, W_S, l), ai)
        elif m:
            ai = solve_projected(model, qdd, i, m, ai, W, l)
        set6(W, i, W_A, ai, l)
        # tau_k = S_k^T (Ia a + pA) + armature qdd_k
        if one:
            if not m:           # a known coordinate: its torque
                k = user_v(model, i, 0)
                put1(tau, k, l, model[i, ARMATURE] * at1(qdd, k, l)
                     + dot6(get6(W, i, W_S, l), plus(sym6_times(W, i, W_IA, ai, l), get6(W, i, W_F, l))))
            continue
        n = ndofs(model, i)
        if m == n:
            continue            # no known coordinate: no torque to report
        f = plus(sym6_times(W, i, W_IA, ai, l), get6(W, i, W_F, l))
        for d in range(n):
            k = user_v(model, i, d)
            if known[k]:
                put1(tau, k, l, dot6(get6(W, i, W_S + 6 * d, l), f))


@fast
def symmetric_inertia(W, i, l=None):
    """W[i, W_IA:W_IA+21] = body i's inertia W[i, W_I:] as a symmetric 6x6 (see sym6_times)."""
    m, hx, hy, hz = at(W, i, W_I, l), at(W, i, W_I + 1, l), at(W, i, W_I + 2, l), at(W, i, W_I + 3, l)
    xx, yy, zz = at(W, i, W_I + 4, l), at(W, i, W_I + 5, l), at(W, i, W_I + 6, l)
    xy, xz, yz = at(W, i, W_I + 7, l), at(W, i, W_I + 8, l), at(W, i, W_I + 9, l)
    set6(W, i, W_IA, (m, 0.0, 0.0, 0.0, hz, -hy), l)        # stored explicitly: a loop over a tuple is
    set6(W, i, W_IA + 6, (m, 0.0, -hz, 0.0, hx, m), l)      # not unrolled, and cost ABA 10 %
    set6(W, i, W_IA + 12, (hy, -hx, 0.0, xx, xy, xz), l)
    set3(W, i, W_IA + 18, (yy, yz, zz), l)


@fast
def subtract_external_wrenches(ext, W, l=None):
    """pA of each wrench's body -= the wrench, about o (after `kinematics`)."""
    for e in range(ext.shape[0]):
        b = int(first(ext, e, F_BODY, l))
        if b >= 0:
            set6(W, b, W_F, axpy(-1.0, world_wrench(ext, e, W, l), get6(W, b, W_F, l)), l)


@fast
def packed(a, b):
    """Offset of entry (a, b), b <= a, of a lower triangle stored row by row."""
    return a * (a + 1) // 2 + b


@fast
def project(model, tau, i, m, pA, W, l=None):
    """For the m unknown coordinates S_u of body i's joint: D = S_u^T Ia S_u factored L L^T into
    W_D (packed, 1 / L_aa on the diagonal), U = Ia S_u into W_U and u = tau_u - S_u^T pA into
    W_UU; below the root, what the parent needs instead: Y = U L^-T and z = L^-1 u. False if D
    is not positive definite (in some lane)."""
    for a in range(m):
        da = int(first(W, i, W_UNK + a, l))
        S = get6(W, i, W_S + 6 * da, l)
        U = sym6_times(W, i, W_IA, S, l)
        set6(W, i, W_U + 6 * a, U, l)
        put(W, i, W_UU + a, l, at1(tau, user_v(model, i, da), l) - dot6(S, pA))
        for b in range(a + 1):
            put(W, i, W_D + packed(a, b), l, dot6(get6(W, i, W_S + 6 * int(first(W, i, W_UNK + b, l)), l), U))
    for a in range(m):          # Cholesky, row by row
        y = d0 = at(W, i, W_D + packed(a, a), l)
        for b in range(a):
            Lab = at(W, i, W_D + packed(a, b), l)
            y -= Lab * Lab
        if not all_lanes(y > SINGULAR_TOL * abs(d0)):
            return False
        inv = 1.0 / sqrt(y)
        put(W, i, W_D + packed(a, a), l, inv)
        for r in range(a + 1, m):
            y = at(W, i, W_D + packed(r, a), l)
            for b in range(a):
                y -= at(W, i, W_D + packed(r, b), l) * at(W, i, W_D + packed(a, b), l)
            put(W, i, W_D + packed(r, a), l, y * inv)
    if parent(model, i) < 0:
        return True             # the root hands nothing on: solved from U and u (`solve_projected`)
    for a in range(m):          # Y = U L^-T and z = L^-1 u, by forward substitution
        Y, z = get6(W, i, W_U + 6 * a, l), at(W, i, W_UU + a, l)
        for b in range(a):
            Lab = at(W, i, W_D + packed(a, b), l)
            Y, z = axpy(-Lab, get6(W, i, W_U + 6 * b, l), Y), z - Lab * at(W, i, W_UU + b, l)
        inv = at(W, i, W_D + packed(a, a), l)
        set6(W, i, W_U + 6 * a, (inv * Y[0], inv * Y[1], inv * Y[2], inv * Y[3], inv * Y[4], inv * Y[5]), l)
        put(W, i, W_UU + a, l, inv * z)
    return True


@fast
def solve_projected(model, qdd, i, m, ai, W, l=None):
    """qdd_u = D^-1 (u - U^T a') for body i's m unknown coordinates (after `project`): below the
    root L^-T (z - Y^T a'), at the root L^-T L^-1 (u - U^T a'). Returns a' + S_u qdd_u."""
    for a in range(m):
        sub(W, i, W_UU + a, l, dot6(get6(W, i, W_U + 6 * a, l), ai))
    if parent(model, i) < 0:
        for a in range(m):      # L y = u - U^T a'
            y = at(W, i, W_UU + a, l)
            for b in range(a):
                y -= at(W, i, W_D + packed(a, b), l) * at(W, i, W_UU + b, l)
            put(W, i, W_UU + a, l, y * at(W, i, W_D + packed(a, a), l))
    for a in range(m - 1, -1, -1):  # L^T x = y
        x = at(W, i, W_UU + a, l)
        for r in range(a + 1, m):
            x -= at(W, i, W_D + packed(r, a), l) * at(W, i, W_UU + r, l)
        put(W, i, W_UU + a, l, x * at(W, i, W_D + packed(a, a), l))
    for a in range(m):
        d = int(first(W, i, W_UNK + a, l))
        put1(qdd, user_v(model, i, d), l, at(W, i, W_UU + a, l))
        ai = axpy(at(W, i, W_UU + a, l), get6(W, i, W_S + 6 * d, l), ai)
    return ai


@fast
def usable_given_lanes(known, DL, TL):
    """common.usable_given for a lane block: qdd usable where known, tau elsewhere."""
    ok = True
    for k in range(known.shape[0]):
        X = DL if known[k] else TL
        for j in range(X.shape[1]):
            ok &= abs(X[k, j]) <= INPUT_LIMIT
    return ok


#: for the batch drivers: q, v in, the mask of known coordinates (one for all or one per state), qdd
#: and tau both given (where known, elsewhere) and sought, the external wrenches in
Algorithm(aba, "iirbbi", aba_lanes)
