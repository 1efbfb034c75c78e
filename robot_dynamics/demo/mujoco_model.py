"""A URDF compiled into a MuJoCo model for the demo's simulated robots (no ROS)."""
import xml.etree.ElementTree as ET

import mujoco

from ..model import per_joint


def mujoco_arm(urdf, joints=None, timestep=1e-3, damping=0.0, friction=0.0):
    """Compile a URDF into a MuJoCo model with one motor actuator per joint, in `joints` order.

    Inertias come from the <inertial> elements only (no geometry is kept); armature is 0, as in
    the URDF; joint damping and dry friction are set from the arguments, not from the URDF. Position
    limits and effort limits (clamping the actuator force) are MuJoCo's import of the URDF <limit>.
    """
    robot = ET.fromstring(urdf)
    for link in robot.iter("link"):
        for geometry in link.findall("visual") + link.findall("collision"):
            link.remove(geometry)
    spec = mujoco.MjSpec.from_string(ET.tostring(robot, encoding="unicode"))
    spec.option.timestep = timestep
    by_name = {joint.name: joint for joint in spec.joints}
    joints = list(by_name) if joints is None else list(joints)
    unknown = [name for name in joints if name not in by_name]
    if unknown:
        raise ValueError(f"joints not in the URDF: {', '.join(unknown)}")
    damping = per_joint(damping, len(joints), "damping")
    friction = per_joint(friction, len(joints), "friction")
    for name, joint_damping, joint_friction in zip(joints, damping, friction):
        joint = by_name[name]
        joint.damping = [joint_damping, 0.0, 0.0]
        joint.frictionloss = joint_friction
        joint.armature = 0.0
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    return spec.compile()
