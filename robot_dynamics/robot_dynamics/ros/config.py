"""The node's configuration: the model and everything derived from the checked parameter values and
the URDF, built whole and swapped in one assignment (a refused change leaves nothing half-applied).
Plain Python (no rclpy): tested without DDS."""
import copy
from dataclasses import dataclass

import numpy as np

from .. import dynamics as rd
from ..payload import PayloadError, add_payload
from ..urdf import load_urdf
from .external import ObserverConfig, observer_config
from . import contacts as _contacts
from . import loops as _loops
from .parameters import ParameterError

#: what the node assumes for a coordinate joint_states cannot give
ASSUMED = {"floating": "at its origin, unrotated, at rest", "planar": "at its origin, at rest"}


@dataclass
class Config:
    """Everything derived from the parameters and the description; replaced whole on change."""
    model: object
    joints: list              # output order
    out_v: np.ndarray         # v index of each output joint
    kp: np.ndarray            # per model v, zero on the multi-coordinate joints
    kd: np.ndarray
    feedback: bool            # any non-zero gain: the feedforward needs the measured state
    evaluate_at: str
    contacts: object          # contacts.Contacts, or None: gravity and feedforward with the base held
    unmeasured: list          # joints joint_states cannot give (multi-coordinate, below the root)
    observer: ObserverConfig  # external torques and payload identification (external.py)
    joint_states_timeout: float = 1.0   # s: stale input, reported on /diagnostics
    description: str = None   # the URDF text or file path the model was built from
    loops: object = None      # loops.Loops, or None: no closed kinematic loops


def _per_entry(values, n, name, what):
    """1 or n values (checked by check_parameter) as an array of n."""
    if len(values) not in (1, n):
        raise ParameterError(name, f"parameter {name} takes one value or one per {what} ({n}); "
                                   f"got {len(values)} values")
    return np.broadcast_to(np.asarray(values, float), (n,)).copy()


def _load(load_cache, description, floating_base, root, tip):
    """A parsed model, cached (a gravity change does not re-parse; at most 4 kept)."""
    key = (description, floating_base, root, tip)
    if key not in load_cache:
        if len(load_cache) >= 4:
            load_cache.pop(next(iter(load_cache)))
        load_cache[key] = load_urdf(*key)
    return load_cache[key]


def build_config(params, description, load_cache):
    """Checked parameter values (parameters.check_parameters) and URDF text or path -> Config; a
    ValueError naming the parameter or the URDF problem otherwise. Nothing is changed on failure."""
    root, tip = params["root_link"] or None, params["tip_link"] or None
    source = ("parameter robot_description" if params["robot_description"] else
              f"parameter urdf_file ({params['urdf_file']!r})" if params["urdf_file"] else
              "the URDF from the robot_description topic")
    try:
        model = copy.deepcopy(_load(load_cache, description, params["floating_base"], root, tip))
    except ValueError as exc:       # URDFError: the file, the text, or the links named
        text = str(exc)
        culprit = ("root_link" if root and repr(root) in text else "tip_link" if tip and repr(tip) in text
                   else "urdf_file" if params["urdf_file"] and not params["robot_description"]
                   else "robot_description")
        named = "".join(f" with {n} {v!r}" for n, v in (("root_link", root), ("tip_link", tip)) if v)
        raise ParameterError(culprit, f"{source}{named}: {text}") from None
    model.gravity = params["gravity"]
    if params["armature"]:
        model.armature = _per_entry(params["armature"], len(model.joint_names), "armature",
                                    f"model joint {model.joint_names}")
    _add_payload(model, params)
    _loops.check_joints(model, params["actuated_joints"])   # the output joints' default: named as itself
    joints = params["joints"] or params["actuated_joints"] or list(model.joint_names)
    unknown = [j for j in joints if j not in model.joint_index]
    if unknown:
        raise ParameterError("joints", f"parameter joints: unknown joints {unknown}; the model's "
                                       f"joints are {model.joint_names}")
    out_v = model.joint_offset[1] + np.array([model.joint_index[j] for j in joints], dtype=np.intp)
    gains = {}
    for name in ("feedforward.kp", "feedforward.kd"):
        gains[name] = np.zeros(model.nv)
        gains[name][out_v] = _per_entry(params[name], len(joints), name, "`joints` entry")
    # loads the compiled kernels now, not on the first message; and a last check of the numbers
    if not np.isfinite(rd.gravity_torques(model, rd.neutral(model))).all():
        raise ParameterError("gravity", "parameters gravity and payload.mass: the gravity torques "
                                        "they give are not finite (values too large)")
    kp, kd = gains["feedforward.kp"], gains["feedforward.kd"]
    contacts = _contacts.build(params, model)
    loops = _loops.build(params, model, contacts)
    root = model.root_joint
    unmeasured = [j for j in model.joints if j.kind in ASSUMED and j is not root]
    return Config(model, joints, out_v, kp, kd, bool(kp.any() or kd.any()), params["feedforward.evaluate_at"],
                  contacts, unmeasured, observer_config(params, model, joints, out_v),
                  params["joint_states_timeout"], description, loops)


def unmeasured_notice(config):
    """What the node says once about the coordinates joint_states cannot give, or None."""
    if not config.unmeasured:
        return None
    parts = [f"{j.name} ({j.kind}: q[{j.idx_q}:{j.idx_q + j.nq}], v[{j.idx_v}:{j.idx_v + j.nv}]) "
             f"{ASSUMED[j.kind]}" for j in config.unmeasured]
    return ("joint_states carries one position per joint name, so these multi-coordinate joints below the "
            "root are not measured; the node assumes " + "; ".join(parts) +
            ". Services take them in the request's positions only where the model has them at the root.")


def _add_payload(model, params):
    """The payload's inertia added to the body of payload.link (tip_link if empty). The link is
    checked even without a payload, so that a wrong name is refused when it is set."""
    mass, link = params["payload.mass"], params["payload.link"]
    if link and link not in model.frames:
        raise ParameterError("payload.link", f"parameter payload.link: no link {link!r} in the model; "
                                             f"its links are {model.frame_names}")
    if mass == 0.0:
        return
    link = link or params["tip_link"]
    if not link:
        raise ParameterError("payload.link", "parameter payload.link (or tip_link) must name the link "
                                             "carrying a payload of non-zero payload.mass")
    try:
        add_payload(model, link, mass, params["payload.com"], params["payload.inertia"])
    except PayloadError as exc:
        raise ParameterError(f"payload.{exc.argument}", f"parameter payload.{exc.argument}: {exc}") from None
