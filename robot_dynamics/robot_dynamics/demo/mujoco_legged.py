"""A floating-base URDF compiled into a MuJoCo model that stands on a ground plane, for the legged
demo's simulated robot (no ROS). Like mujoco_model.mujoco_arm, the inertias come from the URDF's
<inertial> elements only; contact geometry is added here, since a URDF's collision meshes are
neither needed nor always found: a sphere at each foot, an optional box for the base (so that a
collapsing robot comes to rest on its belly), and the ground plane. Contacts are MuJoCo's soft
contacts with their default stiffness (solref 0.02 s, critically damped), pyramidal friction cones.
"""
from dataclasses import dataclass

import mujoco
import numpy as np

from .mujoco_model import add_motors, spec_without_geometry

ROOT_JOINT = "root"     # the free joint added to the URDF's root body


@dataclass(frozen=True)
class LeggedSpec:
    """Contact geometry and actuator properties of a legged robot in MuJoCo."""
    feet: tuple                      # links (bodies) carrying a foot sphere at their origin
    foot_radius: float               # m
    base_box: tuple = ()             # (hx, hy, hz) half sizes [m] of a box on the root body, or () for none
    base_box_offset: tuple = (0.0, 0.0, 0.0)   # its centre in the root link's frame [m]
    ground_friction: float = 1.0     # sliding friction coefficient of the foot-ground contacts


def mujoco_legged(urdf, spec, joints=None, timestep=1e-3, damping=0.0, friction=0.0, armature=0.0):
    """Compile a URDF into a MuJoCo model with a free joint at its root, one motor actuator per joint
    (in `joints` order, default every joint of the URDF), foot spheres, a base box and a ground plane
    (z = 0, gravity -z). Joint damping, dry friction and armature (rotor inertia reflected through the
    gear, Ir N^2) are set from the arguments, one value for all joints or one per joint; the URDF's
    <dynamics> are not used. Robot geoms collide only with the ground."""
    mj = spec_without_geometry(urdf, timestep)
    mj.compiler.fusestatic = False      # the feet stay bodies of their own (their frames are the URDF's)
    add_motors(mj, joints, damping, friction, armature)
    bodies = {body.name: body for body in mj.bodies}
    missing = [name for name in spec.feet if name not in bodies]
    if missing:
        raise ValueError(f"feet must be links of the URDF; not found: {', '.join(missing)}")
    if not spec.foot_radius > 0:
        raise ValueError(f"foot_radius must be > 0, got {spec.foot_radius!r}")
    root = mj.worldbody.first_body()
    root.add_freejoint(name=ROOT_JOINT)
    robot_geom = dict(contype=0, conaffinity=1, friction=[spec.ground_friction, 0.005, 0.0001])
    if spec.base_box:
        root.add_geom(name="base_box", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(spec.base_box),
                      pos=list(spec.base_box_offset), **robot_geom)
    for foot in spec.feet:
        bodies[foot].add_geom(name=f"{foot}_sphere", type=mujoco.mjtGeom.mjGEOM_SPHERE,
                              size=[spec.foot_radius, 0.0, 0.0], **robot_geom)
    mj.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10.0, 10.0, 0.1],
                          contype=1, conaffinity=1, friction=[spec.ground_friction, 0.005, 0.0001])
    return mj.compile()


def set_state(model, data, base_position, base_quaternion, joint_positions, on_ground=True):
    """Put the robot at rest at a base pose (position, quaternion x y z w, world) and joint positions
    (actuator order); on_ground: then lower or raise it so that its lowest foot sphere touches the
    ground. Returns the base position used."""
    qa = model.joint(ROOT_JOINT).qposadr[0]
    x, y, z, w = base_quaternion
    data.qpos[qa:qa + 7] = [*base_position, w, x, y, z]
    ids = model.actuator_trnid[:, 0]
    data.qpos[model.jnt_qposadr[ids]] = joint_positions
    data.qvel[:] = 0.0
    mujoco.mj_forward(model, data)
    if on_ground:
        spheres = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
        lowest = min(data.geom_xpos[g][2] - model.geom_size[g][0] for g in spheres)
        data.qpos[qa + 2] -= lowest
        mujoco.mj_forward(model, data)
    return data.qpos[qa:qa + 3].copy()


def base_pose(model, data):
    """(position, quaternion x y z w) of the root link in the world."""
    qa = model.joint(ROOT_JOINT).qposadr[0]
    w, x, y, z = data.qpos[qa + 3:qa + 7]
    return data.qpos[qa:qa + 3].copy(), np.array([x, y, z, w])


def base_twist(model, data):
    """[linear; angular] velocity of the root link in its own frame (MuJoCo's free joint: linear in
    the world, angular in the body frame)."""
    free = model.joint(ROOT_JOINT)
    va = free.dofadr[0]
    R = data.xmat[model.jnt_bodyid[free.id]].reshape(3, 3)
    return np.concatenate((R.T @ data.qvel[va:va + 3], data.qvel[va + 3:va + 6]))
