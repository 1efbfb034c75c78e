"""A rigid payload added to a link (a tool, a grasped part): like UR's SetPayload or Franka's
SetLoad. Its inertia is carried to the body frame of the link's body and added to the body's
(Featherstone, Rigid Body Dynamics Algorithms, ch. 2: inertias carried between frames)."""
import numpy as np

from .model import inertia_about_origin, transform_inertia
from .urdf import inertia_problem


class PayloadError(ValueError):
    """A payload that cannot be added; `argument` names the culprit (link, mass, com, inertia)."""

    def __init__(self, argument, message):
        super().__init__(message)
        self.argument = argument


def payload_inertia(mass, com, inertia):
    """10 inertia parameters, about the link's origin and in its frame, of a payload of `mass` [kg]
    with centre of mass `com` [m] in the link frame and rotational inertia about the COM `inertia`
    (ixx iyy izz ixy ixz iyz [kg m^2], or a 3x3 matrix). PayloadError naming what is wrong: a
    negative or non-finite mass, a centre of mass that is not 3 finite numbers, an inertia that is
    not a rigid body's (not positive semi-definite, or breaking the triangle inequality)."""
    try:
        mass = float(mass)
    except (TypeError, ValueError):
        mass = float("nan")
    if not (np.isfinite(mass) and mass >= 0):
        raise PayloadError("mass", f"payload mass must be a finite number >= 0 [kg], got {mass!r}")
    c = np.asarray(com, dtype=float).reshape(-1)
    if c.shape != (3,) or not np.all(np.isfinite(c)):
        raise PayloadError("com", f"payload centre of mass must be 3 finite numbers [m], got {com!r}")
    i = np.asarray(inertia, dtype=float)
    if i.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = i
        i = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if i.shape != (3, 3) or not np.all(np.isfinite(i)) or not np.allclose(i, i.T, rtol=0, atol=1e-12):
        raise PayloadError("inertia", "payload inertia must be 6 finite numbers ixx iyy izz ixy ixz iyz "
                                      f"[kg m^2] (or a symmetric 3x3), got {inertia!r}")
    problem = inertia_problem(mass, i) if mass > 0 or np.any(i) else None
    if problem:
        raise PayloadError("inertia", f"payload {problem}: not a rigid body")
    return inertia_about_origin(mass, c, i)


def add_payload(model, link, mass, com, inertia):
    """Add the payload (see `payload_inertia`) carried by frame `link` to its body's inertia, in
    place. PayloadError naming the culprit; the model is unchanged then."""
    parameters = payload_inertia(mass, com, inertia)
    try:
        frame = model.frame(link)
    except KeyError:
        raise PayloadError("link", f"payload link {link!r} is not a frame of the model; its links are "
                                   f"{', '.join(model.frame_names)}") from None
    if frame.body < 0:
        raise PayloadError("link", f"payload link {link!r} is fixed to the world: nothing carries it")
    added = transform_inertia(parameters, frame.rotation, frame.translation)
    model.set_body_inertia(frame.body, model.inertia[frame.body] + added)
