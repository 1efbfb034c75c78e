"""The node's payload identification logic without DDS (robot_dynamics.ros.identification: no rclpy): the
~/identify_payload request checked, joint_states samples recorded, the estimate against the library
(identify_payload*) on the same samples, the response and what is applied."""
import copy
import pickle
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.payload import add_payload
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros import identification
from robot_dynamics.ros.parameters import ParameterError
from rosconfig import configured, params
from scripted import motion

PUMA = bundled_urdf("puma560")
MS = 1_000_000      # ns


def config(**changes):
    return configured(PUMA, urdf_file=PUMA, **changes)


@pytest.mark.parametrize("name,value", [("identification.window", 2.0), ("identification.still_velocity", 0.0)])
def test_identification_parameters_are_checked_by_name(name, value):
    with pytest.raises(ParameterError) as info:
        params(**{name.replace(".", "__"): value})
    assert info.value.name == name and name in str(info.value)


# --- identification ------------------------------------------------------------------------------------
PAYLOAD = ("tool0", 1.5, [0.02, 0.01, 0.05], [0.003, 0.004, 0.002, 0.0002, 0.0, 0.0])


def request(**fields):
    base = dict(duration=1.0, method="", link="", apply=False, point_mass=False)
    base.update(fields)
    return Msg(**base)


def recorded(model, times, payload=PAYLOAD, duration=10.0, still=None):
    c = config()
    recorder = identification.Recorder(model, round(duration * 1e9), c.observer.max_interval_ns)
    for t in times:
        q, v, tau = motion(model, t, payload) if still is None else still(t)
        if recorder.add(round(t * 1e9), q, v, tau):
            break
    return recorder


def test_requests_are_checked_naming_the_field():
    c = config()
    p = params(urdf_file=PUMA)
    r = identification.Request(request(link="tool0"), p, c.model)
    assert (r.method, r.link, r.duration_ns, r.point_mass) == ("momentum", "tool0", 10**9, False)
    assert identification.Request(request(method="static"), params(payload__link="link6"), c.model).link == "link6"
    assert identification.Request(request(method="static", link="tool0"), p, c.model).point_mass
    for fields, words in ((dict(duration=0.0), "duration takes"), (dict(duration=float("nan")), "duration takes"),
                          (dict(duration=500.0), "duration takes"), (dict(method="fast", link="tool0"), "method takes"),
                          (dict(), "name the link"), (dict(link="camera"), "unknown frame 'camera'"),
                          (dict(link="base_link"), "fixed to the world")):
        with pytest.raises(ValueError, match=words):
            identification.Request(request(**fields), p, c.model)


def test_recorder_spans_the_duration_by_stamps_and_refuses_jumps():
    model = config().model
    rec = identification.Recorder(model, 10 * MS, 100 * MS)
    q, v, tau = motion(model, 0.0)
    finished = [rec.add(k * MS, q, v, tau) for k in (0, 1, 1, 2, 5, 10)]
    assert finished == [False, False, False, False, False, True] and rec.count == 5     # the duplicate skipped
    t, Q, V, T = rec.arrays()
    np.testing.assert_allclose(t, [0.0, 0.001, 0.002, 0.005, 0.010])
    assert Q.shape == (5, 6) and V.shape == (5, 6) and T.shape == (5, 6)
    back = identification.Recorder(model, 10 * MS, 100 * MS)
    back.add(5 * MS, q, v, tau)
    assert back.add(4 * MS, q, v, tau) and "went back" in back.error
    gap = identification.Recorder(model, 10**9, 100 * MS)
    gap.add(0, q, v, tau)
    assert gap.add(200 * MS, q, v, tau) and "gap of 0.2 s" in gap.error
    big = identification.Recorder(model, 10**12, 100 * MS)
    big.capacity = 5000                                     # more than one chunk, then the cap
    for k in range(6000):
        if big.add(k * MS, q, v, tau):
            break
    assert big.capped and big.count == 5000 and len(big.arrays()[0]) == 5000


def test_momentum_identification_of_a_scripted_motion_and_its_response():
    c = config()
    model = c.model
    rec = recorded(model, np.arange(0, 3.0, 1e-3), duration=2.5)
    assert rec.finished and rec.error is None
    est, used = identification.estimate(model, identification.Request(request(link="tool0"), params(), model), rec,
                                        0.02, 0.01)
    assert est.method == "momentum" and "windows of 20 samples" in used
    assert abs(est.mass - 1.5) < 1e-4 and np.allclose(est.com, PAYLOAD[2], atol=1e-5)
    assert np.allclose(est.inertia, [[0.003, 0.0002, 0.0], [0.0002, 0.004, 0.0], [0.0, 0.0, 0.002]], atol=1e-4)
    assert identification.found(est) is None
    values = identification.parameters_to_apply(est, point_mass=False)
    assert values["payload.link"] == "tool0" and abs(values["payload.mass"] - 1.5) < 1e-4
    response = Msg(**{f: None for f in ("link", "method", "samples", "mass", "com", "inertia", "mass_identified",
                                        "com_identified", "inertia_identified", "physical", "residual",
                                        "condition_number", "mass_std", "com_std", "inertia_std", "message")})
    identification.fill_response(response, est, used)
    assert response.mass_identified and response.com_identified and response.inertia_identified and response.physical
    assert response.samples == rec.count and len(response.inertia) == 6 and len(response.com_std) == 3
    assert identification.response_finite(response) and "mass 1.5" in response.message


def test_static_identification_from_still_poses_and_refusals():
    model = config().model
    poses = [np.array([0.4, -0.8, 1.2, w4, w5, w6]) for w4, w5, w6 in
             ((0.0, 0.0, 0.0), (1.2, -0.9, 0.5), (-1.0, 0.8, 2.0), (0.5, 1.3, -1.5))]
    loaded = copy.deepcopy(model)
    add_payload(loaded, *PAYLOAD)

    def still(t):           # 0.4 s in each pose, then a fast move to the next (not still)
        k, s = int(t // 0.5), t % 0.5
        q = poses[min(k, 3)] if s < 0.4 else poses[min(k, 3)] + (s - 0.4) * 10 * (poses[min(k + 1, 3)] - poses[min(k, 3)])
        v = np.zeros(6) if s < 0.4 else 10 * (poses[min(k + 1, 3)] - poses[min(k, 3)])
        return q, v, rd.gravity_torques(loaded, q)
    rec = recorded(model, np.arange(0, 2.0, 1e-3), still=still, duration=1.9)
    static = identification.Request(request(method="static", link="tool0"), params(), model)
    est, used = identification.estimate(model, static, rec, 0.02, 0.01)
    assert est.method == "static" and used.startswith("4 still poses")
    assert abs(est.mass - 1.5) < 1e-9 and np.allclose(est.com, PAYLOAD[2], atol=1e-9) and est.inertia is None
    assert identification.parameters_to_apply(est, point_mass=True)["payload.inertia"] == [0.0] * 6
    # one still pose gives the mass and the centre of mass across gravity only: not applied, with the reason
    one = recorded(model, np.arange(0, 0.45, 1e-3), still=still, duration=0.44)
    est, used = identification.estimate(model, static, one, 0.02, 0.01)
    assert used.startswith("1 still pose from") and abs(est.mass - 1.5) < 1e-9 and est.com is None
    with pytest.raises(ValueError, match="not applied: the payload's centre of mass was not identified"):
        identification.parameters_to_apply(est, point_mass=True)
    moving = recorded(model, np.arange(0, 1.0, 1e-3), duration=0.9)
    with pytest.raises(ValueError, match="no still pose"):
        identification.estimate(model, static, moving, 0.02, 0.01)
    short = recorded(model, np.arange(0, 0.03, 1e-3), duration=0.02)
    momentum = identification.Request(request(link="tool0"), params(), model)
    with pytest.raises(ValueError, match="too short"):
        identification.estimate(model, momentum, short, 0.02, 0.01)
    failed = recorded(model, np.arange(0, 0.1, 1e-3), duration=0.05)
    failed.error = "a joint_states stamp went back"
    with pytest.raises(ValueError, match="went back"):
        identification.estimate(model, momentum, failed, 0.02, 0.01)


def test_no_payload_is_no_success_and_uncertain_estimates_are_not_applied():
    model = config().model
    rng = np.random.default_rng(0)
    rec = identification.Recorder(model, 10**9, 10**8)
    for k, t in enumerate(np.arange(0, 1.0, 1e-3)):          # no payload, noisy efforts
        q, v, tau = motion(model, t)
        rec.add(k * MS, q, v, tau + rng.normal(0, 0.5, 6))
    momentum = identification.Request(request(link="tool0"), params(), model)
    est, _ = identification.estimate(model, momentum, rec, 0.02, 0.01)
    assert "no payload found" in identification.found(est)
    with pytest.raises(ValueError, match="not applied"):
        identification.parameters_to_apply(est, point_mass=False)


# --- whole-robot identification: the buffer, the requests, an applied estimate ---------------------------
from robot_dynamics.ros.config import build_config  # noqa: E402
from robot_dynamics.ros.identification import dynamics  # noqa: E402
import identification_truth as truth  # noqa: E402


def test_buffer_keeps_the_latest_seconds_by_stamps_and_a_snapshot_stays_as_taken():
    """The snapshot is views of the buffer's chunks, no copy (its window is copied in the heavy-request
    process), and later samples do not change it, also after a pickle round trip (what crosses to that
    process)."""
    model = config().model
    buffer = dynamics.Buffer(model, 2.5)
    q, v, tau = np.zeros(6), np.zeros(6), np.zeros(6)
    for k in range(6000):                           # 6 s at 1 kHz
        buffer.add(10**12 + k * MS, q + k, v - k, tau + 2 * k)
    buffer.add(10**12 + 5999 * MS, q, v, tau)       # the same stamp again: skipped
    snapshot = buffer.take()
    assert all(np.shares_memory(chunk, kept) for chunk, kept in zip(snapshot.full + (snapshot.tail,), buffer.chunks))
    t, Q, V, T = snapshot.window(0.0)               # all: within buffer_seconds
    assert t[-1] == pytest.approx(5.999) and 2.499 <= t[-1] - t[0] <= 2.5 + 1e-9 and len(t) in (2500, 2501)
    assert np.allclose(Q[:, 0], 1e3 * t) and np.allclose(V[:, 3], -1e3 * t) and np.allclose(T[:, 5], 2e3 * t)
    assert buffer.span()[1] >= 2.5 and CHUNK_ROWS * (len(snapshot.full) + 1) - buffer.span()[0] < CHUNK_ROWS
    assert snapshot.rows == buffer.span()[0]
    sent = pickle.loads(pickle.dumps(snapshot, 5))
    for k in range(6000, 8100):                     # later samples do not change the snapshot
        buffer.add(10**12 + k * MS, q + k, v, tau)
    t2, Q2, _, _ = snapshot.window(1.0)
    assert len(t2) in (1000, 1001) and t2[-1] == pytest.approx(5.999) and np.allclose(Q2[:, 0], 1e3 * t2)
    assert all(np.array_equal(a, b) for a, b in zip(sent.window(0.0), (t, Q, V, T)))
    assert dynamics.Buffer(model, 1.0).take().rows == 0 and len(dynamics.Buffer(model, 1.0).take().window(0.0)[0]) == 0
    buffer.add(10**12, q, v, tau)                   # a stamp going back: another run, the old samples dropped
    assert buffer.span() == (1, 0.0)


CHUNK_ROWS = dynamics.CHUNK


def excitation_request(**fields):
    base = dict(duration=10.0, harmonics=0, limit_scaling=0.0, time_budget=0.0, rate=0.0, lead_in=0.0, seed=0)
    base.update(fields)
    return Msg(**base)


@pytest.mark.parametrize("field,value", [("duration", 0.5), ("duration", float("nan")), ("harmonics", 1),
                                         ("harmonics", 11), ("limit_scaling", 1.5), ("limit_scaling", -0.1),
                                         ("time_budget", 61.0), ("rate", 2000.0), ("lead_in", -1.0),
                                         ("rate", 1000.0)])
def test_excitation_requests_are_bounded_naming_the_field(field, value):
    changes = {field: value, **({"duration": 100.0} if (field, value) == ("rate", 1000.0) else {})}
    with pytest.raises(ValueError) as info:
        dynamics.excitation_arguments(excitation_request(**changes), config().model)
    assert str(info.value).startswith(field if (field, value) != ("rate", 1000.0) else "duration x rate")


def test_excitation_request_defaults_and_the_message():
    model = config().model
    arguments, rate, lead_in = dynamics.excitation_arguments(excitation_request(limit_scaling=0.5, lead_in=2.0),
                                                             model)
    assert arguments["harmonics"] == 5 and arguments["time_budget"] == 5.0 and rate == 50.0 and lead_in == 2.0
    assert np.array_equal(arguments["velocity_limits"], 0.5 * model.velocity_limits)
    traj = rd.excitation_trajectory(model, 4.0, harmonics=3, velocity_limits=arguments["velocity_limits"],
                                    effort_limits=arguments["effort_limits"], evaluations=0, starts=2)
    msg = dynamics.joint_trajectory(traj.to_joint_trajectory(rate, lead_in))
    assert msg.joint_names == model.joint_names and len(msg.points) == 201
    assert (msg.points[0].time_from_start.sec, msg.points[-1].time_from_start.sec) == (2, 6)
    q, v, _ = traj.sample(np.linspace(0, 4.0, 201))
    assert np.allclose([p.positions for p in msg.points], q) and not np.any(msg.points[-1].velocities)
    assert np.all(np.abs(v) <= 0.5 * model.velocity_limits)


@pytest.fixture(scope="module")
def measured():
    """The PUMA as it really is (identification_truth: heavier links, a tool, friction, armature) along an
    excitation at 200 Hz: (t, q, v, tau), and the estimate the library makes of them."""
    t = np.arange(0.0, 10.0, 0.005)
    q, v, _, tau = truth.measure("puma560", t, np.random.default_rng(3))
    est = rd.identify_dynamics(config().model, q, v, tau, t=t, threads=1)
    return t, q, v, tau, est


def test_a_window_is_identified_as_the_library_does_and_bad_windows_are_refused(measured):
    t, q, v, tau, est = measured
    model = config().model
    mine = dynamics.identify(model, t, q, v, tau, "buffered joint_states")
    assert np.allclose(mine.model.inertia, est.model.inertia, rtol=1e-9, atol=1e-12) and mine.physical
    for window, reason in (((t[:20], q[:20], v[:20], tau[:20]), "20 samples with positions, velocities and efforts"),
                           ((t, q, 0 * v, tau), "the robot was at rest"),
                           ((t, q, v * [1, 1, 0, 1, 1, 1], tau), "joints ['joint3'] did not move"),
                           ((t[:200], q[:200], v[:200], tau[:200]), "cannot determine")):
        with pytest.raises(ValueError) as info:
            dynamics.identify(model, *window, "the last 1 s of buffered joint_states")
        assert str(info.value).startswith("the last 1 s of buffered joint_states: ") and reason in str(info.value)
    # gaps (lost messages) leaving short stretches: those are left out, the rest identified as one window
    gappy = np.r_[np.arange(0, 400), np.arange(403, 405), np.arange(410, 417), np.arange(430, len(t))]
    est_gappy = dynamics.identify(model, t[gappy], q[gappy], v[gappy], tau[gappy], "buffered joint_states")
    kept = np.r_[np.arange(0, 400), np.arange(430, len(t))]
    assert est_gappy.samples == len(kept) and np.allclose(est_gappy.model.inertia, rd.identify_dynamics(
        model, q[kept], v[kept], tau[kept], t=t[kept], threads=1).model.inertia, rtol=1e-9, atol=1e-12)
    response = Msg(**{name: None for name in ("joint_names", "residual", "viscous", "coulomb", "offset", "armature",
                                               "condition_number", "physical", "samples", "duration", "urdf",
                                               "message")})
    dynamics.fill_identification(response, est, "<robot/>", t[-1] - t[0], "buffered joint_states")
    assert response.viscous == [est.friction[j]["viscous"] for j in model.joint_names]
    assert response.samples == len(t) and response.duration == pytest.approx(9.995) and dynamics.response_finite(response)


def test_an_applied_estimate_composes_with_parameter_changes_and_goes_with_the_robot(measured):
    t, q, v, tau, est = measured
    before = config()
    correction = dynamics.Correction.of(est, before, params(urdf_file=PUMA), est.to_urdf(), "summary")
    gravity = params(urdf_file=PUMA, gravity=[0.0, 0.0, -3.7])
    after = build_config(gravity, PUMA, {}, correction)
    assert after.identified is correction and after.nominal is not after.model
    assert np.allclose(after.model.inertia, est.model.inertia, rtol=0, atol=1e-12)
    assert np.array_equal(after.model.friction, est.model.friction)
    assert np.allclose(after.model.armature, est.model.armature, rtol=0, atol=1e-15)
    assert np.array_equal(after.model.gravity, [0.0, 0.0, -3.7])
    # a payload goes on under the estimate: the estimate's inertias plus the payload's
    loaded = build_config(params(urdf_file=PUMA, payload__mass=1.5, payload__com=PAYLOAD[2],
                                 payload__inertia=PAYLOAD[3], payload__link="tool0"), PUMA, {}, correction)
    expected = copy.deepcopy(est.model)
    add_payload(expected, *PAYLOAD)
    assert np.allclose(loaded.model.inertia, expected.inertia, rtol=0, atol=1e-12)
    # identified again on the corrected model: replaced, not added
    again = dynamics.Correction.of(est, after, gravity, "", "")
    assert np.allclose(build_config(gravity, PUMA, {}, again).model.inertia, est.model.inertia, rtol=0, atol=1e-12)
    # another robot (here the same URDF as text, another description): the estimate is left out
    with open(PUMA) as f:
        other = build_config(params(), f.read(), {}, correction)
    assert other.identified is None and other.nominal is other.model
    # a change that leaves a body non-physical under the estimate is refused naming the parameter
    heavy = copy.deepcopy(correction)
    heavy.inertia = heavy.inertia.copy()
    heavy.inertia[-1, 0] -= est.model.inertia[-1, 0] + 1.0    # the last body's mass identified negative
    with pytest.raises(ParameterError) as info:
        build_config(params(urdf_file=PUMA, armature=[0.5]), PUMA, {}, heavy)
    assert info.value.name == "armature" and "not be physical" in str(info.value)
