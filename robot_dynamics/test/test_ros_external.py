"""The node's observer logic without DDS (robot_dynamics.ros.external: no rclpy): what the node runs on
each joint_states message, against the library (MomentumObserver, estimate_wrench) on the same samples."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.observer import MomentumObserver
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros.external import EffortSample, ExternalTorques, diagnostic
from robot_dynamics.ros.joint_states import JointStateMap
from robot_dynamics.ros.parameters import ParameterError
from rosconfig import configured, params
from scripted import motion

PUMA = bundled_urdf("puma560")
MS = 1_000_000      # ns


def config(**changes):
    return configured(PUMA, urdf_file=PUMA, **changes)


# --- configuration -----------------------------------------------------------------------------------
def test_observer_configuration_per_joint_values_and_refusals():
    c = config(joints=["joint3", "joint1", "joint2", "joint4", "joint5", "joint6"],
               observer__gain=[10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
               observer__contact_threshold=[1.0, 0.0, 2.0, 0.0, 0.0, 3.0], observer__wrench_frame="tool0")
    s = c.observer
    np.testing.assert_array_equal(s.gain, [20.0, 30.0, 10.0, 40.0, 50.0, 60.0])     # model order
    np.testing.assert_array_equal(s.threshold, [np.inf, 2.0, 1.0, np.inf, np.inf, 3.0])
    assert s.detect and s.wrench_frame == "tool0" and not s.unsupported
    assert not config().observer.detect                     # the default: no contact detection
    assert config(tip_link="link6").observer.wrench_frame == "link6"     # empty frame: tip_link
    assert config().observer.wrench_frame == ""
    for changes, name in ((dict(observer__gain=[1.0, 2.0]), "observer.gain"),
                          (dict(observer__contact_threshold=[1.0] * 5), "observer.contact_threshold"),
                          (dict(observer__wrench_frame="camera"), "observer.wrench_frame"),
                          (dict(observer__wrench_frame="base_link"), "observer.wrench_frame")):
        with pytest.raises(ParameterError, match=name.replace(".", r"\.")) as info:
            config(**changes)
        assert info.value.name == name
    path = bundled_urdf("floating_base_biped")
    floating = configured(path, urdf_file=path, floating_base=True)
    assert "floating or planar" in floating.observer.unsupported
    assert not ExternalTorques(floating).running


@pytest.mark.parametrize("name,value", [("observer.gain", 0.0), ("observer.gain", [-1.0]), ("observer.gain", "x"),
                                        ("observer.contact_threshold", -0.5), ("observer.max_interval", 0.0),
                                        ("observer.max_interval", 11.0), ("observer.wrench_components", "moment"),
                                        ("observer.enabled", 1)])
def test_observer_parameters_are_checked_by_name(name, value):
    with pytest.raises(ParameterError) as info:
        params(**{name.replace(".", "__"): value})
    assert info.value.name == name and name in str(info.value)


# --- efforts -------------------------------------------------------------------------------------------
def test_effort_samples_need_every_joint_with_velocities_and_finite_efforts():
    c = config()
    model = c.model
    sample = EffortSample(model)
    names = ["joint4", "joint2", "gripper", "joint6", "joint1", "joint3", "joint5"]
    jmap = JointStateMap(model, names)
    effort = np.arange(7.0)
    tau = sample.take(jmap, np.ones(7), effort)
    np.testing.assert_array_equal(tau, [4.0, 1.0, 5.0, 0.0, 6.0, 3.0])          # by name, the gripper left out
    assert sample.take(jmap, np.ones(7), np.array([])) is None and sample.notice[0] == "no efforts"
    assert sample.take(jmap, np.array([]), effort) is None and sample.notice[0] == "no velocities"
    bad = effort.copy()
    bad[3] = np.nan
    assert sample.take(jmap, np.ones(7), bad) is None
    assert sample.notice[0] == "nan" and "'joint6'" in sample.notice[1]
    bad = effort.copy()
    bad[2] = np.inf                         # the gripper's effort: not a model joint, not looked at
    assert sample.take(jmap, np.ones(7), bad) is not None
    first = EffortSample(model)             # a partial message with efforts, before any complete one
    assert first.take(JointStateMap(model, ["joint1", "joint2"]), np.ones(2), np.ones(2)) is None
    assert first.notice[0] == "partial"
    assert first.take(JointStateMap(model, ["gripper"]), np.ones(1), np.ones(1)) is None and first.notice is None
    # after a complete message, a second driver's partial messages are no notice
    assert sample.take(JointStateMap(model, ["joint1", "joint2"]), np.ones(2), np.ones(2)) is None
    assert sample.notice is None


# --- the observer ------------------------------------------------------------------------------------------
def observe(c, stamps_ns, samples):
    """Feed ExternalTorques; [(answered, r copy, contact, joints, notice)] per sample."""
    ext = ExternalTorques(c)
    out = []
    for stamp, (q, v, tau) in zip(stamps_ns, samples):
        answered = ext.update(q, v, tau, stamp)
        out.append((answered, ext.r.copy(), ext.contact, list(ext.contact_joints), ext.notice))
    return ext, out


def test_observer_equals_the_library_on_the_same_samples_with_contact_and_wrench():
    c = config(observer__gain=[40.0], observer__contact_threshold=[1.5], observer__wrench_frame="tool0")
    model = c.model
    push = np.array([0.0, 15.0, -10.0, 0.0, 0.0, 0.0])

    def tau_ext(t, q):
        return rd.wrench_to_joint_torques(model, q, "tool0", push) if t >= 0.15 else np.zeros(6)
    stamps = 5_000 * MS + np.arange(300) * MS
    samples = [motion(model, (s - stamps[0]) * 1e-9, tau_ext=tau_ext) for s in stamps]
    ext, out = observe(c, stamps, samples)

    library = MomentumObserver(model, 40.0)
    library.reset(*samples[0][:2])          # the node restarts without an effort for the interval before
    assert out[0][0] and not np.any(out[0][1]) and not out[0][2]        # the first sample: r = 0, answered
    first_contact = None
    for k in range(1, len(stamps)):
        r = library.update(*samples[k], 1e-3)
        answered, r_node, contact, joints, _ = out[k]
        assert answered
        np.testing.assert_allclose(r_node, r, rtol=0, atol=1e-12)
        over = np.abs(r) > 1.5
        assert contact == bool(over.any()) and joints == [f"joint{j + 1}" for j in np.flatnonzero(over)]
        if contact and first_contact is None:
            first_contact = k
    assert 150 < first_contact < 170          # the push starts at sample 150: detected within 20 ms
    np.testing.assert_allclose(ext.wrench(), library.wrench("tool0", "local"), rtol=0, atol=1e-12)
    force_only = config(observer__wrench_frame="tool0", observer__wrench_components="force")
    ext_f, _ = observe(force_only, stamps, samples)
    lib_f = MomentumObserver(model, 50.0)
    lib_f.reset(*samples[0][:2])
    for k in range(1, len(stamps)):
        lib_f.update(*samples[k], 1e-3)
    np.testing.assert_allclose(ext_f.wrench(), rd.estimate_wrench(model, samples[-1][0], "tool0", lib_f.external_torques,
                                                                  "local", components="force"), atol=1e-12)
    # the push is found, in tool0's axes (within the observer's lag behind J^T F changing as the arm moves)
    R = rd.frame_placement(model, samples[-1][0], "tool0")[:3, :3]
    np.testing.assert_allclose(R @ ext_f.wrench()[:3], push[:3], atol=0.5)
    stats = ext.take_stats()
    assert stats["samples"] == 299 and stats["contact_samples"] == sum(o[2] for o in out)
    level, message, values = diagnostic(c, stats, "")
    assert level == "WARN" and message.startswith("contact at") and values["samples"] == "299"


def test_stamps_duplicate_back_and_gaps():
    c = config(observer__max_interval=0.05)
    model = c.model
    times = [0.0, 0.001, 0.002, 0.002, 0.003, 0.0025, 0.0035, 0.2, 0.201]
    samples = [motion(model, t, tau_ext=lambda t, q: np.full(6, 0.5)) for t in times]
    _, out = observe(c, [round(t * 1e9) for t in times], samples)
    assert [o[0] for o in out] == [True] * len(times)
    assert np.any(out[2][1]) and np.array_equal(out[3][1], out[2][1])        # a resent state: the same answer
    assert out[5][4][0] == "restart" and "went back" in out[5][4][1] and not np.any(out[5][1])
    assert np.any(out[6][1])
    assert out[7][4][0] == "restart" and "exceeds observer.max_interval" in out[7][4][1] and not np.any(out[7][1])
    ext, _ = observe(c, [round(t * 1e9) for t in times], samples)
    assert ext.take_stats()["restarts"] == 2


def test_an_update_that_fails_skips_the_sample():
    c = config()
    ext = ExternalTorques(c)
    q, v, tau = motion(c.model, 0.0)
    assert ext.update(q, v, tau, 0)
    assert not ext.update(q, v, np.full(6, 1e300), MS)        # refused by the library: skipped, named
    assert ext.notice[0] == "overflow" and ext.stats["skipped"] == 1
    assert ext.update(q, v, tau, 2 * MS) and np.all(np.isfinite(ext.r))
