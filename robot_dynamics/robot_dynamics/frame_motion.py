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

from .calling import NO_SPECS, Kernel, batch_size, call, frame_spec, of, plain_data, vector
from .kernels import frame_motion as _motion

_MOTION = Kernel(_motion, "frame_motion")


def _motion_of(model, data, q, v, a, frame, reference, kind, threads):
    """The kernel on checked inputs (a is v again for a velocity: not read)."""
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    spec = frame_spec(model, of(model, data), frame, reference)
    v = vector(v, model.nv, "v", n)
    a = v if kind == _motion.VELOCITY else vector(a, model.nv, "a", n)
    out = np.empty(q.shape[:-1] + (6,))
    call(_MOTION, model, data, threads, n, (q, v, a, spec, kind, out),
         dict(q=q, v=v) if kind == _motion.VELOCITY else dict(q=q, v=v, a=a))
    return out


def frame_velocity(model, q, v, frame, reference="local_world_aligned", threads=None, data=None):
    """The velocity [linear; angular] of a frame (link or joint name) in the given reference,
    (6,) or (N, 6): Pinocchio's getFrameVelocity."""
    d = plain_data(model, data, q, v)
    if d is not None:
        spec = d.frame_specs.get(reference, NO_SPECS).get(frame)
        out = np.empty(6)
        if spec is not None and not _MOTION.run(model.packed, q, v, v, spec, _motion.VELOCITY, out, d.frame_motion):
            return out
    return _motion_of(model, data, q, v, None, frame, reference, _motion.VELOCITY, threads)


def frame_acceleration(model, q, v, a, frame, reference="local_world_aligned", classical=True, threads=None,
                       data=None):
    """The acceleration [linear; angular] of a frame in the given reference for joint accelerations
    a, (6,) or (N, 6): classical (Pinocchio's getFrameClassicalAcceleration) or, with
    classical=False, spatial (getFrameAcceleration)."""
    kind = _motion.CLASSICAL if classical else _motion.SPATIAL
    d = plain_data(model, data, q, v, a)
    if d is not None:
        spec = d.frame_specs.get(reference, NO_SPECS).get(frame)
        out = np.empty(6)
        if spec is not None and not _MOTION.run(model.packed, q, v, a, spec, kind, out, d.frame_motion):
            return out
    return _motion_of(model, data, q, v, a, frame, reference, kind, threads)
