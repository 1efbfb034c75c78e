"""A URDF compiled into a MuJoCo model for the demo's simulated robots (no ROS)."""
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np

from ..model import per_joint

WRENCH_SITE = "applied_wrench"      # the site where sim_arm's external wrench acts


@dataclass
class Payload:
    """A rigid body attached to a URDF link (also a link that a fixed joint welds on, e.g. a flange):
    mass [kg], com [m] in the link frame, inertia [kg m^2] about the COM in the link axes, as
    ixx iyy izz ixy ixz iyz (the node's payload.* parameters, and MuJoCo's fullinertia order)."""
    link: str
    mass: float
    com: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def spec_without_geometry(urdf, timestep):
    """A MuJoCo spec of the URDF text with its <visual> and <collision> elements dropped (inertias
    from <inertial> only; meshes are neither needed nor always found)."""
    robot = ET.fromstring(urdf)
    for link in robot.iter("link"):
        for geometry in link.findall("visual") + link.findall("collision"):
            link.remove(geometry)
    spec = mujoco.MjSpec.from_string(ET.tostring(robot, encoding="unicode"))
    spec.option.timestep = timestep
    return spec


def add_motors(spec, joints, damping, friction, armature):
    """One motor actuator per joint, in `joints` order (None: every joint of the spec), with joint
    damping, dry friction and armature set from the arguments (one value for all or one per joint)."""
    by_name = {joint.name: joint for joint in spec.joints}
    joints = list(by_name) if joints is None else list(joints)
    unknown = [name for name in joints if name not in by_name]
    if unknown:
        raise ValueError(f"joints not in the URDF: {', '.join(unknown)}")
    damping = per_joint(damping, len(joints), "damping")
    friction = per_joint(friction, len(joints), "friction")
    armature = per_joint(armature, len(joints), "armature")
    for name, joint_damping, joint_friction, joint_armature in zip(joints, damping, friction, armature):
        joint = by_name[name]
        joint.damping = [joint_damping, 0.0, 0.0]
        joint.frictionloss = joint_friction
        joint.armature = joint_armature
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)


def mujoco_arm(urdf, joints=None, timestep=1e-3, damping=0.0, friction=0.0, armature=0.0, payload=None,
               wrench_link=None, mass_scale=1.0):
    """Compile a URDF into a MuJoCo model with one motor actuator per joint, in `joints` order.

    Inertias come from the <inertial> elements only (no geometry is kept); joint damping, dry
    friction and armature (rotor inertia reflected through the gear, added to M's diagonal) are
    set from the arguments (one value per joint or one for all; default 0), not from the URDF.
    Position limits and effort limits (clamping the actuator force) are MuJoCo's import of the
    URDF <limit>. payload: a Payload the URDF does not have, added as a body on its link before
    compiling. wrench_link: a link whose origin gets the site WRENCH_SITE (sim_arm applies its
    external wrench there). mass_scale: every link's mass and inertia times this (the centres of mass
    kept: a body of the same shape, denser), e.g. links heavier than their URDF says.
    """
    if not (np.isfinite(mass_scale) and mass_scale > 0):
        raise ValueError(f"mass_scale must be a positive number, got {mass_scale!r}")
    spec = spec_without_geometry(urdf, timestep)
    for body in spec.bodies:
        if body.explicitinertial:
            body.mass *= mass_scale
            body.fullinertia = np.asarray(body.fullinertia) * mass_scale
    add_motors(spec, joints, damping, friction, armature)
    bodies = {body.name for body in spec.bodies}
    if payload is not None and payload.mass > 0:
        if payload.link not in bodies:
            raise ValueError(f"payload.link: no link {payload.link!r} in the URDF")
        # ipos must be given: MuJoCo takes the body position as the COM when it is left unset
        spec.body(payload.link).add_body(name="payload", pos=[0.0, 0.0, 0.0], ipos=list(payload.com),
                                         iquat=[1.0, 0.0, 0.0, 0.0], mass=payload.mass,
                                         fullinertia=list(payload.inertia), explicitinertial=True)
    if wrench_link:
        if wrench_link not in bodies:
            raise ValueError(f"wrench.link: no link {wrench_link!r} in the URDF")
        spec.body(wrench_link).add_site(name=WRENCH_SITE, pos=[0.0, 0.0, 0.0])
    return spec.compile()


def apply_wrench(model, data, force, torque):
    """data.xfrc_applied for a wrench [force; torque] (world axes) acting at the site WRENCH_SITE:
    MuJoCo applies xfrc_applied at the body's centre of mass, so the torque gets the lever arm
    (site - COM) x force. Kinematics are recomputed first (after mj_step they are one step old)."""
    mujoco.mj_kinematics(model, data)
    site = model.site(WRENCH_SITE).id
    body = model.site_bodyid[site]
    force = np.asarray(force, float)
    data.xfrc_applied[body, :3] = force
    data.xfrc_applied[body, 3:] = np.asarray(torque, float) + np.cross(data.site_xpos[site] - data.xipos[body], force)


def clear_wrench(data):
    data.xfrc_applied[:] = 0.0
