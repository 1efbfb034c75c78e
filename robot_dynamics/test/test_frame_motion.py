"""A frame's velocity and its spatial and classical accelerations (robot_dynamics/frame_motion.py)
against Pinocchio's getFrameVelocity, getFrameAcceleration and getFrameClassicalAcceleration after
forwardKinematics(q, v, a) on the test robots (fixed, free flyer, mimic, planar and floating
joints), in the three references, 1e-9 relative; against the Jacobian (v = J v) and central
differences of the velocity along the motion; far from the origin; batches equal single states;
bad inputs refused by name."""
import numpy as np
import pytest

from oracle import URDFS, Pair, far_away, pin, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf

REFERENCES = ("world", "local", "local_world_aligned")
N_STATES, TOL = 30, 1e-9


def check_against_pinocchio(P, q, v, a, frames):
    m = P.model
    pin.forwardKinematics(P.pin, P.data, P.pin_q(q), P.pin_v(v), P.pin_v(a))
    for frame in frames:
        fid = P.frame_id(frame)
        for ref in REFERENCES:
            r = getattr(pin.ReferenceFrame, ref.upper())
            assert rel_err(rd.frame_velocity(m, q, v, frame, ref), pin.getFrameVelocity(P.pin, P.data, fid, r).vector) < TOL
            assert rel_err(rd.frame_acceleration(m, q, v, a, frame, ref, classical=False),
                           pin.getFrameAcceleration(P.pin, P.data, fid, r).vector) < TOL
            assert rel_err(rd.frame_acceleration(m, q, v, a, frame, ref),
                           pin.getFrameClassicalAcceleration(P.pin, P.data, fid, r).vector) < TOL


def test_against_pinocchio(pair):
    """Every frame of the model (links, joints, fixed frames, the world-fixed root) over the states."""
    frames = pair.model.frame_names
    for k, (q, v, a) in enumerate(pair.states(N_STATES)):
        check_against_pinocchio(pair, q, v, a, frames[k % 3::3])


def test_velocity_is_the_jacobian_times_v(pair):
    m = pair.model
    for k, (q, v, _) in enumerate(pair.states(10, seed=1)):
        frame = m.frame_names[(5 * k) % len(m.frame_names)]
        for ref in REFERENCES:
            assert rel_err(rd.frame_velocity(m, q, v, frame, ref), rd.frame_jacobian(m, q, frame, ref) @ v) < TOL


def test_accelerations_are_derivatives_of_the_velocity(pair):
    """Along q(t) = q (+) (t v + t^2 a / 2), v(t) = v + t a (exact to second order on the joints'
    groups): d/dt of the local_world_aligned velocity is the classical acceleration (the frame
    origin's), d/dt of the local velocity the spatial one in local axes (the body twist's)."""
    m = pair.model
    h = 1e-5
    for k, (q, v, a) in enumerate(pair.states(6, seed=2)):
        frame = m.frame_names[(7 * k + 3) % len(m.frame_names)]
        plus, minus = rd.integrate(m, q, h * v + h * h / 2 * a), rd.integrate(m, q, -h * v + h * h / 2 * a)
        for ref, classical in (("local_world_aligned", True), ("local", False)):
            d = (rd.frame_velocity(m, plus, v + h * a, frame, ref) - rd.frame_velocity(m, minus, v - h * a, frame, ref)) / (2 * h)
            assert rel_err(d, rd.frame_acceleration(m, q, v, a, frame, ref, classical)) < 1e-6


def test_far_from_the_origin(tmp_path):
    """panda bolted 1.26 km from the map origin, tilted: as Pinocchio (which works in local frames)."""
    P = Pair(None, path=far_away(URDFS["panda"], tmp_path, "panda_far"))
    for q, v, a in P.states(10, seed=3):
        check_against_pinocchio(P, q, v, a, ["panda_hand", "panda_link4", "panda_leftfinger"])


def test_a_frame_on_the_world_does_not_move():
    m = Pair("puma560").model
    q, v, a = Pair("puma560").random_state(np.random.default_rng(4))
    assert m.frame("base_link").body < 0
    for ref in REFERENCES:
        np.testing.assert_array_equal(rd.frame_velocity(m, q, v, "base_link", ref), np.zeros(6))
        np.testing.assert_array_equal(rd.frame_acceleration(m, q, v, a, "base_link", ref), np.zeros(6))


def test_batches_equal_single_states(pair):
    m = pair.model
    S = pair.states(150, seed=4)     # above the threshold where threads start
    Q, V, A = (np.array([s[k] for s in S]) for k in range(3))
    frame = m.frame_names[-1]
    for threads in (1, 2):
        batch = dict(v=rd.frame_velocity(m, Q, V, frame, "local", threads=threads),
                     a=rd.frame_acceleration(m, Q, V, A, frame, "world", threads=threads),
                     s=rd.frame_acceleration(m, Q, V, A, frame, classical=False, threads=threads))
        for k, (q, v, a) in enumerate(S):
            single = dict(v=rd.frame_velocity(m, q, v, frame, "local"), a=rd.frame_acceleration(m, q, v, a, frame, "world"),
                          s=rd.frame_acceleration(m, q, v, a, frame, classical=False))
            for name, value in single.items():
                np.testing.assert_array_equal(batch[name][k], value, err_msg=name)


def variants(x):
    """x as the fast path takes it, then a list, a read-only array and a strided one."""
    ro = x.copy()
    ro.flags.writeable = False
    return [x, list(x), ro, np.repeat(x, 2)[::2]]


@pytest.mark.parametrize("robot", [("panda", False), ("biped", True)], ids=["panda", "biped-freeflyer"])
def test_fast_and_general_paths_agree_and_leave_inputs_alone(robot):
    m = load_urdf(URDFS[robot[0]], floating_base=robot[1])      # a fresh model: its first calls make the scratch
    q, v, a = Pair(*robot).random_state(np.random.default_rng(7))
    copies = q.copy(), v.copy(), a.copy()
    frame = m.frame_names[-2]
    calls = dict(v=lambda q, v, a: rd.frame_velocity(m, q, v, frame, "world"),
                 a=lambda q, v, a: rd.frame_acceleration(m, q, v, a, frame),
                 s=lambda q, v, a: rd.frame_acceleration(m, q, v, a, frame, "local", classical=False))
    for name, call in calls.items():
        first = call(q, v, a)
        np.testing.assert_array_equal(call(q, v, a), first, err_msg=name)
        for x in zip(variants(q), variants(v), variants(a)):
            np.testing.assert_array_equal(call(*x), first, err_msg=name)
        np.testing.assert_array_equal(call(q[None], v[None], a[None])[0], first, err_msg=name)
    for x, c in zip((q, v, a), copies):
        np.testing.assert_array_equal(x, c)


def test_bad_input_is_named():
    m = Pair("biped", True).model
    q, v = rd.neutral(m), np.zeros(m.nv)
    frame = m.frame_names[-1]
    with pytest.raises(KeyError, match="unknown frame 'nowhere'"):
        rd.frame_velocity(m, q, v, "nowhere")
    with pytest.raises(ValueError, match="reference must be one of"):
        rd.frame_acceleration(m, q, v, v, frame, "sideways")
    with pytest.raises(ValueError, match=rf"q must have shape \({m.nq},\) or \(N, {m.nq}\), got shape \(5,\)"):
        rd.frame_velocity(m, np.zeros(5), v, frame)
    with pytest.raises(ValueError, match=rf"v must have shape \({m.nv},\)"):
        rd.frame_velocity(m, q, np.zeros(m.nv + 1), frame)
    with pytest.raises(ValueError, match=rf"a must have shape \(2, {m.nv}\)"):
        rd.frame_acceleration(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)), v, frame)
    bad = np.tile(v, (3, 1))
    bad[1, 4] = np.nan
    with pytest.raises(ValueError, match=r"a contains NaN or inf \(batch row 1\)"):
        rd.frame_acceleration(m, np.tile(q, (3, 1)), np.tile(v, (3, 1)), bad, frame, threads=1)
    with pytest.raises(ValueError, match=r"v contains a value beyond 1e\+50 in magnitude"):
        rd.frame_velocity(m, q, np.full(m.nv, -1e51), frame)
    unnormed = q.copy()
    unnormed[6] = 2.0
    with pytest.raises(ValueError, match="the quaternion .* of floating joint 'root_joint', must have unit norm"):
        rd.frame_acceleration(m, unnormed, v, v, frame)
    np.testing.assert_array_equal(rd.frame_velocity(m, q, v, frame), np.zeros(6))    # still fine
