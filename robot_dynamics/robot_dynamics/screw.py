"""Screw axes and the product of exponentials (Lynch and Park, Modern Robotics, ch. 4; J. Kim, Lie
group formulation of articulated rigid body dynamics, section 1). Re-exported by `dynamics`
(`rd.screw_axes`).

    axes = rd.screw_axes(model, "tool0")           # at the neutral configuration
    axes.M, axes.S, axes.B                         # 4x4, 6 x nv (space form), 6 x nv (body form)
    axes.placement(q) == rd.frame_placement(model, q, "tool0")

For the joints on the chain to the frame, taken from the base to the frame (`axes.chain`):
    T(q) = exp6(S_1 dq_1) ... exp6(S_n dq_n) M = M exp6(B_1 dq_1) ... exp6(B_n dq_n),
dq = q - q_ref, S_i the joint's screw axis in the world at q_ref ([linear; angular]: [-w x r + h w; w]
for a revolute joint through r along w, [v; 0] for a prismatic one; Lynch and Park write [w; v])
and B_i = Ad(M^-1) S_i. S is the space Jacobian at q_ref (`frame_jacobian(..., "world")`), B the
body Jacobian (`"local"`); the columns of joints off the chain are zero. One-coordinate joints only:
a floating or planar joint on the chain, or a coordinate that moves two joints of the chain (a
joint and its mimic), has no single screw axis and is refused by name.
"""
from typing import NamedTuple

import numpy as np

from .configuration import neutral
from .lie import Ad, exp6, inverse
from .rigid_body import frame_jacobian, frame_placement


class ScrewAxes(NamedTuple):
    """The product-of-exponentials description of a frame (see the module docstring)."""
    M: np.ndarray        #: (4, 4): the frame's world placement at q_ref
    S: np.ndarray        #: (6, nv): screw axes in the world (space form), [linear; angular]
    B: np.ndarray        #: (6, nv): screw axes in the frame at q_ref (body form)
    q_ref: np.ndarray    #: (nq,): the reference configuration
    chain: tuple         #: the v indices of the chain's coordinates, from the base to the frame

    def placement(self, q, form="space"):
        """T(q) by the product of exponentials, in space or body form; q one configuration or a
        batch (N, nq)."""
        q = np.asarray(q, dtype=float)
        if q.shape[-1:] != self.q_ref.shape or q.ndim > 2:
            raise ValueError(f"q must have shape {self.q_ref.shape} or (N, {len(self.q_ref)}), got shape {q.shape}")
        dq = q - self.q_ref     # one-coordinate joints only: v index k is q index k + (nq - nv)
        shift = len(self.q_ref) - self.S.shape[1]
        if form not in ("space", "body"):
            raise ValueError(f"form must be 'space' or 'body', got {form!r}")
        T = np.broadcast_to(np.eye(4), q.shape[:-1] + (4, 4)).copy()
        axes = self.S if form == "space" else self.B
        for k in self.chain:
            T = T @ exp6(axes[:, k] * dq[..., k + shift, None])
        return T @ self.M if form == "space" else self.M @ T

    def space_jacobian(self, q):
        """J_s(q), column i = Ad(exp6(S_1 dq_1) ... exp6(S_i-1 dq_i-1)) S_i (Lynch and Park, eq. 5.11):
        equals frame_jacobian(model, q, frame, "world")."""
        q = np.asarray(q, dtype=float)
        if q.shape != self.q_ref.shape:
            raise ValueError(f"q must have shape {self.q_ref.shape}, got shape {q.shape}")
        dq, shift = q - self.q_ref, len(self.q_ref) - self.S.shape[1]
        J, T = np.zeros(self.S.shape), np.eye(4)
        for k in self.chain:
            J[:, k] = Ad(T) @ self.S[:, k]
            T = T @ exp6(self.S[:, k] * dq[k + shift])
        return J


def screw_axes(model, frame, q_ref=None, data=None):
    """ScrewAxes (M, S, B, q_ref, chain) of a frame at q_ref (default: the neutral configuration).
    ValueError naming the joint if a floating or planar joint, or a coordinate that moves two
    joints (a mimic pair), lies on the chain to the frame."""
    q_ref = neutral(model) if q_ref is None else np.array(q_ref, dtype=float)
    if q_ref.shape != (model.nq,) or not np.all(np.isfinite(q_ref)):
        raise ValueError(f"q_ref must be {model.nq} finite numbers, got {q_ref!r}")
    bodies, body = [], model.frame(frame).body
    while body >= 0:
        bodies.insert(0, body)
        body = int(model.parent[body])
    for b in bodies:
        if model.body_joint_kinds[b] in ("floating", "planar"):
            raise ValueError(f"screw_axes: joint {model.body_joint_names[b]!r} ({model.body_joint_kinds[b]}) on the "
                             f"chain to frame {frame!r} has several coordinates and no single screw axis "
                             "(one-coordinate joints only)")
    chain, owner = [], {}
    for b in bodies:
        k, name = int(model.v_source[model.idx_v[b]]), model.body_joint_names[b]
        if k in owner:
            raise ValueError(f"screw_axes: joints {owner[k]!r} and {name!r} on the chain to frame {frame!r} are "
                             "moved by one coordinate (mimic): no single screw axis per coordinate")
        owner[k] = name
        chain.append(k)
    M = frame_placement(model, q_ref, frame, data=data)
    S = frame_jacobian(model, q_ref, frame, "world", data=data)
    B = Ad(inverse(M)) @ S
    return ScrewAxes(M, S, B, q_ref, tuple(chain))
