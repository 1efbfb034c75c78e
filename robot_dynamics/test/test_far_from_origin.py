"""Precision far from the world origin: a robot 1 km out, and a mobile base modelled as prismatic
joints with placeholder limits of +-1e6 m, agree with Pinocchio to 1e-9 relative. (Inertias
taken about the world origin lose eps m d^2: 2e-4 at 1e6 m.)"""
import re

import numpy as np
import pytest

from oracle import URDFS, Pair, pin, rel_err
from robot_dynamics import dynamics as rd

TOL = 1e-9


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


CASES = {
    "panda-1km": lambda tmp: (Pair(None, path=far_away(URDFS["panda"], tmp, "panda_far")), None),
    "ur5-on-1e6-slides": lambda tmp: (Pair(None, path=on_slides(URDFS["ur5"], tmp, "ur5_slides")), "slides"),
    "talos-on-1e6-slides": lambda tmp: (Pair(None, path=on_slides(URDFS["talos"], tmp, "talos_slides")), "slides"),
    "talos-freeflyer-1km": lambda tmp: (Pair("talos", True), "freeflyer"),
    "planar-base-1km": lambda tmp: (Pair("planar_base_arm"), "planar"),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory):
    pair, kind = CASES[request.param](tmp_path_factory.mktemp(request.param))
    return pair, kind


def far_states(pair, kind, n=30, seed=21):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q, v, a = pair.random_state(rng)       # on the slides: within +-1e6 m
        if kind == "freeflyer":
            q[:3] += [1000.0, -700.0, 300.0]
        elif kind == "planar":
            q[:2] += [1000.0, -700.0]
        yield q, v, a


def test_dynamics_far_out_agree_with_pinocchio(case):
    P, kind = case
    m = P.model
    for q, v, a in far_states(P, kind):
        pq, pv = P.pin_q(q), P.pin_v(v)
        if kind == "slides":
            assert np.abs(q[:2]).max() > 1e4        # the robot is far out
        assert rel_err(rd.inverse_dynamics(m, q, v, a), P.ours_v(pin.rnea(P.pin, P.data, pq, pv, P.pin_v(a)))) < TOL
        assert rel_err(rd.mass_matrix(m, q), P.ours_matrix(pin.crba(P.pin, P.data, pq), upper_only=True)) < TOL
        tau = np.random.default_rng(3).uniform(-5, 5, m.nv)
        assert rel_err(rd.forward_dynamics(m, q, v, tau), P.forward_dynamics(q, v, tau)) < TOL
        frame = m.frame_names[-1]
        wrench = {frame: (np.arange(1.0, 7.0), "world")}
        expected = rd.inverse_dynamics(m, q, v, a) - rd.frame_jacobian(m, q, frame, "world").T @ wrench[frame][0]
        assert rel_err(rd.inverse_dynamics(m, q, v, a, wrench), expected) < TOL
        for reference in ("world", "local", "local_world_aligned"):
            J = pin.computeFrameJacobian(P.pin, P.data, pq, P.frame_id(frame), getattr(pin.ReferenceFrame, reference.upper()))
            assert rel_err(rd.frame_jacobian(m, q, frame, reference), P.ours_jacobian(J)) < TOL


def test_coriolis_far_out_equals_the_coriolis_at_home(case):
    """Pinocchio's Coriolis matrix loses the precision far out (it takes inertias about the world
    origin); C does not depend on where the robot stands, so compare with it at home."""
    P, kind = case
    m = P.model
    for q, v, _ in far_states(P, kind):
        home = q.copy()
        if kind in ("slides", "freeflyer", "planar"):
            home[:2 if kind != "freeflyer" else 3] = 0.0
        C = rd.coriolis_matrix(m, q, v)
        expected = P.ours_matrix(pin.computeCoriolisMatrix(P.pin, P.data, P.pin_q(home), P.pin_v(v)))
        if kind is None:        # bolted far away (and tilted): Pinocchio on the robot at the origin
            at_home = Pair("panda")
            expected = at_home.ours_matrix(pin.computeCoriolisMatrix(at_home.pin, at_home.data, at_home.pin_q(q),
                                                                     at_home.pin_v(v)))
        assert rel_err(C, expected) < TOL
        assert rel_err(C @ v, rd.bias_forces(m, q, v) - rd.gravity_torques(m, q)) < TOL
