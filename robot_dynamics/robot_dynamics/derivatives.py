"""Analytic derivatives of inverse, forward and hybrid dynamics (Carpentier and Mansard 2018, Analytical
derivatives of rigid body dynamics algorithms, RSS; J. Kim, Lie Group Formulation of Articulated Rigid
Body Dynamics, section 4, the hybrid case): NumPy in and out, one state (1-D arrays) or a batch (2-D,
a row per state), as in dynamics.py.

With respect to q the derivatives are taken in the tangent space, as Pinocchio's
computeRNEADerivatives and computeABADerivatives take them: column k is the derivative along
q (+) h e_k (`integrate`: a free flyer's and a planar joint's increments in their child frame), so
every matrix is nv x nv, free flyers, planar joints and quaternions included. Mimic joints follow
their leader: the matrices are G^T (.) G of the full model's (v_full = G v).
"""
import numpy as np

from . import calling as _call
from .rigid_body import hybrid_dynamics
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


def hybrid_dynamics_derivatives(model, q, v, acceleration_known, qdd, tau, threads=None, data=None):
    """(d qdd / dq, d qdd / dv, d qdd / du, d tau / dq, d tau / dv, d tau / du) of the complete qdd
    and tau that hybrid_dynamics returns, each nv x nv (N x nv x nv for a batch; the mask one per
    state or one for all, as hybrid_dynamics), with u = where(acceleration_known, qdd, tau), each
    coordinate's given input; d / dq in the tangent space (see the module docstring).

    Kim's recursive method for the hybrid case (section 4): differentiating the recursion that
    solves M qdd + b = tau with qdd_K given and tau_U given (K known, U unknown) gives the
    inverse-dynamics partials at the complete qdd, ID_q and ID_v (`inverse_dynamics_derivatives`,
    recursive), with the unknown rows solved through the articulated inertia of the unknown joints,
    which is the block M_UU (the hybrid recursion with the known joints locked factors M_UU):

        d qdd_U = M_UU^-1 (d u_U - ID_U d(q, v) - M_UK d u_K),   d qdd_K = d u_K
        d tau_K = ID_K d(q, v) + M_K d qdd,                      d tau_U = d u_U

    M_UU is factored once by Cholesky (no inverse, no finite differences). With every coordinate
    known this is (0, 0, 1, d tau / dq, d tau / dv, M) of inverse dynamics; with none, (d qdd / dq,
    d qdd / dv, M^-1, 0, 0, 1) of forward dynamics. SingularMassMatrixError where M_UU is not
    positive definite."""
    nv = model.nv
    qdd, tau = hybrid_dynamics(model, q, v, acceleration_known, qdd, tau, threads=threads, data=data)
    q = _call.vector(q, model.nq, "q")
    v = _call.vector(v, nv, "v", _call.batch_size(q))
    dq, dv, M = inverse_dynamics_derivatives(model, q, v, qdd, threads, data=data)
    known = np.asarray(acceleration_known)
    if qdd.ndim == 1:
        return _hybrid_partials(model, known, dq, dv, M)
    out = tuple(_call.fresh(dq.shape) for _ in range(6))
    masks = np.broadcast_to(known, qdd.shape)
    unique, group = np.unique(masks, axis=0, return_inverse=True)
    for g, mask in enumerate(unique):
        rows = np.flatnonzero(group.reshape(-1) == g)
        for x, y in zip(out, _hybrid_partials(model, mask, dq[rows], dv[rows], M[rows], rows)):
            x[rows] = y
    return out


def _hybrid_partials(model, known, dq, dv, M, rows=None):
    """The six derivatives of states sharing one mask `known` from their ID_q, ID_v and M (a leading
    batch axis or none): the equations of hybrid_dynamics_derivatives."""
    nv = model.nv
    U, K = np.flatnonzero(~known), np.flatnonzero(known)
    eye = np.eye(nv)
    lead = dq.shape[:-2]
    dqdd_dq, dqdd_dv, dqdd_du = np.zeros(dq.shape), np.zeros(dq.shape), np.zeros(dq.shape)
    dqdd_du[..., K, :] = eye[K]
    if len(U):
        MU = M[..., U, :]
        rhs = np.concatenate((-dq[..., U, :], -dv[..., U, :], eye[U] - MU * known), -1)
        x = _call.solve_spd(model, MU[..., U], rhs, U, rows)
        dqdd_dq[..., U, :], dqdd_dv[..., U, :], dqdd_du[..., U, :] = x[..., :nv], x[..., nv:2 * nv], x[..., 2 * nv:]
    dtau_dq, dtau_dv, dtau_du = np.zeros(dq.shape), np.zeros(dq.shape), np.zeros(lead + (nv, nv))
    dtau_du[..., U, :] = eye[U]
    if len(K):
        MKU = M[..., K, :][..., U]
        dtau_dq[..., K, :] = dq[..., K, :] + MKU @ dqdd_dq[..., U, :]
        dtau_dv[..., K, :] = dv[..., K, :] + MKU @ dqdd_dv[..., U, :]
        dtau_du[..., K, :] = M[..., K, :] @ dqdd_du
    return dqdd_dq, dqdd_dv, dqdd_du, dtau_dq, dtau_dv, dtau_du
