"""~/inverse_kinematics (InverseKinematics.srv): request -> rd.inverse_kinematics -> response, on plain
message objects (no rclpy; the part part.py: InverseKinematicsService serves it).

The seed is the measured state (joint_states, ~/base_pose; neutral where nothing was heard) with the
request's seed_positions and seed_base_pose over it. The target is taken in the world (an empty
frame_id, or the frame_id of the last ~/base_pose) or in a frame of the model that no joint moves.
`solve` returns True when the answer converged: the node then says success=true; a finite answer
that did not converge goes back filled, with success=false (the .srv's rule). Anything wrong with
the request raises ValueError naming the field."""
import math

import numpy as np

from ... import dynamics as rd
from ... import lie
from ...model import unit_quaternion
from ..messages import (at_most, bounded, check_names, finite, frame_of, is_default_pose, quoted, root_coordinates,
                        root_link)

#: the bounds of the request's limits (a call of the bounds' size takes seconds on a humanoid: it runs on
#: the node's heavy-request process, ros/work.py; the defaults are 100 and 30)
MAX_ITERATIONS, MAX_RESTARTS = 10000, 1000
PARAMETERS = {}


def parts():
    from .part import InverseKinematicsService
    return (InverseKinematicsService,)


def answer(model, measured_q, world_frame, request, response_type):
    """(converged, response): solve's, the response made and filled where it runs (the node's
    heavy-request process, ros/worker.py, with that process's buffers)."""
    response = response_type()
    return solve(model, measured_q, world_frame, request, response), response


def solve(model, measured_q, world_frame, request, response, data=None):
    """Fill `response` (joint_names, positions, base_pose, converged, error, iterations, message) for
    `request` from the measured configuration `measured_q` (model order, not modified); world_frame:
    the frame_id of the last ~/base_pose ("" if none); data: the caller's buffers (rd.Data of the
    model), None: the thread's. True if converged."""
    frame_of(model, request.frame, "frame")
    names, iq = _joints(model, request.joint_names)
    q0 = _seed(model, measured_q, request, names, iq)
    target = _target(model, request, world_frame, data)
    at_most(len(request.weights), 6, "weights")
    weights = finite(request.weights, "weights") if len(request.weights) else None
    tolerance = float(request.tolerance)
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not 1 <= request.max_iterations <= MAX_ITERATIONS:
        raise ValueError(f"max_iterations must be 1 to {MAX_ITERATIONS}, got {request.max_iterations}")
    if request.restarts > MAX_RESTARTS:
        raise ValueError(f"restarts must be 0 to {MAX_RESTARTS}, got {request.restarts}")
    try:
        result = rd.inverse_kinematics(model, request.frame, target, q0, weights=weights, tolerance=tolerance,
                                       max_iterations=int(request.max_iterations), restarts=int(request.restarts),
                                       data=data)
    except KeyError as exc:     # an unknown frame: the model's KeyError lists its frames
        raise ValueError(f"frame: {exc.args[0]}") from None
    q = result.q
    if not (np.isfinite(q).all() and math.isfinite(result.error)):
        raise ValueError("inverse kinematics gave a non-finite answer")
    response.joint_names = names
    response.positions = q[iq].tolist()
    if model.root_joint is not None:
        position, quaternion = lie.pose(rd.frame_placement(model, q, root_link(model), data=data))
        p, o = response.base_pose.position, response.base_pose.orientation
        p.x, p.y, p.z = position.tolist()
        o.x, o.y, o.z, o.w = quaternion.tolist()
    response.converged, response.error = bool(result.converged), float(result.error)
    response.iterations = int(result.iterations)
    response.message = result.message
    return bool(result.converged)


def _joints(model, requested):
    """The answer's joint names (the request's, then the model's others) and their q indices."""
    requested = list(requested)
    check_names(requested, model, "joint_names", complete=False)
    chosen = set(requested)
    names = requested + [n for n in model.joint_names if n not in chosen]
    return names, model.joint_offset[0] + np.array([model.joint_index[n] for n in names], dtype=np.intp)


def _seed(model, measured_q, request, names, iq):
    q0 = np.array(measured_q, dtype=float)
    given = np.asarray(request.seed_positions, dtype=float)
    count = len(request.joint_names) or (len(names) if len(given) else 0)
    if len(given) != count:
        raise ValueError(f"seed_positions has {len(given)} values for {count} joints "
                         f"({'joint_names' if request.joint_names else 'the model joints, joint_names being empty'})")
    q0[iq[:count]] = bounded(given, "seed_positions", names[:count])
    root = model.root_joint
    if root is not None and not is_default_pose(request.seed_base_pose):
        q0[:root.nq] = root_coordinates(model, request.seed_base_pose, "seed_base_pose")
    return q0


def world_fixed_frames(model):
    """The model's frames that no joint moves: a target may be given in them."""
    return [name for name in model.frame_names if model.frame(name).body < 0]


def _target(model, request, world_frame, data=None):
    """The target as the library takes it: a world 4x4 placement, or a world position (position_only)."""
    pose, frame_id = request.target.pose, request.target.header.frame_id
    p = finite([pose.position.x, pose.position.y, pose.position.z], "target.pose.position")
    if request.position_only:
        T = np.eye(4)
        T[:3, 3] = p
    else:
        o = pose.orientation
        T = lie.pose_matrix(p, unit_quaternion([o.x, o.y, o.z, o.w], "target.pose.orientation"))
    if frame_id and frame_id != world_frame:
        fixed = world_fixed_frames(model)
        if frame_id not in fixed:
            world = f"empty, or the last ~/base_pose's {world_frame!r}" if world_frame else "empty (the world)"
            raise ValueError(f"target.header.frame_id {quoted(frame_id)} is not accepted: it must be {world}, or a frame "
                             f"of the model that no joint moves ({', '.join(fixed) or 'this model has none'})")
        T = rd.frame_placement(model, rd.neutral(model), frame_id, data=data) @ T
    return T[:3, 3].copy() if request.position_only else T
