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

from .calling import F64, Direct, batch_size, drive, output, raise_status, vector, workspace
from .kernels import centroidal as _centroidal

_COM, _JCOM = Direct(_centroidal.center_of_mass), Direct(_centroidal.com_jacobian)
_AG, _STATE, _PE = Direct(_centroidal.centroidal_matrix), Direct(_centroidal.centroidal), Direct(_centroidal.potential_energy)
_H, _T = slice(_centroidal.OUT_H, _centroidal.OUT_H + 6), _centroidal.OUT_T
_MASSLESS = _centroidal.MASSLESS
_UNIT, _OUT_LEN, _empty = (8,), _centroidal.OUT_LEN, np.empty


class _Scratch:
    """This module's single-state buffers for one model: the kernels' workspace, the model's packed
    array (updated in place when the model changes) and the output shapes. Kept as the attribute
    `centroidal` of the model's calling.Workspace, which the fast paths read in a try block: one
    attribute lookup, the input checks written out (an object without dtype is no array: the general
    path), the lengths left to the kernels. A dict lookup, tuples built, function calls and isinstance
    checks cost ~0.25 us of a ~0.8 us call."""

    def __init__(self, model):
        self.W = _centroidal.placements_workspace(model.packed)
        self.packed = model.packed
        self.jacobian, self.matrix = (3, model.nv), (6, model.nv)


def _buffers(model):
    """The model's _Scratch, made on first use."""
    s = model.workspace or workspace(model)
    if not isinstance(getattr(s, "centroidal", None), _Scratch):
        s.centroidal = _Scratch(model)
    return s.centroidal


def _scratch(model):
    return _buffers(model).W


def _run(name, model, n, threads, *args):
    """Kernel `name` over a batch (calling.drive) with this module's single-state workspace on one thread."""
    return drive(_centroidal, name, model, n, threads, lambda: _scratch(model), *args)


def _check(model, status, inputs, massless_ok=False):
    """raise_status, after the one status of these kernels that is not about the inputs."""
    if not massless_ok and np.any(np.asarray(status) == _MASSLESS):
        raise ValueError(f"the model {model.name!r} has no mass (a fixed root link's is not counted): "
                         "it has no centre of mass")
    raise_status(model, np.where(np.asarray(status) == _MASSLESS, 0, status) if massless_ok else status, inputs)


def center_of_mass(model, q, threads=None):
    """The centre of mass of the robot's bodies in the world, (3,) or (N, 3)."""
    try:        # the fast path (see _Scratch); AttributeError: no workspace yet, or q is no array
        b = model.workspace.centroidal
        if q.dtype is F64 and q.strides == _UNIT:
            c = _empty(3)
            if not _COM.run(b.packed, q, c, b.W):
                return c
    except AttributeError:
        pass
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    c = np.empty(q.shape[:-1] + (3,))
    status = _run("center_of_mass", model, n, threads, q, c) if n \
        else _centroidal.center_of_mass(model.packed, q, c, _scratch(model))
    _check(model, status, dict(q=q))
    return c


def center_of_mass_jacobian(model, q, threads=None, out=None):
    """J_com (3 x nv, or N x 3 x nv), cdot = J_com v: the bodies' mass-weighted linear Jacobians at
    their centres of mass over the total mass (Pinocchio's jacobianCenterOfMass). out: an array to
    fill and return instead of a fresh one."""
    try:
        b = model.workspace.centroidal
        if out is None and q.dtype is F64 and q.strides == _UNIT:
            J = _empty(b.jacobian)
            if not _JCOM.run(b.packed, q, J, b.W):
                return J
    except AttributeError:
        pass
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    J = output(out, q.shape[:-1] + (3, model.nv))
    status = _run("com_jacobian", model, n, threads, q, J) if n \
        else _centroidal.com_jacobian(model.packed, q, J, _scratch(model))
    _check(model, status, dict(q=q))
    return J


def centroidal_momentum_matrix(model, q, threads=None, out=None):
    """A_G (6 x nv, or N x 6 x nv), h_G = A_G v: the centroidal momentum matrix of Orin and Goswami
    (IROS 2008; Pinocchio's ccrba), rows [linear; angular] about the centre of mass in world axes.
    Column k is the momentum of the bodies that coordinate k moves, at unit speed. out: as
    center_of_mass_jacobian."""
    try:
        b = model.workspace.centroidal
        if out is None and q.dtype is F64 and q.strides == _UNIT:
            A = _empty(b.matrix)
            if not _AG.run(b.packed, q, A, b.W):
                return A
    except AttributeError:
        pass
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    A = output(out, q.shape[:-1] + (6, model.nv))
    status = _run("centroidal_matrix", model, n, threads, q, A) if n \
        else _centroidal.centroidal_matrix(model.packed, q, A, _scratch(model))
    _check(model, status, dict(q=q))
    return A


def _state(model, q, v, threads, massless_ok=False):
    """The centroidal kernel's output rows (13,) or (N, 13): c, cdot, h_G, kinetic energy."""
    try:
        b = model.workspace.centroidal
        if q.dtype is F64 and q.strides == _UNIT and v.dtype is F64 and v.strides == _UNIT:
            out = _empty(_OUT_LEN)
            if not _STATE.run(b.packed, q, v, out, b.W):
                return out
    except AttributeError:
        pass
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    out = np.empty(q.shape[:-1] + (_centroidal.OUT_LEN,))
    status = _run("centroidal", model, n, threads, q, v, out) if n \
        else _centroidal.centroidal(model.packed, q, v, out, _scratch(model))
    _check(model, status, dict(q=q, v=v), massless_ok)
    return out


def centroidal_momentum(model, q, v, threads=None):
    """h_G (6,) or (N, 6): the robot's momentum [linear; angular] about its centre of mass, world
    axes (Pinocchio's computeCentroidalMomentum); the linear part is m cdot."""
    out = _state(model, q, v, threads)
    return out[_H] if out.ndim == 1 else np.ascontiguousarray(out[:, _H])


def centroidal_state(model, q, v, threads=None):
    """(c, cdot, h_G): the centre of mass, its velocity (world) and the centroidal momentum, from one
    pass over the bodies (the cost of one centroidal_momentum). Views into one array for one state."""
    out = _state(model, q, v, threads)
    if out.ndim == 1:
        return out[0:3], out[3:6], out[_H]
    return tuple(np.ascontiguousarray(out[:, k]) for k in (slice(0, 3), slice(3, 6), _H))


def kinetic_energy(model, q, v, threads=None):
    """1/2 v^T M(q) v, armature included (Pinocchio's computeKineticEnergy): a float, or (N,)."""
    out = _state(model, q, v, threads, massless_ok=True)
    return float(out[_T]) if out.ndim == 1 else out[:, _T].copy()


def potential_energy(model, q, threads=None):
    """-sum_i m_i g . c_i with g the model's gravity (Pinocchio's computePotentialEnergy: m g z for
    gravity -g e_z, zero at z = 0): a float, or (N,)."""
    try:
        b = model.workspace.centroidal
        if q.dtype is F64 and q.strides == _UNIT:
            e = _empty(1)
            if not _PE.run(b.packed, q, e, b.W):
                return float(e[0])
    except AttributeError:
        pass
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    e = np.empty(q.shape[:-1] + (1,))
    status = _run("potential_energy", model, n, threads, q, e) if n \
        else _centroidal.potential_energy(model.packed, q, e, _scratch(model))
    raise_status(model, status, dict(q=q))
    return float(e[0]) if e.ndim == 1 else e[:, 0].copy()
