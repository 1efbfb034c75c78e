"""The velocity and acceleration of a frame: NumPy in, NumPy out, one state (1-D arrays) or a batch
(2-D, a row per state), as in dynamics.py (Featherstone, Rigid Body Dynamics Algorithms, ch. 2:
spatial velocity and acceleration; Lynch and Park, Modern Robotics, ch. 8).

    frame_velocity(model, q, v, frame, reference="local_world_aligned")            (6,) [linear; angular]
    frame_acceleration(model, q, v, a, frame, reference=..., classical=True)        (6,)

As Pinocchio's getFrameVelocity, getFrameAcceleration (classical=False) and
getFrameClassicalAcceleration (classical=True) after forwardKinematics(q, v, a), the base at rest and
no gravity. `reference` as for frame_jacobian: local_world_aligned gives the frame origin's velocity
and the body's angular velocity in world axes (frame_velocity = J v); local the same in the frame's
axes; world the spatial velocity, whose linear part is the velocity of the body point at the world
origin. The spatial acceleration is the derivative of the spatial velocity (Featherstone); the
classical one adds w x v to its linear part: with local_world_aligned, the frame origin's
acceleration, d/dt (J v) = J a + Jdot v.
"""
import numpy as np

from .calling import F64, Direct, batch_size, frame_spec, module_scratch, raise_status, run, vector, workspace
from .kernels import frame_motion as _motion

_MOTION = Direct(_motion.frame_motion)
_ND, _UNIT = np.ndarray, (8,)


def _scratch(model):
    """The model's single-state workspace of this kernel, kept (made on first use) as the attribute
    `frame_motion` of its calling.Workspace: one attribute lookup on the fast paths, which check
    their inputs written out (the kernel checks the lengths), as in centroidal.py."""
    s = model.workspace or workspace(model)
    W = getattr(s, "frame_motion", None)
    if W is None:
        W = s.frame_motion = module_scratch(model, _motion)
    return W


def _motion_of(model, q, v, a, frame, reference, kind, threads):
    """The kernel on checked inputs (a is v again for a velocity: not read)."""
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    spec = frame_spec(model, frame, reference)
    v = vector(v, model.nv, "v", n)
    a = v if kind == _motion.VELOCITY else vector(a, model.nv, "a", n)
    out = np.empty(q.shape[:-1] + (6,))
    status = run(_motion, "frame_motion", model, n, threads, q, v, a, spec, kind, out) if n \
        else _motion.frame_motion(model.packed, q, v, a, spec, kind, out, _scratch(model))
    inputs = dict(q=q, v=v) if kind == _motion.VELOCITY else dict(q=q, v=v, a=a)
    raise_status(model, status, inputs)
    return out


def frame_velocity(model, q, v, frame, reference="local_world_aligned", threads=None):
    """The velocity [linear; angular] of a frame (link or joint name) in the given reference,
    (6,) or (N, 6): Pinocchio's getFrameVelocity."""
    if type(q) is _ND and q.dtype is F64 and q.strides == _UNIT and type(v) is _ND and v.dtype is F64 \
            and v.strides == _UNIT:
        s = model.workspace
        try:
            spec, W = s.specs.get((frame, reference)), s.frame_motion
        except AttributeError:      # no workspace (None), or no call of this module's yet
            spec, W = None, None
        out = np.empty(6)
        if spec is not None and not _MOTION.run(model.packed, q, v, v, spec, _motion.VELOCITY, out, W):
            return out
    return _motion_of(model, q, v, None, frame, reference, _motion.VELOCITY, threads)


def frame_acceleration(model, q, v, a, frame, reference="local_world_aligned", classical=True, threads=None):
    """The acceleration [linear; angular] of a frame in the given reference for joint accelerations
    a, (6,) or (N, 6): classical (Pinocchio's getFrameClassicalAcceleration) or, with
    classical=False, spatial (getFrameAcceleration)."""
    kind = _motion.CLASSICAL if classical else _motion.SPATIAL
    if type(q) is _ND and q.dtype is F64 and q.strides == _UNIT and type(v) is _ND and v.dtype is F64 \
            and v.strides == _UNIT and type(a) is _ND and a.dtype is F64 and a.strides == _UNIT:
        s = model.workspace
        try:
            spec, W = s.specs.get((frame, reference)), s.frame_motion
        except AttributeError:
            spec, W = None, None
        out = np.empty(6)
        if spec is not None and not _MOTION.run(model.packed, q, v, a, spec, kind, out, W):
            return out
    return _motion_of(model, q, v, a, frame, reference, kind, threads)
