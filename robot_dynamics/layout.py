"""Column layout of Model.packed, the one float array the kernels read the model from.

Rows 0..nb-1 are bodies; the last row holds model-wide values.
"""
REVOLUTE, PRISMATIC, FREE = 0, 1, 2

# per-body row
PARENT, JTYPE, IQ, IV = 0, 1, 2, 3   # parent body (-1 = world), joint type, first q/v index
ROT = 4          # 9: joint placement rotation in the parent body frame, row-major
POS = 13         # 3: joint placement translation
AXIS = 16        # 3: unit joint axis in the body frame
INERTIA = 19     # 10: mass, m*com (3), inertia about the body origin (xx yy zz xy xz yz)
ARMATURE = 29    # rotor inertia of the joint's coordinate
NCOL = 30

# last row
GRAVITY = 0      # 3
NQ, NV = 3, 4    # size of the kernels' (full) coordinates
