"""Every algorithm against Pinocchio on the test robots (conftest.ROBOTS), at 100 random states each."""
import numpy as np
import pytest

from oracle import pin, rel_err
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
