"""What the joint torques say about the robot's inertia: the joint torque regressor and the base
(identifiable) parameters. Payload identification builds on it (identification.py).

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
"""
from dataclasses import dataclass, field

import numpy as np

from .calling import Kernel, batch_size, call, output, plain_data, vector
from .configuration import random_configuration
from .kernels import regressor as _regressor

# the facade's names; the rest serve sibling modules and tests
__all__ = ["PARAMETERS", "BaseParameters", "base_parameters", "inertial_parameter_names", "inertial_parameters",
           "joint_torque_regressor"]

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


def joint_torque_regressor(model, q, v, a, threads=None, out=None, data=None):
    """Y(q, v, a), nv x 10 n_bodies (or N x nv x 10 n_bodies for a batch) with
    tau = Y @ inertial_parameters(model).ravel() + armature * a: column 10 b + k is the torque that
    parameter k of body b (PARAMETERS order, body b in model.body_names) produces per unit.
    Pinocchio's computeJointTorqueRegressor, with mimic joints folded in (Y = G^T Y_full).
    out: an array of that shape (float64, C-contiguous, writeable) to write Y into and return,
    e.g. reused across batches: fresh memory is slow here (making and filling talos' 10000
    regressors, 1 GB, took 21-30 us a state on this VM, at times ten times more); on an error
    its contents are undefined."""
    d = plain_data(model, data, q, v, a)
    if d is not None and out is None:
        Y = np.empty((model.nv, 10 * model.nb))
        if not _REGRESSOR.run(model.packed, q, v, a, -1, Y, d.regressor):
            return Y
    return _regressor_of(model, -1, q, v, a, threads, out, data)


def _regressor_of(model, body, q, v, a, threads, out=None, data=None):
    """The checked path of the regressor (body < 0) or of one body's ten columns."""
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    a = vector(a, model.nv, "a", n)
    shape = q.shape[:-1] + (model.nv, 10 * (model.nb if body < 0 else 1))
    Y = output(out, shape)             # the kernel writes every entry, zeros included
    call(_REGRESSOR, model, data, threads, n, (q, v, a, body, Y), dict(q=q, v=v, a=a))
    return Y


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

    def regressor(self, model, q, v, a, threads=None, data=None):
        """The base regressor Y[..., columns]: tau = Y_base theta_base + armature * a."""
        return joint_torque_regressor(model, q, v, a, threads, data=data)[..., self.columns]

    def fit(self, model, q, v, a, tau, threads=None, data=None):
        """Least squares of theta_base from measured samples (q (N, nq), v, a, tau (N, nv)):
        (theta_base, RMS residual [N m], condition number of the column-scaled base regressor).
        The model's armature times a is taken off tau first. ValueError naming a malformed input,
        or when the samples do not excite every base parameter (condition number above 1e12)."""
        q, v, a, tau, n = _samples(model, q, v, a, tau)
        if len(self.matrix) and self.matrix.shape[1] != 10 * model.nb:
            raise ValueError(f"these base parameters are of a model with {self.matrix.shape[1] // 10} bodies, "
                             f"not {model.nb}")
        armature = np.r_[np.zeros(model.joint_offset[1]), model.armature]
        A = self.regressor(model, q, v, a, threads, data).reshape(n * model.nv, -1)
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


def base_parameters(model, samples=None, seed=0, tol=1e-8, data=None):
    """The base parameters of the model (BaseParameters): the regressor is stacked over `samples`
    random states (joints within their limits, velocities and accelerations ~ N(0, 1); default
    enough for five rows per column), its columns scaled to unit norm and factored by QR in
    PARAMETERS order, body after body: column k is dependent when |R_kk| <= tol (the part of it
    that the columns before it do not explain), and then regroups into the independent ones by
    least squares (Gautier, 1991). Zero columns (e.g. the mass of a body whose joint axis goes
    through its origin, seen by nothing) belong to no base parameter. Depends on gravity, not on
    the inertias."""
    ncol = 10 * model.nb
    n = int(samples) if samples is not None else max(20, -(-5 * ncol // max(model.nv, 1)))
    if n < 1 or model.nv == 0:
        raise ValueError(f"base_parameters needs samples >= 1 and a model with joints (got samples={samples!r}, "
                         f"nv={model.nv})")
    rng = np.random.default_rng(seed)
    q = np.atleast_2d(random_configuration(model, rng, n))
    v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    W = joint_torque_regressor(model, q, v, a, data=data).reshape(n * model.nv, ncol)
    return base_of_regressor(W, inertial_parameter_names(model), tol)


def base_of_regressor(W, names, tol=1e-8):
    """BaseParameters of a stacked regressor W (a row per equation, a column per parameter,
    named by `names`), as base_parameters finds them: e.g. of the inertial regressor with
    friction and armature columns beside it (dynamic_identification)."""
    ncol = W.shape[1]
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



def _samples(model, q, v, a, tau):
    """Samples as 2-D arrays (N rows, one row for 1-D inputs), v = a = None as zeros."""
    q = np.asarray(q, float)
    q = vector(q[None] if q.ndim == 1 else q, model.nq, "q")
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
        out.append(vector(x[None] if x.ndim == 1 else x, model.nv, name, n))
        if not np.all(np.isfinite(out[-1])):
            raise ValueError(f"{name} contains NaN or inf")
    return (q, *out, n)


_REGRESSOR = Kernel(_regressor, "regressor")
