"""A joint's dynamics in a URDF: the standard <dynamics damping= friction=> (viscous and Coulomb
friction, as urdfdom, Gazebo and MuJoCo read them) and this library's extension element for what
the URDF has no field for, which other parsers ignore (urdfdom, and so Pinocchio and RViz, read
only the children of <joint> they know; MuJoCo too):

    <joint name="joint2" type="revolute">
      ...
      <dynamics damping="0.8" friction="1.5"/>
      <robot_dynamics armature="0.12" friction_offset="-0.3" coulomb_band="0.01"/>
    </joint>

damping: viscous friction [N m s/rad or N s/m]; friction: Coulomb friction [N m or N]; armature:
the rotor inertia reflected through the gear [kg m^2 or kg] (Model.armature); friction_offset: a
constant torque [N m or N]; coulomb_band: the speed below which Coulomb friction is smoothed
[rad/s or m/s] (Model.coulomb_band). Every attribute is optional (0, and the library's band).
load_urdf reads them into the model (a mimic joint's are its leader's: its own are not read);
urdf_export writes identified ones back.
"""
import math

import numpy as np

from .model import COULOMB_BAND

#: the extension element's tag, and its attributes with their defaults
EXTENSION = "robot_dynamics"
DEFAULTS = {"damping": 0.0, "friction": 0.0, "friction_offset": 0.0, "armature": 0.0, "coulomb_band": COULOMB_BAND}


def joint_dynamics(el, what, warnings, error=ValueError):
    """The five values of a <joint> element (DEFAULTS' keys); `error` naming the joint and
    attribute for what is meaningless: not a finite number, a negative armature, a band that is
    not positive. Negative damping or friction (energy put in) is appended to `warnings`: loaded
    as given."""
    values = dict(DEFAULTS)
    for tag in ("dynamics", EXTENSION):
        child = el.find(tag)
        for key in (() if child is None else [k for k in DEFAULTS if k in child.attrib]):
            try:
                values[key] = float(child.get(key))
            except ValueError:
                values[key] = math.nan
            if not math.isfinite(values[key]):
                raise error(f"{what} <{tag} {key}>: expected a finite number, got {child.get(key)!r}")
    if values["armature"] < 0:
        raise error(f"{what} <{EXTENSION} armature> is negative ({values['armature']}): a rotor inertia is not")
    if values["coulomb_band"] <= 0:
        raise error(f"{what} <{EXTENSION} coulomb_band> must be positive, got {values['coulomb_band']}")
    for key in ("damping", "friction"):
        if values[key] < 0:
            warnings.append(f"{what} has negative <dynamics {key}> {values[key]} (it puts energy in)")
    return values


def set_joint_dynamics(model, dynamics):
    """Give the model the joint dynamics read by joint_dynamics, a dict per entry of joint_names."""
    if not dynamics:
        return
    model.friction = [[d["damping"], d["friction"], d["friction_offset"]] for d in dynamics]
    model.armature = np.array([d["armature"] for d in dynamics])
    model.coulomb_band = [d["coulomb_band"] for d in dynamics]
