"""Excitation trajectories (Swevers' finite Fourier series): within the position, velocity,
acceleration and effort limits at every sample of a 1 kHz grid, at rest at both ends, periodic;
a condition number at most half the median of random Fourier trajectories within the same limits
(PUMA, panda); the JointTrajectory message content; refusals. The searches are given a number
of trials (evaluations=), not a time: the same trajectory on any machine."""
import numpy as np
import pytest
import yaml

import identification_truth as truth_data
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.dynamic_identification import identification_base, identification_regressor
from robot_dynamics.excitation import _limits, fourier_trajectory

DURATION = 10.0


@pytest.fixture(scope="module", params=[("puma560", 150), ("panda", 400)], ids=lambda p: p[0])
def excited(request):
    """(model, trajectory, acceleration limits): panda's search has 400 trials (about 4 s here),
    what its condition number needs to fall below half the random median; the PUMA's 150."""
    name, trials = request.param
    model = truth_data.prior(name)
    amax = np.full(len(model.joint_names), 6.0)
    traj = rd.excitation_trajectory(model, DURATION, harmonics=4, acceleration_limits=amax, rng=0,
                                    time_budget=np.inf, starts=8, evaluations=trials)
    return model, traj, amax


def scaled_condition_number(model, traj, base, n=200):
    """The identification matrix's condition number, columns scaled to unit norm, over n samples."""
    q, v, a = traj.sample(np.linspace(0, traj.duration, n, endpoint=False))
    W = identification_regressor(model, q, v, a)[..., base.columns].reshape(-1, len(base.columns))
    s = np.linalg.svd(W / np.linalg.norm(W, axis=0), compute_uv=False)
    return s[0] / s[-1]


def test_within_the_limits_at_every_sample_and_at_rest_at_both_ends(excited):
    model, traj, amax = excited
    t = np.arange(0, int(DURATION * 1000) + 1) / 1000.0
    q, v, a = traj.sample(t)
    assert np.all(q >= model.lower_limits) and np.all(q <= model.upper_limits)
    assert np.all(np.abs(v) <= model.velocity_limits) and np.all(np.abs(a) <= amax)
    tau = rd.inverse_dynamics(model, q, v, a) + rd.friction_torques(model, v)
    assert np.all(np.abs(tau) <= model.effort_limits)
    for end in (0, -1):
        assert np.abs(v[end]).max() < 1e-12 and np.abs(a[end]).max() < 1e-11
    np.testing.assert_allclose(q[0], q[-1], atol=1e-12)                 # periodic: the end is the start
    # the limits are used: some joint reaches 95 % of one of them
    use = np.max([np.abs(v).max(axis=0) / model.velocity_limits, np.abs(a).max(axis=0) / amax], axis=0)
    assert use.max() > 0.95
    print(f"{model.name}: peak |v| / limit {np.round(np.abs(v).max(axis=0) / model.velocity_limits, 3)}, "
          f"peak |a| / limit {np.round(np.abs(a).max(axis=0) / amax, 3)}")


def test_condition_number_at_most_half_of_random_fourier_trajectories(excited):
    model, traj, amax = excited
    base = identification_base(model)
    limits = _limits(model, None, amax, None, None)
    rng = np.random.default_rng(100)
    L = traj.harmonics
    dense = np.linspace(0, DURATION, 2001)
    random = [scaled_condition_number(model, fourier_trajectory(model, DURATION, rng.normal(size=(len(amax), 2 * L - 2)),
                                                                limits, dense), base) for _ in range(20)]
    ours = scaled_condition_number(model, traj, base)
    print(f"{model.name}: condition number {ours:.3g}, random Fourier trajectories within the same limits: median "
          f"{np.median(random):.3g} (min {min(random):.3g}); the search's own random starts: median "
          f"{np.median(traj.start_condition_numbers):.3g}; {traj.evaluations} trials")
    assert ours <= 0.5 * np.median(random)
    assert traj.condition_number == pytest.approx(ours, rel=0.2)


def test_the_joint_trajectory_message(excited):
    model, traj, _ = excited
    msg = traj.to_joint_trajectory(rate=5.0, lead_in=2.5)
    again = yaml.safe_load(yaml.safe_dump(msg))
    assert again == msg and again["joint_names"] == model.joint_names
    points = msg["points"]
    assert len(points) == 51
    times = [p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in points]
    assert times[0] == 2.5 and times[-1] == pytest.approx(12.5) and np.all(np.diff(times) > 0)
    assert all(isinstance(p["time_from_start"][k], int) for p in points for k in ("sec", "nanosec"))
    assert all(0 <= p["time_from_start"]["nanosec"] < 10**9 for p in points)
    q, v, a = traj.sample(np.array(times) - 2.5)
    np.testing.assert_allclose([p["positions"] for p in points], q, atol=1e-12)
    np.testing.assert_allclose([p["velocities"] for p in points], v, atol=1e-12)
    assert points[0]["velocities"] == [0.0] * len(q[0]) == points[-1]["accelerations"]


def test_the_same_trajectory_for_the_same_seed_and_trials():
    model = truth_data.prior("puma560")
    runs = [rd.excitation_trajectory(model, 6.0, harmonics=3, rng=3, time_budget=np.inf, starts=3, evaluations=20)
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].a, runs[1].a)
    np.testing.assert_array_equal(runs[0].center, runs[1].center)
    assert runs[0].evaluations == 23


def test_refusals_name_the_problem():
    model = truth_data.prior("puma560")
    excite = rd.excitation_trajectory
    with pytest.raises(ValueError, match="harmonics an integer >= 2"):
        excite(model, 10.0, harmonics=1)
    with pytest.raises(ValueError, match="duration must be positive"):
        excite(model, -1.0)
    with pytest.raises(ValueError, match="velocity_limits takes one positive value or one per joint"):
        excite(model, 10.0, velocity_limits=[1.0, 2.0])
    with pytest.raises(ValueError, match="center must be 6 positions strictly inside"):
        excite(model, 10.0, center=np.full(6, 10.0))
    with pytest.raises(ValueError, match="at the centre pose joint 'joint2' needs .* more than its effort limit"):
        excite(model, 10.0, effort_limits=[100, 1.0, 100, 100, 100, 100], center=np.zeros(6))   # the arm level
    ur5 = truth_data.prior("ur5")
    text = ur5.urdf.replace('type="revolute"', 'type="continuous"', 1)          # the first joint spins freely
    spinning = load_urdf(text)
    with pytest.raises(ValueError, match=r"nothing bounds the motion of joints \['shoulder_pan_joint'\]"):
        excite(spinning, 10.0, velocity_limits=np.r_[np.inf, np.ones(5)])
    with pytest.raises(ValueError, match="fixed-base model with joints, none of them planar or floating"):
        excite(load_urdf(model.urdf, floating_base=True), 10.0)
    with pytest.raises(ValueError, match="time_budget must be >= 0 s"):
        excite(model, 10.0, time_budget=float("nan"))


@pytest.mark.ros
def test_the_message_fields_are_joint_trajectorys():
    """Every key of to_joint_trajectory() is a field of trajectory_msgs/JointTrajectory and its
    points (the keyword arguments of the messages build them)."""
    msgs = pytest.importorskip("trajectory_msgs.msg")
    from builtin_interfaces.msg import Duration
    traj = rd.excitation_trajectory(truth_data.prior("puma560"), 4.0, harmonics=2, time_budget=np.inf, starts=1,
                                    evaluations=0)
    content = traj.to_joint_trajectory(rate=10.0, lead_in=1.0)
    points = [msgs.JointTrajectoryPoint(**{k: v for k, v in p.items() if k != "time_from_start"},
                                        time_from_start=Duration(**p["time_from_start"])) for p in content["points"]]
    msg = msgs.JointTrajectory(joint_names=content["joint_names"], points=points)
    assert len(msg.points) == 41 and msg.points[-1].time_from_start.sec == 5
    assert list(msg.points[3].positions) == content["points"][3]["positions"]
