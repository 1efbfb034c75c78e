"""The node's closed loops without DDS (robot_dynamics.ros.closed_chain and its constrained_inverse, the
measured state of ros.joint_states: no rclpy): the loops and actuated_joints parameters checked against the model (each refusal names the
parameter, the loop or the joints), the joints the loops determine, the measured state that may miss
them, the constrained feedforward with the reference's passive joints completed from its actuated ones
(against a motion differentiated numerically), and ~/constrained_inverse_dynamics against the library."""
import re
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf
from robot_dynamics.ros import closed_chain as node_loops
from robot_dynamics.ros.closed_chain.constrained_inverse import constrained_inverse_dynamics
from robot_dynamics.ros.joint_states import MeasuredState
from robot_dynamics.ros.parameters import ParameterError
from robot_dynamics.urdf import urdf_text
from rosconfig import configured, params

FIVE_BAR = bundled_urdf("five_bar")
LOOP = "end_effector right_distal_tip 6d"
SPEC = (("end_effector", "right_distal_tip", "6d"),)
MOTORS = ["left_base_joint", "right_base_joint"]
PASSIVE = ["left_elbow_joint", "end_joint", "right_elbow_joint"]       # model order
#: the five-bar with a wrist on its end effector: a joint no loop determines
WRIST = urdf_text(FIVE_BAR).replace("</robot>", (
    '<link name="tool"><inertial><origin xyz="0.05 0 0"/><mass value="0.05"/><inertia ixx="1e-5" iyy="1e-5" '
    'izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="wrist" type="revolute"><parent '
    'link="end_effector"/><child link="tool"/><axis xyz="0 -1 0"/><limit lower="-3" upper="3" effort="1" '
    'velocity="5"/></joint></robot>'))


def config(description=FIVE_BAR, **changes):
    return configured(description, **({"urdf_file": FIVE_BAR} if description == FIVE_BAR else {}), **changes)


@pytest.fixture(scope="module")
def model():
    return load_urdf(FIVE_BAR)


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))


# --- parameters and the configuration ----------------------------------------------------------------
def test_the_loops_and_the_actuated_joints_configure_the_five_bar():
    c = config(loops=[LOOP], actuated_joints=MOTORS[::-1])
    assert c.loops.spec == SPEC and c.loops.actuated == tuple(MOTORS)       # model order
    assert c.loops.determined == tuple(c.model.joint_names)                 # every joint is on the loop
    assert [n for n, o in zip(c.model.joint_names, c.loops.optional) if o] == PASSIVE
    assert c.joints == MOTORS[::-1]             # the output joints' default: the actuated joints, as given
    assert np.abs(c.loops.closed).max() < 1e-9  # q = 0 is closed (the URDF's header)
    assert config(loops=[LOOP]).loops.actuated == () and config(loops=[LOOP]).joints == c.model.joint_names
    assert config().loops is None and config(actuated_joints=c.model.joint_names).loops is None


def test_a_loop_dump_reads_back():
    """A string list: what `ros2 param dump` writes (YAML) is what the node reads."""
    import yaml
    value = params(loops=[LOOP, "left_distal right_distal point"])["loops"]
    assert params(loops=yaml.safe_load(yaml.dump(value)))["loops"] == value
    assert params(loops="null")["loops"] == [] and params(loops=None)["loops"] == []


@pytest.mark.parametrize("changes,name,words", [
    (dict(loops=["end_effector right_distal_tip"]), "loops", "is not 'frame_a frame_b kind'"),
    (dict(loops=["end_effector right_distal_tip weld"]), "loops", "unknown kind 'weld'"),
    (dict(loops=["end_effector end_effector 6d"]), "loops", "holds a frame to itself"),
    (dict(loops="end_effector right_distal_tip 6d"), "loops", "a list of strings"),
    (dict(actuated_joints=["left_base_joint", "left_base_joint"]), "actuated_joints", "distinct"),
], ids=["two words", "unknown kind", "same frame", "a string", "duplicates"])
def test_malformed_values_are_refused_naming_the_parameter(changes, name, words):
    with pytest.raises(ParameterError, match=re.escape(words)) as info:
        params(**changes)
    assert info.value.name == name and f"parameter {name} takes" in str(info.value)


@pytest.mark.parametrize("changes,name,words", [
    (dict(loops=["end_effector nowhere 6d"]), "loops", "unknown frames ['nowhere']"),
    (dict(loops=[LOOP, "left_proximal right_proximal point"]), "loops",
     "loop 1 (point between 'left_proximal' and 'right_proximal') cannot close"),
    (dict(loops=["left_distal left_distal_extra point"]), "loops", "unknown frames"),
    (dict(loops=[LOOP], actuated_joints=["left_base_joint"]), "actuated_joints",
     "the actuated joints cannot produce this motion"),
    (dict(actuated_joints=MOTORS), "actuated_joints", "without loops nothing holds a passive joint"),
    (dict(loops=[LOOP], actuated_joints=["left_base_joint", "elbow"]), "actuated_joints", "unknown joints ['elbow']"),
], ids=["unknown frame", "cannot close", "unknown frame 2", "too few actuators", "no loops", "unknown joint"])
def test_loops_and_actuators_the_model_cannot_take_are_refused_naming_them(changes, name, words):
    with pytest.raises(ParameterError) as info:
        config(**changes)
    assert info.value.name == name and words in str(info.value), str(info.value)
    if "too few" in str(info.value) or "cannot produce" in str(info.value):
        assert "right_base_joint" in str(info.value)        # the passive joint left unbalanced is named


def test_loops_with_contacts_are_refused():
    biped = bundled_urdf("floating_base_biped")
    with pytest.raises(ParameterError, match="loops and contacts.frames cannot both be set") as info:
        configured(biped, urdf_file=biped, floating_base=True, contacts__frames=["left_sole", "right_sole"],
                   contacts__kind="6d", loops=["left_sole right_sole 6d"])
    assert info.value.name == "loops"


def test_only_the_joints_on_a_loops_path_may_be_missing():
    c = configured(WRIST, loops=[LOOP], actuated_joints=MOTORS + ["wrist"])
    assert "wrist" not in c.loops.determined and len(c.loops.determined) == 5
    state = MeasuredState(c.model)
    state.allow_missing(c.loops.optional)
    assert state.take(MOTORS, np.array([0.1, -0.1]), np.array([])) is None
    assert not state.complete and state.missing == ["wrist"]
    changes = state.seen_changes
    assert state.take(["wrist"], np.array([0.3]), np.array([])) is None
    assert state.complete and state.seen_changes == changes + 1
    assert state.take(MOTORS, np.array([0.2, -0.1]), np.array([])) is None and state.seen_changes == changes + 1
    state.allow_missing(np.zeros(6, bool))          # loops removed: the passive joints must come
    assert not state.complete and state.missing == PASSIVE


# --- the law ------------------------------------------------------------------------------------------
def motion(model, t, h=1e-4):
    """A closed motion of the five-bar: the motors on sines, the passive joints assembled; v and a by
    central differences (error ~h^2)."""
    def q_at(s):
        q = np.zeros(5)
        q[[0, 3]] = [0.3 * np.sin(2 * s), -0.25 + 0.2 * np.cos(3 * s)]
        return rd.assemble(model, q, SPEC, fixed=MOTORS)
    q0, qp, qm = q_at(t), q_at(t + h), q_at(t - h)
    return q0, (qp - qm) / (2 * h), (qp - 2 * q0 + qm) / h**2


def test_the_feedforward_completes_the_references_passive_joints_from_its_actuated_ones(model):
    c = config(loops=[LOOP], actuated_joints=MOTORS)
    q, v, a = motion(model, 0.4)
    expected = rd.constrained_inverse_dynamics(model, q, v, a, MOTORS, loops=SPEC, tolerance=1e-5)[0]
    guess = q.copy()
    guess[[1, 2, 4]] += 0.05            # the reference's passive values: a guess only
    zero = np.zeros(5)
    wrong_v, wrong_a = v.copy(), a.copy()
    wrong_v[[1, 2, 4]], wrong_a[[1, 2, 4]] = 0.0, 0.0
    tau, forces = node_loops.feedforward(model, c.loops, c.loops.actuated, q, v, (guess, wrong_v, wrong_a), zero,
                                         zero, False, "desired")
    assert close(tau, expected, 1e-5) and np.all(tau[[1, 2, 4]] == 0)       # central differences: ~1e-8
    # gains act on the motors; the passive accelerations follow; evaluated at the measured state
    kp, kd = np.full(5, 100.0), np.full(5, 20.0)
    measured_q, measured_v = motion(model, 0.45)[:2]
    tau = node_loops.feedforward(model, c.loops, c.loops.actuated, measured_q, measured_v, (q, v, a), kp, kd, True,
                                 "measured")[0]
    acc = a.copy()
    acc[[0, 3]] += 100.0 * (q - measured_q)[[0, 3]] + 20.0 * (v - measured_v)[[0, 3]]
    ve, acc = node_loops.complete_motion(model, SPEC, measured_q, measured_v, acc, ~node_loops.actuated_mask(model, MOTORS))
    assert close(ve, measured_v, 1e-6)
    assert close(tau, rd.constrained_inverse_dynamics(model, measured_q, ve, acc, MOTORS, loops=SPEC)[0])
    J, drift = rd.constraint_jacobian(model, measured_q, ve, (), SPEC)
    assert np.abs(J @ acc + drift).max() < 1e-12


def test_the_gravity_law_is_the_librarys(model):
    c = config(loops=[LOOP], actuated_joints=MOTORS)
    q = motion(model, 1.0)[0]
    tau, forces = node_loops.gravity(model, q, c.loops, c.loops.actuated)
    assert np.array_equal(tau, rd.constrained_inverse_dynamics(model, q, 0, 0, MOTORS, loops=SPEC)[0])
    assert not close(tau, rd.gravity_torques(model, q), 1e-3)


# --- ~/constrained_inverse_dynamics ------------------------------------------------------------------------
def request(model, names, q, v=(), a=(), **fields):
    idx = [model.joint_index[n] for n in names]
    base = dict(base_pose=Msg(position=Msg(x=0.0, y=0.0, z=0.0), orientation=Msg(x=0.0, y=0.0, z=0.0, w=1.0)),
                base_twist=Msg(linear=Msg(x=0.0, y=0.0, z=0.0), angular=Msg(x=0.0, y=0.0, z=0.0)),
                base_acceleration=Msg(linear=Msg(x=0.0, y=0.0, z=0.0), angular=Msg(x=0.0, y=0.0, z=0.0)))
    fields = {**dict(actuated_joints=[], passive_efforts=[], contact_frames=[], contact_kinds=[], loop_frames_a=[],
                     loop_frames_b=[], loop_kinds=[], objective="", least_squares=False), **base, **fields}
    return Msg(joint_names=list(names), positions=[float(q[i]) for i in idx],
               velocities=[float(v[i]) for i in idx] if len(v) else [],
               accelerations=[float(a[i]) for i in idx] if len(a) else [], **fields)


class Wrench(Msg):
    def __init__(self):
        super().__init__(link="", reference="", wrench=Msg(force=Msg(x=0.0, y=0.0, z=0.0),
                                                           torque=Msg(x=0.0, y=0.0, z=0.0)))


def answer(model, req, loops=None):
    res = Msg()
    constrained_inverse_dynamics(model, req, res, None, loops, Wrench)
    return res


def test_the_service_equals_the_library_with_every_joint_or_the_motors_only(model):
    c = config(loops=[LOOP], actuated_joints=MOTORS)
    q, v, a = motion(model, 0.7)
    J, drift = rd.constraint_jacobian(model, q, v, (), SPEC)
    a = a - np.linalg.lstsq(J, J @ a + drift, rcond=None)[0]        # exactly on the loop (1e-8 check)
    tau, forces = rd.constrained_inverse_dynamics(model, q, v, a, MOTORS, loops=SPEC)
    full = answer(model, request(model, model.joint_names, q, v, a), c.loops)
    assert full.joint_names == model.joint_names and close(full.efforts, tau)
    assert [w.link for w in full.constraint_wrenches] == ["end_effector"]
    w = full.constraint_wrenches[0].wrench
    assert close([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z], forces)
    motors = answer(model, request(model, MOTORS[::-1], q, v, a), c.loops)     # the passive joints assembled
    assert motors.joint_names == MOTORS[::-1] + PASSIVE
    order = [model.joint_index[n] for n in motors.joint_names]
    assert close(motors.positions, q[order], 1e-9) and close(motors.velocities, v[order], 1e-6)
    assert close(motors.efforts, tau[order], 1e-6)
    # no node loops: the request's; the actuated joints default to the named ones
    free = answer(model, request(model, MOTORS, q, loop_frames_a=["end_effector"], loop_frames_b=["right_distal_tip"],
                                 loop_kinds=["6d"]))
    assert close(free.efforts[:2], rd.constrained_inverse_dynamics(model, q, 0, 0, MOTORS, loops=SPEC)[0][[0, 3]], 1e-8)
    # redundant actuation: the least force, or the least torque
    three = MOTORS + ["end_joint"]
    for objective in ("min_force", "min_torque"):
        r = answer(model, request(model, model.joint_names, q, actuated_joints=three, objective=objective), c.loops)
        assert close(r.efforts, rd.constrained_inverse_dynamics(model, q, 0, 0, three, loops=SPEC, objective=objective)[0])


@pytest.mark.parametrize("fields,words", [
    (dict(actuated_joints=["left_base_joint"]), "the actuated joints cannot produce this motion"),
    (dict(objective="least"), "objective: 'least' is not one of min_force, min_torque"),
    (dict(loop_frames_a=["end_effector"], loop_frames_b=[]), "one pair per loop"),
    (dict(loop_frames_a=["end_effector"], loop_frames_b=["nowhere"], loop_kinds=["6d"]), "loop_frames_b: unknown frame"),
    (dict(contact_frames=["end_effector"]), "contact_kinds: give one kind"),
    (dict(velocities=[1.0, 0.0, 0.0, 0.0, 0.0]), "does not meet loop 0 (6d between 'end_effector' and 'right_distal_tip') at the velocity"),
    (dict(passive_efforts=[float("nan")] * 5), "passive_efforts contains NaN or inf"),
], ids=["too few actuators", "objective", "pairs", "unknown frame", "no kinds", "motion", "NaN"])
def test_bad_requests_are_refused_naming_the_field_or_the_constraint(model, fields, words):
    c = config(loops=[LOOP], actuated_joints=MOTORS)
    req = request(model, model.joint_names, np.zeros(5), **{k: v for k, v in fields.items() if k != "velocities"})
    req.velocities = fields.get("velocities", [])
    with pytest.raises(ValueError) as info:
        answer(model, req, c.loops)
    assert words in str(info.value), str(info.value)


def test_the_service_completes_only_what_the_loops_determine(model):
    wrist = load_urdf(WRIST)
    c = configured(WRIST, loops=[LOOP], actuated_joints=MOTORS + ["wrist"])
    with pytest.raises(ValueError, match=re.escape("joint_names: missing joints ['wrist'] (only joints on a loop's")):
        answer(wrist, request(wrist, MOTORS, np.zeros(6)), c.loops)
    with pytest.raises(ValueError, match="no constraints"):
        answer(model, request(model, model.joint_names, np.zeros(5)))
    # two motors and the left elbow left out: the loops cannot fix four joints
    with pytest.raises(ValueError, match="the loops do not determine the missing joints"):
        answer(model, request(model, ["left_base_joint"], np.zeros(5), actuated_joints=MOTORS), config(loops=[LOOP]).loops)
