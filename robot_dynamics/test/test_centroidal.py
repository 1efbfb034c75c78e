"""The centre of mass, its Jacobian, the centroidal momentum and its matrix, and the energies
(robot_dynamics/centroidal.py) against Pinocchio's centerOfMass, jacobianCenterOfMass,
computeCentroidalMomentum, ccrba, computeKineticEnergy and computePotentialEnergy on the test robots
(fixed, free flyer, mimic, planar and floating joints), 1e-9 relative; against each other and the
dynamics (h_G = A_G v, cdot = J_com v, T = v^T M v / 2, g(q) = dV/dq); a free rigid body's closed
form; far from the origin; batches equal single states; bad inputs refused by name."""
import numpy as np
import pytest

from oracle import URDFS, Pair, pin, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf

N_STATES, TOL = 40, 1e-9


def pin_momentum(P, q, v):
    h = pin.computeCentroidalMomentum(P.pin, P.data, P.pin_q(q), P.pin_v(v))
    return np.concatenate([h.linear, h.angular])


def test_against_pinocchio(pair):
    m, P = pair.model, pair
    for q, v, _ in pair.states(N_STATES):
        pq, pv = P.pin_q(q), P.pin_v(v)
        assert rel_err(rd.center_of_mass(m, q), pin.centerOfMass(P.pin, P.data, pq)) < TOL
        assert rel_err(rd.center_of_mass_jacobian(m, q), pin.jacobianCenterOfMass(P.pin, P.data, pq) @ P.G) < TOL
        assert rel_err(rd.centroidal_momentum_matrix(m, q), pin.ccrba(P.pin, P.data, pq, pv) @ P.G) < TOL
        assert rel_err(rd.centroidal_momentum(m, q, v), pin_momentum(P, q, v)) < TOL
        assert rel_err(rd.kinetic_energy(m, q, v), pin.computeKineticEnergy(P.pin, P.data, pq, pv)) < TOL
        assert rel_err(rd.potential_energy(m, q), pin.computePotentialEnergy(P.pin, P.data, pq)) < TOL
        c, cdot, h = rd.centroidal_state(m, q, v)
        pin.centerOfMass(P.pin, P.data, pq, pv)
        assert rel_err(c, P.data.com[0]) < TOL and rel_err(cdot, P.data.vcom[0]) < TOL
        assert rel_err(h, pin_momentum(P, q, v)) < TOL


def test_kinetic_energy_with_armature_and_gravity(pair):
    """Rotor inertia counts once per coordinate (a mimic follower's rotor is its leader's), as
    Pinocchio's armature in crba: T = v^T M v / 2. (Pinocchio 4.1's computeKineticEnergy leaves out
    the armature of the mimic test robot's unaligned revolute joint, tilt_joint, that its crba
    counts: that robot is checked against crba's.) The potential energy follows the model's gravity."""
    m, P = pair.model, pair
    arm = np.random.default_rng(5).uniform(0.1, 2.0, len(m.joint_names))
    pin_arm = P.pin.armature.copy()
    for k, name in enumerate(m.joint_names):
        pin_arm[P.pin.joints[P.pin.getJointId(name)].idx_v] = arm[k]
    saved = P.pin.armature.copy()
    try:
        m.armature, P.pin.armature = arm, pin_arm
        m.gravity = [1.0, -2.0, -7.0]
        P.pin.gravity.linear[:] = m.gravity
        for q, v, _ in pair.states(10, seed=6):
            pq, pv = P.pin_q(q), P.pin_v(v)
            M = P.ours_matrix(pin.crba(P.pin, P.data, pq), upper_only=True)
            assert rel_err(rd.kinetic_energy(m, q, v), 0.5 * v @ M @ v) < TOL
            if m.name != "mimic_continuous_fixed":
                assert rel_err(rd.kinetic_energy(m, q, v), pin.computeKineticEnergy(P.pin, P.data, pq, pv)) < TOL
            assert rel_err(rd.potential_energy(m, q), pin.computePotentialEnergy(P.pin, P.data, pq)) < TOL
    finally:
        m.armature, P.pin.armature = 0.0, saved
        m.gravity = [0.0, 0.0, -9.81]
        P.pin.gravity.linear[:] = m.gravity


def test_the_quantities_agree_with_each_other_and_the_dynamics(pair):
    """h_G = A_G v; cdot = J_com v = h_lin / m; A_G's linear rows are m J_com (Orin and Goswami);
    the joint-space gravity is the gradient of the potential energy, and J_com the derivative of
    c, by central differences along q (+) t e_k (the tangent space, as everywhere)."""
    m = pair.model
    mass = m.inertia[:, 0].sum()
    for q, v, _ in pair.states(8, seed=2):
        A, J = rd.centroidal_momentum_matrix(m, q), rd.center_of_mass_jacobian(m, q)
        h = rd.centroidal_momentum(m, q, v)
        assert rel_err(A @ v, h) < TOL
        assert rel_err(J @ v, rd.centroidal_state(m, q, v)[1]) < TOL
        assert rel_err(h[:3], mass * J @ v) < TOL and rel_err(A[:3], mass * J) < TOL
        eps = 1e-6
        dV, dc = np.zeros(m.nv), np.zeros((3, m.nv))
        for k in range(m.nv):
            e = np.zeros(m.nv)
            e[k] = eps
            qp, qm = rd.integrate(m, q, e), rd.integrate(m, q, -e)
            dV[k] = (rd.potential_energy(m, qp) - rd.potential_energy(m, qm)) / (2 * eps)
            dc[:, k] = (rd.center_of_mass(m, qp) - rd.center_of_mass(m, qm)) / (2 * eps)
        assert rel_err(dV, rd.gravity_torques(m, q)) < 1e-6
        assert rel_err(dc, J) < 1e-6


def test_a_free_rigid_body_in_closed_form():
    """One floating box (Kajita et al., Introduction to Humanoid Robotics, ch. 6's free body): c is
    its COM, h_G = (m cdot, R I_c R^T w), T = (m |cdot|^2 + w . R I_c R^T w) / 2 with v in the body frame."""
    xml = ('<robot name="box"><link name="world"/><link name="box"><inertial><origin xyz="0.1 -0.2 0.3" rpy="0.3 0.2 0.1"/>'
           '<mass value="2.5"/><inertia ixx="0.3" iyy="0.5" izz="0.7" ixy="0.01" ixz="-0.02" iyz="0.03"/></inertial></link>'
           '<joint name="free" type="floating"><parent link="world"/><child link="box"/></joint></robot>')
    m = load_urdf(xml)
    q, v = rd.random_configuration(m, np.random.default_rng(0)), np.array([0.3, -0.2, 0.5, 1.0, -2.0, 0.7])
    q[:3] = [1.0, 2.0, -0.5]
    H = rd.frame_placement(m, q, "box")
    R, p = H[:3, :3], H[:3, 3]
    Rc = pin.rpy.rpyToMatrix(0.3, 0.2, 0.1)
    Ic = R @ Rc @ np.array([[0.3, 0.01, -0.02], [0.01, 0.5, 0.03], [-0.02, 0.03, 0.7]]) @ Rc.T @ R.T
    c = p + R @ [0.1, -0.2, 0.3]
    w = R @ v[3:]
    cdot = R @ v[:3] + np.cross(w, c - p)
    assert rel_err(rd.center_of_mass(m, q), c) < TOL
    assert rel_err(rd.centroidal_momentum(m, q, v), np.concatenate([2.5 * cdot, Ic @ w])) < TOL
    assert rel_err(rd.kinetic_energy(m, q, v), 0.5 * (2.5 * cdot @ cdot + w @ Ic @ w)) < TOL
    assert rel_err(rd.potential_energy(m, q), 2.5 * 9.81 * c[2]) < TOL


def test_far_from_the_origin():
    """talos' free flyer 1 km out: the centre of mass moves with the base to 1e-12 m, and the
    Jacobian, the momentum matrix, the momentum and the kinetic energy do not change (inertias are
    taken about a point on the robot: about the world origin they would lose eps m d^2)."""
    m = Pair("talos", True).model
    offset = np.array([1000.0, -700.0, 300.0])
    for q, v, _ in Pair("talos", True).states(5, seed=9):
        far = q.copy()
        far[:3] += offset
        assert np.abs(rd.center_of_mass(m, far) - offset - rd.center_of_mass(m, q)).max() < 1e-12 * 1300
        assert rel_err(rd.center_of_mass_jacobian(m, far), rd.center_of_mass_jacobian(m, q)) < TOL
        assert rel_err(rd.centroidal_momentum_matrix(m, far), rd.centroidal_momentum_matrix(m, q)) < TOL
        assert rel_err(rd.centroidal_momentum(m, far, v), rd.centroidal_momentum(m, q, v)) < TOL
        assert rel_err(rd.kinetic_energy(m, far, v), rd.kinetic_energy(m, q, v)) < TOL
        assert abs(rd.potential_energy(m, far) - rd.potential_energy(m, q) - m.total_mass * 9.81 * 300.0) < 1e-8


def test_a_deep_copy_computes_with_its_own_model():
    """The fast paths keep the model's packed array beside their scratch: a copy's is the copy's."""
    import copy
    m = Pair("ur5").model
    q = np.full(m.nq, 0.3)
    before = rd.potential_energy(m, q)
    twin = copy.deepcopy(m)
    twin.gravity = [0.0, 0.0, -2 * 9.81]
    assert rd.potential_energy(twin, q) == pytest.approx(2 * before, rel=1e-12)
    assert rd.potential_energy(m, q) == before
    twin.armature = 1.0
    v = np.ones(m.nv)
    assert rd.kinetic_energy(twin, q, v) == pytest.approx(rd.kinetic_energy(m, q, v) + 0.5 * m.nv, rel=1e-12)


def test_large_joint_angles():
    """A continuous joint turned 1e3 to 1e9 rad: the vectorized sines and cosines (kernels/placements.py)
    hand over to libm beyond 2**19 pi/2 as trig.sin_cos does, and agree with Pinocchio (given libm's)."""
    P = Pair("mimic")
    m, k = P.model, P.model.joint_offset[1] + P.model.joint_index["spin_joint"]
    q, v, _ = P.random_state(np.random.default_rng(10))
    for angle in (1e3, 823549.0, 823551.0, 3e6, -1e9):
        q[k] = angle
        pq = P.pin_q(q)
        assert rel_err(rd.center_of_mass(m, q), pin.centerOfMass(P.pin, P.data, pq)) < TOL
        assert rel_err(rd.centroidal_momentum_matrix(m, q), pin.ccrba(P.pin, P.data, pq, P.pin_v(v)) @ P.G) < TOL
        assert rel_err(rd.center_of_mass_jacobian(m, q), pin.jacobianCenterOfMass(P.pin, P.data, pq) @ P.G) < TOL


def test_batches_equal_single_states(pair):
    m = pair.model
    S = pair.states(150, seed=4)     # above the threshold where threads start
    Q, V = np.array([s[0] for s in S]), np.array([s[1] for s in S])
    for threads in (1, 2):
        state = rd.centroidal_state(m, Q, V, threads=threads)
        batch = dict(c=rd.center_of_mass(m, Q, threads=threads), J=rd.center_of_mass_jacobian(m, Q, threads=threads),
                     A=rd.centroidal_momentum_matrix(m, Q, threads=threads), h=rd.centroidal_momentum(m, Q, V, threads=threads),
                     T=rd.kinetic_energy(m, Q, V, threads=threads), V=rd.potential_energy(m, Q, threads=threads),
                     sc=state[0], scdot=state[1], sh=state[2])
        for k, (q, v, _) in enumerate(S):
            state = rd.centroidal_state(m, q, v)
            single = dict(c=rd.center_of_mass(m, q), J=rd.center_of_mass_jacobian(m, q), A=rd.centroidal_momentum_matrix(m, q),
                          h=rd.centroidal_momentum(m, q, v), T=rd.kinetic_energy(m, q, v), V=rd.potential_energy(m, q),
                          sc=state[0], scdot=state[1], sh=state[2])
            for name, value in single.items():
                np.testing.assert_array_equal(batch[name][k], value, err_msg=name)
    assert isinstance(rd.kinetic_energy(m, Q[0], V[0]), float) and isinstance(rd.potential_energy(m, Q[0]), float)
    assert all(x.flags.c_contiguous for x in rd.centroidal_state(m, Q, V)) and rd.centroidal_momentum(m, Q, V).flags.c_contiguous


def variants(x):
    """x as the fast path takes it, then a list, a read-only array and a strided one."""
    ro = x.copy()
    ro.flags.writeable = False
    return [x, list(x), ro, np.repeat(x, 2)[::2]]


@pytest.mark.parametrize("robot", [("panda", False), ("biped", True)], ids=["panda", "biped-freeflyer"])
def test_fast_and_general_paths_agree_and_leave_inputs_alone(robot):
    m = load_urdf(URDFS[robot[0]], floating_base=robot[1])     # a fresh model: its first calls make the scratch
    q, v, _ = Pair(*robot).random_state(np.random.default_rng(7))
    copies = q.copy(), v.copy()
    calls = dict(c=lambda q, v: rd.center_of_mass(m, q), J=lambda q, v: rd.center_of_mass_jacobian(m, q),
                 A=lambda q, v: rd.centroidal_momentum_matrix(m, q), h=lambda q, v: rd.centroidal_momentum(m, q, v),
                 T=lambda q, v: rd.kinetic_energy(m, q, v), V=lambda q, v: rd.potential_energy(m, q),
                 state=lambda q, v: np.concatenate(rd.centroidal_state(m, q, v), axis=-1))
    for name, call in calls.items():
        first = call(q, v)
        np.testing.assert_array_equal(call(q, v), first, err_msg=name)
        for x in zip(variants(q), variants(v)):
            np.testing.assert_array_equal(call(*x), first, err_msg=name)
        np.testing.assert_allclose(call(q[None], v[None])[0], first, rtol=0, atol=0, err_msg=name)
    np.testing.assert_array_equal(q, copies[0])
    np.testing.assert_array_equal(v, copies[1])


def test_out_fills_the_given_arrays():
    m = Pair("biped", True).model
    S = Pair("biped", True).states(70, seed=8)
    Q = np.array([s[0] for s in S])
    for fn, rows in ((rd.center_of_mass_jacobian, 3), (rd.centroidal_momentum_matrix, 6)):
        out = np.full((len(Q), rows, m.nv), np.nan)
        for threads in (1, 2):
            assert fn(m, Q, threads=threads, out=out) is out
            np.testing.assert_array_equal(out, fn(m, Q))
        one = np.full((rows, m.nv), np.nan)
        assert fn(m, Q[0], out=one) is one
        np.testing.assert_array_equal(one, fn(m, Q[0]))
        for bad in (np.zeros((rows, m.nv + 1)), np.zeros((m.nv, rows)).T, np.zeros((rows, m.nv), np.float32), [[0.0] * m.nv] * rows):
            with pytest.raises(ValueError, match=rf"out must be a C-contiguous, writeable float64 array of shape \({rows}, {m.nv}\)"):
                fn(m, Q[0], out=bad)


def test_bad_input_is_named():
    m = Pair("biped", True).model
    q, v = rd.neutral(m), np.zeros(m.nv)
    with pytest.raises(ValueError, match=rf"q must have shape \({m.nq},\) or \(N, {m.nq}\), got shape \(5,\)"):
        rd.center_of_mass(m, np.zeros(5))
    with pytest.raises(ValueError, match=rf"q must have shape \({m.nq},\)"):
        rd.center_of_mass_jacobian(m, np.zeros(m.nq + 1))
    with pytest.raises(ValueError, match=rf"v must have shape \(3, {m.nv}\)"):
        rd.centroidal_momentum(m, np.tile(q, (3, 1)), v)
    with pytest.raises(ValueError, match=rf"v must have shape \({m.nv},\)"):
        rd.kinetic_energy(m, q, np.zeros(m.nv - 1))
    bad = np.tile(q, (3, 1))
    bad[2, 9] = np.nan
    for fn in (rd.center_of_mass, rd.center_of_mass_jacobian, rd.centroidal_momentum_matrix, rd.potential_energy):
        with pytest.raises(ValueError, match=r"q contains NaN or inf \(batch row 2\)"):
            fn(m, bad, threads=1)
    with pytest.raises(ValueError, match="v contains NaN or inf"):
        rd.centroidal_state(m, q, np.full(m.nv, np.inf))
    with pytest.raises(ValueError, match=r"v contains a value beyond 1e\+50 in magnitude"):
        rd.kinetic_energy(m, q, np.full(m.nv, 1e60))
    unnormed = q.copy()
    unnormed[6] = 2.0
    for fn in (rd.center_of_mass, rd.center_of_mass_jacobian, rd.centroidal_momentum_matrix, rd.potential_energy):
        with pytest.raises(ValueError, match=r"q\[3:7\], the quaternion \(x y z w\) of floating joint 'root_joint', must have unit norm"):
            fn(m, unnormed)
    with pytest.raises(ValueError, match="quaternion"):
        rd.centroidal_momentum(m, unnormed, v)


def test_a_model_without_mass_has_no_centre_of_mass():
    """Links without inertial (a bare kinematic chain): no centre of mass, said by name; the energies
    are still defined (the rotors' kinetic energy, zero potential energy)."""
    xml = ('<robot name="bare"><link name="base"/><link name="a"/><link name="b"/>'
           '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
           '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
           '<joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/>'
           '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    m = load_urdf(xml)
    q, v = np.array([0.3, 0.2]), np.array([1.0, -2.0])
    for call in (lambda: rd.center_of_mass(m, q), lambda: rd.center_of_mass_jacobian(m, q),
                 lambda: rd.centroidal_momentum_matrix(m, q), lambda: rd.centroidal_momentum(m, q, v),
                 lambda: rd.centroidal_momentum_matrix(m, np.tile(q, (11, 1)), threads=1),    # lanes, then alone
                 lambda: rd.centroidal_state(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)))):
        with pytest.raises(ValueError, match="the model 'bare' has no mass .*: it has no centre of mass"):
            call()
    assert rd.potential_energy(m, q) == 0.0 and rd.kinetic_energy(m, q, v) == 0.0
    m.armature = [0.5, 0.25]
    assert rd.kinetic_energy(m, q, v) == pytest.approx(0.5 * (0.5 * 1.0 + 0.25 * 4.0))
    np.testing.assert_array_equal(rd.kinetic_energy(m, np.tile(q, (2, 1)), np.tile(v, (2, 1))), [0.75, 0.75])
