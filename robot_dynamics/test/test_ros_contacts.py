"""The node's contacts without DDS (robot_dynamics.ros.contacts: no rclpy): the contacts.* parameters
checked against the model, contact-consistent gravity and feedforward, and the
~/constrained_forward_dynamics service on plain request objects, against the library
(rd.contact_inverse_dynamics, rd.constrained_forward_dynamics) on the same numbers."""
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros import contacts
from robot_dynamics.ros.constraint_requests import all_finite, fill_wrenches
from robot_dynamics.ros.parameters import ParameterError
from rosconfig import configured, params

BIPED, PUMA = bundled_urdf("floating_base_biped"), bundled_urdf("puma560")
SOLES = ["left_sole", "right_sole"]
TOL = 1e-12


def config(urdf=BIPED, **changes):
    changes.setdefault("floating_base", True)
    return configured(urdf, urdf_file=urdf, **changes)


@pytest.fixture(scope="module")
def standing():
    return config(contacts__frames=SOLES, contacts__kind="6d")


def state(model, seed):
    """A random standing-like state: the base slightly moved, every joint within +-0.3 rad."""
    rng = np.random.default_rng(seed)
    q = rd.neutral(model)
    q[:3] = [0.05, -0.02, 0.9]
    axis = rng.normal(size=3)
    half = 0.05 * axis / np.linalg.norm(axis)
    q[3:7] = [*np.sin(np.linalg.norm(half)) * half / np.linalg.norm(half), np.cos(np.linalg.norm(half))]
    q[7:] = rng.uniform(-0.3, 0.3, model.nv - 6)
    return q, rng.uniform(-0.5, 0.5, model.nv), rng.uniform(-1, 1, model.nv)


# --- parameters -------------------------------------------------------------------------------------
def test_no_contacts_by_default_and_the_checked_contacts(standing):
    assert config().contacts is None and config(floating_base=False).contacts is None
    c = standing.contacts
    assert c.frames == tuple(SOLES) and c.kinds == ("6d", "6d") and c.sizes == (6, 6)
    assert c.spec == (("left_sole", "6d"), ("right_sole", "6d"))
    mixed = config(contacts__frames=SOLES, contacts__kind=["6d", "point"]).contacts
    assert mixed.spec == (("left_sole", "6d"), ("right_sole", "point")) and mixed.sizes == (6, 3)


@pytest.mark.parametrize("changes,name,words", [
    (dict(contacts__frames=["left_sole", "hand"]), "contacts.frames", "unknown frames ['hand']"),
    (dict(contacts__frames=SOLES, floating_base=False), "contacts.frames", "has a fixed base"),
    (dict(contacts__frames=["link6"], urdf=PUMA, floating_base=False), "contacts.frames", "has a fixed base"),
    (dict(contacts__frames=SOLES, contacts__kind=["6d", "6d", "6d"]), "contacts.kind", "got 3 kinds"),
    (dict(contacts__frames=["left_sole"], contacts__kind="point"), "contacts.frames", "cannot"),
], ids=["unknown frame", "fixed base", "fixed-base arm", "wrong count", "cannot hold the base"])
def test_contacts_the_model_cannot_take_are_refused_naming_the_parameter(changes, name, words):
    with pytest.raises(ParameterError) as refused:
        config(**changes)
    assert refused.value.name == name and name in str(refused.value) and words in str(refused.value), str(refused.value)


@pytest.mark.parametrize("value", ["line", ["6d", "flat"], [], [3], 3, True])
def test_a_contact_kind_is_point_or_6d(value):
    with pytest.raises(ParameterError) as refused:
        params(contacts__kind=value)
    assert "contacts.kind" in str(refused.value) and "point" in str(refused.value)
    assert params(contacts__kind="point")["contacts.kind"] == "point"


# --- gravity and feedforward --------------------------------------------------------------------------
def test_gravity_is_contact_inverse_dynamics_at_rest(standing):
    model, c = standing.model, standing.contacts
    for seed in range(5):
        q, _, _ = state(model, seed)
        tau, forces = contacts.gravity(model, q, c)
        tau_ref, forces_ref = rd.contact_inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv), list(c.spec))
        assert np.array_equal(tau[:6], np.zeros(6)) and np.allclose(tau, tau_ref, atol=TOL, rtol=TOL)
        assert np.allclose(forces, forces_ref, atol=TOL, rtol=TOL)
        # the weight goes through the feet: the vertical forces add up to it
        assert np.isclose(forces[2] + forces[8], model.total_mass * 9.81, rtol=1e-9)


@pytest.mark.parametrize("evaluate_at", ["desired", "measured"])
def test_feedforward_is_contact_inverse_dynamics_of_the_reference_with_the_base_at_rest(evaluate_at):
    cfg = config(contacts__frames=SOLES, contacts__kind="6d", feedforward__kp=25.0, feedforward__kd=10.0,
                 feedforward__evaluate_at=evaluate_at)
    model, c = cfg.model, cfg.contacts
    q, v, _ = state(model, 7)
    q_d, v_d, a_d = state(model, 8)
    q_d[:7], v_d[:6] = q[:7], 0.0
    tau, forces = contacts.feedforward(model, c, q, v, q_d, v_d, a_d, cfg.kp, cfg.kd, evaluate_at)
    a = a_d + 25.0 * rd.difference(model, q, q_d) + 10.0 * (v_d - v)
    a[:6] = 0.0
    q_e, v_e = (q_d, v_d) if evaluate_at == "desired" else (q, v)
    tau_ref, forces_ref = rd.contact_inverse_dynamics(model, q_e, v_e, a, list(c.spec))
    assert np.allclose(tau, tau_ref, atol=1e-10) and np.allclose(forces, forces_ref, atol=1e-10)
    assert np.array_equal(tau[:6], np.zeros(6))


def test_contacts_that_cannot_hold_at_a_state_raise_a_constraint_error(standing):
    """What the node refuses to publish (a throttled warning): one point foot cannot hold a moment."""
    one_point = contacts.Contacts(("left_sole",), ("point",), (("left_sole", "point"),), (3,))
    q, _, _ = state(standing.model, 9)
    with pytest.raises(rd.ConstraintError, match="left_sole"):
        contacts.gravity(standing.model, q, one_point)


def wrench():
    return Msg(link="", reference="", wrench=Msg(force=Msg(x=0.0, y=0.0, z=0.0), torque=Msg(x=0.0, y=0.0, z=0.0)))


def test_forces_fill_link_wrenches_in_world_axes():
    w = [wrench(), wrench()]
    fill_wrenches(w, ["a", "b"], [3, 6], np.arange(1.0, 10.0))
    assert [(x.link, x.reference) for x in w] == [("a", "local_world_aligned"), ("b", "local_world_aligned")]
    assert (w[0].wrench.force.z, w[0].wrench.torque.x) == (3.0, 0.0)
    assert (w[1].wrench.force.x, w[1].wrench.torque.z) == (4.0, 9.0)
    assert all_finite(np.ones(3)) and not all_finite([1.0, np.nan]) and not all_finite([np.inf])


# --- ~/constrained_forward_dynamics -----------------------------------------------------------------
def pose(q):
    return Msg(position=Msg(x=q[0], y=q[1], z=q[2]), orientation=Msg(x=q[3], y=q[4], z=q[5], w=q[6]))


def twist(x=(0.0,) * 6):
    return Msg(linear=Msg(x=x[0], y=x[1], z=x[2]), angular=Msg(x=x[3], y=x[4], z=x[5]))


def request(model, q, v, tau, **fields):
    names = list(model.joint_names)[::-1]       # reversed: the service maps by name
    idx = [model.joint_offset[1] + model.joint_index[n] for n in names]
    base = dict(joint_names=names, positions=list(q[7:][::-1]), velocities=list(v[6:][::-1]),
                efforts=list(tau[idx]), base_pose=pose(q), base_twist=twist(rd.root_twist(model, v[:6])),
                contact_frames=[], contact_kinds=[], loop_frames_a=[], loop_frames_b=[], loop_kinds=[],
                baumgarte_kp=0.0, baumgarte_kd=0.0)
    base.update(fields)
    return Msg(**base)


def response():
    return Msg(joint_names=[], accelerations=[], base_acceleration=twist(), constraint_wrenches=[])


@pytest.mark.parametrize("fields,spec", [
    ({}, [("left_sole", "6d"), ("right_sole", "6d")]),      # the node's contacts
    (dict(contact_frames=["right_sole", "left_sole"], contact_kinds=["point"]), [("right_sole", "point"), ("left_sole", "point")]),
], ids=["node's contacts", "request's contacts"])
def test_the_service_is_the_library_on_the_same_state(standing, fields, spec):
    model = standing.model
    q, v, _ = state(model, 3)
    v[:6] = 0.0
    tau = np.zeros(model.nv)
    tau[6:] = np.random.default_rng(4).uniform(-20, 20, model.nv - 6)
    req, res = request(model, q, v, tau, **fields), response()
    contacts.constrained_forward_dynamics(model, req, res, standing.contacts, wrench)
    qdd, forces = rd.constrained_forward_dynamics(model, q, v, tau, spec)
    order = [model.joint_offset[1] + model.joint_index[n] for n in res.joint_names]
    assert list(res.joint_names) == req.joint_names and np.allclose(res.accelerations, qdd[order], atol=1e-9)
    b = res.base_acceleration
    assert np.allclose([b.linear.x, b.linear.y, b.linear.z, b.angular.x, b.angular.y, b.angular.z],
                       rd.root_twist(model, qdd[:6]), atol=1e-9)
    assert [w.link for w in res.constraint_wrenches] == [f for f, _ in spec]
    got = [getattr(getattr(w.wrench, part), axis) for w, (_, kind) in zip(res.constraint_wrenches, spec)
           for part in (("force",) if kind == "point" else ("force", "torque")) for axis in "xyz"]
    assert np.allclose(got, forces, atol=1e-8)


@pytest.mark.parametrize("fields,words", [
    (dict(contact_frames=["left_sole", "hand"], contact_kinds=["6d"]), "contact_frames: unknown frame 'hand'"),
    (dict(contact_frames=SOLES + ["left_sole"], contact_kinds=["6d"]), "duplicate frames ['left_sole']"),
    (dict(contact_frames=SOLES), "contact_kinds: give one kind"),
    (dict(contact_frames=SOLES, contact_kinds=["6d", "6d", "6d"]), "contact_kinds takes one kind"),
    (dict(contact_frames=SOLES, contact_kinds=["flat"]), "unknown kinds ['flat']"),
    (dict(contact_kinds=["6d"]), "contact_kinds given without contact_frames"),
    (dict(loop_frames_a=["left_foot"], loop_frames_b=[], loop_kinds=["point"]), "one pair per loop"),
    (dict(loop_frames_a=["left_foot"], loop_frames_b=["right_foot"]), "loop_kinds takes one kind"),
    (dict(baumgarte_kp=-1.0), "baumgarte_kp and baumgarte_kd take finite numbers >= 0"),
    (dict(baumgarte_kd=float("nan")), "baumgarte_kp and baumgarte_kd take finite numbers >= 0"),
], ids=lambda x: x if isinstance(x, str) else None)
def test_bad_requests_are_refused_naming_the_field(standing, fields, words):
    model = standing.model
    q, v, tau = state(model, 5)
    with pytest.raises(ValueError) as refused:
        contacts.constrained_forward_dynamics(model, request(model, q, v, tau, **fields), response(),
                                              standing.contacts, wrench)
    assert words in str(refused.value), str(refused.value)


def test_no_constraints_at_all_is_refused_and_impossible_ones_are_a_constraint_error():
    cfg = config()
    model = cfg.model
    q, v, tau = state(model, 6)
    with pytest.raises(ValueError, match="no constraints"):
        contacts.constrained_forward_dynamics(model, request(model, q, v, tau), response(), None, wrench)
    # one foot held still at two of its frames: redundant, and contradictory while the foot turns
    v[:] = 0.0
    v[6:] = 1.0
    with pytest.raises(rd.ConstraintError):
        contacts.constrained_forward_dynamics(model, request(model, q, v, tau, contact_frames=["left_sole", "left_foot"],
                                                             contact_kinds=["6d"]), response(), None, wrench)
