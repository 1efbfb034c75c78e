"""Computed-torque control (Lynch and Park, Modern Robotics, section 11.4): the feedforward torque
that makes the model follow a reference, with optional PD feedback inside the model.

    tau = M(q_e) (a_d + kp (q_d - q) + kd (v_d - v)) + C(q_e, v_e) v_e + g(q_e)

computed as one RNEA at (q_e, v_e) with acceleration a_d + kp e + kd (v_d - v); (q_e, v_e) is the
desired state or the measured one, and the position error e = q_d - q is taken in the tangent space
(`difference`), so floating and planar joints are handled. With kp = kd = 0 it is the inverse
dynamics of the reference, to add to a controller's own feedback.
"""
import numpy as np

from .configuration import difference
from .rigid_body import inverse_dynamics

EVALUATE_AT = ("desired", "measured")


def _gains(model, value, name):
    """A number, or one per v coordinate, as an array over v (finite, non-negative)."""
    gains = np.asarray(value, dtype=float)
    if gains.ndim > 1 or gains.size not in (1, model.nv) or not np.all(np.isfinite(gains)) or np.any(gains < 0):
        raise ValueError(f"{name} takes one finite non-negative number or one per velocity coordinate "
                         f"({model.nv}), got {value!r}")
    return np.broadcast_to(gains.reshape(-1), (model.nv,))


def computed_torque(model, q, v, q_d, v_d, a_d, kp=0.0, kd=0.0, evaluate_at="desired", threads=None, data=None):
    """The computed torque for the reference (q_d, v_d, a_d) from the measured state (q, v); one
    state (1-D) or a batch (2-D). kp [1/s^2] and kd [1/s]: a number or one per v coordinate.
    evaluate_at: evaluate M, C and g at the 'desired' state or at the 'measured' one."""
    if evaluate_at not in EVALUATE_AT:
        raise ValueError(f"evaluate_at must be one of {EVALUATE_AT}, got {evaluate_at!r}")
    kp, kd = _gains(model, kp, "kp"), _gains(model, kd, "kd")
    a = np.asarray(a_d, dtype=float)
    if kp.any() or kd.any():
        a = a + kp * difference(model, q, q_d) + kd * (np.asarray(v_d, float) - np.asarray(v, float))
    q_e, v_e = (q_d, v_d) if evaluate_at == "desired" else (q, v)
    return inverse_dynamics(model, q_e, v_e, a, threads=threads, data=data)
