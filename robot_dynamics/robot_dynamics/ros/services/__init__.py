"""The dynamics services ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics and
~/wrench_to_joint_torques: request -> library call -> response, one function each (no rclpy). The
part (part.py: DynamicsServices) runs them under the node's lock (base.serve), which turns any error,
or a result that is not finite, into success=false with the message."""
import array

import numpy as np

from ... import dynamics as rd
from ...model import REFERENCES
from ..messages import RequestState, external_wrenches, finite, frame_of, quoted, twist

PARAMETERS = {}


def parts():
    from .part import DynamicsServices
    return (DynamicsServices,)


def _solve_state(model, req, res, solve, given, result):
    """Request (q, qd, one more joint vector, external wrenches) -> solve -> response vector;
    given and result name the joint array and the base field of request and response."""
    rs = RequestState(model, req.joint_names)
    x = solve(model, rs.q(req.positions, req.base_pose), rs.v(req.velocities, "velocities", req.base_twist),
              rs.v(getattr(req, given[0]), given[0], getattr(req, given[1])),
              external_wrenches(model, req.external_wrenches))
    res.joint_names = rs.names
    setattr(res, result[0], rs.out(x))
    rs.set_base(getattr(res, result[1]), x)


def inverse_dynamics(model, req, res):
    """Efforts (and the base wrench) for positions, velocities, accelerations and wrenches."""
    _solve_state(model, req, res, rd.inverse_dynamics, ("accelerations", "base_acceleration"),
                 ("efforts", "base_wrench"))


def forward_dynamics(model, req, res):
    """Accelerations (and the base acceleration) for positions, velocities, efforts and wrenches."""
    _solve_state(model, req, res, rd.forward_dynamics, ("efforts", "base_wrench"),
                 ("accelerations", "base_acceleration"))


def hybrid_dynamics(model, req, res):
    """Accelerations where efforts are given and efforts where accelerations are (a base is unactuated:
    zero wrench, its acceleration solved)."""
    rs = RequestState(model, req.joint_names)
    if len(req.acceleration_known) != len(rs.names):
        raise ValueError(f"acceleration_known has {len(req.acceleration_known)} values "
                         f"for {len(rs.names)} joints")
    known = np.zeros(model.nv, bool)
    known[rs.iv] = np.asarray(req.acceleration_known, bool)
    qdd, tau = rd.hybrid_dynamics(model, rs.q(req.positions, req.base_pose),
                                  rs.v(req.velocities, "velocities", req.base_twist), known,
                                  rs.v(req.accelerations, "accelerations"), rs.v(req.efforts, "efforts"))
    res.joint_names, res.accelerations, res.efforts = rs.names, rs.out(qdd), rs.out(tau)


def wrench_to_joint_torques(model, req, res):
    """J^T F for a wrench at a frame, with the Jacobian's columns of the requested joints."""
    rs = RequestState(model, req.joint_names)
    reference = req.reference or "local_world_aligned"
    frame_of(model, req.frame, "frame")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}, got {quoted(req.reference)}")
    q = rs.q(req.positions, req.base_pose)
    J = rd.frame_jacobian(model, q, req.frame, reference)[:, rs.iv]
    tau = J.T @ finite(twist(req.wrench), "wrench")
    res.joint_names, res.efforts = rs.names, array.array("d", tau.tobytes())
    res.jacobian, res.jacobian_rows, res.jacobian_cols = array.array("d", J.tobytes()), 6, len(rs.names)
