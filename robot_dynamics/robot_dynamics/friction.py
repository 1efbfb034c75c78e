"""Joint friction: the torque a joint's drive loses to friction at velocity v, per joint

    tau_f = viscous v + coulomb s(v) + offset,   s(v) = clip(v / band, -1, 1),

a viscous and a Coulomb term (Armstrong-Helouvry, Dupont and Canudas de Wit, A survey of models,
analysis tools and compensation methods for the control of machines with friction, Automatica
1994) and a constant offset (a drive's torque bias, gravity compensation springs). The sign of v
is smoothed linearly within |v| < band (Model.coulomb_band, 0.01 rad/s or m/s by default): an
ideal Coulomb term jumps at v = 0, where a measured velocity is mostly noise. It is not part of
inverse dynamics (which stays the rigid-body torque Pinocchio computes): a model's friction, as
the URDF gives it or as identified (dynamic_identification), is added where wanted.
"""
import math

import numpy as np

from .model import FRICTION_TERMS

__all__ = ["friction_torques"]   # the facade's names; the rest serve sibling modules and tests


def friction_torques(model, v):
    """The model's friction torques at velocities v: one state (nv,) or a batch (N, nv), the
    same shape out; zero for the coordinates of a floating or planar root. ValueError for a
    wrong shape or a non-finite velocity. One state of a fixed-base arm takes a short path, a
    Python loop over the joints' coefficients (kept per model, remade when they are set): 1.7x
    inverse dynamics' time on the PUMA, where the NumPy expression's eight array operations took
    4x (measured in turn on this 2-core VM at a load average of 13: 8.8 and 21 us against 5.3)."""
    if type(v) is np.ndarray and v.shape == (model.nv,) and not model.joint_offset[1]:
        rows = model.__dict__.get("_friction_rows")
        if rows is None or rows[0] is not model._friction or rows[1] is not model._coulomb_band:
            rows = model._friction_rows = (model._friction, model._coulomb_band, list(zip(
                *model._friction.T.tolist(), model._coulomb_band.tolist())))
        out = []
        for (viscous, coulomb, offset, band), x in zip(rows[2], v.tolist()):
            s = x / band
            out.append(viscous * x + coulomb * (1.0 if s > 1.0 else -1.0 if s < -1.0 else s) + offset)
        if math.isfinite(sum(out)):
            return np.array(out)
    v = np.asarray(v, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] != model.nv or not np.isfinite(v).all():
        raise ValueError(f"v must be {model.nv} finite velocities (or rows of them), got shape {v.shape}"
                         + ("" if v.shape[-1:] != (model.nv,) else " with NaN or inf"))
    k = model.joint_offset[1]
    f = model._friction
    out = np.zeros(v.shape)
    vj = v[..., k:]
    out[..., k:] = f[:, 0] * vj + f[:, 1] * np.clip(vj / model._coulomb_band, -1.0, 1.0) + f[:, 2]
    return out


def friction_regressor(model, v, terms=FRICTION_TERMS):
    """The friction columns of joint torques linear in the coefficients: (N, joints, len(terms)),
    so that tau_f[:, k + j] = friction_regressor(...)[:, j] @ model.friction[j, columns of terms]
    (k = model.joint_offset[1]); the columns are v, s(v) and 1 for viscous, coulomb and offset."""
    vj = np.asarray(v, float)[:, model.joint_offset[1]:]
    shapes = {"viscous": lambda: vj, "coulomb": lambda: np.clip(vj / model._coulomb_band, -1.0, 1.0),
              "offset": lambda: np.ones_like(vj)}
    return np.stack([shapes[t]() for t in terms], axis=-1) if terms else np.zeros(vj.shape + (0,))
