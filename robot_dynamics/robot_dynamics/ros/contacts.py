"""Contacts for the node (no rclpy): the contacts.* parameters checked against the model,
contact-consistent gravity and feedforward torques, the ~/constrained_forward_dynamics service and
the ~/contact_forces message.

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
import math
from dataclasses import dataclass

import numpy as np

from .. import dynamics as rd
from ..constrained import KINDS as _KIND_SIZES
from .messages import RequestState
from .parameters import ParameterError

KINDS = tuple(_KIND_SIZES)      # "point", "6d"


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
    return Contacts(tuple(frames), tuple(kinds), spec, tuple(_KIND_SIZES[k] for k in kinds))


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


def fill_wrenches(wrenches, frames, sizes, forces):
    """Stacked forces (3 per point contact, 6 per 6d) into LinkWrench messages (link = frame,
    reference local_world_aligned, torque zero for a point contact). Lists are filled in place."""
    k = 0
    for w, frame, n in zip(wrenches, frames, sizes):
        w.link, w.reference = frame, "local_world_aligned"
        f, t = w.wrench.force, w.wrench.torque
        f.x, f.y, f.z = float(forces[k]), float(forces[k + 1]), float(forces[k + 2])
        t.x, t.y, t.z = (float(forces[k + 3]), float(forces[k + 4]), float(forces[k + 5])) if n == 6 else (0.0, 0.0, 0.0)
        k += n


def all_finite(x):
    """Every number of a float array finite (NaN and inf survive the sum)."""
    return math.isfinite(float(np.sum(x)))


# --- the ~/constrained_forward_dynamics service --------------------------------------------------
def kind_list(kinds, n, field, what):
    """A request's kinds: one for every constraint or one per constraint (n); ValueError naming `field`."""
    kinds = list(kinds)
    if n == 0:
        if kinds:
            raise ValueError(f"{field} has {len(kinds)} values but there is no {what}")
        return []
    if len(kinds) not in (1, n):
        raise ValueError(f"{field} takes one kind for every {what} or one per {what} ({n}); got {len(kinds)}")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"{field}: unknown kinds {bad}; a kind is one of {', '.join(KINDS)}")
    return kinds * n if len(kinds) == 1 else kinds


def known_frames(model, names, field):
    """A request's frame names, each a frame of the model; ValueError naming `field`."""
    for name in names:
        try:
            model.frame(name)
        except KeyError:
            raise ValueError(f"{field}: unknown frame {name!r}; the model has frames "
                             f"{', '.join(model.frame_names)}") from None
    return list(names)


def request_constraints(model, req, node_contacts):
    """The request's contacts and loops as the library takes them (empty contact_frames: the node's
    contacts), with the label of each constraint's wrench; ValueError naming the field."""
    if req.contact_frames:
        frames = known_frames(model, req.contact_frames, "contact_frames")
        if len(set(frames)) != len(frames):
            raise ValueError(f"contact_frames: duplicate frames {sorted({f for f in frames if frames.count(f) > 1})}")
        if not req.contact_kinds:
            raise ValueError("contact_kinds: give one kind (point or 6d) for every contact, or one per "
                             "contact_frames entry")
        contacts = list(zip(frames, kind_list(req.contact_kinds, len(frames), "contact_kinds", "contact")))
    else:
        if req.contact_kinds:
            raise ValueError("contact_kinds given without contact_frames (empty contact_frames uses the node's "
                             "contacts.frames and contacts.kind)")
        contacts = list(node_contacts.spec) if node_contacts is not None else []
    n = len(req.loop_frames_a)
    if len(req.loop_frames_b) != n:
        raise ValueError(f"loop_frames_a has {n} frames and loop_frames_b {len(req.loop_frames_b)}: one pair per loop")
    loops = list(zip(known_frames(model, req.loop_frames_a, "loop_frames_a"), known_frames(model, req.loop_frames_b, "loop_frames_b"),
                     kind_list(req.loop_kinds, n, "loop_kinds", "loop")))
    if not contacts and not loops:
        raise ValueError("no constraints: give contact_frames (and contact_kinds) or loops, or set the node's "
                         "contacts.frames (for dynamics without constraints: ~/forward_dynamics)")
    gains = np.array([req.baumgarte_kp, req.baumgarte_kd], dtype=float)
    if not np.all(np.isfinite(gains)) or np.any(gains < 0):
        raise ValueError(f"baumgarte_kp and baumgarte_kd take finite numbers >= 0; got {req.baumgarte_kp!r}, "
                         f"{req.baumgarte_kd!r}")
    labels = [(frame, _KIND_SIZES[kind]) for frame, kind in contacts] + [(a, _KIND_SIZES[kind]) for a, _, kind in loops]
    return tuple(contacts), tuple(loops), gains, labels


def constrained_forward_dynamics(model, req, res, node_contacts, wrench_type):
    """~/constrained_forward_dynamics: accelerations and constraint wrenches for the request's
    state and efforts with its constraints (or the node's contacts); wrench_type makes a LinkWrench."""
    contacts, loops, gains, labels = request_constraints(model, req, node_contacts)
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
    res.constraint_wrenches = [wrench_type() for _ in labels]
    fill_wrenches(res.constraint_wrenches, [frame for frame, _ in labels], [n for _, n in labels], forces)
