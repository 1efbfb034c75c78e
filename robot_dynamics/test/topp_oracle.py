"""Oracles for time_parameterize: the PyPI toppra package with Pinocchio's RNEA as its inverse
dynamics, on the same path samples at the same gridpoints, and an independent solve of the
reachable and controllable sets (every 2-variable LP by enumerating its vertices, on
coefficients from Pinocchio) for the maximality check."""
import logging
import os
import re

import numpy as np
import pytest

from oracle import URDFS, Pair, pin

toppra = pytest.importorskip("toppra")
import toppra.algorithm  # noqa: E402
import toppra.constraint as tc  # noqa: E402

logging.getLogger("toppra").setLevel(logging.ERROR)
COLLOCATION = tc.DiscretizationType.Collocation
INTERPOLATION = tc.DiscretizationType.Interpolation

ONE_JOINT = """<robot name="one"><link name="base"/>
<link name="arm"><inertial><origin xyz="{r} 0 0"/><mass value="{m}"/>
<inertia ixx="0.03" iyy="0.04" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
<limit lower="-3" upper="3" effort="{effort}" velocity="{velocity}"/></joint></robot>"""


def panda_arm_urdf(folder):
    """example-robot-data's panda with its finger joints fixed (the arm only; the hand and
    fingers stay as mass on the last link)."""
    text = open(URDFS["panda"]).read()
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=)"prismatic"', r'\1"fixed"', text)
    text = re.sub(r'<mimic joint="panda_finger_joint1"/>', "", text)
    path = os.path.join(folder, "panda_arm.urdf")
    with open(path, "w") as f:
        f.write(text)
    return path


def one_joint_urdf(folder, m=2.0, r=0.4, izz=0.05, effort=30.0, velocity=1000.0):
    path = os.path.join(folder, "one_joint.urdf")
    with open(path, "w") as f:
        f.write(ONE_JOINT.format(m=m, r=r, izz=izz, effort=effort, velocity=velocity))
    return path


def with_payload_urdf(folder, path, link, mass, com, inertia):
    """The URDF with a payload welded to `link` as a link of its own."""
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    text = open(path).read().replace("</robot>", f"""
  <link name="payload"><inertial><origin xyz="{' '.join(map(str, com))}"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial></link>
  <joint name="payload_joint" type="fixed"><parent link="{link}"/><child link="payload"/></joint>
</robot>""")
    out = os.path.join(folder, "with_payload.urdf")
    with open(out, "w") as f:
        f.write(text)
    return out


class SampledPath(toppra.interpolator.AbstractGeometricPath):
    """The path as toppra sees it: exactly our samples, at our gridpoints only."""

    def __init__(self, s, q, dq, ddq):
        self.s, self.samples = s, (q, dq, ddq)

    def __call__(self, path_positions, order=0):
        k = np.searchsorted(self.s, path_positions)
        assert np.array_equal(self.s[k], path_positions), "toppra asked off the gridpoints"
        return self.samples[order][k]

    @property
    def dof(self):
        return self.samples[0].shape[1]

    @property
    def path_interval(self):
        return np.array([self.s[0], self.s[-1]])

    @property
    def waypoints(self):
        return None


def pin_pair(path, armature=None, gravity=None):
    pair = Pair("arm", path=path)
    if armature is not None:
        pair.model.armature = armature
        pair.pin.armature[:] = armature
    if gravity is not None:
        pair.model.gravity = gravity
        pair.pin.gravity.linear[:] = gravity
    return pair


def toppra_solve(pair, s, q, dq, ddq, effort, vmax, accel=None, start=0.0, end=0.0, scheme=COLLOCATION):
    """toppra 0.6 (seidel solver, collocation: the constraints of gridpoint i on (u_i, x_i), as
    ours; or scheme=INTERPOLATION: also gridpoint i+1's on (u_i, x_i + 2 ds_i u_i)) with Pinocchio's
    RNEA: (sd, duration)."""
    inv_dyn = lambda q_, v_, a_: pin.rnea(pair.pin, pair.data, q_, v_, a_)  # noqa: E731
    constraints = [tc.JointTorqueConstraint(inv_dyn, np.stack((-effort, effort), 1), np.zeros(len(effort)),
                                            discretization_scheme=scheme)]
    if vmax is not None:
        constraints.append(tc.JointVelocityConstraint(np.stack((-vmax, vmax), 1)))
    if accel is not None:
        constraints.append(tc.JointAccelerationConstraint(np.stack((-accel, accel), 1), discretization_scheme=scheme))
    algorithm = toppra.algorithm.TOPPRA(constraints, SampledPath(s, q, dq, ddq), gridpoints=s, solver_wrapper="seidel")
    _, sd, _ = algorithm.compute_parameterization(start, end)
    assert sd is not None and np.all(np.isfinite(sd)), "toppra failed"
    return sd, float(np.sum(2.0 * np.diff(s) / (sd[1:] + sd[:-1])))


# --- the independent reachability check ------------------------------------------------------------
def pin_coefficients(pair, q, dq, ddq):
    """(a, b, c) of tau = a u + b x + c at each gridpoint, from Pinocchio's RNEA."""
    rnea = lambda *x: pin.rnea(pair.pin, pair.data, *x)  # noqa: E731
    z = np.zeros(q.shape[1])
    c = np.array([rnea(qi, z, z) for qi in q])
    a = np.array([rnea(qi, z, d) for qi, d in zip(q, dq)]) - c
    b = np.array([rnea(qi, d, dd) for qi, d, dd in zip(q, dq, ddq)]) - c
    return a, b, c


def stage_halfplanes(a, b, c, dq, ddq, effort, vmax, accel, i):
    """Gridpoint i's constraints G (u, x) <= h."""
    G, h = [], []
    for j in range(a.shape[1]):
        G += [(a[i, j], b[i, j]), (-a[i, j], -b[i, j])]
        h += [effort[j] - c[i, j], effort[j] + c[i, j]]
        if accel is not None:
            G += [(dq[i, j], ddq[i, j]), (-dq[i, j], -ddq[i, j])]
            h += [accel[j], accel[j]]
        if vmax is not None and np.isfinite(vmax[j]) and dq[i, j] != 0.0:
            G.append((0.0, 1.0))
            h.append((vmax[j] / dq[i, j]) ** 2)
    G.append((0.0, -1.0))
    h.append(0.0)
    return np.array(G), np.array(h)


def lp2(objective, G, h):
    """max objective . z over G z <= h in two variables, by enumerating the vertices (exact up to
    rounding; every LP here is bounded). None if empty."""
    k, l = np.triu_indices(len(h), 1)
    det = G[k, 0] * G[l, 1] - G[k, 1] * G[l, 0]
    ok = np.abs(det) > 1e-300
    k, l, det = k[ok], l[ok], det[ok]
    z = np.stack(((h[k] * G[l, 1] - h[l] * G[k, 1]) / det, (G[k, 0] * h[l] - G[l, 0] * h[k]) / det), 1)
    slack = G @ z.T - h[:, None]
    scale = np.abs(G) @ np.abs(z.T) + np.abs(h)[:, None]
    feasible = np.all(slack <= 1e-11 * scale, axis=0)
    if not feasible.any():
        return None
    return float(np.max(z[feasible] @ objective))


def reachable_and_controllable(a, b, c, dq, ddq, s, effort, vmax, accel=None, x_start=0.0, x_end=0.0, x=None):
    """Per gridpoint the largest x = sd^2 that is both reachable from x_start and controllable to
    x_end (the controllable sets K backward, then the reachable sets within them forward), the
    first segment i whose ends cannot both be at that largest x (no u joins them: a dynamic
    singularity, where no profile is maximal at both; -1 if none), and, given a profile x, the
    greedy step from each x_i: the largest x_i+1 in K_i+1 reachable from x_i alone."""
    N = len(s) - 1
    ds = np.diff(s)
    K = np.empty((N + 1, 2))
    K[N] = x_end
    stages = [stage_halfplanes(a, b, c, dq, ddq, effort, vmax, accel, i) for i in range(N + 1)]

    def segment(i, lo, hi):
        """Stage i's constraints with x in [lo, hi] and x + 2 ds_i u in K_i+1."""
        G, h = stages[i]
        G = np.vstack((G, [(2 * ds[i], 1.0), (-2 * ds[i], -1.0), (0.0, 1.0), (0.0, -1.0)]))
        return G, np.append(h, [K[i + 1, 1], -K[i + 1, 0], hi, -lo])

    up, down, step = np.array([0.0, 1.0]), np.array([0.0, -1.0]), lambda i: np.array([2 * ds[i], 1.0])
    for i in range(N - 1, -1, -1):
        G, h = segment(i, 0.0, np.inf)
        K[i] = -lp2(down, G[:-2], h[:-2]), lp2(up, G[:-2], h[:-2])
    L = np.empty((N + 1, 2))
    L[0] = x_start
    for i in range(N):
        G, h = segment(i, *L[i])
        L[i + 1] = -lp2(-step(i), G, h), lp2(step(i), G, h)
    best = L[:, 1]
    broken = -1
    for i in range(N):
        G, h = segment(i, best[i] * (1 - 1e-12), best[i])
        reach = lp2(step(i), G, h)
        if reach is None or reach < best[i + 1] * (1 - 1e-9):
            broken = i
            break
    greedy = None
    if x is not None:
        greedy = np.array([x[0]] + [lp2(step(i), *segment(i, x[i] * (1 - 1e-12), x[i])) for i in range(N)])
    return best, K, broken, greedy
