"""Analytic derivatives of inverse and forward dynamics (Carpentier and Mansard 2018, Analytical
derivatives of rigid body dynamics algorithms, RSS): NumPy in and out, one state (1-D arrays) or
a batch (2-D, a row per state), as in dynamics.py.

With respect to q the derivatives are taken in the tangent space, as Pinocchio's
computeRNEADerivatives and computeABADerivatives take them: column k is the derivative along
q (+) h e_k (`integrate`: a free flyer's and a planar joint's increments in their child frame), so
every matrix is nv x nv, free flyers, planar joints and quaternions included. Mimic joints follow
their leader: the matrices are G^T (.) G of the full model's (v_full = G v).
"""
import numpy as np

from . import calling as _call
from .kernels import aba_derivatives as _aba_d
from .kernels import rnea_derivatives as _rnea_d

_RNEA_D, _ABA_D = _call.Kernel(_rnea_d, "rnea_derivatives"), _call.Kernel(_aba_d, "aba_derivatives")


def _outputs(out, shape):
    """Three fresh arrays of `shape`, or `out` checked: three distinct C-contiguous, writeable
    float64 arrays of that shape (a batch into reused memory skips the cost of fresh pages)."""
    if out is None:
        return _call.fresh(shape), _call.fresh(shape), _call.fresh(shape)
    ok = isinstance(out, (tuple, list)) and len(out) == 3 and all(
        type(x) is np.ndarray and x.shape == shape and x.dtype == np.float64 and x.flags.c_contiguous
        and x.flags.writeable for x in out)
    if not ok or any(np.may_share_memory(out[i], out[j]) for i, j in ((0, 1), (0, 2), (1, 2))):
        raise ValueError(f"out must be three distinct C-contiguous, writeable float64 arrays of shape {shape}")
    return tuple(out)


def _derivatives(kernel, model, q, v, x, xname, threads, out, data):
    nv = model.nv
    d = _call.plain_data(model, data, q, v, x)
    if d is not None:
        result = _outputs(out, (nv, nv))
        if not kernel.run(model.packed, q, v, x, *result, getattr(d, kernel.scratch)):
            return result
    q = _call.vector(q, model.nq, "q")
    n = _call.batch_size(q)
    v = _call.vector(v, nv, "v", n)
    x = _call.vector(x, nv, xname, n)
    result = _outputs(out, q.shape[:-1] + (nv, nv))
    _call.call(kernel, model, data, threads, n, (q, v, x, *result), {"q": q, "v": v, xname: x})
    return result


def inverse_dynamics_derivatives(model, q, v, a, threads=None, out=None, data=None):
    """(d tau / dq, d tau / dv, M) of tau = ID(q, v, a) = M a + C v + g, each nv x nv (N x nv x nv
    for a batch): d tau / dq in the tangent space (see the module docstring), d tau / da = M (with
    armature). Recursive (Carpentier and Mansard 2018), one pass over the tree and one over pairs
    of coordinates, not finite differences. ValueError naming the input for NaN or inf, a
    quaternion that is not unit or a wrong shape. out: three arrays to fill and return instead of
    fresh ones (for batches: fresh memory is much of a large batch's cost)."""
    return _derivatives(_RNEA_D, model, q, v, a, "a", threads, out, data)


def forward_dynamics_derivatives(model, q, v, tau, threads=None, out=None, data=None):
    """(d qdd / dq, d qdd / dv, M^-1) of qdd = FD(q, v, tau), each nv x nv (N x nv x nv for a
    batch), d qdd / dq in the tangent space. As Pinocchio's computeABADerivatives: at that qdd,
    d qdd / dq = -M^-1 d tau / dq and d qdd / dv = -M^-1 d tau / dv (differentiate ID(q, v, qdd) =
    tau), with M = L^T D L factored keeping the tree's sparsity (Featherstone, RBDA 6.5).
    SingularMassMatrixError where M is not positive definite. out: as inverse_dynamics_derivatives."""
    return _derivatives(_ABA_D, model, q, v, tau, "tau", threads, out, data)
