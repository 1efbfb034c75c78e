"""Pinocchio as a test oracle: the same robot loaded in both, states mapped by joint name."""
import os
import sysconfig

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDFS = {
    "panda": os.path.join(ROBOTS, "panda_description", "urdf", "panda.urdf"),
    "ur5": os.path.join(ROBOTS, "ur_description", "urdf", "ur5_robot.urdf"),
    "talos": os.path.join(ROBOTS, "talos_data", "robots", "talos_reduced.urdf"),
    "mimic": os.path.join(REPO, "test", "data", "mimic_continuous_fixed.urdf"),
    "puma560": os.path.join(REPO, "urdf", "puma560.urdf"),
    "biped": os.path.join(REPO, "urdf", "floating_base_biped.urdf"),
}


class Pair:
    """Our model and Pinocchio's for one URDF, with state maps between them."""

    def __init__(self, name, floating_base=False):
        from robot_dynamics import load_urdf
        path = URDFS[name]
        self.model = load_urdf(path, floating_base=floating_base)
        args = (pin.JointModelFreeFlyer(),) if floating_base else ()
        self.pin = pin.buildModelFromUrdf(path, *args, mimic=self.model.has_mimic)
        self.data = self.pin.createData()
        self.pin.gravity.linear[:] = self.model.gravity
        m = self.model
        # which pinocchio joint holds each of our coordinates
        self.q_parts, self.v_idx = [], np.zeros(m.nv, int)
        names = list(self.pin.names)
        off_q, off_v = m.joint_offset
        if m.floating_base:
            self.q_parts.append((0, 7, slice(0, 7), "free"))
            self.v_idx[:6] = np.arange(6)
        for k, jn in enumerate(m.joint_names):
            j = self.pin.joints[names.index(jn)]
            kind = "continuous" if j.nq == 2 and j.nv == 1 else "plain"
            self.q_parts.append((off_q + k, 1, j.idx_q, kind))
            self.v_idx[off_v + k] = j.idx_v
        assert self.pin.nv == m.nv, (self.pin.nv, m.nv)

    def random_state(self, rng):
        m = self.model
        q = rng.uniform(-1.5, 1.5, m.nq)
        bounded = np.isfinite(m.lower_limits) & np.isfinite(m.upper_limits)
        lo, hi = np.where(bounded, m.lower_limits, -3.0), np.where(bounded, m.upper_limits, 3.0)
        q[m.joint_offset[0]:] = rng.uniform(lo, hi)
        if m.floating_base:
            quat = rng.normal(size=4)
            q[3:7] = quat / np.linalg.norm(quat)
        return q, rng.uniform(-2, 2, m.nv), rng.uniform(-3, 3, m.nv)

    def pin_q(self, q):
        out = np.zeros(self.pin.nq)
        for ours, n, where, kind in self.q_parts:
            if kind == "continuous":
                out[where:where + 2] = np.cos(q[ours]), np.sin(q[ours])
            elif kind == "free":
                out[where] = q[ours:ours + n]
            else:
                out[where] = q[ours]
        return out

    def pin_v(self, v):
        out = np.zeros(self.pin.nv)
        out[self.v_idx] = v
        return out

    def ours_v(self, pv):
        return np.asarray(pv)[self.v_idx]

    def ours_matrix(self, pm, upper_only=False):
        pm = np.asarray(pm)
        if upper_only:       # pin.crba fills the upper triangle only
            pm = np.triu(pm) + np.triu(pm, 1).T
        return pm[np.ix_(self.v_idx, self.v_idx)]


def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
