"""The robot's centre of mass, momentum and energy: NumPy in, NumPy out, one state (1-D arrays) or a
batch (2-D, a row per state), as in dynamics.py (Kajita et al., Introduction to Humanoid Robotics,
ch. 3: momentum, angular momentum and the centre of mass; ch. 6 uses them to simulate).

    center_of_mass(model, q)                  c (3,), world
    center_of_mass_jacobian(model, q)         J_com (3 x nv): cdot = J_com v
    centroidal_momentum(model, q, v)          h_G (6,) [linear; angular] about c, world axes
    centroidal_momentum_matrix(model, q)      A_G (6 x nv): h_G = A_G v (Orin and Goswami, 2008)
    centroidal_state(model, q, v)             (c, cdot, h_G) in one pass: what a balance controller reads
    kinetic_energy(model, q, v)               1/2 v^T M v (armature included)
    potential_energy(model, q)                -sum m_i g . c_i (g the model's gravity: m g z for g = -9.81 e_z)

As Pinocchio's centerOfMass, jacobianCenterOfMass, computeCentroidalMomentum, ccrba,
computeKineticEnergy and computePotentialEnergy define them; the world-fixed root link of a
fixed-base robot is no body and its mass is not counted (Pinocchio's universe). h_G's linear
part is m cdot. Mimic joints follow their leader (columns of A_G and J_com: G^T of the full
model's). Functions that need the centre of mass raise ValueError for a model without mass.
"""
import numpy as np

from .calling import Kernel, batch_size, call, output, plain_data, raise_status, vector
from .kernels import centroidal as _centroidal

_COM, _JCOM = Kernel(_centroidal, "center_of_mass"), Kernel(_centroidal, "com_jacobian")
_AG, _STATE = Kernel(_centroidal, "centroidal_matrix"), Kernel(_centroidal, "centroidal")
_PE = Kernel(_centroidal, "potential_energy")
_H, _T = slice(_centroidal.OUT_H, _centroidal.OUT_H + 6), _centroidal.OUT_T
_MASSLESS = _centroidal.MASSLESS


def _massless(model, status, inputs):
    """raise_status, after the one status of these kernels that is not about the inputs."""
    if np.any(np.asarray(status) == _MASSLESS):
        raise ValueError(f"the model {model.name!r} has no mass (a fixed root link's is not counted): "
                         "it has no centre of mass")
    raise_status(model, status, inputs)


def _energy(model, status, inputs):
    """raise_status for the kinetic energy: a massless model has none (zero), which is no error."""
    raise_status(model, np.where(np.asarray(status) == _MASSLESS, 0, status), inputs)


def _of_q(kernel, model, q, shape, threads, data, out=None, error=_massless):
    """The checked path of a kernel of q alone: its output of `shape` per state (fresh, or `out`)."""
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    x = output(out, q.shape[:-1] + shape)
    call(kernel, model, data, threads, n, (q, x), dict(q=q), error=error)
    return x


def center_of_mass(model, q, threads=None, data=None):
    """The centre of mass of the robot's bodies in the world, (3,) or (N, 3)."""
    d = plain_data(model, data, q)
    if d is not None:
        c = np.empty(3)
        if not _COM.run(model.packed, q, c, d.centroidal):
            return c
    return _of_q(_COM, model, q, (3,), threads, data)


def center_of_mass_jacobian(model, q, threads=None, out=None, data=None):
    """J_com (3 x nv, or N x 3 x nv), cdot = J_com v: the bodies' mass-weighted linear Jacobians at
    their centres of mass over the total mass (Pinocchio's jacobianCenterOfMass). out: an array to
    fill and return instead of a fresh one."""
    d = plain_data(model, data, q)
    if d is not None and out is None:
        J = np.empty(d.three_nv)
        if not _JCOM.run(model.packed, q, J, d.centroidal):
            return J
    return _of_q(_JCOM, model, q, (3, model.nv), threads, data, out)


def centroidal_momentum_matrix(model, q, threads=None, out=None, data=None):
    """A_G (6 x nv, or N x 6 x nv), h_G = A_G v: the centroidal momentum matrix of Orin and Goswami
    (IROS 2008; Pinocchio's ccrba), rows [linear; angular] about the centre of mass in world axes.
    Column k is the momentum of the bodies that coordinate k moves, at unit speed. out: as
    center_of_mass_jacobian."""
    d = plain_data(model, data, q)
    if d is not None and out is None:
        A = np.empty(d.six_nv)
        if not _AG.run(model.packed, q, A, d.centroidal):
            return A
    return _of_q(_AG, model, q, (6, model.nv), threads, data, out)


def _state(model, q, v, threads, data, error=_massless):
    """The centroidal kernel's output rows (13,) or (N, 13): c, cdot, h_G, kinetic energy."""
    d = plain_data(model, data, q, v)
    if d is not None:
        out = np.empty(_centroidal.OUT_LEN)
        if not _STATE.run(model.packed, q, v, out, d.centroidal):
            return out
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    out = np.empty(q.shape[:-1] + (_centroidal.OUT_LEN,))
    call(_STATE, model, data, threads, n, (q, v, out), dict(q=q, v=v), error=error)
    return out


def centroidal_momentum(model, q, v, threads=None, data=None):
    """h_G (6,) or (N, 6): the robot's momentum [linear; angular] about its centre of mass, world
    axes (Pinocchio's computeCentroidalMomentum); the linear part is m cdot."""
    out = _state(model, q, v, threads, data)
    return out[_H] if out.ndim == 1 else np.ascontiguousarray(out[:, _H])


def centroidal_state(model, q, v, threads=None, data=None):
    """(c, cdot, h_G): the centre of mass, its velocity (world) and the centroidal momentum, from one
    pass over the bodies (the cost of one centroidal_momentum). Views into one array for one state."""
    out = _state(model, q, v, threads, data)
    if out.ndim == 1:
        return out[0:3], out[3:6], out[_H]
    return tuple(np.ascontiguousarray(out[:, k]) for k in (slice(0, 3), slice(3, 6), _H))


def kinetic_energy(model, q, v, threads=None, data=None):
    """1/2 v^T M(q) v, armature included (Pinocchio's computeKineticEnergy): a float, or (N,)."""
    out = _state(model, q, v, threads, data, error=_energy)
    return float(out[_T]) if out.ndim == 1 else out[:, _T].copy()


def potential_energy(model, q, threads=None, data=None):
    """-sum_i m_i g . c_i with g the model's gravity (Pinocchio's computePotentialEnergy: m g z for
    gravity -g e_z, zero at z = 0): a float, or (N,)."""
    d = plain_data(model, data, q)
    if d is not None:
        e = np.empty(1)
        if not _PE.run(model.packed, q, e, d.centroidal):
            return float(e[0])
    e = _of_q(_PE, model, q, (1,), threads, data, error=raise_status)
    return float(e[0]) if e.ndim == 1 else e[:, 0].copy()
