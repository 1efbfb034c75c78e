"""Every algorithm of rigid_body.py against Pinocchio on the test robots (conftest.ROBOTS), at 100
random states each; and far from the world origin: a robot 1 km out, and a mobile base modelled as
prismatic joints with placeholder limits of +-1e6 m, agree with Pinocchio to 1e-9 relative.
(Inertias taken about the world origin lose eps m d^2: 2e-4 at 1e6 m.)"""
import numpy as np
import pytest

from oracle import URDFS, Pair, far_away, on_slides, pin, rel_err
from robot_dynamics import dynamics as rd

N_STATES, TOL = 100, 1e-9


def states(pair):
    return pair.states(N_STATES, tau=True)


def test_inverse_dynamics_gravity_bias(pair):
    m, P = pair.model, pair
    for q, v, a, _ in states(pair):
        pq, pv = P.pin_q(q), P.pin_v(v)
        assert rel_err(rd.inverse_dynamics(m, q, v, a), P.ours_v(pin.rnea(P.pin, P.data, pq, pv, P.pin_v(a)))) < TOL
        assert rel_err(rd.gravity_torques(m, q), P.ours_v(pin.computeGeneralizedGravity(P.pin, P.data, pq))) < TOL
        assert rel_err(rd.bias_forces(m, q, v), P.ours_v(pin.nonLinearEffects(P.pin, P.data, pq, pv))) < TOL


def test_inverse_dynamics_with_external_wrenches(pair):
    """f_ext on two links, in each reference; Pinocchio takes local joint-frame forces."""
    m, P = pair.model, pair
    frames = [f for f in m.frame_names if m.frame(f).body >= 0][-2:]
    rng = np.random.default_rng(1)
    for (q, v, a, _), ref in zip(states(pair), ["world", "local", "local_world_aligned"] * N_STATES):
        wrenches = {f: rng.normal(size=6) for f in frames}
        ours = rd.inverse_dynamics(m, q, v, a, {f: (w, ref) for f, w in wrenches.items()})
        pq = P.pin_q(q)
        pin.framesForwardKinematics(P.pin, P.data, pq)
        fext = [pin.Force.Zero() for _ in range(P.pin.njoints)]
        for f, w in wrenches.items():
            fid = P.frame_id(f)
            oMf, jid = P.data.oMf[fid], P.pin.frames[fid].parentJoint
            frame_axes = {"world": pin.SE3.Identity(), "local": oMf,
                          "local_world_aligned": pin.SE3(np.eye(3), oMf.translation)}[ref]
            world_force = frame_axes.act(pin.Force(w[:3], w[3:]))
            fext[jid] += P.data.oMi[jid].actInv(world_force)
        expected = pin.rnea(P.pin, P.data, pq, P.pin_v(v), P.pin_v(a), fext)
        assert rel_err(ours, P.ours_v(expected)) < TOL


def test_mass_and_coriolis_matrices(pair):
    m, P = pair.model, pair
    for q, v, _, _ in states(pair):
        pq, pv = P.pin_q(q), P.pin_v(v)
        M = P.ours_matrix(pin.crba(P.pin, P.data, pq), upper_only=True)
        assert rel_err(rd.mass_matrix(m, q), M) < TOL
        assert rel_err(rd.coriolis_matrix(m, q, v), P.ours_matrix(pin.computeCoriolisMatrix(P.pin, P.data, pq, pv))) < TOL
        C = rd.coriolis_matrix(m, q, v)
        assert rel_err(C @ v, rd.bias_forces(m, q, v) - rd.gravity_torques(m, q)) < TOL


def test_forward_dynamics(pair):
    m, P = pair.model, pair
    for q, v, _, tau in states(pair):
        assert rel_err(rd.forward_dynamics(m, q, v, tau), P.forward_dynamics(q, v, tau)) < TOL


@pytest.mark.parametrize("reference,pin_ref", [("world", "WORLD"), ("local", "LOCAL"),
                                               ("local_world_aligned", "LOCAL_WORLD_ALIGNED")])
def test_jacobians_and_placements(pair, reference, pin_ref):
    m, P = pair.model, pair
    frames = m.frame_names
    for k, (q, _, _, _) in enumerate(states(pair)):
        frame = frames[(7 * k) % len(frames)]
        pq = P.pin_q(q)
        fid = P.frame_id(frame)
        J = pin.computeFrameJacobian(P.pin, P.data, pq, fid, getattr(pin.ReferenceFrame, pin_ref))
        pin.framesForwardKinematics(P.pin, P.data, pq)
        assert rel_err(rd.frame_jacobian(m, q, frame, reference), P.ours_jacobian(J)) < TOL
        assert rel_err(rd.frame_placement(m, q, frame), P.data.oMf[fid].homogeneous) < TOL
        F = np.random.default_rng(k).normal(size=6)
        assert rel_err(rd.wrench_to_joint_torques(m, q, frame, F, reference), P.ours_jacobian(J).T @ F) < TOL


# --- far from the origin ---------------------------------------------------------------------------
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
