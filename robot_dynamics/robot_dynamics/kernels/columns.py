"""Workspace columns: a row of scratch per body, its columns named in (name, width) tables.

Every algorithm that places the bodies first shares the kinematics block; each algorithm's own
columns follow it (`layout(..., KINEMATICS_END)`), so columns are never numbered by hand and a
width changes in one place. Rows past the bodies hold the dense system of `hybrid` for mimic
models (see common.workspace).
"""


def layout(fields, start=0):
    """The first column of each of consecutive (name, width) fields from `start`, then the end."""
    firsts, column = [], start
    for _, width in fields:
        firsts.append(column)
        column += width
    return (*firsts, column)


#: kinematics: world rotation, position about o, inertia about o (10 parameters), S of each of
#: the joint's coordinates (up to 6), its angle with sine and cosine, and (row 0) o itself
W_R, W_P, W_I, W_S, W_JOINT, W_ORIGIN, KINEMATICS_END = layout(
    (("R", 9), ("P", 3), ("I", 10), ("S", 36), ("JOINT", 3), ("ORIGIN", 3)))
