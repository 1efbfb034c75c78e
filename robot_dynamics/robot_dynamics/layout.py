"""Column layout of Model.packed, the one float array the kernels read the model from.

Rows 0..nb-1 are bodies; the last row holds model-wide values. The kernels see each body
in its joint frame: the body frame turned by AXES (Q, with Q e_z = the joint axis), so that
every joint rotates about (or slides along) its z axis; a planar joint moves in that frame's
x-y plane and turns about its z; a floating joint's frame is the body frame (Q = 1).
"""
# joint types, and the coordinates each one has in q and in v
REVOLUTE, PRISMATIC, FREE, PLANAR = 0, 1, 2, 3
NQ_OF = {REVOLUTE: 1, PRISMATIC: 1, FREE: 7, PLANAR: 3}
NV_OF = {REVOLUTE: 1, PRISMATIC: 1, FREE: 6, PLANAR: 3}
# the one rule for a free-flyer quaternion: q is accepted where | |q|^2 - 1 | <= QUATERNION_TOL
# (kernels); inputs from outside the library (pose messages) go through model.unit_quaternion first
QUATERNION_TOL = 1e-6


def layout(fields, start=0):
    """The first column of each of consecutive (name, width) fields from `start`, then the end:
    columns are never numbered by hand and a width changes in one place (Model.packed below, the
    kernels' workspaces in kernels/columns.py and each kernel module). Unpack it into names that
    repeat the table's (test_layout checks they do)."""
    firsts, column = [], start
    for _, width in fields:
        firsts.append(column)
        column += width
    return (*firsts, column)


# per-body row (rows 0..nb-1)
(PARENT, JTYPE, QSRC, QSCALE, QOFF, VSRC, VSCALE, ROT, POS, AXES, INERTIA, ARMATURE, SUBTREE_END, ANGLE,
 NCOL) = layout((
    ("PARENT", 1),       # parent body (-1 = world)
    ("JTYPE", 1),        # joint type
    # the joint's coordinates in the user's q and v (mimic joints follow their leader):
    # q_joint = q[QSRC] * QSCALE + QOFF, qd_joint = v[VSRC] * VSCALE, and its torque adds
    # VSCALE times itself to tau[VSRC]; a multi-coordinate joint takes q[QSRC:QSRC + nq] and
    # v[VSRC:VSRC + nv] (scale 1)
    ("QSRC", 1), ("QSCALE", 1), ("QOFF", 1), ("VSRC", 1), ("VSCALE", 1),
    ("ROT", 9),          # joint placement rotation in the parent's joint frame, row-major
    ("POS", 3),          # joint placement translation, in the parent's joint frame
    ("AXES", 9),         # Q, the joint frame's axes in the body frame (row-major)
    ("INERTIA", 10),     # mass, m*com (3), inertia about the origin (xx yy zz xy xz yz), joint frame
    ("ARMATURE", 1),     # rotor inertia of the joint's coordinate
    ("SUBTREE_END", 1),  # bodies are in depth-first order: body i's subtree is bodies i .. SUBTREE_END - 1
    ("ANGLE", 1),        # the q index of the joint's angle (a planar joint's third coordinate)
))

# last row
GRAVITY, NQ, NV, MIMIC, ORIGIN_BODY, MULTI, MODEL_END = layout((
    ("GRAVITY", 3),
    ("NQ", 1), ("NV", 1),    # size of the user's q and v
    ("MIMIC", 1),            # 1.0 if some joint mimics another
    # the body whose joint origin is the kernels' reference point (the first body, depth-first, whose
    # joint is not prismatic; -1: none, the world origin): inertias and spatial vectors are taken
    # about it, so that a robot far from the world origin keeps its precision
    ("ORIGIN_BODY", 1),
    ("MULTI", 1),            # 1.0 if a joint other than a floating root has several coordinates (CRBA's general path)
))
assert MODEL_END <= NCOL, "the model-wide values must fit in the last row"
