"""Workspace columns: a row of scratch per body, its columns named in (name, width) tables.

Every algorithm that places the bodies first shares the kinematics block; each algorithm's own
columns follow it (`layout(..., KINEMATICS_END)`, the helper that lays out Model.packed too, in
..layout), so columns are never numbered by hand and a width changes in one place. Rows past the
bodies hold the dense system of `hybrid` for mimic models (see common.body_rows).
"""
from ..layout import layout  # noqa: F401 (the kernel modules take it from here)

#: kinematics: world rotation, position about o, inertia about o (10 parameters), S of each of
#: the joint's coordinates (up to 6), its angle with sine and cosine, and (row 0) o itself
W_R, W_P, W_I, W_S, W_JOINT, W_ORIGIN, KINEMATICS_END = layout(
    (("R", 9), ("P", 3), ("I", 10), ("S", 36), ("JOINT", 3), ("ORIGIN", 3)))
