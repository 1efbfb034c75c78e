"""What ~/constrained_forward_dynamics (contacts/) and ~/constrained_inverse_dynamics (closed_chain/)
share (no rclpy): a request's contacts and loops as the library takes them, each field checked and
named in the error, and the constraint wrenches of the answer."""
import math

import numpy as np

from ..constrained import KINDS as SIZES

KINDS = tuple(SIZES)      # "point", "6d"


def all_finite(x):
    """Every number of a float array finite (NaN and inf survive the sum)."""
    return math.isfinite(float(np.sum(x)))


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


def request_contacts(model, req, node_contacts):
    """The request's contacts ((frame, kind), ...), the node's (contacts.Contacts or None) when
    contact_frames is empty; ValueError naming the field."""
    if req.contact_frames:
        frames = known_frames(model, req.contact_frames, "contact_frames")
        if len(set(frames)) != len(frames):
            raise ValueError(f"contact_frames: duplicate frames {sorted({f for f in frames if frames.count(f) > 1})}")
        if not req.contact_kinds:
            raise ValueError("contact_kinds: give one kind (point or 6d) for every contact, or one per "
                             "contact_frames entry")
        return tuple(zip(frames, kind_list(req.contact_kinds, len(frames), "contact_kinds", "contact")))
    if req.contact_kinds:
        raise ValueError("contact_kinds given without contact_frames (empty contact_frames uses the node's "
                         "contacts.frames and contacts.kind)")
    return tuple(node_contacts.spec) if node_contacts is not None else ()


def request_loops(model, req):
    """The request's loops ((frame_a, frame_b, kind), ...); ValueError naming the field."""
    n = len(req.loop_frames_a)
    if len(req.loop_frames_b) != n:
        raise ValueError(f"loop_frames_a has {n} frames and loop_frames_b {len(req.loop_frames_b)}: one pair per loop")
    return tuple(zip(known_frames(model, req.loop_frames_a, "loop_frames_a"),
                     known_frames(model, req.loop_frames_b, "loop_frames_b"),
                     kind_list(req.loop_kinds, n, "loop_kinds", "loop")))


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


def constraint_wrenches(contacts, loops, forces, wrench_type):
    """The answer's constraint_wrenches: one LinkWrench (made by wrench_type) per contact, at its frame,
    then per loop, at its frame_a, from the stacked forces."""
    labels = [(frame, SIZES[kind]) for frame, kind in contacts] + [(a, SIZES[kind]) for a, _, kind in loops]
    wrenches = [wrench_type() for _ in labels]
    fill_wrenches(wrenches, [frame for frame, _ in labels], [n for _, n in labels], forces)
    return wrenches
