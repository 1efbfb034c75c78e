"""Payload identification: a payload's mass, centre of mass and inertia on a link from joint
torques (the inertial regressor of regressor.py).

Least squares of a payload's ten parameters on the torque that the model without payload does not
explain: tau - ID(q, v, a) = Y_link(q, v, a) phi, or, without accelerations, the same balance
integrated over windows: integral(tau) - delta p - integral(beta) = (delta Y_p + integral(Y_beta))
phi, with p = M v and beta = g - C^T v linear in phi too.
"""
import copy
from dataclasses import dataclass

import numpy as np

from .calling import Kernel, call
from .kernels import momentum as _momentum
from .layout import ARMATURE, AXES, INERTIA
from .model import transform_inertia
from .regressor import _FROM_PIN, _TO_PIN, ZERO_COLUMN, _regressor_of, _samples
from .rigid_body import inverse_dynamics
from .urdf import inertia_problem

# --- payload identification -------------------------------------------------------------------
@dataclass
class PayloadEstimate:
    """A payload rigidly attached to `link`, as identified (`identify_payload`).

    mass [kg]; com [m], its centre of mass in the link frame; inertia [kg m^2], 3x3 about the
    centre of mass in the link frame's axes. identified says which of mass, com and inertia the
    samples determine; what they do not is None (static samples never determine the inertia).
    residual: RMS of the torques the fit leaves unexplained [N m]; condition_number: of the
    least-squares problem, columns scaled to unit norm, over the parameters it determines;
    mass_std, com_std, inertia_std: standard errors from the residual, to first order (None
    without spare equations or for what is not identified);
    samples: how many samples; method: 'static', 'dynamic' or 'momentum'."""
    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    identified: dict
    residual: float
    condition_number: float
    samples: int
    method: str
    mass_std: float = None
    com_std: np.ndarray = None
    inertia_std: np.ndarray = None

    @property
    def physical(self):
        """A positive mass and, if identified, an inertia about the COM that a rigid body can
        have (urdf.inertia_problem: positive semi-definite, triangle inequalities; the rule the
        loader and the node's payload parameters apply)."""
        if not self.mass > 0:
            return False
        return self.inertia is None or inertia_problem(self.mass, self.inertia) is None

    def as_parameters(self, point_mass=False):
        """The node's payload parameters (payload.link, payload.mass, payload.com, payload.inertia
        as ixx iyy izz ixy ixz iyz about the COM). point_mass: zero inertia, for an estimate whose
        inertia is not identified or not physical. ValueError if the COM is not identified or the
        payload is not physical."""
        if self.com is None:
            raise ValueError(f"the payload's centre of mass was not identified ({self.identified}): "
                             "record poses where the link carrying it has different orientations")
        if not point_mass and self.inertia is None:
            raise ValueError("the payload's inertia was not identified (static samples?): pass point_mass=True "
                             "to apply mass and centre of mass only")
        I = np.zeros((3, 3)) if point_mass else self.inertia
        if not (self.mass > 0 and (point_mass or self.physical)):
            why = "" if point_mass or not self.mass > 0 else f": {inertia_problem(self.mass, I)}"
            raise ValueError(f"the estimate is not a physical payload (mass {self.mass:.6g} kg{why}): it "
                             "explains noise or friction; excite the link more, or use point_mass=True")
        return {"payload.link": self.link, "payload.mass": float(self.mass),
                "payload.com": [float(x) for x in self.com],
                "payload.inertia": [float(I[0, 0]), float(I[1, 1]), float(I[2, 2]), float(I[0, 1]), float(I[0, 2]),
                                    float(I[1, 2])]}

    def apply(self, model, point_mass=False):
        """A copy of model with the payload added to the body that carries its link (as the
        node's payload parameters do, by payload.add_payload); the same checks as as_parameters."""
        from .payload import add_payload
        p = self.as_parameters(point_mass)
        out = copy.deepcopy(model)
        add_payload(out, self.link, p["payload.mass"], p["payload.com"], p["payload.inertia"])
        return out


def identify_payload(model, link, q, v, a, tau, rcond=1e-7, threads=None, data=None):
    """Least squares of a payload on `link` from samples (q, v, a, tau) (PayloadEstimate): the
    torque that `model` (without the payload) does not explain, tau - inverse_dynamics(q, v, a),
    is Y_link(q, v, a) phi with phi the payload's ten parameters in the link frame (Y_link: the
    regressor of link's body, carried into the link frame).

    q (N, nq), v, a, tau (N, nv), or one sample 1-D. v = a = None (or all zero): static samples,
    which determine mass and centre of mass only. Scaled columns whose singular values fall below
    rcond times the largest count as not excited; a parameter is identified when the excited
    directions determine it. ValueError if the samples cannot determine the mass (e.g. every
    sample in the same pose) or an input is malformed (named)."""
    body, T = _payload_frame(model, link)
    q, v, a, tau, n = _samples(model, q, v, a, tau)
    static = not (np.any(v) or np.any(a))
    residual = tau - inverse_dynamics(model, q, v, a, threads=threads, data=data)
    A = _regressor_of(model, body, q, v, a, threads, data=data) @ T            # (N, nv, 10), link frame
    if static:
        A = A[..., :4]
    return _payload_fit(link, A.reshape(-1, A.shape[-1]), residual.reshape(-1), n, rcond,
                        "static" if static else "dynamic")


def identify_payload_from_momentum(model, link, q, v, tau, dt, window=20, rcond=1e-7, threads=None, data=None):
    """Payload identification without accelerations (PayloadEstimate, method 'momentum'): the
    momentum balance pdot = tau - beta (p = M v, beta = g - C^T v) integrated over consecutive
    windows of `window` sample intervals, integral(tau) - delta p_model - integral(beta_model) =
    (delta Y_p + integral(Y_beta)) phi (trapezoidal rule; Y_p, Y_beta: how p and beta change per
    unit of each payload parameter). Noise in v enters undifferentiated and noise in tau is
    averaged over each window. q (N, nq), v, tau (N, nv): consecutive samples, dt apart (a number,
    or the N - 1 intervals). Holding still (v = 0) it is static: mass and centre of mass only."""
    body, T = _payload_frame(model, link)
    if v is None:
        raise ValueError("v is required: the momentum formulation integrates the measured velocities")
    q, v, _, tau, n = _samples(model, q, v, np.zeros_like(np.asarray(v, float)), tau)
    dt = _intervals(dt, n)
    window = int(window)
    if not 1 <= window <= n - 1:
        raise ValueError(f"window must be between 1 and the number of intervals ({n - 1}), got {window}")
    p0, b0 = _momentum_of(model, model.packed, q, v, threads, data)
    cols = []                                                        # Y_p, Y_beta per link parameter
    for k in range(10):
        packed = _unit_payload(model, body, T[:, k])
        cols.append(_momentum_of(model, packed, q, v, threads, data))
    Yp = np.stack([c[0] for c in cols], axis=-1)                     # (N, nv, 10)
    Yb = np.stack([c[1] for c in cols], axis=-1)
    ends = np.arange(0, n, window)      # window boundaries; samples after the last one are left out
    if len(ends) < 2:
        raise ValueError(f"no complete window of {window} intervals in {n} samples")
    y = np.diff(_trapezoid_integral(tau - b0, dt)[ends], axis=0) - np.diff(p0[ends], axis=0)
    A = np.diff(_trapezoid_integral(Yb, dt)[ends], axis=0) + np.diff(Yp[ends], axis=0)
    static = not np.any(v)
    if static:
        A = A[..., :4]
    return _payload_fit(link, A.reshape(-1, A.shape[-1]), y.reshape(-1), n, rcond, "static" if static else "momentum")


def _payload_frame(model, link):
    """The body carrying `link` and T (10 x 10): the regressor's columns of that body times T
    are the columns of a payload's parameters given in the link frame (PARAMETERS order)."""
    if not isinstance(link, str):
        raise ValueError(f"link must be a link name, got {link!r}")
    frame = model.frame(link)           # KeyError naming the frames if unknown
    if frame.body < 0:
        raise ValueError(f"link {link!r} is fixed to the world: nothing the joints do moves a payload on it")
    T = np.empty((10, 10))
    for k in range(10):
        e = np.zeros(10)
        e[_TO_PIN[k]] = 1.0             # link-frame parameter k, in Model.inertia's order
        T[:, k] = transform_inertia(e, frame.rotation, frame.translation)[_TO_PIN]
    return frame.body, T


def _unit_payload(model, body, column):
    """The packed model of a robot whose only inertia is `column` (body-frame parameters, PARAMETERS
    order) on `body`: p and beta of it are the momentum regressor's columns."""
    packed = model.packed.copy()
    packed[:-1, INERTIA:INERTIA + 10] = 0.0
    packed[:-1, ARMATURE] = 0.0
    Q = packed[body, AXES:AXES + 9].reshape(3, 3)
    packed[body, INERTIA:INERTIA + 10] = transform_inertia(column[_FROM_PIN], Q.T, np.zeros(3))
    return packed


def _momentum_of(model, packed, q, v, threads, data):
    """p and beta of every sample for the packed model (the kernels read nothing else)."""
    n = len(q)
    P, B = np.empty((n, model.nv)), np.empty((n, model.nv))
    call(_MOMENTUM, model, data, threads, n, (q, v, P, B), dict(q=q, v=v), packed=packed)
    return P, B


_MOMENTUM = Kernel(_momentum, "momentum")


def _trapezoid_integral(f, dt):
    """The integral of samples f (first axis) from the first sample to each, trapezoidal rule."""
    out = np.zeros_like(f)
    steps = (f[1:] + f[:-1]) * (dt / 2).reshape((-1,) + (1,) * (f.ndim - 1))
    np.cumsum(steps, axis=0, out=out[1:])
    return out


def _intervals(dt, n):
    d = np.asarray(dt, float)
    d = np.full(n - 1, float(d)) if d.ndim == 0 else d.reshape(-1)
    if n < 2 or d.shape != (n - 1,) or not np.all(np.isfinite(d)) or np.any(d <= 0):
        raise ValueError(f"dt must be a positive number or the {n - 1} positive intervals between the {n} samples, "
                         f"got {dt!r}")
    return d


def _payload_fit(link, A, y, n, rcond, method):
    """Least squares A phi = y over the excited directions (truncated SVD of the column-scaled A)
    and which of mass, centre of mass and inertia they determine."""
    if not np.all(np.isfinite(A)) or not np.all(np.isfinite(y)):
        raise ValueError("the samples give a non-finite regression: an input is too large for double precision")
    norms = np.linalg.norm(A, axis=0)
    live = norms > ZERO_COLUMN * max(norms.max(), np.finfo(float).tiny)
    if not live[0]:
        raise ValueError(_NO_MASS.format(n=n, link=link, why="the payload's weight does not reach any joint torque"))
    As = A[:, live] / norms[live]
    U, s, Vt = np.linalg.svd(As, full_matrices=False)
    r = int(np.sum(s > rcond * s[0]))
    V = np.zeros((A.shape[1], r))
    V[live] = Vt[:r].T                  # excited directions of the scaled parameters
    seen = np.sum(V * V, axis=1) > 1 - 1e-8      # a parameter inside their span is determined
    if not seen[0]:
        raise ValueError(_NO_MASS.format(n=n, link=link, why="the samples confound the mass with the centre of mass"))
    scaled = V @ ((U[:, :r].T @ y) / s[:r])
    phi = np.zeros(A.shape[1])
    phi[live] = scaled[live] / norms[live]
    res = y - A @ phi
    rows = len(y)
    identified = {"mass": True, "com": bool(np.all(seen[1:4])), "inertia": bool(len(seen) == 10 and np.all(seen[4:]))}
    identified["inertia"] &= identified["com"]
    m, h = float(phi[0]), phi[1:4]
    com = h / m if identified["com"] and m != 0 else None
    inertia = _inertia_about_com(phi) if identified["inertia"] and com is not None else None
    mass_std = com_std = inertia_std = None
    if rows > r:                        # covariance of phi: sigma^2 (A^T A)^-1 over the excited span
        sigma2 = float(res @ res) / (rows - r)
        Vs = np.zeros_like(V)
        Vs[live] = V[live] / norms[live][:, None]
        cov = sigma2 * (Vs / s[:r] ** 2) @ Vs.T
        mass_std = float(np.sqrt(max(cov[0, 0], 0.0)))
        if com is not None:
            com_std = _propagated_std(lambda x: x[1:4] / x[0], phi[:4], cov[:4, :4])
        if inertia is not None:
            inertia_std = _propagated_std(lambda x: _inertia_about_com(x).reshape(-1), phi, cov).reshape(3, 3)
    return PayloadEstimate(link, m, com, inertia, identified, float(np.sqrt(res @ res / rows)),
                           float(s[0] / s[r - 1]), n, method, mass_std, com_std, inertia_std)


def _inertia_about_com(phi):
    """The 3x3 inertia about the centre of mass from the ten parameters (PARAMETERS order):
    I_c = I_o - (h.h 1 - h h^T) / m (parallel axes)."""
    h = phi[1:4]
    Io = np.array([[phi[4], phi[5], phi[7]], [phi[5], phi[6], phi[8]], [phi[7], phi[8], phi[9]]])
    return Io - (h @ h * np.eye(3) - np.outer(h, h)) / phi[0]


def _propagated_std(f, x, cov):
    """Standard errors of f(x) for x with covariance cov, to first order (central differences)."""
    J = np.empty((np.size(f(x)), len(x)))
    for k in range(len(x)):
        e = np.zeros(len(x))
        e[k] = 1e-6 * max(abs(x[k]), 1e-3 * np.abs(x).max())
        J[:, k] = (f(x + e) - f(x - e)) / (2 * e[k])
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", J, cov, J), 0.0))


_NO_MASS = ("the {n} samples cannot determine the payload's mass on {link!r}: {why}. Record samples in "
            "several different poses (the link carrying the payload at different heights and orientations)")
