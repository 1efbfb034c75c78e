"""Closed kinematic loops for the node (no rclpy): the loops and actuated_joints parameters checked
against the model, the joints the loops determine, the constrained gravity and feedforward torques on
the actuated joints, and a motion completed from its actuated part (the passive joints' positions
assembled, their velocities and accelerations solved from the loops). The part (part.py: ClosedChain)
is the law while loops is set, assembles the passive joints of each joint_states message before the
gravity part answers it, and serves ~/constrained_inverse_dynamics (constrained_inverse.py).

A parallel robot (a five-bar, a delta), a four-bar-driven arm or gripper is a kinematic tree whose
loops are closed by constraints, some joints driven and the others passive. Its gravity torques are
not g(q): the passive joints carry no torque, the loops carry the rest, and the motors' torques are
those of constrained inverse dynamics, M a + b = tau + J^T f with tau zero on the passive joints
(Kim, Lie group formulation of articulated rigid body dynamics, section 3.1; Featherstone, Rigid Body
Dynamics Algorithms, ch. 8): rd.constrained_inverse_dynamics. A closed-chain robot's joint_states
often carry the motors only: the positions of the passive joints follow from the loops, rd.assemble
(Newton steps on the loop-closure error, warm-started from the last solution).

The node's choices, documented in config/dynamics.yaml and the README:
- loops: one string "frame_a frame_b kind" per loop (a string list survives `ros2 param dump` and
  loads back); kind point (the frames' origins held together) or 6d (the frames held together).
- actuated_joints empty: every joint joint_states carries is actuated (the others, on a loop, are
  assembled and passive). Set it when joint_states also carries passive joints (a simulator, encoders
  on the passive joints).
- checked when the configuration is built: the loops must close from the model's neutral
  configuration (every joint free), and with actuated_joints set, those joints must hold the
  mechanism there (constrained gravity torques exist); each refusal names the parameter, the loop or
  the joints. At run time a message whose passive joints cannot be assembled, or whose state the
  actuators cannot hold, publishes nothing (a counted, throttled rejection naming them).
- a joint the loops do not determine (not on a loop's path) must come in joint_states.
- feedforward: the reference's actuated joints define the motion; its passive joints are completed
  from the loops (positions assembled from the reference's own values, velocities and accelerations
  solved from J v = 0 and J a + Jdot v = 0), the feedback gains act on the actuated joints.
- loops together with contacts.frames are refused (the library's constrained_inverse_dynamics takes
  both; the node serves one or the other).
"""
from dataclasses import dataclass

import numpy as np

from ... import dynamics as rd
from ...configuration import difference
from ..constraint_requests import KINDS
from ..parameters import ParameterError, ParameterSpec


def _loops(value):
    """loops: a list of strings "frame_a frame_b kind" (kind point or 6d), one per loop; kept as given
    (the frames are checked against the model when the configuration is built: `build`)."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError
    for text in value:
        words = text.split()
        if len(words) != 3:
            raise ValueError(f"{text!r} is not 'frame_a frame_b kind'")
        if words[2] not in KINDS:
            raise ValueError(f"{text!r}: unknown kind {words[2]!r}")
        if words[0] == words[1]:
            raise ValueError(f"{text!r} holds a frame to itself")
    return list(value)


#: actuated_joints is shared (parameters.SHARED): the output joints default to it
PARAMETERS = {
    "loops": ParameterSpec(
        [], "closed kinematic loops, one string 'frame_a frame_b kind' per loop (kind point or 6d): the two "
            "frames are held together; gravity and feedforward torques become the constrained inverse dynamics "
            "on the actuated joints, and loop joints joint_states does not carry are assembled (empty: none)",
        "a list of strings 'frame_a frame_b kind' (two distinct frames of the model, kind point or 6d), "
        "e.g. ['end_effector right_distal_tip 6d']", _loops),
}


def settings(params, config):
    """config.loops: Loops, or None without loops (after contacts: the two are not served together)."""
    return {"loops": build(params, config.model, config.contacts)}


def parts():
    from .part import ClosedChain
    return (ClosedChain,)


@dataclass(frozen=True)
class Loops:
    """The node's closed loops, checked against its model."""
    spec: tuple          # ((frame_a, frame_b, kind), ...) as the library takes them (a tuple: rows cached per model)
    actuated: tuple      # actuated_joints (model order), or (): the joints joint_states carries
    determined: tuple    # the model joints on the loops' paths (model order): the loops determine their positions
    optional: np.ndarray  # bool over the model's joints: may be missing from joint_states (then assembled)
    closed: np.ndarray   # the configuration assembled from the neutral one (the start-up check's)


def parse(text):
    """'frame_a frame_b kind' (checked by _loops) -> (frame_a, frame_b, kind)."""
    a, b, kind = text.split()
    return a, b, kind


def shown(spec):
    """The loops as the node names them: 'a = b (kind)'."""
    return ", ".join(f"{a} = {b} ({kind})" for a, b, kind in spec)


def _known_frame(model, name):
    try:
        return model.frame(name).body
    except KeyError:
        return None


def _ancestors(model, body):
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    return chain


def loop_joints(model, spec):
    """The model's joints on the loops' paths (names, model order): a loop constrains the joints between
    its two frames' bodies, up to (not including) the body where their chains to the root meet."""
    on = set()
    for a, b, _ in spec:
        chain_a, chain_b = _ancestors(model, model.frame(a).body), _ancestors(model, model.frame(b).body)
        on.update(model.body_joint_names[body] for body in set(chain_a) ^ set(chain_b))
    return tuple(name for name in model.joint_names if name in on)


def build(params, model, contacts=None):
    """Checked parameter values -> Loops, or None when loops is empty. ParameterError naming loops or
    actuated_joints: unknown frames or joints, frames no loop can close (assembled from the neutral
    configuration), actuated joints that cannot hold the mechanism there, passive joints without loops,
    loops with contacts."""
    texts, actuated = params["loops"], params["actuated_joints"]     # known joints (config.build_config)
    actuated = tuple(n for n in model.joint_names if n in actuated)     # model order: one cache key per set
    if not texts:
        passive = [n for n in model.joint_names if n not in actuated]
        if actuated and passive:
            raise ParameterError("actuated_joints", f"parameter actuated_joints leaves {passive} passive, and without "
                                                    "loops nothing holds a passive joint: set loops (or leave "
                                                    "actuated_joints empty: every joint actuated)")
        return None
    if contacts is not None:
        raise ParameterError("loops", "parameters loops and contacts.frames cannot both be set: the node serves "
                                      "a closed-chain robot or a robot standing on contacts (the library's "
                                      "constrained_inverse_dynamics takes both)")
    spec = tuple(parse(text) for text in texts)
    unknown = sorted({f for a, b, _ in spec for f in (a, b) if _known_frame(model, f) is None})
    if unknown:
        raise ParameterError("loops", f"parameter loops: unknown frames {unknown}; the model's frames are "
                                      f"{model.frame_names}")
    fixed = [text for text, (a, b, _) in zip(texts, spec) if model.frame(a).body == model.frame(b).body]
    if fixed:
        raise ParameterError("loops", f"parameter loops: {fixed} hold two frames of the same body together: "
                                      "no loop to close")
    try:
        closed = rd.assemble(model, rd.neutral(model), spec)
    except rd.ConstraintError as exc:
        raise ParameterError("loops", f"parameter loops {list(texts)}: {exc} (assembled from the model's neutral "
                                      "configuration, every joint free)") from None
    determined = loop_joints(model, spec)
    if actuated:
        try:
            rd.constrained_inverse_dynamics(model, closed, 0, 0, actuated, loops=spec)
        except rd.ConstraintError as exc:
            raise ParameterError("actuated_joints", f"parameters actuated_joints {list(actuated)} and loops "
                                                    f"{list(texts)}: {exc} (checked at the configuration assembled "
                                                    "from the neutral one)") from None
    optional = np.array([n in determined and n not in actuated for n in model.joint_names], bool)
    return Loops(spec, actuated, determined, optional, closed)


def actuated_mask(model, names):
    """Boolean mask over v of the joints `names` (each joint's coordinates)."""
    mask = np.zeros(model.nv, bool)
    for name in names:
        j = model.joint_by_name[name]
        mask[j.idx_v:j.idx_v + j.nv] = True
    return mask


def gravity(model, q, loops, actuated):
    """The constrained gravity torques at rest (tau over v, zero on the passive joints) and the loop
    forces; ConstraintError if the actuated joints cannot hold the mechanism at q."""
    return rd.constrained_inverse_dynamics(model, q, 0, 0, actuated, loops=loops.spec)


def complete_motion(model, spec, q, v, a, passive):
    """(v, a) with their `passive` coordinates (a mask over v) solved from the loops at q, given the
    others: J_p v_p = -J_k v_k, then J_p a_p = -(J_k a_k + Jdot v) (least squares: exact when the loops
    determine the passive coordinates; otherwise the constrained inverse dynamics' motion check names
    the loop the motion breaks). a may be None (then only v)."""
    v, known = np.array(v, dtype=float), ~passive
    J, _ = rd.constraint_jacobian(model, q, 0, (), spec)
    Jp = J[:, passive]
    v[passive] = np.linalg.lstsq(Jp, -J[:, known] @ v[known], rcond=None)[0]
    if a is None:
        return v, None
    a = np.array(a, dtype=float)
    _, drift = rd.constraint_jacobian(model, q, v, (), spec)
    a[passive] = np.linalg.lstsq(Jp, -(J[:, known] @ a[known] + drift), rcond=None)[0]
    return v, a


def feedforward(model, loops, actuated, q, v, reference, kp, kd, feedback, evaluate_at):
    """The constrained computed torque for the reference (q_d, v_d, a_d) over the model's coordinates,
    from the measured (q, v) (q closed): the reference's passive positions assembled with its actuated
    ones fixed, a = a_d + kp (q_d - q) + kd (v_d - v) on the actuated coordinates (with feedback), the
    passive velocities and accelerations solved from the loops at the evaluation state (the desired one,
    or the measured), then constrained inverse dynamics there. kp, kd: arrays over v. (tau, forces);
    ConstraintError naming the loop or the joints when it cannot be done."""
    q_d, v_d, a_d = reference
    spec = loops.spec
    q_d = rd.assemble(model, q_d, spec, fixed=actuated)
    act = actuated_mask(model, actuated)
    passive = ~act
    a = np.array(a_d, dtype=float)
    if feedback:
        a[act] += kp[act] * difference(model, q, q_d)[act] + kd[act] * (np.asarray(v_d) - v)[act]
    q_e, v_e = (q_d, v_d) if evaluate_at == "desired" else (q, v)
    if passive.any():
        v_e, a = complete_motion(model, spec, q_e, v_e, a, passive)
    # measured velocities carry noise: the loops' motion check applies to the reference alone
    tolerance = None if evaluate_at == "measured" else 1e-8
    return rd.constrained_inverse_dynamics(model, q_e, v_e, a, actuated, loops=spec, tolerance=tolerance)
