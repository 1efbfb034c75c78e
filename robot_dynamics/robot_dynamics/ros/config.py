"""The node's configuration: the model built from the checked parameter values and the URDF, and every
feature's settings (features.FEATURES, each feature's `settings(params, config)`), built whole and
swapped in one assignment (a refused change leaves nothing half-applied). Plain Python (no rclpy):
tested without DDS."""
import copy

import numpy as np

from .. import dynamics as rd
from ..payload import PayloadError, add_payload
from ..urdf import load_urdf
from .features import FEATURES
from .identification.dynamics import robot_key
from .parameters import ParameterError, per_entry


class Config:
    """Everything derived from the parameters and the description; replaced whole on change.

    model        the robot (gravity, armature and payload applied, and an identified estimate if one is)
    nominal      the model the parameters give, without the estimate (model itself when none is applied)
    identified   the applied estimate (identification.dynamics.Correction), or None
    joints       the output joints, in order; out_v: the v index of each
    description  the URDF text or file path the model was built from
    and the settings of every feature, the attributes its `settings(params, config)` returns (e.g.
    contacts/: contacts, closed_chain/: loops, trajectories/: kp, kd, feedback, evaluate_at)."""

    def __init__(self, model, joints, out_v, description, nominal=None, identified=None):
        self.model, self.joints, self.out_v, self.description = model, joints, out_v, description
        self.nominal, self.identified = nominal or model, identified

    def summary(self):
        """What the node logs when it takes this configuration."""
        model = self.model
        standing = "" if self.contacts is None else "; standing on " + ", ".join(
            f"{frame} ({kind})" for frame, kind in self.contacts.spec)
        return (f"model {model.name!r}: {len(model.joint_names)} joints, nq={model.nq}, nv={model.nv}, total mass "
                f"{model.total_mass:.3f} kg; output joints {self.joints}{standing}")


def _load(load_cache, description, floating_base, root, tip):
    """A parsed model, cached (a gravity change does not re-parse; at most 4 kept)."""
    key = (description, floating_base, root, tip)
    if key not in load_cache:
        if len(load_cache) >= 4:
            load_cache.pop(next(iter(load_cache)))
        load_cache[key] = load_urdf(*key)
    return load_cache[key]


def known_joints(model, names, parameter):
    """ParameterError naming `parameter` if `names` has joints the model does not have."""
    unknown = [j for j in names if j not in model.joint_index]
    if unknown:
        raise ParameterError(parameter, f"parameter {parameter}: unknown joints {unknown}; the model's "
                                        f"joints are {model.joint_names}")


def build_config(params, description, load_cache, identified=None):
    """Checked parameter values (features.check_parameters) and URDF text or path -> Config; a
    ValueError naming the parameter or the URDF problem otherwise. Nothing is changed on failure.
    identified: an applied estimate (identification.dynamics.Correction), applied if it is of this
    robot (the same URDF, root_link, tip_link and floating_base), else left out (config.identified None)."""
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
        model.armature = per_entry(params["armature"], len(model.joint_names), "armature",
                                   f"model joint {model.joint_names}")
    _add_payload(model, params)
    nominal = model
    if identified is not None and identified.key == robot_key(params, description):
        model = identified.applied(nominal, params)     # ParameterError naming what makes it non-physical
    else:
        identified = None
    known_joints(model, params["actuated_joints"], "actuated_joints")   # the output joints' default: named as itself
    joints = params["joints"] or params["actuated_joints"] or list(model.joint_names)
    known_joints(model, joints, "joints")
    out_v = model.joint_offset[1] + np.array([model.joint_index[j] for j in joints], dtype=np.intp)
    # loads the compiled kernels now, not on the first message; and a last check of the numbers
    if not np.isfinite(rd.gravity_torques(model, rd.neutral(model))).all():
        raise ParameterError("gravity", "parameters gravity and payload.mass: the gravity torques "
                                        "they give are not finite (values too large)")
    config = Config(model, joints, out_v, description, nominal, identified)
    for feature in FEATURES:        # in order: a feature's settings may read those before it
        if hasattr(feature, "settings"):
            vars(config).update(feature.settings(params, config))
    return config


def link_names(model):
    """The model's links (its frames without the joints' frames), in model order."""
    joints = model.joint_frames
    return [name for name, frame in model.frames.items()
            if not name.startswith("joint:") and joints.get(name) is not frame]


def _add_payload(model, params):
    """The payload's inertia added to the body of payload.link (tip_link if empty). The link is
    checked even without a payload, so that a wrong name is refused when it is set."""
    mass, link = params["payload.mass"], params["payload.link"]
    if link and link not in model.frames:
        raise ParameterError("payload.link", f"parameter payload.link: no link {link!r} in the model; "
                                             f"its links are {link_names(model)}")
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
