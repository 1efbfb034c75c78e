"""Pinocchio as a test oracle: the same robot loaded in both, states mapped by joint name."""
import os
import sysconfig

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
}


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


def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    if not a.size:
        return 0.0
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
