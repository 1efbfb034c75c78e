"""The kinematic tree as plain per-body arrays, packed once for the compiled kernels.

A body is a link together with every link welded to it by fixed joints; body i hangs from
body parent[i] < i (-1 is the world) through one moving joint. Spatial vectors are ordered
[linear; angular] (Pinocchio's convention); inertias are kept as 10 parameters
(mass, first moment m*c, rotational inertia about the body origin).
"""
from dataclasses import dataclass, field

import numpy as np

from . import layout as L

REVOLUTE, PRISMATIC, FREE, PLANAR = L.REVOLUTE, L.PRISMATIC, L.FREE, L.PLANAR
REFERENCES = ("world", "local", "local_world_aligned")
#: the columns of Model.friction, and the default Coulomb smoothing band [rad/s or m/s]
FRICTION_TERMS = ("viscous", "coulomb", "offset")
COULOMB_BAND = 0.01


def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def inertia_about_origin(mass, com, inertia_com):
    """10 inertia parameters from mass, centre of mass and the 3x3 inertia about the COM."""
    com = np.asarray(com, float)
    rot = np.asarray(inertia_com, float) + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.concatenate(([mass], mass * com, sym_to_vec(rot)))


def sym_to_vec(m):
    return np.array([m[0, 0], m[1, 1], m[2, 2], m[0, 1], m[0, 2], m[1, 2]])


def vec_to_sym(v):
    return np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])


def transform_inertia(inertia, rotation, translation):
    """Inertia of a body given in frame B, expressed in frame A, where B sits at (R, p) in A
    (Featherstone, Rigid Body Dynamics Algorithms, ch. 2: I_A = X* I_B X, on the 10 parameters)."""
    m, h, rot = inertia[0], inertia[1:4], vec_to_sym(inertia[4:10])
    rh, px = rotation @ h, skew(translation)
    rot_a = rotation @ rot @ rotation.T - (skew(rh) @ px + px @ skew(rh)) - m * px @ px
    return np.concatenate(([m], rh + m * np.asarray(translation), sym_to_vec(rot_a)))


def unit_quaternion(xyzw, what="quaternion"):
    """A quaternion (x y z w) from outside the library (a pose message) scaled to unit norm, so
    that the kernels' check (layout.QUATERNION_TOL) always holds for it; ValueError naming `what`
    if it is not finite or its norm is off by more than 0.01 (tf2's tolerance): not a rotation."""
    x = np.asarray(xyzw, dtype=float).reshape(-1)
    norm = float(np.linalg.norm(x)) if x.shape == (4,) and np.all(np.isfinite(x)) else float("nan")
    if not abs(norm - 1.0) <= 1e-2:
        raise ValueError(f"{what} must be 4 finite numbers (x y z w) of unit norm, got {xyzw!r}"
                         + (f" (norm {norm:.6g})" if norm == norm else ""))
    return x / norm


def per_joint(values, n, name):
    """A number, or 1 or n numbers, as an array of n finite numbers (ValueError naming `name`)."""
    x = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if x.size not in (1, n) or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} takes one finite value or one per joint ({n}), got {values!r}")
    return np.broadcast_to(x, (n,)).copy()


def joint_frames(axis, joint_type):
    """Per body, a rotation Q whose z column is the joint axis (identity for a free flyer or
    an axis along z): the kernels' joint frame, see layout.py."""
    Q = np.tile(np.eye(3), (len(axis), 1, 1))
    for i, z in enumerate(axis):
        if joint_type[i] != FREE:         # a planar joint's z is its plane's normal
            x = np.cross([0.0, 1.0, 0.0] if abs(z[1]) < 0.9 else [1.0, 0.0, 0.0], z)
            x /= np.linalg.norm(x)
            Q[i] = np.column_stack((x, np.cross(z, x), z))
    return Q


def subtree_ends(parent):
    """One past the last body of each body's subtree, for bodies in depth-first order (each
    subtree a contiguous range, as urdf.py builds them; checked)."""
    end = np.arange(1, len(parent) + 1)
    for i in range(len(parent) - 1, -1, -1):
        if parent[i] >= 0:
            end[parent[i]] = max(end[parent[i]], end[i])
    for i in range(len(parent)):
        if not -1 <= parent[i] < i or np.any(parent[i + 1:end[i]] < i):
            raise ValueError(f"bodies are not in depth-first order at body {i}")
    return end


@dataclass
class Frame:
    name: str
    body: int                 # -1: fixed to the world
    rotation: np.ndarray      # placement of the frame in its body frame
    translation: np.ndarray


@dataclass(frozen=True)
class Joint:
    """A joint with coordinates of its own in the user's q and v (mimic joints have none)."""
    name: str
    kind: str                 # revolute, continuous, prismatic, planar or floating
    body: int                 # the body it moves
    idx_q: int
    nq: int
    idx_v: int
    nv: int


@dataclass
class Model:
    """Per-body arrays (index = body) and per-coordinate data for the joints.

    Coordinates come in two sets. The user's q/v: the multi-coordinate joints first (floating:
    7/6, planar: 3/3, depth-first), then one per actuated one-coordinate joint, in `joint_names`
    order; `joints` describes each block. The full set adds one coordinate per mimic joint;
    q_full = q[q_source] * q_scale + q_offset and v_full = v[v_source] * v_scale. `packed`
    gives each joint its source and scale, so the kernels take and return user coordinates.
    """
    name: str
    body_names: list
    parent: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray           # (nb, 3), unit, in the body frame
    tree_rotation: np.ndarray        # (nb, 3, 3) joint placement in the parent body frame
    tree_translation: np.ndarray     # (nb, 3)
    inertia: np.ndarray              # (nb, 10)
    body_joint_names: list           # moving joint of each body
    body_joint_kinds: list           # its URDF type (revolute, continuous, prismatic, planar, floating)
    body_links: list                 # the links lumped into each body, its own first
    idx_q: np.ndarray                # first full q index of each body's joint
    idx_v: np.ndarray
    joints: list                     # Joint per coordinate block of the user's q and v, in order
    joint_names: list                # actuated one-coordinate joints in user q order (no mimic)
    lower_limits: np.ndarray
    upper_limits: np.ndarray
    velocity_limits: np.ndarray
    effort_limits: np.ndarray
    q_source: np.ndarray
    q_scale: np.ndarray
    q_offset: np.ndarray
    v_source: np.ndarray
    v_scale: np.ndarray
    v_is_mimic: np.ndarray           # full v indices that follow another joint
    frames: dict
    joint_frames: dict = field(default_factory=dict)   # joint name -> its frame (see `frame`)
    warnings: list = field(default_factory=list)       # what the URDF loader warned about
    nq: int = 0
    nv: int = 0
    _gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    _armature: np.ndarray = None
    _friction: np.ndarray = None     # (joints, 3): FRICTION_TERMS per entry of joint_names
    _coulomb_band: np.ndarray = None
    #: the URDF text load_urdf read (written back with identified dynamics by DynamicsEstimate.to_urdf)
    urdf: str = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.nb = len(self.body_names)
        self.has_mimic = len(self.v_source) != self.nv
        self.joint_index = {n: i for i, n in enumerate(self.joint_names)}
        self.joint_by_name = {j.name: j for j in self.joints}
        #: per entry of joint_names: a continuous joint (its angle wraps)
        self.continuous = np.array([self.joint_by_name[n].kind == "continuous" for n in self.joint_names], bool)
        multi = [j for j in self.joints if j.kind in ("floating", "planar")]
        self._offset = (sum(j.nq for j in multi), sum(j.nv for j in multi))
        if self._armature is None:
            self._armature = np.zeros(self.nv)
        n = len(self.joint_names)
        self._friction = np.zeros((n, 3)) if self._friction is None else self._friction
        self._coulomb_band = np.full(n, COULOMB_BAND) if self._coulomb_band is None else self._coulomb_band
        self.packed = np.zeros((self.nb + 1, L.NCOL))
        self._pack()

    # --- published names ------------------------------------------------------------------
    @property
    def frame_names(self):
        return list(self.frames)

    @property
    def joint_offset(self):
        """Index of the first one-coordinate joint in q and in v (after the multi-coordinate
        joints: a floating base takes 7 and 6)."""
        return self._offset

    @property
    def root_joint(self):
        """The floating or planar joint at the root (a free-flying or planar base), or None."""
        if self.nb and self.parent[0] < 0 and self.joint_type[0] in (FREE, PLANAR):
            return self.joint_by_name[self.body_joint_names[0]]
        return None

    @property
    def floating_base(self):
        """The root body flies free (a floating root joint, or load_urdf(floating_base=True))."""
        root = self.root_joint
        return root is not None and root.kind == "floating"

    @property
    def total_mass(self):
        return float(self.inertia[:, 0].sum())

    # --- settable physics --------------------------------------------------------------------
    @property
    def gravity(self):
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value):
        g = np.asarray(value, float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers, got {value!r}")
        self._gravity = g
        self.packed[self.nb, L.GRAVITY:L.GRAVITY + 3] = g

    @property
    def armature(self):
        """Rotor inertia reflected through the gear, Ir*gr^2 per joint (Kajita et al., Humanoid
        Robots, section 6.4: the rotor's inertia seen at the joint)."""
        return self._armature[self.joint_offset[1]:].copy()

    @armature.setter
    def armature(self, value):
        arm = np.asarray(value, float).reshape(-1)
        n = len(self.joint_names)
        if arm.shape == (1,):
            arm = np.full(n, arm[0])
        if arm.shape != (n,) or not np.all(np.isfinite(arm)) or np.any(arm < 0):
            raise ValueError(f"armature must be {n} finite non-negative numbers (one per joint "
                             f"{self.joint_names}), got {value!r}")
        self._armature = np.concatenate((np.zeros(self.joint_offset[1]), arm))
        self._pack()

    @property
    def friction(self):
        """Joint friction, a row per entry of joint_names and a column per FRICTION_TERMS: viscous
        [N m s/rad or N s/m], Coulomb [N m or N], offset [N m or N] (URDF <dynamics damping friction>
        and the offset of the <robot_dynamics> extension). Not part of inverse dynamics:
        friction.friction_torques evaluates it."""
        return self._friction.copy()

    @friction.setter
    def friction(self, value):
        f = np.array(value, float)
        n = len(self.joint_names)
        if f.shape != (n, 3) or not np.all(np.isfinite(f)):
            raise ValueError(f"friction must be {n} rows of 3 finite numbers ({', '.join(FRICTION_TERMS)} of each "
                             f"joint {self.joint_names}), got {value!r}")
        self._friction = f

    @property
    def coulomb_band(self):
        """Per joint, the speed below which Coulomb friction is smoothed: fc * clip(v / band, -1, 1)
        [rad/s or m/s]."""
        return self._coulomb_band.copy()

    @coulomb_band.setter
    def coulomb_band(self, value):
        band = per_joint(value, len(self.joint_names), "coulomb_band")
        if np.any(band <= 0):
            raise ValueError(f"coulomb_band must be positive (one value or one per joint), got {value!r}")
        self._coulomb_band = band

    def set_body_inertia(self, body, inertia):
        """Replace one body's 10 inertia parameters (e.g. a payload added on the tool)."""
        inertia = np.asarray(inertia, float)
        if inertia.shape != (10,) or not np.all(np.isfinite(inertia)):
            raise ValueError(f"a body inertia is 10 finite numbers, got {inertia!r}")
        self.inertia[body] = inertia
        self._pack()

    def _pack(self):
        """One C-contiguous float array per model: the kernels take it as their only model
        argument (each extra argument costs ~0.08 us of dispatch)."""
        p = self.packed
        p[:self.nb, L.PARENT] = self.parent
        p[:self.nb, L.JTYPE] = self.joint_type
        p[:self.nb, L.QSRC] = self.q_source[self.idx_q]
        p[:self.nb, L.QSCALE] = self.q_scale[self.idx_q]
        p[:self.nb, L.QOFF] = self.q_offset[self.idx_q]
        p[:self.nb, L.VSRC] = self.v_source[self.idx_v]
        p[:self.nb, L.VSCALE] = self.v_scale[self.idx_v]
        Q = joint_frames(self.joint_axis, self.joint_type)
        Qp = np.array([Q[j] if j >= 0 else np.eye(3) for j in self.parent]).reshape(self.nb, 3, 3)
        p[:self.nb, L.ROT:L.ROT + 9] = (Qp.transpose(0, 2, 1) @ self.tree_rotation @ Q).reshape(self.nb, 9)
        p[:self.nb, L.POS:L.POS + 3] = np.einsum("bji,bj->bi", Qp, self.tree_translation)
        p[:self.nb, L.AXES:L.AXES + 9] = Q.reshape(self.nb, 9)
        p[:self.nb, L.INERTIA:L.INERTIA + 10] = np.reshape(
            [transform_inertia(I, q.T, np.zeros(3)) for I, q in zip(self.inertia, Q)], (self.nb, 10))
        # a mimic follower's rotor is its leader's: counted once, on the leader
        own = np.where(self.v_is_mimic, 0.0, self._armature[self.v_source])
        p[:self.nb, L.ARMATURE] = np.where(np.isin(self.joint_type, (FREE, PLANAR)), 0.0, own[self.idx_v])
        p[:self.nb, L.SUBTREE_END] = subtree_ends(self.parent)
        p[self.nb, L.GRAVITY:L.GRAVITY + 3] = self._gravity
        p[self.nb, L.NQ] = self.nq
        p[self.nb, L.NV] = self.nv
        p[self.nb, L.MIMIC] = self.has_mimic
        p[:self.nb, L.ANGLE] = p[:self.nb, L.QSRC] + np.where(self.joint_type == PLANAR, 2, 0)
        rotating = np.flatnonzero(self.joint_type != PRISMATIC)
        p[self.nb, L.ORIGIN_BODY] = rotating[0] if len(rotating) else -1
        multi = np.isin(self.joint_type, (FREE, PLANAR))
        p[self.nb, L.MULTI] = multi[1:].any() or (self.nb > 0 and self.joint_type[0] == PLANAR)

    def frame(self, name):
        """A frame by name: a link's name names the link's frame; a joint's name names the
        joint's frame (its child link's frame) unless a link has that name, and
        `joint:<name>` always names joint <name>'s frame."""
        if not isinstance(name, str):
            raise TypeError(f"frame must be a link or joint name (a str), got {type(name).__name__} {name!r}; the model "
                            f"has frames {', '.join(self.frame_names)}")
        try:
            return self.frames[name]
        except KeyError:
            pass
        if name.startswith("joint:") and name[6:] in self.joint_frames:
            return self.joint_frames[name[6:]]
        raise KeyError(f"unknown frame {name!r}; the model has frames "
                       f"{', '.join(self.frame_names)}") from None

    def body_subtree_links(self, body):
        """The links of `body` and of every body below it."""
        end = int(self.packed[body, L.SUBTREE_END])
        return [link for b in range(body, end) for link in self.body_links[b]]
