"""Constrained forward dynamics and the constraint Jacobian: J and its drift (against frame
Jacobians, central differences and Pinocchio's classical frame accelerations), constrained forward
dynamics (against the KKT system built from our own M, b, J and drift, and against Pinocchio's
constraintDynamics), redundant and impossible constraints; the four-bar simulated for a second
against its closed form (four_bar.py). Constrained inverse dynamics and contact inverse dynamics:
test_constrained_inverse.py; constrained hybrid dynamics: test_constrained_hybrid.py; loop assembly:
test_assembly.py."""
import numpy as np
import pytest

from four_bar import A_, B_, C_, MASS, G, closed_four_bar, four_bar_acceleration, rk4
from oracle import FOUR_BAR_LOOPS, SINGULAR_ROTOR, SOLO_FEET, Pair, pin, rel_err
from robot_dynamics import load_urdf
from robot_dynamics import dynamics as rd
from robot_dynamics.dynamics import ConstraintError, SingularMassMatrixError

TALOS_SOLES = ["left_sole_link", "right_sole_link"]
TOL = 1e-9


@pytest.fixture(scope="module")
def talos():
    return Pair("talos", True)


def rotation_log(R):
    """Axis times angle of a rotation matrix (small and moderate angles)."""
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2
    s, c = np.linalg.norm(w), (np.trace(R) - 1) / 2
    return w if s == 0 else w * np.arctan2(s, c) / s


def position_error(m, q, constraint):
    """The Baumgarte position error of a constraint, from frame placements."""
    if len(constraint) == 3 and isinstance(constraint[1], str) and constraint[1] in ("point", "6d"):
        frame, kind, target = constraint
        Ha = rd.frame_placement(m, q, frame)
        Hb = np.eye(4)
        if kind == "point":
            Hb[:3, 3] = target
        else:
            Hb = np.asarray(target)
    elif len(constraint) == 3:
        frame_a, frame_b, kind = constraint
        Ha, Hb = rd.frame_placement(m, q, frame_a), rd.frame_placement(m, q, frame_b)
    else:
        return np.zeros(3 if constraint[1] == "point" else 6)
    e = Ha[:3, 3] - Hb[:3, 3]
    return e if kind == "point" else np.concatenate((e, rotation_log(Ha[:3, :3] @ Hb[:3, :3].T)))


def kkt(m, q, v, tau, contacts, loops=(), baumgarte=(0.0, 0.0)):
    """qdd and the least-norm forces of [[M, -J^T], [J, 0]] [qdd; f] = [tau - b; -gamma], from our
    own M, b, J and Jdot v and Baumgarte's terms computed here from frame placements."""
    M, b = rd.mass_matrix(m, q), rd.bias_forces(m, q, v)
    J, drift = rd.constraint_jacobian(m, q, v, contacts, loops)
    kp, kd = baumgarte
    e = np.concatenate([position_error(m, q, c) for c in list(contacts) + list(loops)] or [np.zeros(0)])
    gamma = drift + kd * (J @ v) + kp * e
    k = J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((k, k))]])
    x = np.linalg.lstsq(K, np.concatenate((tau - b, -gamma)), rcond=1e-13)[0]
    return x[:m.nv], x[m.nv:]


def random_state(pair, rng):
    q, v, _ = pair.random_state(rng)
    return q, v, rng.uniform(-5, 5, pair.model.nv)


def consistent(m, q, v, contacts, loops=()):
    """v, or where the constraints are redundant its projection onto J v = 0: redundant rows at the
    acceleration level are consistent only there (a point turning with a frame held at another
    point, or about a joint whose loop allows one degree of freedom, has a centripetal acceleration
    no joint acceleration can cancel)."""
    J = rd.constraint_jacobian(m, q, v, contacts, loops)[0]
    if np.linalg.matrix_rank(J) == J.shape[0]:
        return v
    return v - np.linalg.pinv(J) @ (J @ v)


# --- the constraint Jacobian and its drift -------------------------------------------------------
JACOBIAN_CASES = [
    (("panda", False), [("panda_hand", "6d"), ("panda_link4", "point")], [("panda_leftfinger", "panda_link7", "6d")]),
    (("talos", True), [(f, "6d") for f in TALOS_SOLES], [("arm_left_7_link", "arm_right_7_link", "point")]),
    (("planar_base_arm", False), [("tool", "6d")], [("finger", "l1", "point")]),
    (("floating_object_arm", False), [("a2", "point")], [("part_arm", "a1", "6d")]),
]


@pytest.mark.parametrize("robot,contacts,loops", JACOBIAN_CASES, ids=lambda x: x[0] if isinstance(x[0], str) else None)
def test_constraint_jacobian_and_drift(robot, contacts, loops):
    """J: frame Jacobians (loops: a's minus b's); Jdot v: d/dt (J v) along q (+) t v by central
    differences, and Pinocchio's classical frame acceleration at qdd = 0."""
    P = Pair(*robot)
    m = P.model
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, v, _ = P.random_state(rng)
        J, drift = rd.constraint_jacobian(m, q, v, contacts, loops)
        rows, expected_drift = [], []
        pin.forwardKinematics(P.pin, P.data, P.pin_q(q), P.pin_v(v), np.zeros(P.pin.nv))
        pin.updateFramePlacements(P.pin, P.data)

        def classical(frame):
            fid = P.frame_id(frame)
            lin = pin.getFrameClassicalAcceleration(P.pin, P.data, fid, pin.LOCAL_WORLD_ALIGNED).linear
            return np.concatenate((lin, pin.getFrameAcceleration(P.pin, P.data, fid, pin.LOCAL_WORLD_ALIGNED).angular))
        for frame, kind in contacts:
            n = 3 if kind == "point" else 6
            rows.append(rd.frame_jacobian(m, q, frame)[:n])
            expected_drift.append(classical(frame)[:n])
        for a, b, kind in loops:
            n = 3 if kind == "point" else 6
            rows.append((rd.frame_jacobian(m, q, a) - rd.frame_jacobian(m, q, b))[:n])
            expected_drift.append((classical(a) - classical(b))[:n])
        np.testing.assert_allclose(J, np.vstack(rows), rtol=0, atol=1e-12)
        assert rel_err(drift, np.concatenate(expected_drift)) < TOL
        h = 1e-6
        Jp = rd.constraint_jacobian(m, rd.integrate(m, q, h * v), v, contacts, loops)[0]
        Jm = rd.constraint_jacobian(m, rd.integrate(m, q, -h * v), v, contacts, loops)[0]
        np.testing.assert_allclose(drift, (Jp - Jm) @ v / (2 * h), rtol=0, atol=1e-6 * max(1.0, np.abs(drift).max()))


# --- constrained forward dynamics ----------------------------------------------------------------
KKT_CASES = {
    "solo12-4-points": (("solo12", True), [(f, "point") for f in SOLO_FEET], []),
    "talos-2-soles": (("talos", True), [(f, "6d") for f in TALOS_SOLES], []),
    "biped-sole-and-point": (("biped", True), [("left_sole", "6d"), ("right_sole", "point")], []),
    "panda-mimic-hand": (("panda", False), [("panda_hand", "6d")], []),
    "mimic-freeflyer-loop": (("mimic", True), [("carriage", "6d")], [("finger_left", "tool_frame", "point")]),
    "planar-base-tool": (("planar_base_arm", False), [("tool", "point")], []),
    "floating-object-loop": (("floating_object_arm", False), [("object", "6d")], [("part_arm", "a2", "6d")]),
}


@pytest.mark.parametrize("case", KKT_CASES, ids=str)
@pytest.mark.parametrize("baumgarte", [None, (100.0, 20.0)], ids=["plain", "baumgarte"])
def test_constrained_forward_dynamics_against_kkt(case, baumgarte):
    robot, contacts, loops = KKT_CASES[case]
    P = Pair(*robot)
    m = P.model
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, v, tau = random_state(P, rng)
        v = consistent(m, q, v, contacts, loops)
        cs = list(contacts)
        if baumgarte:       # a target for the first contact, near where its frame is
            H = rd.frame_placement(m, q, cs[0][0])
            H[:3, 3] += rng.normal(scale=0.01, size=3)
            cs[0] = cs[0] + ((H if cs[0][1] == "6d" else H[:3, 3]),)
        qdd, f = rd.constrained_forward_dynamics(m, q, v, tau, cs, loops, baumgarte)
        eqdd, ef = kkt(m, q, v, tau, cs, loops, baumgarte or (0.0, 0.0))
        assert rel_err(qdd, eqdd) < TOL
        assert rel_err(f, ef) < TOL
        # the equations of motion with the forces as J^T f, and the constraints' accelerations
        J, drift = rd.constraint_jacobian(m, q, v, cs, loops)
        M, b = rd.mass_matrix(m, q), rd.bias_forces(m, q, v)
        assert rel_err(M @ qdd + b, tau + J.T @ f) < TOL
        if not baumgarte:
            np.testing.assert_allclose(J @ qdd + drift, 0.0, atol=1e-9 * max(1.0, np.abs(drift).max()))


def pin_constraints(P, frames, contact_type):
    models = pin.StdVec_RigidConstraintModel()
    for name in frames:
        frame = P.pin.frames[P.frame_id(name)]
        models.append(pin.RigidConstraintModel(contact_type, P.pin, frame.parentJoint, frame.placement,
                                               pin.ReferenceFrame.LOCAL_WORLD_ALIGNED))
    datas = pin.StdVec_RigidConstraintData()
    for model in models:
        datas.append(model.createData())
    pin.initConstraintDynamics(P.pin, P.data, models, datas)
    return models, datas


@pytest.mark.parametrize("robot,frames,kind", [(("solo12", True), SOLO_FEET, "point"),
                                               (("talos", True), TALOS_SOLES, "6d"),
                                               (("biped", True), ["left_sole", "right_foot"], "6d")],
                         ids=["solo12", "talos", "biped"])
def test_constrained_forward_dynamics_against_pinocchio(robot, frames, kind):
    """Pinocchio's constraintDynamics (exact: no proximal damping) with the same contacts in
    local_world_aligned. Point contacts: the classical acceleration in both, for any v. 6d contacts:
    Pinocchio holds the frame's spatial acceleration, we the time derivative of its
    local_world_aligned velocity; the two agree where the contacts hold at the velocity level
    (J v = 0), so v is taken there."""
    P = Pair(*robot)
    m = P.model
    contacts = [(f, kind) for f in frames]
    models, datas = pin_constraints(P, frames, pin.ContactType.CONTACT_3D if kind == "point" else pin.ContactType.CONTACT_6D)
    settings = pin.ProximalSettings(1e-14, 0.0, 1)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, v, tau = random_state(P, rng)
        if kind == "6d":
            J = rd.constraint_jacobian(m, q, v, contacts)[0]
            v = v - np.linalg.pinv(J) @ (J @ v)
        qdd, f = rd.constrained_forward_dynamics(m, q, v, tau, contacts)
        pqdd = pin.constraintDynamics(P.pin, P.data, P.pin_q(q), P.pin_v(v), P.G @ tau, models, datas, settings)
        assert rel_err(qdd, P.ours_v(pqdd)) < TOL
        assert rel_err(f, P.data.lambda_c) < TOL


def test_redundant_constraints_give_least_norm_forces(talos):
    """More constraints than the foot can resist (a 6d contact, points on the same foot, the same
    contact twice), with the foot held at the velocity level: the motion of the single 6d contact,
    the least-norm forces (numpy's least-squares KKT), nothing blows up."""
    m = talos.model
    rng = np.random.default_rng(4)
    single = [("left_sole_link", "6d")]
    for redundant in ([("left_sole_link", "6d"), ("left_sole_link", "6d")],
                      [("left_sole_link", "6d"), ("leg_left_6_link", "point"), ("left_sole_link", "point")]):
        for _ in range(5):
            q, v, tau = random_state(talos, rng)
            v = consistent(m, q, v, redundant)
            qdd1, f1 = rd.constrained_forward_dynamics(m, q, v, tau, single)
            qdd, f = rd.constrained_forward_dynamics(m, q, v, tau, redundant)
            assert np.all(np.isfinite(f))
            assert rel_err(qdd, qdd1) < TOL
            assert rel_err(f, kkt(m, q, v, tau, redundant)[1]) < TOL
            J = rd.constraint_jacobian(m, q, v, redundant)[0]
            assert rel_err(J.T @ f, rd.constraint_jacobian(m, q, v, single)[0].T @ f1) < TOL
            if len(redundant) == 2:         # the same contact twice: the wrench split in halves
                np.testing.assert_allclose(f[:6], f1 / 2, rtol=1e-9, atol=1e-9)
                np.testing.assert_allclose(f[6:], f1 / 2, rtol=1e-9, atol=1e-9)


def test_impossible_constraints_are_errors_naming_them():
    panda = Pair("panda", False).model
    q, v = rd.neutral(panda), np.zeros(panda.nv)
    with pytest.raises(ConstraintError, match="contact 0 on frame 'panda_link0': no joint moves that frame"):
        rd.constrained_forward_dynamics(panda, q, v, v, [("panda_link0", "point")])
    with pytest.raises(ConstraintError, match="loop 0: no joint moves frame 'panda_hand' relative to frame 'panda_link7'"):
        rd.constrained_forward_dynamics(panda, q, v, v, [], [("panda_hand", "panda_link7", "6d")])
    four_bar = Pair("four_bar", False).model
    q = rd.assemble(four_bar, [0.3, 0.0, 0.0], FOUR_BAR_LOOPS, fixed=["crank_joint"])
    target = rd.frame_placement(four_bar, q, "coupler")[:3, 3] + [0.0, 0.01, 0.0]   # off the mechanism's plane
    with pytest.raises(ConstraintError, match=r"cannot all hold at this state: contact 0 \(point on 'coupler'\)"):
        rd.constrained_forward_dynamics(four_bar, q, np.zeros(3), np.zeros(3), [("coupler", "point", target)],
                                        baumgarte=(100.0, 20.0))
    biped = Pair("biped", True).model
    with pytest.raises(ConstraintError, match=r"cannot hold the floating base .*contact 0 \(point on 'left_sole'\)"):
        rd.contact_inverse_dynamics(biped, rd.neutral(biped), 0, 0, [("left_sole", "point")])
    with pytest.raises(ValueError, match="contact 0: kind must be 'point' or '6d', got 'hinge'"):
        rd.constrained_forward_dynamics(panda, rd.neutral(panda), v, v, [("panda_hand", "hinge")])
    with pytest.raises(KeyError, match="unknown frame 'hand'"):
        rd.contact_inverse_dynamics(panda, rd.neutral(panda), 0, 0, [("hand", "6d")])
    with pytest.raises(ValueError, match="contact 0: a 6d contact's target is a 4x4 world placement"):
        rd.constrained_forward_dynamics(panda, rd.neutral(panda), v, v, [("panda_hand", "6d", np.ones(3))])
    with pytest.raises(ValueError, match=r"baumgarte must be \(kp, kd\)"):
        rd.constrained_forward_dynamics(panda, rd.neutral(panda), v, v, [("panda_hand", "6d")], baumgarte=(1.0, -1.0))
    with pytest.raises(ValueError, match="tau contains NaN or inf"):
        rd.constrained_forward_dynamics(panda, rd.neutral(panda), v, np.full(panda.nv, np.nan), [("panda_hand", "6d")])
    with pytest.raises(ValueError, match="v must be an array of 8 numbers \\(or the number 0"):
        rd.contact_inverse_dynamics(panda, rd.neutral(panda), 1.0, 0, [("panda_hand", "6d")])


def test_singular_mass_matrix_is_an_error():
    m = load_urdf(SINGULAR_ROTOR)
    with pytest.raises(SingularMassMatrixError, match="Suspect links .*: rotor"):
        rd.constrained_forward_dynamics(m, np.zeros(2), np.zeros(2), np.ones(2), [("upper", "point")])


@pytest.mark.parametrize("short", [1e-7, 1e-4, 1e-2, 0.5])
def test_a_6d_target_near_a_half_turn_pulls_by_its_exact_rotation(short):
    """Baumgarte's position term of a 6d contact whose target is turned by pi - short from the
    frame: J qdd = -kp e at v = 0 with e's rotation Pinocchio's log3 of R_a R_b^T (an axis taken
    from R + 1 alone lost up to 2e-6 rad there, on the opposite branch half the time)."""
    P = Pair("ur5", False)
    m, rng = P.model, np.random.default_rng(5)
    for _ in range(5):
        q = rd.random_configuration(m, rng)
        H = rd.frame_placement(m, q, "tool0")
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        target = H.copy()
        target[:3, :3] = pin.exp3((np.pi - short) * axis).T @ H[:3, :3]     # R_a R_b^T = exp((pi - short) axis)
        target[:3, 3] += rng.normal(scale=0.01, size=3)
        qdd, _ = rd.constrained_forward_dynamics(m, q, np.zeros(m.nv), rng.normal(size=m.nv),
                                                 [("tool0", "6d", target)], baumgarte=(1.0, 0.0))
        J, _ = rd.constraint_jacobian(m, q, np.zeros(m.nv), [("tool0", "6d")])
        e = np.concatenate((H[:3, 3] - target[:3, 3], pin.log3(H[:3, :3] @ target[:3, :3].T)))
        np.testing.assert_allclose(e[3:], (np.pi - short) * axis, atol=1e-12)
        np.testing.assert_allclose(J @ qdd, -e, rtol=0, atol=1e-9)


def test_four_bar_holds_its_loop_and_follows_its_closed_form_motion():
    """Released at rest from crank angle 0.3 under gravity: one second of RK4 (0.5 ms) on our
    constrained forward dynamics (a point loop where the coupler meets the rocker: the plane's normal
    row is redundant) with Baumgarte's stabilisation (critically damped at 20 rad/s: stiffer gains
    raise RK4's truncation error more than they correct; without, the gap grows to ~1e-9). The loop
    closes to 1e-10 all along, the energy stays, and the crank follows the closed-form
    one-degree-of-freedom motion (Lagrangian from the position analysis, integrated at 0.1 ms) while
    the coupler and rocker follow the position analysis."""
    m = Pair("four_bar", False).model
    loop = [("coupler_tip", "rocker_tip", "point")]
    gains = (20.0 ** 2, 2 * 20.0)
    q, v, _ = closed_four_bar(0.3)

    def qdd(q, v):
        return rd.constrained_forward_dynamics(m, q, v, np.zeros(3), [], loop, baumgarte=gains)[0]

    def energy(q, v):
        M = rd.mass_matrix(m, q)
        coms = [rd.frame_placement(m, q, link)[:3, :3] @ [length / 2, 0, 0] + rd.frame_placement(m, q, link)[:3, 3]
                for link, length in zip(("crank", "coupler", "rocker"), (A_, B_, C_))]
        return 0.5 * v @ M @ v + G * sum(mass * c[2] for mass, c in zip(MASS, coms))

    oracle = np.array([0.3, 0.0])
    e0, dt, worst_loop, worst_energy, worst_crank, worst_shape = energy(q, v), 5e-4, 0.0, 0.0, 0.0, 0.0
    for step in range(2000):
        x = rk4(lambda x: np.concatenate((x[3:], qdd(x[:3], x[3:]))), np.concatenate((q, v)), dt)
        q, v = x[:3], x[3:]
        for _ in range(5):
            oracle = rk4(lambda y: np.array([y[1], four_bar_acceleration(y[0], y[1])]), oracle, dt / 5)
        gap = rd.frame_placement(m, q, "coupler_tip")[:3, 3] - rd.frame_placement(m, q, "rocker_tip")[:3, 3]
        worst_loop = max(worst_loop, np.abs(gap).max())
        worst_energy = max(worst_energy, abs(energy(q, v) - e0))
        worst_crank = max(worst_crank, abs(q[0] - oracle[0]), abs(v[0] - oracle[1]))
        expected_q, expected_v, _ = closed_four_bar(q[0], v[0])
        worst_shape = max(worst_shape, np.abs(q - expected_q).max(), np.abs(v - expected_v).max() / 10)
    assert worst_loop < 1e-10
    assert worst_energy < 1e-8     # J, of ~2 J: RK4 at 0.5 ms (9e-10 measured)
    assert worst_crank < 5e-8      # RK4's own error: 2.4e-7 at 1 ms, 1.7e-8 at 0.5 ms, 1.1e-9 at 0.25 ms (measured)
    assert worst_shape < 1e-9      # positions to 1e-9 rad, velocities (up to 26 rad/s) to 1e-8 rad/s
    assert abs(q[0] - 0.3) > 0.5                    # it did move (through the bottom of its swing)
