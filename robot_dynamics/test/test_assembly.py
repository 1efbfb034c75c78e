"""Loop assembly (`assemble`): the five-bar's passive joints from its motor angles, from perturbed
starts, closed to 1e-12 and equal to the mechanism's closed-form position analysis (two circles
meeting at the end effector); a loop that cannot close refused by name; `fixed` as joint names or a
mask over q; floating and planar joints moved along their Lie groups; batches and out=. The
four-bar's coupler and rocker from its crank angle against its closed form (four_bar.py)."""
import numpy as np
import pytest

from four_bar import closed_four_bar
from oracle import FIVE_BAR_LOOPS, FIVE_BAR_MOTORS, FOUR_BAR_LOOPS, Pair
from robot_dynamics import dynamics as rd
from robot_dynamics.dynamics import ConstraintError

# urdf/five_bar.urdf: base pivots at x = -+0.1, proximal links 0.25, distal 0.30; at q = 0 the
# proximal links point at 120 and 60 deg, the distal links at PHI3_0 and PHI4_0 (x towards +z)
D, L1, L2 = 0.1, 0.25, 0.30
PHI1_0, PHI2_0 = 2 * np.pi / 3, np.pi / 3
PHI3_0, PHI4_0 = 0.7227342478134159, 2.418858405776377


def unit(phi):
    return np.array([np.cos(phi), np.sin(phi)])


def five_bar_position(m, t1, t2):
    """q of the closed five-bar for motor angles t1 (left) and t2 (right), by direct geometry: the
    elbows B1, B2 at the proximal tips, the end effector P where the circles of radius L2 about
    them meet on the side away from the base (the working mode of q = 0); the distal links'
    angles phi3, phi4 give the elbow joints (relative to their q = 0 angles) and the fifth joint
    (the end effector turns with the right distal link)."""
    B1, B2 = np.array([-D, 0.0]) + L1 * unit(PHI1_0 + t1), np.array([D, 0.0]) + L1 * unit(PHI2_0 + t2)
    d = B2 - B1
    e = np.linalg.norm(d)
    h = np.sqrt(L2 ** 2 - (e / 2) ** 2)
    P = B1 + d / 2 + h * np.array([-d[1], d[0]]) / e       # to the left of B1 -> B2: up
    phi3, phi4 = np.arctan2(*(P - B1)[::-1]), np.arctan2(*(P - B2)[::-1])
    q = np.zeros(m.nq)
    for name, value in (("left_base_joint", t1), ("right_base_joint", t2),
                        ("left_elbow_joint", phi3 - (PHI1_0 + t1) - (PHI3_0 - PHI1_0)),
                        ("right_elbow_joint", phi4 - (PHI2_0 + t2) - (PHI4_0 - PHI2_0)),
                        ("end_joint", (phi4 - PHI4_0) - (phi3 - PHI3_0))):
        q[m.joint_index[name]] = value
    return q


def reachable_motors(rng, spread=0.6):
    """Motor angles whose elbows are between 0.05 and 0.57 m apart: the loop closes, away from the
    distal links' full stretch (2 x 0.30 m) and from the elbows meeting."""
    while True:
        t1, t2 = rng.uniform(-spread, spread, 2)
        e = np.linalg.norm(np.array([D, 0.0]) + L1 * unit(PHI2_0 + t2) - np.array([-D, 0.0]) - L1 * unit(PHI1_0 + t1))
        if 0.05 < e < 0.57:
            return t1, t2


def closure(m, q, loop):
    """max |p_a - p_b| and the angle between the frames of a loop (atan2 of the rotation's skew and
    symmetric parts: arccos of the trace loses half the digits near zero)."""
    Ha, Hb = rd.frame_placement(m, q, loop[0]), rd.frame_placement(m, q, loop[1])
    R = Ha[:3, :3] @ Hb[:3, :3].T
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2
    turn = np.arctan2(np.linalg.norm(w), (np.trace(R) - 1) / 2)
    return max(np.abs(Ha[:3, 3] - Hb[:3, 3]).max(), turn if loop[2] == "6d" else 0.0)


@pytest.fixture(scope="module")
def five_bar():
    return Pair("five_bar").model


def test_q_zero_is_closed(five_bar):
    m = five_bar
    assert closure(m, np.zeros(m.nq), FIVE_BAR_LOOPS[0]) < 1e-15
    np.testing.assert_allclose(five_bar_position(m, 0.0, 0.0), 0.0, atol=1e-15)
    q = np.zeros(m.nq)
    assert rd.assemble(m, q, FIVE_BAR_LOOPS) is not q
    np.testing.assert_array_equal(rd.assemble(m, q, FIVE_BAR_LOOPS), q)     # already closed: untouched


def test_a_guess_many_turns_out_is_reduced_first(five_bar):
    """A guess at 1e6 rad (a double's spacing there, 1.2e-10 rad, is above the closure tolerance) is
    brought within half a turn of 0 by whole turns, then closed; a batch too."""
    m = five_bar
    q = np.zeros(m.nq)
    q[0] = 0.3
    closed = rd.assemble(m, q, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
    far = closed + 2 * np.pi * 159155           # ~1e6 rad: the same placements
    for result in (rd.assemble(m, far, FIVE_BAR_LOOPS), rd.assemble(m, np.array([far, closed]), FIVE_BAR_LOOPS)[0]):
        assert np.all(np.abs(result) <= np.pi) and closure(m, result, FIVE_BAR_LOOPS[0]) < 1e-12
        np.testing.assert_allclose(result, closed, atol=1e-9)
    near = closed + 2 * np.pi * 3               # within REDUCE_ABOVE: kept near the guess
    np.testing.assert_allclose(rd.assemble(m, near, FIVE_BAR_LOOPS), near, atol=1e-9)


def test_five_bar_from_perturbed_starts(five_bar):
    """Motors at random angles, the passive joints guessed 0.3 rad off: closed to 1e-12, on the
    closed-form configuration."""
    m = five_bar
    rng = np.random.default_rng(1)
    motors = [m.joint_index[j] for j in FIVE_BAR_MOTORS]
    for _ in range(100):
        t1, t2 = reachable_motors(rng)
        exact = five_bar_position(m, t1, t2)
        guess = exact + rng.uniform(-0.3, 0.3, m.nq)
        guess[motors] = t1, t2
        q = rd.assemble(m, guess, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
        assert q[motors[0]] == t1 and q[motors[1]] == t2
        assert closure(m, q, FIVE_BAR_LOOPS[0]) <= 1e-12
        np.testing.assert_allclose(q, exact, rtol=0, atol=1e-10)


def test_five_bar_warm_started_along_a_motion(five_bar):
    """As the node does: the motors follow a circle of the end effector's joint-space image at
    1 kHz sampling (steps of ~1 mrad), each assembly warm-started from the last solution."""
    m = five_bar
    motors = [m.joint_index[j] for j in FIVE_BAR_MOTORS]
    q = np.zeros(m.nq)
    for t in np.arange(0.0, 2.0, 1e-3):
        t1, t2 = 0.3 * np.sin(np.pi * t), 0.3 * np.cos(np.pi * t) - 0.3
        q[motors] = t1, t2
        q = rd.assemble(m, q, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
        assert closure(m, q, FIVE_BAR_LOOPS[0]) <= 1e-12
        np.testing.assert_allclose(q, five_bar_position(m, t1, t2), rtol=0, atol=1e-10)


def test_a_loop_that_cannot_close_is_refused(five_bar):
    """Motors turned outwards by 0.9 rad put the elbows 0.69 m apart, beyond the distal links'
    reach (2 x 0.30 m): refused, naming the loop, the free joints and how far apart it stays."""
    m = five_bar
    q = np.zeros(m.nq)
    q[m.joint_index["left_base_joint"]], q[m.joint_index["right_base_joint"]] = 0.9, -0.9
    with pytest.raises(ConstraintError, match=r"loop 0 \(6d between 'end_effector' and 'right_distal_tip'\) cannot close "
                                              r"from this guess: the Newton steps over the free joints \('left_elbow_joint', "
                                              r"'end_joint', 'right_elbow_joint'\) stop with its frames 0.09\d* m apart"):
        rd.assemble(m, q, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
    with pytest.raises(ConstraintError, match=r"\(batch row 1\)"):
        rd.assemble(m, np.array([np.zeros(m.nq), q]), FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)


def test_fixed_as_a_mask_over_q_and_every_joint_free(five_bar):
    m = five_bar
    rng = np.random.default_rng(2)
    guess = rng.uniform(-0.2, 0.2, m.nq)
    by_name = rd.assemble(m, guess, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
    mask = np.isin(np.arange(m.nq), [m.joint_index[j] for j in FIVE_BAR_MOTORS])
    np.testing.assert_array_equal(rd.assemble(m, guess, FIVE_BAR_LOOPS, fixed=mask), by_name)
    q = rd.assemble(m, guess, FIVE_BAR_LOOPS)       # every joint free: the motors move too
    assert closure(m, q, FIVE_BAR_LOOPS[0]) <= 1e-12
    assert np.abs(q - guess)[mask].max() > 0


def test_floating_and_planar_joints_move_on_their_groups():
    """A floating object held by a 6d loop to the arm: its floating joint (mid-tree, alone, then
    with a planar joint and a revolute one, redundant) moves until the loop closes to 1e-12; the
    quaternions stay unit and the fixed joints keep their values."""
    P = Pair("floating_object_arm")
    m = P.model
    loops = [("part_arm", "a2", "6d")]
    rng = np.random.default_rng(3)
    for fixed in (["object_float", "table_planar", "a_j1", "a_j2", "part_j"], ["object_float", "a_j1", "a_j2"]):
        free = np.zeros(m.nq, bool)
        for j in m.joints:
            if j.name not in fixed:
                free[j.idx_q:j.idx_q + j.nq] = True
        for _ in range(5):
            q0 = P.random_state(rng)[0]
            q = rd.assemble(m, q0, loops, fixed=fixed)
            assert closure(m, q, loops[0]) <= 1e-12
            np.testing.assert_array_equal(q[~free], q0[~free])
            for j in m.joints:
                if j.kind == "floating":
                    assert abs(np.linalg.norm(q[j.idx_q + 3:j.idx_q + 7]) - 1) < 1e-14


def test_bad_input_is_refused_by_name(five_bar):
    m = five_bar
    q = np.zeros(m.nq)
    with pytest.raises(ValueError, match="q_guess contains NaN or inf"):
        rd.assemble(m, q + np.nan, FIVE_BAR_LOOPS)
    with pytest.raises(ValueError, match=r"q_guess must have shape \(5,\) or \(N, 5\)"):
        rd.assemble(m, np.zeros(4), FIVE_BAR_LOOPS)
    with pytest.raises(ValueError, match="fixed: unknown joint 'motor'"):
        rd.assemble(m, q, FIVE_BAR_LOOPS, fixed=["motor"])
    with pytest.raises(ValueError, match=r"fixed must be a boolean mask of shape \(5,\) \(over q\)"):
        rd.assemble(m, q, FIVE_BAR_LOOPS, fixed=np.ones(3, bool))
    with pytest.raises(ValueError, match=r"loop 0: expected \(frame_a, frame_b, kind\)"):
        rd.assemble(m, q, [("end_effector", "6d")])
    arm = Pair("floating_object_arm").model
    partial = np.zeros(arm.nq, bool)
    partial[:3] = True
    with pytest.raises(ValueError, match=r"fixed: the floating joint 'object_float' moves as a whole: its coordinates "
                                         r"q\[0:7\] must all be in the mask or none"):
        rd.assemble(arm, rd.neutral(arm), [("part_arm", "a2", "6d")], fixed=partial)
    bad = rd.neutral(arm)
    bad[3:7] = [0.5, 0.5, 0.5, 0.6]
    with pytest.raises(ValueError, match="the quaternion .* of floating joint 'object_float', must have unit norm"):
        rd.assemble(arm, bad, [("part_arm", "a2", "6d")])


def test_batches_and_out_equal_single_states(five_bar):
    m = five_bar
    rng = np.random.default_rng(4)
    guesses = rng.uniform(-0.3, 0.3, (70, m.nq))
    for threads in (1, 2):
        Q = rd.assemble(m, guesses, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS, threads=threads)
        out = np.empty_like(Q)
        assert rd.assemble(m, guesses, FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS, threads=threads, out=out) is out
        for k in range(len(guesses)):
            single = rd.assemble(m, guesses[k], FIVE_BAR_LOOPS, fixed=FIVE_BAR_MOTORS)
            np.testing.assert_array_equal(Q[k], single)
            np.testing.assert_array_equal(out[k], single)
    with pytest.raises(ValueError, match="out must be a writeable C-contiguous float64 array of shape"):
        rd.assemble(m, guesses, FIVE_BAR_LOOPS, out=guesses)


def test_four_bar_assembles_the_coupler_and_rocker_from_the_crank_angle():
    """From guesses 0.3 rad off on the coupler and the rocker, assemble with the crank fixed closes
    the loop to 1e-12 m and lands on the position analysis's configuration (the same branch)."""
    m = Pair("four_bar", False).model
    rng = np.random.default_rng(12)
    for t2 in np.linspace(-np.pi, np.pi, 25):
        exact = closed_four_bar(t2)[0]
        guess = exact + np.concatenate(([0.0], rng.uniform(-0.3, 0.3, 2)))
        q = rd.assemble(m, guess, FOUR_BAR_LOOPS, fixed=["crank_joint"])
        assert q[0] == t2
        gap = rd.frame_placement(m, q, "coupler_tip")[:3, 3] - rd.frame_placement(m, q, "rocker_tip")[:3, 3]
        assert np.abs(gap).max() <= 1e-12
        np.testing.assert_allclose(q, exact, rtol=0, atol=1e-10)
