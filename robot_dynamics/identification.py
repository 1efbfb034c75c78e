"""What the joint torques say about the robot's inertia: the joint torque regressor, the base
(identifiable) parameters and payload identification.

Inverse dynamics is linear in the bodies' inertial parameters, tau = Y(q, v, a) theta + armature a
(Atkeson, An and Hollerbach, Estimation of inertial parameters of manipulator loads and links, 1986).
Per moving body (model.body_names order), in Pinocchio's order,
    theta_b = [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz],
the rotational inertia about the body frame's origin, in the body frame (the frame of the joint
that moves the body; links welded to it by fixed joints are lumped in). The rotor inertia
(model.armature) is a known constant of the drive, outside theta.

Base parameters: the combinations of theta that the joint torques determine at all, found
numerically by QR of the regressor stacked over random states (Gautier and Khalil, Direct
calculation of minimum set of inertial parameters of serial robots, 1990; Gautier, Numerical
calculation of the base inertial parameters of robots, 1991): each base parameter is a standard
parameter plus the dependent ones that regroup into it.

Payload identification: least squares of a payload's ten parameters on the torque that the model
without payload does not explain: tau - ID(q, v, a) = Y_link(q, v, a) phi, or, without
accelerations, the same balance integrated over windows: integral(tau) - delta p - integral(beta)
= (delta Y_p + integral(Y_beta)) phi, with p = M v and beta = g - C^T v linear in phi too.
"""
import copy
from dataclasses import dataclass, field

import numpy as np

from . import kernels as K
from .kernels import momentum as _momentum
from .kernels import regressor as _regressor
from .layout import ARMATURE, AXES, INERTIA
from .model import transform_inertia
from .urdf import inertia_problem

#: the ten parameters of a body, in the regressor's (Pinocchio's) order
PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: Model.inertia's order (m, h, xx yy zz xy xz yz) -> PARAMETERS' order, and back
_TO_PIN = np.array([0, 1, 2, 3, 4, 7, 5, 8, 9, 6])
_FROM_PIN = np.argsort(_TO_PIN)
#: a column of a stacked regressor smaller than this fraction of the largest is rounding noise
ZERO_COLUMN = 1e-10


# --- the regressor ----------------------------------------------------------------------------
def inertial_parameters(model):
    """theta: (n_bodies, 10), each moving body's parameters in PARAMETERS order (m, first moment
    m c, inertia about the body origin Ixx Ixy Iyy Ixz Iyz Izz), in model.body_names order, so that
    inverse_dynamics = joint_torque_regressor @ theta.ravel() + armature * a."""
    return model.inertia[:, _TO_PIN].copy()


def inertial_parameter_names(model):
    """The names of the regressor's columns, '<body>.<parameter>' (e.g. 'link2.Iyy')."""
    return [f"{body}.{p}" for body in model.body_names for p in PARAMETERS]


def joint_torque_regressor(model, q, v, a, threads=None, out=None):
    """Y(q, v, a), nv x 10 n_bodies (or N x nv x 10 n_bodies for a batch) with
    tau = Y @ inertial_parameters(model).ravel() + armature * a: column 10 b + k is the torque that
    parameter k of body b (PARAMETERS order, body b in model.body_names) produces per unit.
    Pinocchio's computeJointTorqueRegressor, with mimic joints folded in (Y = G^T Y_full).
    out: an array of that shape (float64, C-contiguous, writeable) to write Y into and return,
    e.g. reused across batches: fresh memory is slow here (making and filling talos' 10000
    regressors, 1 GB, took 21-30 us a state on this VM, at times ten times more); on an error
    its contents are undefined."""
    if out is None and _plain_state(model, q, v, a):
        Y = np.empty((model.nv, 10 * model.nb))
        if not _REGRESSOR.run(model.packed, q, v, a, -1, Y, _scratch(model, _regressor)):
            return Y
    return _regressor_of(model, -1, q, v, a, threads, out)


def _regressor_of(model, body, q, v, a, threads, out=None):
    """The checked path of the regressor (body < 0) or of one body's ten columns."""
    q = _vector(q, model.nq, "q")
    n = _batch_size(q)
    v = _vector(v, model.nv, "v", n)
    a = _vector(a, model.nv, "a", n)
    shape = q.shape[:-1] + (model.nv, 10 * (model.nb if body < 0 else 1))
    if out is None:
        Y = _fresh(shape)               # the kernel writes every entry, zeros included
    elif not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == np.float64
              and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {shape}, got "
                         + (f"{out.dtype} of shape {out.shape}" if isinstance(out, np.ndarray) else repr(type(out))))
    else:
        Y = out
    status = _run(_regressor, "regressor", model, n, threads, q, v, a, body, Y) if n \
        else _regressor.regressor(model.packed, q, v, a, body, Y, _scratch(model, _regressor))
    _raise_status(model, status, dict(q=q, v=v, a=a))
    return Y


def _run(module, name, model, n, threads, *args):
    return _drive(module, name, model, n, threads, lambda: _scratch(model, module), *args)


def _scratch(model, module):
    """The model's workspace for single-state calls of a kernel module of this file, kept
    beside the dynamics API's buffers (model.workspace, one attribute per module) and made on
    first use."""
    buffers = model.workspace or _workspace(model)
    name = _SCRATCH_NAMES[module]
    W = buffers.__dict__.get(name)
    if W is None:
        W = K.workspace(model.packed, module.WIDTH)
        setattr(buffers, name, W)
    return W


_SCRATCH_NAMES = {_regressor: "scratch_regressor", _momentum: "scratch_momentum"}


# --- base parameters ----------------------------------------------------------------------------
@dataclass(frozen=True)
class BaseParameters:
    """The identifiable combinations of the standard parameters (Gautier and Khalil, 1990).

    theta_base = matrix @ theta (theta = inertial_parameters(model).ravel()), and for every state
    Y @ theta = Y[..., columns] @ theta_base: base parameter i is the standard parameter
    leading[i] (column columns[i] of Y) plus the dependent parameters that regroup into it,
    combinations[i] = {name: coefficient}, written out in names[i]. Y @ null_space = 0: the
    torques cannot see any parameter change in that space."""
    names: list
    leading: list
    combinations: list
    columns: np.ndarray
    matrix: np.ndarray
    null_space: np.ndarray
    parameter_names: list
    #: |R_ii| / |column i| of the QR: the least of the independent columns and the most of the
    #: dependent (non-zero) ones; the rank decision is clear when they are many decades apart
    margin: tuple = field(default=(1.0, 0.0))

    def values(self, theta):
        """theta_base of standard parameters theta ((n_bodies, 10) or flat)."""
        return self.matrix @ np.asarray(theta, float).reshape(-1)

    def regressor(self, model, q, v, a, threads=None):
        """The base regressor Y[..., columns]: tau = Y_base theta_base + armature * a."""
        return joint_torque_regressor(model, q, v, a, threads)[..., self.columns]

    def fit(self, model, q, v, a, tau, threads=None):
        """Least squares of theta_base from measured samples (q (N, nq), v, a, tau (N, nv)):
        (theta_base, RMS residual [N m], condition number of the column-scaled base regressor).
        The model's armature times a is taken off tau first. ValueError naming a malformed input,
        or when the samples do not excite every base parameter (condition number above 1e12)."""
        q, v, a, tau, n = _samples(model, q, v, a, tau)
        if len(self.matrix) and self.matrix.shape[1] != 10 * model.nb:
            raise ValueError(f"these base parameters are of a model with {self.matrix.shape[1] // 10} bodies, "
                             f"not {model.nb}")
        armature = np.r_[np.zeros(model.joint_offset[1]), model.armature]
        A = self.regressor(model, q, v, a, threads).reshape(n * model.nv, -1)
        y = (tau - armature * a).reshape(-1)
        norms = np.linalg.norm(A, axis=0)
        s = np.linalg.svd(A / np.where(norms > 0, norms, 1.0), compute_uv=False)
        cond = float(s[0] / s[-1]) if 0 < len(s) == A.shape[1] and s[-1] > 0 else float("inf")   # fewer rows: inf
        if not cond < 1e12:
            raise ValueError(f"the {n} samples do not excite every base parameter (condition number {cond:.3g}): "
                             "record more, and more varied, states")
        values = np.linalg.lstsq(A / norms, y, rcond=None)[0] / norms
        res = y - A @ values
        return values, float(np.sqrt(res @ res / len(y))), cond


def base_parameters(model, samples=None, seed=0, tol=1e-8):
    """The base parameters of the model (BaseParameters): the regressor is stacked over `samples`
    random states (joints within their limits, velocities and accelerations ~ N(0, 1); default
    enough for five rows per column), its columns scaled to unit norm and factored by QR in
    PARAMETERS order, body after body: column k is dependent when |R_kk| <= tol (the part of it
    that the columns before it do not explain), and then regroups into the independent ones by
    least squares (Gautier, 1991). Zero columns (e.g. the mass of a body whose joint axis goes
    through its origin, seen by nothing) belong to no base parameter. Depends on gravity, not on
    the inertias."""
    from .configuration import random_configuration
    ncol = 10 * model.nb
    n = int(samples) if samples is not None else max(20, -(-5 * ncol // max(model.nv, 1)))
    if n < 1 or model.nv == 0:
        raise ValueError(f"base_parameters needs samples >= 1 and a model with joints (got samples={samples!r}, "
                         f"nv={model.nv})")
    rng = np.random.default_rng(seed)
    q = np.atleast_2d(random_configuration(model, rng, n))
    v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    W = joint_torque_regressor(model, q, v, a).reshape(n * model.nv, ncol)
    norms = np.linalg.norm(W, axis=0)
    live = norms > ZERO_COLUMN * max(norms.max(), np.finfo(float).tiny)
    Ws = W[:, live] / norms[live]
    R = np.linalg.qr(Ws, mode="r")
    ratio = np.zeros(ncol)
    ratio[live] = np.abs(np.diag(R))
    independent = np.flatnonzero(ratio > tol)
    dependent = np.flatnonzero(live & (ratio <= tol))
    # W_dep = W_ind B, solved in the scaled columns (B_s entries of order one), then unscaled
    Bs = np.linalg.lstsq(Ws[:, np.searchsorted(np.flatnonzero(live), independent)],
                         Ws[:, np.searchsorted(np.flatnonzero(live), dependent)], rcond=None)[0]
    B = Bs * norms[dependent] / norms[independent][:, None]
    matrix = np.zeros((len(independent), ncol))
    matrix[np.arange(len(independent)), independent] = 1.0
    matrix[:, dependent] = B
    names = inertial_parameter_names(model)
    # the written combinations leave out terms below 1e-10 of a column (the scaled entries are of
    # order one; rounding noise is ~1e-16): `matrix` keeps them
    combos = [{names[independent[i]]: 1.0, **{names[d]: float(B[i, k]) for k, d in enumerate(dependent)
                                              if abs(Bs[i, k]) > 1e-10}} for i in range(len(independent))]
    _, _, Vt = np.linalg.svd(matrix)
    margin = (float(ratio[independent].min(initial=1.0)), float(ratio[dependent].max(initial=0.0)))
    return BaseParameters([_written(c) for c in combos], [names[i] for i in independent], combos, independent,
                          matrix, Vt[len(independent):].T.copy(), names, margin)


def _written(combination):
    """{name: coefficient} as 'a + 0.5*b - c'."""
    text = ""
    for name, c in combination.items():
        sign = "-" if c < 0 else "+"
        mag = "" if abs(abs(c) - 1.0) < 1e-9 else f"{abs(c):.6g}*"
        text += f" {sign} {mag}{name}" if text else f"{'-' if c < 0 else ''}{mag}{name}"
    return text


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
        out.workspace = None
        add_payload(out, self.link, p["payload.mass"], p["payload.com"], p["payload.inertia"])
        return out


def identify_payload(model, link, q, v, a, tau, rcond=1e-7, threads=None):
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
    residual = tau - inverse_dynamics(model, q, v, a, threads=threads)
    A = _regressor_of(model, body, q, v, a, threads) @ T            # (N, nv, 10), link frame
    if static:
        A = A[..., :4]
    return _payload_fit(link, A.reshape(-1, A.shape[-1]), residual.reshape(-1), n, rcond,
                        "static" if static else "dynamic")


def identify_payload_from_momentum(model, link, q, v, tau, dt, window=20, rcond=1e-7, threads=None):
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
    p0, b0 = _momentum_of(model, model.packed, q, v, threads)
    cols = []                                                        # Y_p, Y_beta per link parameter
    for k in range(10):
        packed = _unit_payload(model, body, T[:, k])
        cols.append(_momentum_of(model, packed, q, v, threads))
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


def _momentum_of(model, packed, q, v, threads):
    """p and beta of every sample for the packed model (the kernels read nothing else)."""
    n = len(q)
    P, B = np.empty((n, model.nv)), np.empty((n, model.nv))
    nthreads = _threads(n, threads)
    if nthreads > 1:
        status = _momentum.momentum_batch(packed, q, v, P, B, nthreads)
    else:
        status = np.zeros(n, np.int64)
        _momentum.momentum_rows(packed, q, v, P, B, status, 0, n, _scratch(model, _momentum))
    _raise_status(model, status, dict(q=q, v=v))
    return P, B


def _samples(model, q, v, a, tau):
    """Samples as 2-D arrays (N rows, one row for 1-D inputs), v = a = None as zeros."""
    q = np.asarray(q, float)
    q = _vector(q[None] if q.ndim == 1 else q, model.nq, "q")
    n = len(q)
    if n == 0:
        raise ValueError("no samples: q has no rows")
    if (v is None) != (a is None):
        raise ValueError("give both v and a, or neither (static samples)")
    if v is None:
        v = a = np.zeros((n, model.nv))
    out = []
    for x, name in ((v, "v"), (a, "a"), (tau, "tau")):
        x = np.asarray(x, float)
        out.append(_vector(x[None] if x.ndim == 1 else x, model.nv, name, n))
        if not np.all(np.isfinite(out[-1])):
            raise ValueError(f"{name} contains NaN or inf")
    return (q, *out, n)


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


# the dynamics API re-exports this module's names, so it is imported last (a cycle otherwise)
from .dynamics import (_Direct, _batch_size, _drive, _fresh, _plain_state, _raise_status, _threads, _vector,  # noqa: E402
                       inverse_dynamics, workspace as _workspace)

_REGRESSOR = _Direct(_regressor.regressor)
