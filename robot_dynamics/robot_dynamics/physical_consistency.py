"""Physically consistent inertial parameters (Wensing, Kim and Slotine, Linear matrix inequalities
for physically consistent inertial parameter identification, IEEE RA-L 2017): a body's ten
parameters theta (PARAMETERS order: m, m c, I about the body origin) belong to a mass distribution
exactly when its pseudo-inertia

    J(theta) = [[tr(I)/2 1 - I, m c], [m c^T, m]]   (= integral of [r; 1][r; 1]^T dm)

is positive semi-definite: a mass >= 0 and an inertia about the centre of mass positive
semi-definite with the triangle inequalities (urdf.inertia_problem checks those). J is linear in
theta, so "nearest to the data and to a prior, every J >= 0" is a convex semidefinite program.

It is solved by Clarabel (Goulart and Chen, Clarabel: an interior-point solver for conic programs
with quadratic objectives, 2024; PyPI, needs numpy and scipy only): convex, so the optimum is
the global one; and small (10 variables per body and a few per joint, one 4x4 cone per body),
so it takes milliseconds without a modelling layer such as cvxpy (eight more packages, a second
to import, its own compile step per problem). The log-Cholesky parameterisation (Rucker and
Wensing, Smooth parameterization of rigid-body inertia, IEEE RA-L 2022) needs no conic solver but
makes the problem non-convex (a local search from a start).
"""
import numpy as np

from .urdf import inertia_problem

#: a pseudo-inertia, scaled by its body's mass and radius (the prior's scales), at least this far
#: inside the cone: every body's mass and principal moments about the COM strictly positive
MARGIN = 1e-7
#: Clarabel's statuses taken as solved (its default tolerances, 1e-8: tighter ones, 1e-10, ended
#: with InsufficientProgress on the PUMA; that status is taken when the point meets the constraints)
SOLVED = ("Solved", "AlmostSolved")
#: a non-negative parameter (friction, armature) the solver returns below zero by at most this fraction of
#: its prior scale (the torque it would explain alone: 1e-6 of the joint's RMS torque) is taken as zero
NONNEG_SLACK = 1e-6


def pseudo_inertia(theta):
    """J (4x4) of a body's ten parameters (PARAMETERS order)."""
    return np.tensordot(np.asarray(theta, float), pseudo_inertia_basis(), 1)


def pseudo_inertia_basis():
    """E (10, 4, 4): the pseudo-inertia J = sum_k theta_k E_k of a body's parameters theta
    (PARAMETERS order): [[tr(I)/2 1 - I, h], [h^T, m]], I about the body origin."""
    E = np.zeros((10, 4, 4))
    E[0, 3, 3] = 1.0
    for i in range(3):
        E[1 + i, i, 3] = E[1 + i, 3, i] = 1.0
    for k, (i, j) in zip(range(4, 10), ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):
        E[k, i, j] -= 1.0
        E[k, j, i] -= 0.0 if i == j else 1.0
        if i == j:
            E[k, :3, :3] += 0.5 * np.eye(3)
    return E


#: Clarabel's vectorisation of a symmetric 4x4 matrix: the upper triangle column by column, the
#: off-diagonal entries times sqrt(2)
_TRIU = [(i, j) for j in range(4) for i in range(j + 1)]
_SVEC_SCALE = np.array([1.0 if i == j else np.sqrt(2.0) for i, j in _TRIU])


def _svec(J):
    return np.array([J[..., i, j] for i, j in _TRIU]).T * _SVEC_SCALE


def nearest_standard(K, G, g, x0, s, bodies, nonneg, prior_weight=1e-4):
    """The standard parameters x minimising (K x)^T G (K x) - 2 g^T K x + prior_weight
    ||(x - x0) / s||^2 (normal equations G, g of base parameters K x; s > 0 the prior's scales)
    subject to the pseudo-inertia of each of the first `bodies` bodies (x[10 b:10 b + 10],
    PARAMETERS order, scaled by s) at least MARGIN inside the cone and x[nonneg] >= 0.

    The objective is whitened first: with G = R^T R, u = (x - x0) / s and the SVD
    [R K S; sqrt(prior_weight) 1] = U diag(sv) V^T, it is |y - y*|^2 (+ a constant) in
    y = diag(sv) V^T u, y* = U^T [R^-T g - R K x0; 0]: every direction of y is one standard
    deviation of the estimate, from the best determined base parameter to what only the prior
    fixes (the data weigh up to ~1e12 times the prior). Without whitening the solver's relative
    tolerance left the prior's directions undetermined. Then y = y* if that is inside the
    constraints, else y* + d with d the least |d| that gets there (Clarabel; in d, not y, so that
    no constant of the misfit's size enters its tolerances)."""
    if not (np.isfinite(prior_weight) and prior_weight > 0):
        raise ValueError(f"prior_weight must be a positive number, got {prior_weight!r}")
    norms = np.sqrt(np.diag(G))
    R = np.linalg.cholesky(G / np.outer(norms, norms)).T * norms          # G = R^T R, upper triangular
    r = np.linalg.solve(R.T, g) - R @ (K @ x0)
    U, sv, Vt = np.linalg.svd(np.vstack((R @ K * s, np.sqrt(prior_weight) * np.eye(len(s)))), full_matrices=False)
    y_star = U[:len(r)].T @ r
    M = s[:, None] * (Vt.T / sv)                                           # x = x0 + M y
    x = x0 + M @ y_star
    if np.all(x[nonneg] >= 0) and _inside(x, s, bodies):
        return x
    import clarabel
    from scipy import sparse
    A, b, cones = [], [], []
    for body in range(bodies):                         # svec(J(x_b + M_b d)) - MARGIN svec(1) in the cone
        Eb, rows = _scaled_basis(s, body), slice(10 * body, 10 * body + 10)
        A.append(-_svec(Eb).T @ M[rows])
        b.append(_svec(np.tensordot(x[rows], Eb, 1)) - MARGIN * _svec(np.eye(4)))
        cones.append(clarabel.PSDTriangleConeT(4))
    if nonneg:                                         # x_i + M_i d >= 0
        A.append(-M[nonneg])
        b.append(x[nonneg])
        cones.append(clarabel.NonnegativeConeT(len(nonneg)))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    n = len(s)
    try:
        solution = clarabel.DefaultSolver(sparse.identity(n, format="csc") * 2.0, np.zeros(n),
                                          sparse.csc_matrix(np.vstack(A)), np.concatenate(b), cones, settings).solve()
        status = str(solution.status)
    except BaseException as exc:                       # Clarabel's Rust panics arrive as a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        status = f"{type(exc).__name__}: {exc}"
    found = x + M @ np.asarray(solution.x) if status in SOLVED + ("InsufficientProgress",) else None
    if found is not None and nonneg:
        # Clarabel meets x[nonneg] >= 0 to its feasibility tolerance, not exactly (an armature of -2e-9 came
        # back Solved for a panda): what falls short by at most NONNEG_SLACK of the parameter's scale is zero
        low = found[nonneg]
        found[nonneg] = np.where((low < 0) & (low >= -NONNEG_SLACK * s[nonneg]), 0.0, low)
    if found is None or (status not in SOLVED and not (np.all(found[nonneg] >= 0) and _inside(found, s, bodies, 0.0))):
        raise ValueError(f"the physically consistent fit failed: Clarabel says {status}")
    return found


def _scaled_basis(s, body):
    """The pseudo-inertia basis of a body scaled to order one by its prior scales: T E_k T with
    T = diag(1/L, 1/L, 1/L, 1) / sqrt(m) (a congruence: the cone is the same)."""
    m, L = s[10 * body], s[10 * body + 1] / s[10 * body]
    T = np.r_[np.full(3, 1.0 / L), 1.0] / np.sqrt(m)
    return pseudo_inertia_basis() * np.outer(T, T)


def _inside(x, s, bodies, margin=MARGIN):
    """The scaled pseudo-inertia of each of the first `bodies` bodies at least `margin` inside the cone."""
    return all(np.linalg.eigvalsh(np.tensordot(x[10 * b:10 * b + 10], _scaled_basis(s, b), 1))[0] >= margin
               for b in range(bodies))



def body_problems(model):
    """What is not physical about each body of the model: [(body, problem)], empty if none (a
    positive mass and an inertia about the centre of mass that a rigid body can have)."""
    out = []
    for b, name in enumerate(model.body_names):
        p = model.inertia[b]
        if not p[0] > 0:
            out.append((name, f"mass {p[0]:.6g} kg"))
            continue
        c = p[1:4] / p[0]
        I = np.array([[p[4], p[7], p[8]], [p[7], p[5], p[9]], [p[8], p[9], p[6]]])
        problem = inertia_problem(p[0], I - p[0] * (c @ c * np.eye(3) - np.outer(c, c)))
        if problem:
            out.append((name, problem))
    return out


