"""rd.inverse_kinematics and rd.manipulability.

Targets are the placements of random configurations (so reachable within the limits); a solution
is checked with Pinocchio's forward kinematics (its log6 of the pose error), never with ours alone.
Measured here (2000 targets each, seeds drawn uniformly within the limits): a single Newton-Raphson
attempt converges for 42-52 % (panda, PUMA) and 90 % (ur5) of them, the rest ending at a local
minimum on a joint limit; with the default 30 restarts 99.8-100 %."""
import numpy as np
import pytest

from oracle import URDFS, Pair, pin, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import lie, load_urdf

ARMS = [("panda", "panda_hand"), ("ur5", "tool0"), ("puma560", "tool0")]
TWO_LINK = URDFS["puma560"].replace("puma560", "planar_2link")


def pin_pose_error(pair, q, frame, T):
    """|log6(T_pin(q)^-1 T)| by Pinocchio."""
    fid = pair.frame_id(frame)
    pin.framesForwardKinematics(pair.pin, pair.data, pair.pin_q(q))
    return np.linalg.norm(pin.log6(pair.data.oMf[fid].actInv(pin.SE3(T))).vector)


def targets(model, frame, n, rng):
    Q = rd.random_configuration(model, rng, n)
    return Q, rd.frame_placement(model, Q, frame)


def within_limits(model, Q):
    return np.all((Q >= model.lower_limits) & (Q <= model.upper_limits))


@pytest.mark.parametrize("name,frame", ARMS)
def test_random_targets_from_random_seeds(name, frame):
    pair = Pair(name)
    model = pair.model
    rng = np.random.default_rng(11)
    Q, T = targets(model, frame, 1000, rng)
    result = rd.inverse_kinematics(model, frame, T, rd.random_configuration(model, rng, 1000))
    assert result.converged.mean() >= 0.99, result.converged.mean()
    assert within_limits(model, result.q)
    ok = np.flatnonzero(result.converged)
    assert np.all(result.error[ok] <= 1e-10)
    worst = max(pin_pose_error(pair, result.q[k], frame, T[k]) for k in ok)
    assert worst <= 1.5e-10, worst       # Pinocchio's own placement: the same to rounding
    assert all(o == "converged" for o in np.array(result.outcome)[ok])


@pytest.mark.parametrize("name,frame", ARMS)
def test_random_targets_from_nearby_seeds(name, frame):
    """Seeds 0.05 rad (per joint, Gaussian) from a solution: every target, without restarts."""
    model = load_urdf(URDFS[name])
    rng = np.random.default_rng(12)
    Q, T = targets(model, frame, 1000, rng)
    result = rd.inverse_kinematics(model, frame, T, Q + rng.normal(scale=0.05, size=Q.shape), restarts=0)
    assert result.converged.all(), result.message
    assert within_limits(model, result.q) and np.all(result.error <= 1e-10)
    assert np.median(result.iterations) <= 8


def test_two_link_arm_recovers_both_analytic_solutions():
    """tip = (l1 c1 + l2 c12, 0, l1 s1 + l2 s12), l1 = l2 = 1: q2 = +-acos((x^2 + z^2 - 2) / 2),
    q1 = atan2(z, x) - atan2(s2, 1 + c2); a seed near each gives that one."""
    model = load_urdf(TWO_LINK)
    rng = np.random.default_rng(13)
    for _ in range(200):
        r, phi = rng.uniform(0.2, 1.95), rng.uniform(-np.pi, np.pi)
        x, z = r * np.cos(phi), r * np.sin(phi)
        for sign in (1.0, -1.0):
            q2 = sign * np.arccos((x * x + z * z - 2.0) / 2.0)
            q1 = np.arctan2(z, x) - np.arctan2(np.sin(q2), 1.0 + np.cos(q2))
            q1 = (q1 + np.pi) % (2 * np.pi) - np.pi
            exact = np.array([q1, q2])
            result = rd.inverse_kinematics(model, "tip", [x, 0.0, z], exact + rng.uniform(-0.3, 0.3, 2), restarts=0)
            assert result.converged and result.error <= 1e-10
            assert np.abs(result.q - exact).max() < 1e-9, (exact, result.q)


def test_unreachable_targets_report_non_convergence():
    model = load_urdf(TWO_LINK)
    far = rd.inverse_kinematics(model, "tip", [2.5, 0.0, 0.0], [0.3, 0.3])
    assert not far.converged and far.outcome in ("stalled", "iteration limit")
    assert abs(far.error - 0.5) < 1e-6        # the closest the arm gets: stretched toward it
    assert "not converged" in far.message
    tilted = lie.exp6([1.0, 0, 0.5, 0.3, 0, 0])     # a pose the planar arm cannot take (turned about x)
    assert not rd.inverse_kinematics(model, "tip", tilted, [0.3, 0.3]).converged
    panda = load_urdf(URDFS["panda"])
    T = np.eye(4)
    T[:3, 3] = [3.0, 0.0, 0.5]
    result = rd.inverse_kinematics(panda, "panda_hand", np.stack([T, T]), rd.neutral(panda), restarts=2)
    assert not result.converged.any() and within_limits(panda, result.q) and np.all(result.error > 1.5)
    # as documented: an unreachable target approached by ever smaller steps ends at the iteration limit
    puma = load_urdf(URDFS["puma560"])
    beyond = rd.frame_placement(puma, np.zeros(6), "tool0")[:3, 3] + [5.0, 0.0, 0.0]
    result = rd.inverse_kinematics(puma, "tool0", beyond, np.zeros(6), restarts=1)
    assert not result.converged and result.outcome == "iteration limit" and result.error > 4.0


def test_the_solver_reads_only_what_it_wrote():
    """The solver's scratch (its Data's) filled with NaN beforehand changes nothing (a trial q once read
    past its nq entries in the 6-wide scratch of the 2-link arm: garbage there rejected every step)."""
    for name, frame, target, seed in (("two_link", "tip", [2.5, 0.0, 0.0], [0.3, 0.3]),
                                      ("two_link", "tip", [1.2, 0.0, 0.4], [0.3, 0.3]),
                                      ("puma560", "tool0", None, None)):
        model = load_urdf(TWO_LINK if name == "two_link" else URDFS[name])
        if target is None:
            q = rd.random_configuration(model, np.random.default_rng(19))
            target, seed = rd.frame_placement(model, q, frame), q + 0.1
        data = rd.Data(model)
        clean = rd.inverse_kinematics(model, frame, target, seed, restarts=0, data=data)
        for array in data.ik:
            array[...] = np.nan
        dirty = rd.inverse_kinematics(model, frame, target, seed, restarts=0, data=data)
        assert np.array_equal(clean.q, dirty.q) and clean.iterations == dirty.iterations


def test_weights_leave_components_free():
    """Position only (a 3-vector target) and a tool free to turn about its own z (weight 0 on w_z)."""
    model = load_urdf(URDFS["panda"])
    rng = np.random.default_rng(14)
    Q, T = targets(model, "panda_hand", 50, rng)
    seeds = Q + rng.normal(scale=0.05, size=Q.shape)
    pos = rd.inverse_kinematics(model, "panda_hand", T[:, :3, 3], seeds)
    assert pos.converged.all()
    assert rel_err(rd.frame_placement(model, pos.q, "panda_hand")[:, :3, 3], T[:, :3, 3]) < 1e-10
    assert np.all(pos.residual[:, 3:] == 0)
    turned = T @ lie.exp6(np.array([0, 0, 0, 0, 0, 1.0]) * rng.uniform(-2, 2, (50, 1)))   # about the hand's z
    free = rd.inverse_kinematics(model, "panda_hand", turned, seeds, weights=[1, 1, 1, 1, 1, 0])
    assert free.converged.all()
    reached = rd.frame_placement(model, free.q, "panda_hand")
    assert rel_err(reached[:, :3, 3], T[:, :3, 3]) < 1e-9
    assert rel_err(reached[:, :3, 2], T[:, :3, 2]) < 1e-9      # the z axis is where it must be
    with pytest.raises(ValueError, match="weights must be 6 finite non-negative numbers"):
        rd.inverse_kinematics(model, "panda_hand", T[0], seeds[0], weights=[1, 1, 1])
    with pytest.raises(ValueError, match="weights must be 3"):
        rd.inverse_kinematics(model, "panda_hand", T[0, :3, 3], seeds[0], weights=[0, 0, 0])


def test_a_batch_equals_single_calls_and_threads_agree():
    model = load_urdf(URDFS["ur5"])
    rng = np.random.default_rng(15)
    Q, T = targets(model, "tool0", 100, rng)
    seeds = rd.random_configuration(model, rng, 100)
    batch = rd.inverse_kinematics(model, "tool0", T, seeds, restarts=0, threads=2)
    one = rd.inverse_kinematics(model, "tool0", T, seeds, restarts=0, threads=1)
    assert np.array_equal(batch.q, one.q) and np.array_equal(batch.iterations, one.iterations)
    for k in range(0, 100, 9):
        single = rd.inverse_kinematics(model, "tool0", T[k], seeds[k], restarts=0)
        assert np.array_equal(single.q, batch.q[k]) and single.converged == batch.converged[k]
        assert single.iterations == batch.iterations[k] and single.outcome == batch.outcome[k]


def test_floating_base_and_mimic_models():
    """A free-flying base reaches any foot pose (its quaternion stays unit); a mimic finger's frame."""
    biped = load_urdf(URDFS["biped"], floating_base=True)
    rng = np.random.default_rng(16)
    frame = biped.frame_names[-1]
    Q, T = targets(biped, frame, 20, rng)
    result = rd.inverse_kinematics(biped, frame, T, rd.random_configuration(biped, rng, 20))
    assert result.converged.all()
    assert np.allclose(np.linalg.norm(result.q[:, 3:7], axis=1), 1.0, atol=1e-14)
    assert rel_err(rd.frame_placement(biped, result.q, frame), T) < 1e-9
    panda = load_urdf(URDFS["panda"])
    Q, T = targets(panda, "panda_rightfinger", 20, rng)
    result = rd.inverse_kinematics(panda, "panda_rightfinger", T, Q + rng.normal(scale=0.05, size=Q.shape))
    assert result.converged.all() and within_limits(panda, result.q)


def test_bad_inputs_are_named():
    model = load_urdf(URDFS["puma560"])
    q = np.zeros(6)
    with pytest.raises(ValueError, match="target must be a 4x4 world placement"):
        rd.inverse_kinematics(model, "tool0", np.zeros(5), q)
    with pytest.raises(ValueError, match="target contains NaN"):
        rd.inverse_kinematics(model, "tool0", [np.nan, 0, 0], q)
    with pytest.raises(ValueError, match="target's rotation block must be a rotation"):
        rd.inverse_kinematics(model, "tool0", np.diag([1.0, 1, -1, 1]), q)
    with pytest.raises(ValueError, match=r"q0 must have shape \(6,\) or \(2, 6\)"):
        rd.inverse_kinematics(model, "tool0", np.zeros((2, 3)), np.zeros((3, 6)))
    with pytest.raises(ValueError, match=r"q0 contains NaN or inf \(batch row 1\)"):
        rd.inverse_kinematics(model, "tool0", np.zeros((2, 3)), [q, q * np.nan])
    with pytest.raises(KeyError, match="unknown frame"):
        rd.inverse_kinematics(model, "nowhere", [0, 0, 0], q)
    with pytest.raises(ValueError, match="fixed to the world"):
        rd.inverse_kinematics(model, model.frame_names[0], [0, 0, 0], q)
    with pytest.raises(ValueError, match="tolerance must be"):
        rd.inverse_kinematics(model, "tool0", [0, 0, 0], q, tolerance=-1)
    with pytest.raises(ValueError, match="tolerance must be a finite positive number, got 0 .an error of exactly 0"):
        rd.inverse_kinematics(model, "tool0", [0, 0, 0], q, tolerance=0)
    with pytest.raises(TypeError, match="frame must be a link or joint name .a str., got int 3"):
        rd.inverse_kinematics(model, 3, [0, 0, 0], q)
    with pytest.raises(TypeError, match="rng must be a non-negative integer seed, .*got 'abc'"):
        rd.inverse_kinematics(model, "tool0", [0, 0, 0], q, rng="abc")
    with pytest.raises(TypeError, match="rng must be"):
        rd.inverse_kinematics(model, "tool0", [0, 0, 0], q, rng=-1)
    assert rd.inverse_kinematics(model, "tool0", [0.3, 0.2, 0.5], q, rng=np.random.default_rng(1)).q.shape == (6,)
    biped = load_urdf(URDFS["biped"], floating_base=True)
    bad = rd.neutral(biped)
    bad[6] = 2.0
    with pytest.raises(ValueError, match="quaternion"):
        rd.inverse_kinematics(biped, biped.frame_names[-1], [0, 0, 0], bad)


def test_manipulability_of_the_two_link_arm():
    """Linear part at the tip: l1 l2 |sin q2| (Yoshikawa's measure of the planar arm)."""
    model = load_urdf(TWO_LINK)
    rng = np.random.default_rng(17)
    Q = rng.uniform(-np.pi, np.pi, (200, 2))
    m = rd.manipulability(model, Q, "tip", part="linear")
    assert rel_err(m.measure, np.abs(np.sin(Q[:, 1]))) < 1e-14
    for k in range(0, 200, 17):
        single = rd.manipulability(model, Q[k], "tip", part="linear")
        assert np.isclose(single.measure, abs(np.sin(Q[k, 1])), rtol=1e-14, atol=1e-15)
        assert np.isclose(single.condition_number, m.condition_number[k], rtol=1e-14)
    stretched = rd.manipulability(model, [0.4, 0.0], "tip", part="linear")
    assert stretched.measure < 1e-15 and stretched.condition_number > 1e15


@pytest.mark.parametrize("reference", ["world", "local", "local_world_aligned"])
def test_manipulability_against_pinocchio_jacobian(reference):
    pair = Pair("panda")
    rng = np.random.default_rng(18)
    refs = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    for _ in range(20):
        q = rd.random_configuration(pair.model, rng)
        J = pair.ours_jacobian(pin.computeFrameJacobian(pair.pin, pair.data, pair.pin_q(q),
                                                        pair.frame_id("panda_hand"), refs[reference]))
        for part, rows in (("full", slice(0, 6)), ("linear", slice(0, 3)), ("angular", slice(3, 6))):
            m = rd.manipulability(pair.model, q, "panda_hand", reference, part)
            s = np.linalg.svd(J[rows], compute_uv=False)
            assert np.isclose(m.measure, np.sqrt(np.linalg.det(J[rows] @ J[rows].T)), rtol=1e-9)
            assert rel_err(m.singular_values, s) < 1e-12 and np.isclose(m.condition_number, s[0] / s[-1], rtol=1e-9)
    with pytest.raises(ValueError, match="part must be one of"):
        rd.manipulability(pair.model, q, "panda_hand", part="both")


def test_one_seed_and_several_run_one_compiled_solver():
    """The seeds are one writeable C array however many there are: one compiled batch entry point of
    the solver (a single seed was a read-only view, several an F-ordered copy: each compiled the
    solver again, ~10 s of CPU; the single path's compiled entry point takes any layout)."""
    from robot_dynamics import calling
    m = load_urdf(URDFS["puma560"])
    T = rd.frame_placement(m, np.full(6, 0.3), "tool0")
    rd.inverse_kinematics(m, "tool0", T, np.zeros(6), restarts=0)                   # the single path
    rd.inverse_kinematics(m, "tool0", np.stack([T] * 3), np.zeros((3, 6)), restarts=0)   # the batch path
    compiled = len(calling._BOUND)
    for restarts in (0, 2):
        for targets, seed in ((T, np.zeros(6)), (np.stack([T] * 3), np.zeros(6)), (np.stack([T] * 3), np.zeros((3, 6)))):
            rd.inverse_kinematics(m, "tool0", targets, seed, restarts=restarts, rng=1)
    assert len(calling._BOUND) == compiled
