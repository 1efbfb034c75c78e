"""Pinocchio as a test oracle: the same robot loaded in both, states mapped by joint name."""
import os
import re
import sysconfig
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: an arm whose last link, a rotor with mass but no rotational inertia turning about its own COM, makes M singular
SINGULAR_ROTOR = (
    '<robot name="r"><link name="base"/><link name="upper"><inertial><origin xyz="0.3 0 0"/><mass value="1"/>'
    '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="rotor">'
    '<inertial><mass value="0.5"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/></joint>'
    '<joint name="spin" type="continuous"><parent link="upper"/><child link="rotor"/><axis xyz="0 0 1"/></joint>'
    '</robot>')
URDFS = {
    "panda": os.path.join(ROBOTS, "panda_description", "urdf", "panda.urdf"),
    "ur5": os.path.join(ROBOTS, "ur_description", "urdf", "ur5_robot.urdf"),
    "talos": os.path.join(ROBOTS, "talos_data", "robots", "talos_reduced.urdf"),
    "mimic": os.path.join(REPO, "test", "data", "mimic_continuous_fixed.urdf"),
    "puma560": os.path.join(REPO, "urdf", "puma560.urdf"),
    "biped": os.path.join(REPO, "urdf", "floating_base_biped.urdf"),
    "planar_base_arm": os.path.join(REPO, "test", "data", "planar_base_arm.urdf"),          # planar root, mimic
    "floating_object_arm": os.path.join(REPO, "test", "data", "floating_object_arm.urdf"),  # floating root, planar
                                                                                            # and floating mid-tree
    "solo12": os.path.join(ROBOTS, "solo_description", "robots", "solo12.urdf"),
    "four_bar": os.path.join(REPO, "test", "data", "four_bar.urdf"),   # a loop closed by a constraint
    "five_bar": os.path.join(REPO, "urdf", "five_bar.urdf"),           # a parallel robot: a tree and a 6d loop
}
#: the five-bar's loop (urdf/five_bar.urdf's header), its motors and its passive joints
FIVE_BAR_LOOPS = [("end_effector", "right_distal_tip", "6d")]
FIVE_BAR_MOTORS = ["left_base_joint", "right_base_joint"]
FIVE_BAR_PASSIVE = ["left_elbow_joint", "right_elbow_joint", "end_joint"]
#: the four-bar's loop (test/data/four_bar.urdf) and solo12's feet
FOUR_BAR_LOOPS = [("coupler_tip", "rocker_tip", "point")]
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


class Pair:
    """Our model and Pinocchio's for one URDF, with state maps between them. Pinocchio loads
    mimic joints as independent ones; G maps our coordinates onto its (v_pin = G v, with
    q_pin from the mimic relations), so tau = G^T tau_pin, M = G^T M_pin G, J = J_pin G."""

    def __init__(self, name, floating_base=False, path=None):
        from robot_dynamics import load_urdf
        path = path or URDFS[name]
        self.model = m = load_urdf(path, floating_base=floating_base)
        args = (pin.JointModelFreeFlyer(),) if floating_base else ()
        self.pin = pin.buildModelFromUrdf(path, *args)
        self.data = self.pin.createData()
        self.pin.gravity.linear[:] = m.gravity
        names = list(self.pin.names)
        self.q_parts, self.G = [], np.zeros((self.pin.nv, m.nv))
        for b, jname in enumerate(m.body_joint_names):
            j = self.pin.joints[names.index(jname)]
            kind = m.body_joint_kinds[b]
            self.q_parts.append((m.idx_q[b], {"floating": 7, "planar": 3}.get(kind, 1), j.idx_q, kind))
            for d in range(j.nv):
                f = m.idx_v[b] + d
                self.G[j.idx_v + d, m.v_source[f]] += m.v_scale[f]
        assert self.pin.njoints - 1 == m.nb and self.pin.nv == len(m.v_source), (self.pin.nv, m.nv)
        self.permutation = not m.has_mimic      # G only reorders: Pinocchio's aba applies as is

    def random_state(self, rng):
        from robot_dynamics import dynamics as rd
        m = self.model
        q = rd.random_configuration(m, rng)
        bounded = np.isfinite(m.lower_limits) & np.isfinite(m.upper_limits)
        lo, hi = np.where(bounded, m.lower_limits, -3.0), np.where(bounded, m.upper_limits, 3.0)
        q[m.joint_offset[0]:] = rng.uniform(lo, hi)
        return q, rng.uniform(-2, 2, m.nv), rng.uniform(-3, 3, m.nv)

    def states(self, n, seed=0, tau=False):
        """n random states (q, v, a), each drawn by random_state from one generator seeded with
        `seed`; with tau=True each also has a random joint torque, (q, v, a, tau)."""
        rng = np.random.default_rng(seed)
        return [self.random_state(rng) + ((rng.uniform(-5, 5, self.model.nv),) if tau else ()) for _ in range(n)]

    def pin_q(self, q):
        m = self.model
        full = q[m.q_source] * m.q_scale + m.q_offset
        out = np.zeros(self.pin.nq)
        for ours, n, where, kind in self.q_parts:
            if kind == "continuous":
                out[where:where + 2] = np.cos(full[ours]), np.sin(full[ours])
            elif kind == "planar":
                out[where:where + 4] = full[ours], full[ours + 1], np.cos(full[ours + 2]), np.sin(full[ours + 2])
            else:
                out[where:where + n] = full[ours:ours + n]
        return out

    def pin_v(self, v):
        return self.G @ v

    def ours_v(self, pv):
        return self.G.T @ np.asarray(pv)

    def ours_matrix(self, pm, upper_only=False):
        pm = np.asarray(pm)
        if upper_only:       # pin.crba fills the upper triangle only
            pm = np.triu(pm) + np.triu(pm, 1).T
        return self.G.T @ pm @ self.G

    def ours_jacobian(self, J):
        return np.asarray(J).reshape(6, self.pin.nv) @ self.G

    def forward_dynamics(self, q, v, tau):
        """Pinocchio's aba, or for mimic models the solve of G^T M G qdd = tau - G^T b."""
        pq, pv = self.pin_q(q), self.pin_v(v)
        if self.permutation:
            return self.ours_v(pin.aba(self.pin, self.data, pq, pv, self.G @ tau))
        M = self.ours_matrix(pin.crba(self.pin, self.data, pq), upper_only=True)
        return np.linalg.solve(M, tau - self.ours_v(pin.nonLinearEffects(self.pin, self.data, pq, pv)))

    def frame_id(self, name):
        """Pinocchio's frame for one of our frame names (a link's name means the link)."""
        if name.startswith("joint:"):
            return self.pin.getFrameId(name[6:], pin.FrameType.JOINT) if self.pin.existFrame(name[6:], pin.FrameType.JOINT) \
                else self.pin.getFrameId(name[6:], pin.FrameType.FIXED_JOINT)
        if self.pin.existFrame(name, pin.FrameType.BODY):
            return self.pin.getFrameId(name, pin.FrameType.BODY)
        return self.pin.getFrameId(name)


    def constraint_terms(self, q, v, contacts=(), loops=()):
        """Pinocchio's M (crba), b (nonLinearEffects), the constraint Jacobian (frame Jacobians in
        LOCAL_WORLD_ALIGNED, rows [linear] or [linear; angular]; a loop's frame a's minus frame
        b's) and its drift Jdot v (the frames' classical accelerations at qdd = 0: linear from
        getFrameClassicalAcceleration, angular from getFrameAcceleration), in our coordinates."""
        pq, pv = self.pin_q(q), self.pin_v(v)
        M = self.ours_matrix(pin.crba(self.pin, self.data, pq), upper_only=True)
        b = self.ours_v(pin.nonLinearEffects(self.pin, self.data, pq, pv))
        frames = [(c[0], None, c[1]) for c in contacts] + [tuple(c) for c in loops]
        jac = {f: self.ours_jacobian(pin.computeFrameJacobian(self.pin, self.data, pq, self.frame_id(f),
                                                              pin.LOCAL_WORLD_ALIGNED))
               for a, b_, kind in frames for f in (a, b_) if f is not None}
        pin.forwardKinematics(self.pin, self.data, pq, pv, np.zeros(self.pin.nv))
        pin.updateFramePlacements(self.pin, self.data)

        def classical(frame):
            if frame is None:
                return np.zeros(6)
            fid = self.frame_id(frame)
            return np.concatenate((pin.getFrameClassicalAcceleration(self.pin, self.data, fid, pin.LOCAL_WORLD_ALIGNED).linear,
                                   pin.getFrameAcceleration(self.pin, self.data, fid, pin.LOCAL_WORLD_ALIGNED).angular))
        rows, drift = [], []
        for a, b_, kind in frames:
            n = 3 if kind == "point" else 6
            rows.append((jac[a] - (jac[b_] if b_ is not None else 0.0))[:n])
            drift.append((classical(a) - classical(b_))[:n])
        return M, b, np.vstack(rows), np.concatenate(drift)


def srdf_posture(model, name):
    """q of the SRDF group state `name` of solo12 (example-robot-data's solo.srdf)."""
    from robot_dynamics import dynamics as rd
    path = os.path.join(ROBOTS, "solo_description", "srdf", "solo.srdf")
    state = next(s for s in ET.parse(path).getroot().iter("group_state") if s.get("name") == name)
    q = rd.neutral(model)
    for joint in state.iter("joint"):
        values = [float(x) for x in joint.get("value").split()]
        if joint.get("name") == "root_joint":
            q[:7] = values
        else:
            q[model.joint_offset[0] + model.joint_index[joint.get("name")]] = values[0]
    return q


def null_space(J, rtol=1e-9):
    """An orthonormal basis of J's null space (its rank taken at rtol of the largest singular value)."""
    U, sv, Vt = np.linalg.svd(J)
    r = int(np.sum(sv > rtol * sv.max())) if sv.size and sv.max() > 0 else 0
    return Vt[r:].T


def moving_state(pair, q, contacts=(), loops=(), rng=None, speed=1.0):
    """v and a that meet the constraints at q (J v = 0 and J a + Jdot v = 0), from Pinocchio's J
    and Jdot v: v random in J's null space, a the least-norm solution of J a = -Jdot v plus a
    random null-space part."""
    rng = rng or np.random.default_rng(0)
    J = pair.constraint_terms(q, np.zeros(pair.model.nv), contacts, loops)[2]
    N = null_space(J)
    v = N @ rng.normal(scale=speed, size=N.shape[1])
    J, drift = pair.constraint_terms(q, v, contacts, loops)[2:]
    a = np.linalg.lstsq(J, -drift, rcond=1e-10)[0] + N @ rng.normal(scale=speed, size=N.shape[1])
    return v, a


def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    if not a.size:
        return 0.0
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


# --- a robot far from the world origin (URDFs written into tmp_path) -----------------------------
def _root(text):
    links = re.findall(r'<link\s+name="([^"]+)"', text)
    children = set(re.findall(r'<child\s+link="([^"]+)"', text))
    return next(link for link in links if link not in children)


def _prepend(path, tmp_path, name, extra):
    """A copy of the URDF at `path` with `extra` (links and joints above its root) added."""
    text = open(path).read()
    extra = extra.replace("ROOT", _root(text))
    out = tmp_path / f"{name}.urdf"
    out.write_text(re.sub(r"(<robot[^>]*>)", lambda m: m.group(1) + extra, text, count=1))
    return str(out)


def far_away(path, tmp_path, name, xyz="1000 -700 300"):
    """The robot bolted to the ground 1.26 km from the map origin."""
    return _prepend(path, tmp_path, name, f'<link name="map"/><joint name="far" type="fixed"><parent link="map"/>'
                                          f'<child link="ROOT"/><origin xyz="{xyz}" rpy="0.1 0.2 0.3"/></joint>')


def on_slides(path, tmp_path, name, limit=1e6):
    """The robot on x and y slides with placeholder limits, as mobile bases are often modelled."""
    slide = '<limit lower="-{0}" upper="{0}" effort="100" velocity="1"/>'.format(limit)
    return _prepend(path, tmp_path, name,
                    '<link name="map"/><link name="slide_x"/>'
                    f'<joint name="x" type="prismatic"><parent link="map"/><child link="slide_x"/><axis xyz="1 0 0"/>{slide}</joint>'
                    f'<joint name="y" type="prismatic"><parent link="slide_x"/><child link="ROOT"/><axis xyz="0 1 0"/>{slide}</joint>')
