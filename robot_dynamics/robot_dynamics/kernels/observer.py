"""The generalized-momentum observer of external joint torques (De Luca and Mattone, 2005), sampled;
and the wrench at a frame that explains them, by damped least squares (Haddadin, De Luca and
Albu-Schaeffer, 2017, contact isolation and identification).

In continuous time r = K (p(t) - p(0) - integral_0^t (tau + C^T qd - g + r) ds), with p = M qd, so
that rdot = K (tau_ext - r): r follows the external torque through a first-order lag of gain K
(time constant 1/K per joint), needing no acceleration. Between samples k-1 and k, dt apart, with
the external torque held over the step, this is exactly
    r_k = r_{k-1} + (1 - exp(-K dt)) (d_k - r_{k-1}),
    d_k = (p_k - p_{k-1}) / dt - (u_{k-1} + u_k) / 2,   u = tau - beta,  beta = g - C^T qd,
where d_k is the mean external torque over the step and the known torques u are integrated by
the trapezoidal rule (exact for u linear in time, error dt^2/12 u'' otherwise). It is the
residual form above with the integral of r taken at the step's end and the gain
(exp(K dt) - 1) / dt, so a step of external torque is followed as 1 - exp(-K t) at every sample,
for any K dt (no stability limit). The first step after a reset without a torque takes u_k for the
whole step (rectangle rule).
"""
import math

import numpy as np

from ..layout import NV
from .columns import layout
from .common import NONFINITE, OK, OVERFLOW, finite, sized, usable
from .jit import fast
from .momentum import momentum

#: rows of the observer's state X (nv columns): p and u at the previous sample, r, and scratch
#: for this sample's p, beta and r
X_P, X_U, X_R, X_PNEW, X_BETA, X_RNEW, X_ROWS = layout(
    (("P", 1), ("U", 1), ("R", 1), ("PNEW", 1), ("BETA", 1), ("RNEW", 1)))


@fast
def observer_reset(model, q, v, tau, with_tau, X, W):
    """Start at (q, v): p_0, u_0 = tau - beta_0 if the torque is given (with_tau), r = 0."""
    status = momentum(model, q, v, X[X_P], X[X_BETA], W)
    if status != OK:
        return status
    if with_tau and not usable(tau):
        return NONFINITE
    for k in range(X.shape[1]):
        X[X_U, k] = tau[k] - X[X_BETA, k] if with_tau else 0.0
        X[X_R, k] = 0.0
    return OK


@fast
def observer_step(model, q, v, tau, dt, gain, trapezoid, X, W):
    """One sample (q, v, tau) dt after the previous one: r_k into X[X_R] (see the module
    docstring); trapezoid: u_{k-1} is known. On any non-finite input or result the state is
    left as it was and the status says why."""
    if not (sized(model, tau, NV) and usable(tau)):
        return NONFINITE
    status = momentum(model, q, v, X[X_PNEW], X[X_BETA], W)
    if status != OK:
        return status
    nv = int(model[-1, NV])
    for k in range(nv):
        u = tau[k] - X[X_BETA, k]
        mean = 0.5 * (u + X[X_U, k]) if trapezoid else u
        d = (X[X_PNEW, k] - X[X_P, k]) / dt - mean
        X[X_RNEW, k] = X[X_R, k] - math.expm1(-gain[k] * dt) * (d - X[X_R, k])
    if not finite(X[X_RNEW]):
        return OVERFLOW
    for k in range(nv):
        X[X_P, k] = X[X_PNEW, k]
        X[X_U, k] = tau[k] - X[X_BETA, k]
        X[X_R, k] = X[X_RNEW, k]
    return OK


@fast
def observer_run(P, B, TAU, dt, gain, R):
    """The observer over a recorded trajectory: p (P) and beta (B) of every sample, the torques
    TAU, the N-1 intervals dt; R[0] = 0 and R[k] as `observer_step` (the torque at sample 0 is
    known: the trapezoidal rule from the first step). Returns the first sample whose r is not
    finite, or -1."""
    for k in range(R.shape[1]):
        R[0, k] = 0.0
    for s in range(1, R.shape[0]):
        h = dt[s - 1]
        for k in range(R.shape[1]):
            d = (P[s, k] - P[s - 1, k]) / h - 0.5 * (TAU[s, k] - B[s, k] + TAU[s - 1, k] - B[s - 1, k])
            R[s, k] = R[s - 1, k] - math.expm1(-gain[k] * h) * (d - R[s - 1, k])
        if not finite(R[s]):
            return s
    return -1


@fast
def damped_least_squares(J, lo, hi, r, lam2, A, F):
    """F[lo:hi] = (Jc Jc^T + lam2 1)^-1 Jc r with Jc = J[lo:hi] (the minimiser of
    |Jc^T F - r|^2 + lam2 |F|^2), the rest of F zero, by Cholesky in A (6 x 7 scratch: the
    factor and the right-hand side). Returns False, F untouched, when a pivot falls below 1e-8
    of the largest diagonal entry (Jc near rank-deficient: the caller solves by SVD)."""
    k, nv = hi - lo, J.shape[1]
    big = 0.0
    for a in range(k):
        for b in range(a + 1):
            s = lam2 if a == b else 0.0
            for c in range(nv):
                s += J[lo + a, c] * J[lo + b, c]
            A[a, b] = s
        s = 0.0
        for c in range(nv):
            s += J[lo + a, c] * r[c]
        A[a, 6] = s
        big = max(big, A[a, a])
    for a in range(k):                  # A = L L^T, L in the lower triangle
        d = A[a, a]
        for c in range(a):
            d -= A[a, c] * A[a, c]
        if not d > 1e-8 * big:
            return False
        A[a, a] = np.sqrt(d)
        for b in range(a + 1, k):
            x = A[b, a]
            for c in range(a):
                x -= A[b, c] * A[a, c]
            A[b, a] = x / A[a, a]
    for a in range(k):                  # L y = rhs
        x = A[a, 6]
        for c in range(a):
            x -= A[a, c] * A[c, 6]
        A[a, 6] = x / A[a, a]
    for a in range(k - 1, -1, -1):      # L^T x = y
        x = A[a, 6]
        for c in range(a + 1, k):
            x -= A[c, a] * A[c, 6]
        A[a, 6] = x / A[a, a]
    for a in range(6):
        F[a] = A[a - lo, 6] if lo <= a < hi else 0.0
    return True
