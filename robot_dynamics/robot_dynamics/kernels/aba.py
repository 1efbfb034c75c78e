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
import numpy as np

from ..layout import ARMATURE, JTYPE, MIMIC, PRISMATIC
from .columns import KINEMATICS_END, W_I, W_S, layout
from .common import (F_BODY, NONFINITE, OK, OVERFLOW, SINGULAR, SINGULAR_TOL, chunk, fail, finite, ndofs, parent,
                     root_acceleration, usable, usable_given, usable_rows, user_v, workspace)
from .hybrid import WIDTH as REDUCED_WIDTH
from .hybrid import reduced_hybrid
from .jit import fast, inline, parallel, prange
from .kinematics import kinematics, world_wrench
from .spatial import (ZERO6, axpy, cross_force, cross_motion, dot6, get6, inertia_times, plus, set6,
                      sym6_subtract_outer, sym6_times)

#: per body: velocity, bias acceleration c, bias force pA, acceleration, U (or Y) per unknown
#: coordinate, the articulated inertia Ia (upper triangle), D (1 / D, or its Cholesky factor
#: packed), the unknown coordinates, their count, and u (or z)
W_V, W_C, W_F, W_A, W_U, W_IA, W_D, W_UNK, W_NUNK, W_UU, ARTICULATED_END = layout(
    (("V", 6), ("C", 6), ("F", 6), ("A", 6), ("U", 36), ("IA", 21), ("D", 21), ("UNK", 6), ("NUNK", 1), ("UU", 6)),
    KINEMATICS_END)
#: the articulated-body algorithm, or RNEA then CRBA for mimic models, on the same rows
WIDTH = max(ARTICULATED_END, REDUCED_WIDTH)


@fast
def aba(model, q, v, known, qdd, tau, ext, W):
    """Forward and hybrid dynamics of one state: coordinates with known[k] keep qdd[k] and get
    tau[k]; the others keep tau[k] (never written) and get qdd[k]. With nothing known it is
    forward dynamics. Mimic joints couple coordinates, which the articulated-body recursion
    cannot handle: models with them solve the reduced dense system instead (hybrid.py). Only
    the given entries are read (qdd[k] where known, tau[k] elsewhere). SINGULAR where the mass
    matrix is not positive definite."""
    if not (usable(q) and usable(v) and usable_given(known, qdd, tau) and usable_rows(ext)):
        return NONFINITE
    status = kinematics(model, q, W)
    if status != OK:
        return status
    if model[-1, MIMIC]:
        status = reduced_hybrid(model, q, v, known, qdd, tau, ext, W)
    else:
        status = articulated_body(model, v, known, qdd, tau, ext, W)
    if status == OK and not (finite(qdd) and finite(tau)):
        return OVERFLOW     # finite inputs, a positive definite M and still inf: absurdly large inputs
    return status


@fast
def articulated_body(model, v, known, qdd, tau, ext, W):
    """Hybrid dynamics of one state after `kinematics`: qdd where not known, tau where known.
    Returns SINGULAR (with the body) where a D is not positive definite."""
    velocities(model, v, known, qdd, W)
    subtract_external_wrenches(ext, W)
    status = articulated_inertias(model, tau, W)
    if status == OK:
        accelerations(model, known, qdd, tau, W)
    return status


@inline
def velocities(model, v, known, qdd, W):
    """Root to leaves: v_i = v_p + S qd, c_i = v_p x S qd + S_k qdd_k (the known ones),
    pA_i = v_i x* I_i v_i, Ia_i = I_i, and which coordinates are unknown."""
    for i in range(model.shape[0] - 1):
        par = parent(model, i)
        vp = get6(W, par, W_V) if par >= 0 else ZERO6
        vJ, cJ, m = ZERO6, ZERO6, 0     # S qd, S_k qdd_k
        for d in range(ndofs(model, i)):
            S, k = get6(W, i, W_S + 6 * d), user_v(model, i, d)
            vJ = axpy(v[k], S, vJ)
            if known[k]:
                cJ = axpy(qdd[k], S, cJ)
            else:
                W[i, W_UNK + m] = d
                m += 1
        W[i, W_NUNK] = m
        vi = plus(vp, vJ)
        set6(W, i, W_V, vi)
        set6(W, i, W_C, plus(cross_motion(vp, vJ), cJ))
        set6(W, i, W_F, cross_force(vi, inertia_times(W, i, W_I, vi)))
        symmetric_inertia(W, i)


@inline
def articulated_inertias(model, tau, W):
    """Leaves to root: each body's U, D and u, and the articulated inertia and bias force it
    hands its parent. SINGULAR (with the body) where D is not positive definite."""
    for i in range(model.shape[0] - 2, -1, -1):
        par, m, one = parent(model, i), int(W[i, W_NUNK]), model[i, JTYPE] <= PRISMATIC
        pA = get6(W, i, W_F)
        if m and one:           # U = Ia S, D = S^T U + armature, u = tau - S^T pA
            S = get6(W, i, W_S)
            U = sym6_times(W, i, W_IA, S)
            set6(W, i, W_U, U)
            lin, ang, arm = S[0] * U[0] + S[1] * U[1] + S[2] * U[2], S[3] * U[3] + S[4] * U[4] + S[5] * U[5], model[i, ARMATURE]
            D = lin + ang + arm
            if not D > SINGULAR_TOL * (abs(lin) + abs(ang) + arm):
                return fail(SINGULAR, i)
            W[i, W_D] = 1.0 / D
            W[i, W_UU] = tau[user_v(model, i, 0)] - dot6(S, pA)
        elif m and not project(model, tau, i, m, pA, W):
            return fail(SINGULAR, i)
        if par < 0:
            continue
        # Ia_p += Ia - U D^-1 U^T, pA_p += pA + Ia c + U D^-1 (u - U^T c)
        c = get6(W, i, W_C)
        pa = plus(pA, sym6_times(W, i, W_IA, c))
        for k in range(21):
            W[par, W_IA + k] += W[i, W_IA + k]
        if m and one:
            U, dinv = get6(W, i, W_U), W[i, W_D]
            UDinv = (dinv * U[0], dinv * U[1], dinv * U[2], dinv * U[3], dinv * U[4], dinv * U[5])
            pa = axpy(W[i, W_UU] - dot6(U, c), UDinv, pa)
            sym6_subtract_outer(W, par, W_IA, UDinv, U)
        else:
            for a in range(m):       # U D^-1 U^T = Y Y^T, U D^-1 (u - U^T c) = Y (z - Y^T c)
                Y = get6(W, i, W_U + 6 * a)
                pa = axpy(W[i, W_UU + a] - dot6(Y, c), Y, pa)
                sym6_subtract_outer(W, par, W_IA, Y, Y)
        set6(W, par, W_F, plus(get6(W, par, W_F), pa))
    return OK


@inline
def accelerations(model, known, qdd, tau, W):
    """Root to leaves: a' = a_p + c, the unknown qdd, a = a' + S_u qdd_u, and the torque of
    every known coordinate."""
    for i in range(model.shape[0] - 1):
        par, m, one = parent(model, i), int(W[i, W_NUNK]), model[i, JTYPE] <= PRISMATIC
        # a' = a_p + c, qdd_u = D^-1 (u - U^T a'), a = a' + S_u qdd_u
        ai = plus(get6(W, par, W_A) if par >= 0 else root_acceleration(model), get6(W, i, W_C))
        if m and one:
            x = W[i, W_D] * (W[i, W_UU] - dot6(get6(W, i, W_U), ai))
            qdd[user_v(model, i, 0)] = x
            ai = axpy(x, get6(W, i, W_S), ai)
        elif m:
            ai = solve_projected(model, qdd, i, m, ai, W)
        set6(W, i, W_A, ai)
        # tau_k = S_k^T (Ia a + pA) + armature qdd_k
        if one:
            if not m:           # a known coordinate: its torque
                k = user_v(model, i, 0)
                tau[k] = model[i, ARMATURE] * qdd[k] + dot6(get6(W, i, W_S), plus(sym6_times(W, i, W_IA, ai), get6(W, i, W_F)))
            continue
        n = ndofs(model, i)
        if m == n:
            continue            # no known coordinate: no torque to report
        f = plus(sym6_times(W, i, W_IA, ai), get6(W, i, W_F))
        for d in range(n):
            k = user_v(model, i, d)
            if known[k]:
                tau[k] = dot6(get6(W, i, W_S + 6 * d), f)


@fast
def symmetric_inertia(W, i):
    """W[i, W_IA:W_IA+21] = body i's inertia W[i, W_I:] as a symmetric 6x6 (see sym6_times)."""
    m, hx, hy, hz = W[i, W_I], W[i, W_I + 1], W[i, W_I + 2], W[i, W_I + 3]
    xx, yy, zz, xy, xz, yz = W[i, W_I + 4], W[i, W_I + 5], W[i, W_I + 6], W[i, W_I + 7], W[i, W_I + 8], W[i, W_I + 9]
    set6(W, i, W_IA, (m, 0.0, 0.0, 0.0, hz, -hy))        # stored explicitly: a loop over a tuple is
    set6(W, i, W_IA + 6, (m, 0.0, -hz, 0.0, hx, m))      # not unrolled, and cost ABA 10 %
    set6(W, i, W_IA + 12, (hy, -hx, 0.0, xx, xy, xz))
    W[i, W_IA + 18], W[i, W_IA + 19], W[i, W_IA + 20] = yy, yz, zz


@fast
def subtract_external_wrenches(ext, W):
    """pA of each wrench's body -= the wrench, about o (after `kinematics`)."""
    for e in range(ext.shape[0]):
        b = int(ext[e, F_BODY])
        if b >= 0:
            set6(W, b, W_F, axpy(-1.0, world_wrench(ext, e, W), get6(W, b, W_F)))


@fast
def packed(a, b):
    """Offset of entry (a, b), b <= a, of a lower triangle stored row by row."""
    return a * (a + 1) // 2 + b


@fast
def project(model, tau, i, m, pA, W):
    """For the m unknown coordinates S_u of body i's joint: D = S_u^T Ia S_u factored L L^T into
    W_D (packed, 1 / L_aa on the diagonal), U = Ia S_u into W_U and u = tau_u - S_u^T pA into
    W_UU; below the root, what the parent needs instead: Y = U L^-T and z = L^-1 u. False if D
    is not positive definite."""
    for a in range(m):
        S = get6(W, i, W_S + 6 * int(W[i, W_UNK + a]))
        U = sym6_times(W, i, W_IA, S)
        set6(W, i, W_U + 6 * a, U)
        W[i, W_UU + a] = tau[user_v(model, i, int(W[i, W_UNK + a]))] - dot6(S, pA)
        for b in range(a + 1):
            W[i, W_D + packed(a, b)] = dot6(get6(W, i, W_S + 6 * int(W[i, W_UNK + b])), U)
    for a in range(m):          # Cholesky, row by row
        y = d0 = W[i, W_D + packed(a, a)]
        for b in range(a):
            y -= W[i, W_D + packed(a, b)] ** 2
        if not y > SINGULAR_TOL * abs(d0):
            return False
        inv = 1.0 / np.sqrt(y)
        W[i, W_D + packed(a, a)] = inv
        for r in range(a + 1, m):
            y = W[i, W_D + packed(r, a)]
            for b in range(a):
                y -= W[i, W_D + packed(r, b)] * W[i, W_D + packed(a, b)]
            W[i, W_D + packed(r, a)] = y * inv
    if parent(model, i) < 0:
        return True             # the root hands nothing on: solved from U and u (`solve_projected`)
    for a in range(m):          # Y = U L^-T and z = L^-1 u, by forward substitution
        Y, z = get6(W, i, W_U + 6 * a), W[i, W_UU + a]
        for b in range(a):
            Lab = W[i, W_D + packed(a, b)]
            Y, z = axpy(-Lab, get6(W, i, W_U + 6 * b), Y), z - Lab * W[i, W_UU + b]
        inv = W[i, W_D + packed(a, a)]
        set6(W, i, W_U + 6 * a, (inv * Y[0], inv * Y[1], inv * Y[2], inv * Y[3], inv * Y[4], inv * Y[5]))
        W[i, W_UU + a] = inv * z
    return True


@fast
def solve_projected(model, qdd, i, m, ai, W):
    """qdd_u = D^-1 (u - U^T a') for body i's m unknown coordinates (after `project`): below the
    root L^-T (z - Y^T a'), at the root L^-T L^-1 (u - U^T a'). Returns a' + S_u qdd_u."""
    for a in range(m):
        W[i, W_UU + a] -= dot6(get6(W, i, W_U + 6 * a), ai)
    if parent(model, i) < 0:
        for a in range(m):      # L y = u - U^T a'
            y = W[i, W_UU + a]
            for b in range(a):
                y -= W[i, W_D + packed(a, b)] * W[i, W_UU + b]
            W[i, W_UU + a] = y * W[i, W_D + packed(a, a)]
    for a in range(m - 1, -1, -1):  # L^T x = y
        x = W[i, W_UU + a]
        for r in range(a + 1, m):
            x -= W[i, W_D + packed(r, a)] * W[i, W_UU + r]
        W[i, W_UU + a] = x * W[i, W_D + packed(a, a)]
    for a in range(m):
        d = int(W[i, W_UNK + a])
        qdd[user_v(model, i, d)] = W[i, W_UU + a]
        ai = axpy(W[i, W_UU + a], get6(W, i, W_S + 6 * d), ai)
    return ai


@fast
def aba_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status, lo, hi, W):
    """`aba` over states lo..hi of the batch, on one thread, with one workspace. KNOWN: a
    mask per state, or one row for every state."""
    for s in range(lo, hi):
        status[s] = aba(model, Q[s], V[s], KNOWN[s if len(KNOWN) > 1 else 0], QDD[s], TAU[s], EXT[s], W)


@parallel
def aba_batch(model, Q, V, KNOWN, QDD, TAU, EXT, nthreads):
    """`aba` over a batch on nthreads threads (a workspace each)."""
    status = np.zeros(len(Q), np.int64)
    for t in prange(nthreads):
        lo, hi = chunk(t, len(Q), nthreads)
        aba_rows(model, Q, V, KNOWN, QDD, TAU, EXT, status, lo, hi, workspace(model, WIDTH, True))
    return status
