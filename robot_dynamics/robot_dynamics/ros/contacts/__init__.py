"""Contacts for the node (no rclpy): the contacts.* parameters checked against the model,
contact-consistent gravity and feedforward torques, and the ~/constrained_forward_dynamics service;
the part (part.py: Standing) is the law of gravity and feedforward torques while contacts.frames is
set, publishes ~/contact_forces and serves ~/constrained_forward_dynamics.

A floating-base robot standing on its feet is not held by its base: the weight goes through the
contacts, and the joint torques that hold it are those of contact inverse dynamics (Featherstone,
Rigid Body Dynamics Algorithms, ch. 8; for floating-base humanoids, Kajita et al., Introduction to
Humanoid Robotics, ch. 3): tau = ID(q, v, a) - J^T f, with the contact forces f chosen so that the
base needs no actuation (tau's base rows zero), the least-norm such f when several do
(robot_dynamics.constrained). `rd.gravity_torques` instead assumes the base is held in the air, so
each leg carries only its own weight and a standing robot collapses under them.

The node's choices, documented in config/dynamics.yaml and the README:
- contacts.frames empty: no contacts, today's gravity_torques and feedforward.
- contacts need a free-floating root (floating_base: true, or a URDF floating root joint): a fixed
  or planar base is actuated, the contacts would carry nothing, so the parameter is refused.
- at configuration time the contacts must hold the base at the model's neutral configuration
  (a ConstraintError is refused, naming the frames); at run time a measured state where they cannot
  publishes nothing for that message, with a throttled warning.
- feedforward: the reference's joint accelerations (plus feedback) with the base acceleration zero:
  the base is assumed to follow the contacts, i.e. to stay at rest on them (the base velocity, which
  joint_states does not carry, is zero as well).
"""
from dataclasses import dataclass

import numpy as np

from ... import dynamics as rd
from ...constrained import KINDS as SIZES
from ..constraint_requests import KINDS, all_finite, constraint_wrenches, request_contacts, request_loops
from ..messages import RequestState
from ..parameters import ParameterError, ParameterSpec, distinct_names


def _contact_kind(value):
    """contacts.kind: one kind (a string) for every contact, or a non-empty list of kinds; kept as given."""
    if isinstance(value, str):
        if value not in KINDS:
            raise ValueError
        return value
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise TypeError
    unknown = [v for v in value if v not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}")
    return list(value)


PARAMETERS = {
    "contacts.frames": ParameterSpec(
        [], "frames in contact with the world (feet): gravity and feedforward torques share the base's weight "
            "among them (empty: no contacts, the base assumed held)",
        "a list of distinct frame names of a model with a free-floating base", distinct_names),
    "contacts.kind": ParameterSpec(
        ["point"], "contact kind: 'point' (a force at the frame origin) or '6d' (a wrench: a flat foot), one "
                   "for every contact or one per contacts.frames entry",
        f"one of {', '.join(KINDS)}, or a list of them (one per contacts.frames entry)", _contact_kind),
}


def settings(params, config):
    """config.contacts: Contacts, or None without contacts.frames."""
    return {"contacts": build(params, config.model)}


def parts():
    from .part import Standing
    return (Standing,)


@dataclass(frozen=True)
class Contacts:
    """The node's contacts, checked against its model."""
    frames: tuple
    kinds: tuple
    spec: tuple       # ((frame, kind), ...) as the library takes them (a tuple: cached by the library)
    sizes: tuple      # force components of each contact: 3 (point) or 6 (6d)


def _kinds(kinds, n, name, what):
    """A kind or a list of kinds (checked by check_kind) as a list of n; ValueError naming `name`."""
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    if len(kinds) not in (1, n):
        raise ParameterError(name, f"parameter {name} takes one kind for every contact or one per {what} ({n}); "
                                   f"got {len(kinds)} kinds")
    return kinds * n if len(kinds) == 1 else kinds


def floating_root_problem(model):
    """Why contacts cannot share the weight of this model's base, or None (a free-floating root)."""
    root = model.root_joint
    if root is not None and root.kind == "floating":
        return None
    what = "a fixed base" if root is None else f"a {root.kind} root joint {root.name!r}, which counts as actuated"
    return (f"model {model.name!r} has {what}: contact-consistent torques share the weight of a free-floating "
            "base among the contacts, and this base is held by its own joint (set floating_base: true for a "
            "legged robot, or leave contacts.frames empty)")


def _known_frame(model, name):
    try:
        model.frame(name)
    except KeyError:
        return False
    return True


def build(params, model):
    """Checked parameter values -> Contacts, or None when contacts.frames is empty. ParameterError
    naming contacts.frames or contacts.kind: unknown frames, a frame no joint moves, a model without a
    free-floating root, a kind list of the wrong length, contacts that cannot hold the base at the
    model's neutral configuration (origin, upright, every joint at 0)."""
    frames = params["contacts.frames"]
    if not frames:
        return None
    problem = floating_root_problem(model)
    if problem:
        raise ParameterError("contacts.frames", f"parameter contacts.frames: {problem}")
    unknown = [f for f in frames if not _known_frame(model, f)]
    if unknown:
        raise ParameterError("contacts.frames", f"parameter contacts.frames: unknown frames {unknown}; the model's "
                                                f"frames are {model.frame_names}")
    kinds = _kinds(params["contacts.kind"], len(frames), "contacts.kind", "contacts.frames entry")
    spec = tuple(zip(frames, kinds))
    try:
        rd.contact_inverse_dynamics(model, rd.neutral(model), 0, 0, spec)
    except rd.ConstraintError as exc:
        raise ParameterError("contacts.frames", f"parameters contacts.frames {list(frames)} and contacts.kind "
                                                f"{kinds}: {exc} (checked at the model's neutral configuration)") from None
    return Contacts(tuple(frames), tuple(kinds), spec, tuple(SIZES[k] for k in kinds))


def gravity(model, q, contacts):
    """Contact-consistent gravity torques at rest and the contact forces: (tau over v with zero
    base rows, forces stacked per contact). ConstraintError if the contacts cannot hold the base."""
    return rd.contact_inverse_dynamics(model, q, 0, 0, contacts.spec)


def feedforward(model, contacts, q, v, q_d, v_d, a_d, kp, kd, evaluate_at):
    """The computed torque of control.computed_torque with the contacts: the acceleration
    a_d + kp (q_d - q) + kd (v_d - v) with the base's part zero (the base is assumed to stay at rest
    on its contacts), then contact inverse dynamics at (q_e, v_e) instead of RNEA. kp and kd: arrays
    over v (config.Config's). (tau, forces); ConstraintError if the contacts cannot hold the base."""
    a = np.array(a_d, dtype=float)
    if kp.any() or kd.any():
        a += kp * rd.difference(model, q, q_d) + kd * (np.asarray(v_d, float) - np.asarray(v, float))
    a[:model.root_joint.nv] = 0.0
    q_e, v_e = (q_d, v_d) if evaluate_at == "desired" else (q, v)
    return rd.contact_inverse_dynamics(model, q_e, v_e, a, contacts.spec)


def constrained_forward_dynamics(model, req, res, node_contacts, wrench_type):
    """~/constrained_forward_dynamics: accelerations and constraint wrenches for the request's
    state and efforts with its constraints (or the node's contacts); wrench_type makes a LinkWrench."""
    contacts, loops = request_contacts(model, req, node_contacts), request_loops(model, req)
    if not contacts and not loops:
        raise ValueError("no constraints: give contact_frames (and contact_kinds) or loops, or set the node's "
                         "contacts.frames (for dynamics without constraints: ~/forward_dynamics)")
    gains = np.array([req.baumgarte_kp, req.baumgarte_kd], dtype=float)
    if not np.all(np.isfinite(gains)) or np.any(gains < 0):
        raise ValueError(f"baumgarte_kp and baumgarte_kd take finite numbers >= 0; got {req.baumgarte_kp!r}, "
                         f"{req.baumgarte_kd!r}")
    rs = RequestState(model, req.joint_names)
    q = rs.q(req.positions, req.base_pose)
    v = rs.v(req.velocities, "velocities", req.base_twist)
    tau = rs.v(req.efforts, "efforts")
    qdd, forces = rd.constrained_forward_dynamics(model, q, v, tau, contacts, loops, gains if gains.any() else None)
    if not (all_finite(qdd) and all_finite(forces)):
        raise ValueError("the accelerations or constraint forces computed are not finite (the request's values "
                         "are too large)")
    res.joint_names, res.accelerations = rs.names, rs.out(qdd)
    rs.set_base(res.base_acceleration, qdd)
    res.constraint_wrenches = constraint_wrenches(contacts, loops, forces, wrench_type)
