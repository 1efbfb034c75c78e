"""Payload identification (robot_dynamics/identification.py) from noiseless samples (to 1e-6), with
seeded noise (stated bounds), static and without accelerations (the momentum formulation); samples
that cannot determine the payload and estimates that are not a rigid body refused by name. The
regressor and base parameters: test_regressor.py."""
import numpy as np
import pytest

from oracle import URDFS
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf

PAYLOAD = dict(mass=1.3, placement=((0.01, -0.02, 0.12), (0.3, -0.2, 0.5)), com=(0.03, 0.01, 0.05),
               com_rpy=(0.1, 0.4, -0.3),
               inertia=((0.004, 0.0005, -0.0003), (0.0005, 0.006, 0.0002), (-0.0003, 0.0002, 0.005)))


def rpy(r, p, y):
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], [-sp, cp * sr, cp * cr]])


def with_payload(urdf, link, p=PAYLOAD):
    """The URDF text with a payload link welded to `link` (placement xyz rpy), and the payload's
    mass, centre of mass and inertia about it in `link`'s frame, as the estimate should give."""
    (xyz, angles), I = p["placement"], np.array(p["inertia"])
    text = open(urdf).read()
    extra = f"""
  <joint name="payload_joint" type="fixed"><parent link="{link}"/><child link="payload"/>
    <origin xyz="{' '.join(map(str, xyz))}" rpy="{' '.join(map(str, angles))}"/></joint>
  <link name="payload"><inertial><origin xyz="{' '.join(map(str, p['com']))}" rpy="{' '.join(map(str, p['com_rpy']))}"/>
    <mass value="{p['mass']}"/><inertia ixx="{I[0, 0]}" ixy="{I[0, 1]}" ixz="{I[0, 2]}" iyy="{I[1, 1]}" iyz="{I[1, 2]}"
    izz="{I[2, 2]}"/></inertial></link>
"""
    end = text.rindex("</robot>")
    R1 = rpy(*angles)
    Rc = R1 @ rpy(*p["com_rpy"])
    return text[:end] + extra + text[end:], p["mass"], np.array(xyz) + R1 @ np.array(p["com"]), Rc @ I @ Rc.T


CASES = [("panda", "panda_hand", False), ("ur5", "tool0", False), ("talos", "gripper_left_base_link", True)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: c[0] + ("-freeflyer" if c[2] else ""))
def payload_case(request):
    name, link, floating = request.param
    text, mass, com, inertia = with_payload(URDFS[name], link)
    return (load_urdf(URDFS[name], floating_base=floating), load_urdf(text, floating_base=floating), link,
            mass, com, inertia)


def samples(model, n, rng):
    q = np.atleast_2d(rd.random_configuration(model, rng, n))
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def test_payload_from_noiseless_samples(payload_case):
    """Dynamic samples give mass, COM and inertia to 1e-6 (observed ~1e-13); static samples
    (v = a = 0) give mass and COM and say the inertia is not identified; applying the estimate
    gives the robot the URDF with the payload describes."""
    bare, loaded, link, mass, com, inertia = payload_case
    rng = np.random.default_rng(3)
    q, v, a = samples(bare, 60, rng)
    est = rd.identify_payload(bare, link, q, v, a, rd.inverse_dynamics(loaded, q, v, a))
    assert est.identified == {"mass": True, "com": True, "inertia": True} and est.method == "dynamic"
    assert abs(est.mass - mass) < 1e-6 and np.abs(est.com - com).max() < 1e-6
    assert np.abs(est.inertia - inertia).max() < 1e-6
    assert est.residual < 1e-9 and est.samples == 60 and est.physical and est.condition_number < 1e3
    applied = est.apply(bare)
    np.testing.assert_allclose(rd.inverse_dynamics(applied, q, v, a), rd.inverse_dynamics(loaded, q, v, a),
                               rtol=0, atol=1e-9)
    assert np.array_equal(rd.inverse_dynamics(bare, q, v, a), rd.inverse_dynamics(bare, q, v, a))   # bare untouched
    params = est.as_parameters()
    assert params["payload.link"] == link and abs(params["payload.mass"] - mass) < 1e-6
    np.testing.assert_allclose(params["payload.inertia"], inertia[[0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]], atol=1e-6)
    static = rd.identify_payload(bare, link, q, None, None, rd.gravity_torques(loaded, q))
    assert static.identified == {"mass": True, "com": True, "inertia": False} and static.method == "static"
    assert static.inertia is None and abs(static.mass - mass) < 1e-6 and np.abs(static.com - com).max() < 1e-6
    with pytest.raises(ValueError, match="inertia was not identified"):
        static.apply(bare)
    point = static.apply(bare, point_mass=True)
    np.testing.assert_allclose(rd.gravity_torques(point, q), rd.gravity_torques(loaded, q), rtol=0, atol=1e-9)


def test_payload_without_accelerations(payload_case):
    """The momentum formulation from a smooth 1 kHz trajectory (q, v, tau only): the trapezoidal
    rule over 20 ms windows leaves ~1e-6 relative error (observed); holding still it is static."""
    bare, loaded, link, mass, com, inertia = payload_case
    dt = 1e-3
    t = np.arange(1501) * dt
    rng = np.random.default_rng(4)
    A, w, ph = rng.uniform(0.3, 0.8, bare.nv), rng.uniform(1.0, 4.0, bare.nv), rng.uniform(0, 2 * np.pi, bare.nv)
    q0 = np.atleast_2d(rd.random_configuration(bare, rng, 1))
    v = A * w * np.cos(w * t[:, None] + ph)
    a = -A * w * w * np.sin(w * t[:, None] + ph)
    q = np.repeat(q0, len(t), axis=0)
    q[:, bare.joint_offset[0]:] += (A * np.sin(w * t[:, None] + ph) - A * np.sin(ph))[:, bare.joint_offset[1]:]
    if bare.floating_base:          # the base stays put: its velocity and acceleration are zero
        v[:, :6] = a[:, :6] = 0.0
    est = rd.identify_payload_from_momentum(bare, link, q, v, rd.inverse_dynamics(loaded, q, v, a), dt)
    assert est.method == "momentum" and all(est.identified.values())
    assert abs(est.mass - mass) < 1e-4 * mass and np.abs(est.com - com).max() < 1e-5
    assert np.abs(est.inertia - inertia).max() < 1e-5
    still = np.repeat(q[::100], 10, axis=0)
    est = rd.identify_payload_from_momentum(bare, link, still, np.zeros((len(still), bare.nv)),
                                            rd.gravity_torques(loaded, still), dt, window=5)
    assert est.method == "static" and est.inertia is None and abs(est.mass - mass) < 1e-9


def test_payload_with_noise_degrades_gracefully():
    """Panda, 1.3 kg payload 18 cm out, 400 dynamic samples (seeded). Torque noise 0.05 N m: mass
    within 0.2 %, COM within 1 mm, inertia about the COM within 1.5e-3 kg m^2 (a quarter of its
    largest moment), each within 4 of the reported standard errors, and the residual is the noise.
    Adding noise of 0.05 rad/s^2 to the accelerations (errors in the regressor, which least squares
    does not model): mass within 1 %, COM within 2 mm, inertia within 6e-3. A tenth of both noises
    gives a tenth of the errors (within 2x). Static samples with the torque noise: mass within
    0.5 %, COM within 1 mm."""
    text, mass, com, inertia = with_payload(URDFS["panda"], "panda_hand")
    bare, loaded = load_urdf(URDFS["panda"]), load_urdf(text)

    def errors(sigma_tau, sigma_a, seed=5):
        rng = np.random.default_rng(seed)
        q, v, a = samples(bare, 400, rng)
        tau = rd.inverse_dynamics(loaded, q, v, a) + rng.normal(0, sigma_tau, (400, bare.nv))
        est = rd.identify_payload(bare, "panda_hand", q, v, a + rng.normal(0, sigma_a, a.shape), tau)
        return est, abs(est.mass - mass), np.abs(est.com - com), np.abs(est.inertia - inertia)
    est, dm, dc, dI = errors(0.05, 0.0)
    assert dm < 0.002 * mass and dc.max() < 1e-3 and dI.max() < 1.5e-3
    assert dm < 4 * est.mass_std and np.all(dc < 4 * est.com_std) and np.all(dI < 4 * est.inertia_std)
    assert 0.045 < est.residual < 0.055
    est, dm, dc, dI = errors(0.05, 0.05)
    assert dm < 0.01 * mass and dc.max() < 2e-3 and dI.max() < 6e-3
    _, dm10, dc10, dI10 = errors(0.005, 0.005)
    assert 0.05 < dm10 / dm < 0.2 and 0.05 < dc10.max() / dc.max() < 0.2 and 0.05 < dI10.max() / dI.max() < 0.2
    rng = np.random.default_rng(6)
    q = np.atleast_2d(rd.random_configuration(bare, rng, 400))
    static = rd.identify_payload(bare, "panda_hand", q, None, None,
                                 rd.gravity_torques(loaded, q) + rng.normal(0, 0.05, (400, bare.nv)))
    assert abs(static.mass - mass) < 0.005 * mass and np.abs(static.com - com).max() < 1e-3
    assert static.inertia is None and static.inertia_std is None


def test_payload_samples_that_cannot_determine_the_mass_are_refused():
    """The 2-link arm held with link 1 upright (joint 2 straight above joint 1): however often
    repeated, the weight of a payload on link 2 only moves its centre of mass, never its mass;
    a payload on link 1 is never weighed by joint 1 alone (its axis goes through the link's
    origin). Both refused, by name; so are malformed samples."""
    arm = load_urdf(bundled_urdf("planar_2link"))
    text, *_ = with_payload(bundled_urdf("planar_2link"), "link2")
    loaded = load_urdf(text)
    q = np.tile([np.pi / 2, 0.3], (10, 1)) + np.c_[np.zeros(10), np.linspace(0, 1, 10)]
    with pytest.raises(ValueError, match="cannot determine the payload's mass on 'link2'"):
        alike = q[:1].repeat(5, 0)
        rd.identify_payload(arm, "link2", alike, None, None, rd.gravity_torques(loaded, alike))
    with pytest.raises(ValueError, match="cannot determine the payload's mass on 'link1'"):
        rd.identify_payload(arm, "link1", q, None, None, rd.gravity_torques(arm, q))
    with pytest.raises(ValueError, match="cannot determine the payload's mass on 'link2'"):
        rd.identify_payload(arm, "link2", q, None, None, rd.gravity_torques(loaded, q))   # joint 2 moving alone
    q = np.c_[np.linspace(-1, 1, 10), np.linspace(0, 2, 10)]
    good = rd.identify_payload(arm, "link2", q, None, None, rd.gravity_torques(loaded, q))
    assert good.identified["mass"] and not good.identified["com"] and good.com is None   # y (along the axis) unseen
    assert abs(good.mass - loaded.inertia[1, 0] + arm.inertia[1, 0]) < 1e-9
    with pytest.raises(ValueError, match="centre of mass was not identified"):
        good.apply(arm, point_mass=True)
    with pytest.raises(ValueError, match="fixed to the world"):
        rd.identify_payload(arm, "base_link", q, None, None, rd.gravity_torques(arm, q))
    with pytest.raises(KeyError, match="unknown frame"):
        rd.identify_payload(arm, "gripper", q, None, None, rd.gravity_torques(arm, q))
    with pytest.raises(ValueError, match="both v and a"):
        rd.identify_payload(arm, "link2", q, np.zeros((10, 2)), None, rd.gravity_torques(arm, q))
    with pytest.raises(ValueError, match=r"tau must have shape \(10, 2\)"):
        rd.identify_payload(arm, "link2", q, None, None, np.zeros((9, 2)))
    with pytest.raises(ValueError, match="tau contains NaN"):
        rd.identify_payload(arm, "link2", q, None, None, np.full((10, 2), np.nan))
    with pytest.raises(ValueError, match="q contains NaN"):
        rd.identify_payload(arm, "link2", np.full((10, 2), np.nan), None, None, np.zeros((10, 2)))
    with pytest.raises(ValueError, match="dt"):
        rd.identify_payload_from_momentum(arm, "link2", q, np.zeros((10, 2)), np.zeros((10, 2)), 0.0)
    with pytest.raises(ValueError, match="window"):
        rd.identify_payload_from_momentum(arm, "link2", q, np.zeros((10, 2)), np.zeros((10, 2)), 1e-3, window=10)


def test_payload_estimate_refuses_what_is_not_a_rigid_body():
    """An estimate with a negative mass or an inertia no rigid body has (noise, friction) is not
    applied; point_mass=True applies mass and COM only when the mass is positive."""
    arm = load_urdf(bundled_urdf("planar_2link"))
    bad_inertia = rd.PayloadEstimate("link2", 0.5, np.array([0.1, 0.0, 0.0]), np.diag([1e-3, 1e-3, 5e-3]),
                                     {"mass": True, "com": True, "inertia": True}, 0.01, 3.0, 50, "dynamic")
    assert not bad_inertia.physical
    with pytest.raises(ValueError, match="triangle inequality"):
        bad_inertia.apply(arm)
    point = bad_inertia.apply(arm, point_mass=True)
    assert point.inertia[1, 0] == arm.inertia[1, 0] + 0.5 and point is not arm
    assert bad_inertia.as_parameters(point_mass=True)["payload.inertia"] == [0.0] * 6
    negative = rd.PayloadEstimate("link2", -0.01, np.zeros(3), None, {"mass": True, "com": True, "inertia": False},
                                  0.01, 3.0, 50, "static")
    assert not negative.physical
    with pytest.raises(ValueError, match="not a physical payload"):
        negative.apply(arm, point_mass=True)
