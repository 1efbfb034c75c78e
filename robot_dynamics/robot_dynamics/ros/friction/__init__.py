"""Friction compensation in the torque outputs (no rclpy, no part of its own): the model's joint
friction (rd.friction_torques: viscous v + Coulomb clip(v / band, -1, 1) + offset; Armstrong-Helouvry,
Dupont and Canudas de Wit, Automatica 1994) added to what the gravity and feedforward parts publish.
The friction is the model's: the URDF's <dynamics damping friction> and <robot_dynamics
friction_offset>, or an identified model's (~/identify_dynamics with apply).

- `friction.compensate` (the feedforward outputs, default full): the friction at the velocity the
  computed torque is evaluated at (feedforward.evaluate_at: the reference's velocity when 'desired',
  the measured one when 'measured'); after a cancel (gravity only, the arm held at rest) the friction
  at rest, the offset.
- `friction.compensate_gravity` (the gravity outputs, default off): the friction at the measured
  velocity. Off by default: a robot at rest has no velocity, and feeding measured velocity back as
  viscous torque cancels the joints' own damping.
Each takes off, viscous (the viscous term alone) or full (viscous, Coulomb and offset). A URDF
without <dynamics> has no friction: full then adds nothing. With closed loops, each actuated joint's
own friction is compensated; the passive joints' friction is not carried through the loops."""
from dataclasses import dataclass
from functools import partial

import numpy as np

from ... import dynamics as rd
from ..parameters import ParameterSpec, one_of

MODES = ("off", "viscous", "full")

PARAMETERS = {
    "friction.compensate": ParameterSpec(
        "full", "friction compensation in ~/feedforward_torques and ~/feedforward_commands: off, viscous (the "
                "viscous term) or full (viscous, Coulomb and offset), at the velocity the feedforward is "
                "evaluated at", f"one of {', '.join(MODES)}", one_of(*MODES)),
    "friction.compensate_gravity": ParameterSpec(
        "off", "friction compensation in ~/gravity_torques and ~/gravity_commands, at the measured velocity: off, "
               "viscous or full", f"one of {', '.join(MODES)}", one_of(*MODES)),
}


@dataclass
class Compensation:
    """config.friction: per output, the friction to add, as a callable v (nv,) -> torques (nv,), or None
    (off); rest: the feedforward's friction at rest (nv,), None if off."""
    feedforward: object
    gravity: object
    rest: object
    feedforward_mode: str
    gravity_mode: str


def torques_of(model, mode):
    """v -> the friction torques of `mode`, or None when there is nothing to add (off, or a model without
    those coefficients: a URDF without <dynamics> costs the outputs nothing). viscous: c v, one NumPy
    product (the library's per-state path, rd.friction_torques, serves full: 6.2 us on panda here against
    3.3 us for its gravity torques, at a load average of 12)."""
    friction = model.friction
    if mode == "off" or not (friction[:, 0] if mode == "viscous" else friction).any():
        return None
    if mode == "viscous":
        c = np.zeros(model.nv)
        c[model.joint_offset[1]:] = friction[:, 0]
        return partial(np.multiply, c)
    return partial(rd.friction_torques, model)     # (partials, not lambdas: the configuration is pickled)


def settings(params, config):
    model = config.model
    feedforward = torques_of(model, params["friction.compensate"])
    rest = None if feedforward is None else feedforward(np.zeros(model.nv))
    return {"friction": Compensation(feedforward, torques_of(model, params["friction.compensate_gravity"]), rest,
                                     params["friction.compensate"], params["friction.compensate_gravity"])}


def parts():
    return ()
