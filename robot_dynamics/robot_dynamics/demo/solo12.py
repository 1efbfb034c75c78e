"""solo12 as the legged demo simulates it (no ROS): the files from example-robot-data, the SRDF
posture, and the contact and actuator properties the URDF does not carry.

solo12: Open Dynamic Robot Initiative's quadruped (Grimminger et al., "An Open Torque-Controlled
Modular Robot Architecture for Legged Locomotion Research", IEEE RA-L 2020), 2.5 kg, three joints
per leg, point feet; example-robot-data ships its URDF (inertias) and SRDF (postures).
"""
import importlib.metadata
import os
import xml.etree.ElementTree as ET

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
FOOT_RADIUS = 0.016             # m: solo_foot.stl spans +-0.016 m in x and z about the FOOT frame
BASE_BOX = [0.2241, 0.1095, 0.0265]     # m, half sizes of solo_12_base.stl's bounding box ...
BASE_BOX_OFFSET = [0.0, 0.0, 0.0015]    # ... and its centre in base_link
ARMATURE = 4.5e-6 * 9.0**2      # kg m^2: rotor inertia x gear ratio^2 (robot_properties_solo's config:
                                # motor_inertia 4.5e-6 kg m^2, motor_gear_ration 9)
POSTURE = "standing"            # the SRDF group state the robot starts in


def solo12_files():
    """(URDF, SRDF) of solo12 from example-robot-data: the PyPI package (its cmeel prefix), else a
    ROS install's share folder. FileNotFoundError saying how to get it."""
    candidates = []
    try:
        dist = importlib.metadata.distribution("example-robot-data")
        candidates.append(str(dist.locate_file("cmeel.prefix/share/example-robot-data")))
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        from ament_index_python.packages import get_package_share_directory
        candidates.append(get_package_share_directory("example-robot-data"))
    except Exception:       # no ament_index_python, not on AMENT_PREFIX_PATH
        pass
    for share in candidates:
        robot = os.path.join(share, "robots", "solo_description")
        urdf, srdf = os.path.join(robot, "robots", "solo12.urdf"), os.path.join(robot, "srdf", "solo.srdf")
        if os.path.exists(urdf) and os.path.exists(srdf):
            return urdf, srdf
    raise FileNotFoundError("the legged demo needs solo12 from example-robot-data: pip install example-robot-data "
                            "(requirements/test.txt has it; `make` installs it), or the ROS package example-robot-data")


def srdf_posture(srdf, name=POSTURE):
    """{joint: value} of an SRDF group state, and the root pose [x y z qx qy qz qw]."""
    state = next((s for s in ET.parse(srdf).getroot().iter("group_state") if s.get("name") == name), None)
    if state is None:
        raise ValueError(f"{srdf} has no group_state {name!r}")
    values = {j.get("name"): [float(x) for x in j.get("value").split()] for j in state.iter("joint")}
    root = values.pop("root_joint", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    return {k: v[0] for k, v in values.items()}, root
