"""~/constrained_inverse_dynamics (no rclpy): the torques of the actuated joints and the constraint
forces for a motion under contacts and closed loops (rd.constrained_inverse_dynamics; Kim, Lie group
formulation of articulated rigid body dynamics, section 3.1), from a request of
robot_dynamics_interfaces/srv/ConstrainedInverseDynamics. Empty fields take the node's settings:
contacts (contacts.*), loops (loops) and actuated joints (actuated_joints, else every joint the
request names). Joints on a loop's path the request leaves out are completed as the node completes
joint_states: positions assembled from the loops (loops.complete_motion for their velocities and
accelerations)."""
import numpy as np

from ... import dynamics as rd
from ..constraint_requests import all_finite, constraint_wrenches, request_contacts, request_loops
from ..messages import check_names, finite, is_default_pose, root_coordinates, twist
from . import complete_motion, loop_joints

OBJECTIVES = ("min_force", "min_torque")


def request_constraints(model, req, node_contacts, node_loops):
    """(contacts, loops) of the request as the library takes them (tuples), the node's where empty;
    ValueError naming the field."""
    contacts = request_contacts(model, req, node_contacts)
    if req.loop_frames_a or req.loop_frames_b:
        loops = request_loops(model, req)
    elif req.loop_kinds:
        raise ValueError("loop_kinds given without loop_frames_a and loop_frames_b (empty: the node's loops)")
    else:
        loops = node_loops.spec if node_loops is not None else ()
    return contacts, loops


def _joint_array(values, names, field, optional=True):
    x = np.asarray(values, dtype=float)
    if optional and len(x) == 0:
        return np.zeros(len(names))
    if len(x) != len(names):
        raise ValueError(f"{field} has {len(x)} values for {len(names)} joints")
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        raise ValueError(f"{field} contains NaN or inf (joint {names[bad[0]]!r})")
    return x


def _state(model, req, names):
    """q, v, a over the model's coordinates from the request (joints not named: neutral, zero)."""
    qo, vo = model.joint_offset
    idx = np.array([model.joint_index[n] for n in names], dtype=np.intp)
    q, v, a = rd.neutral(model), np.zeros(model.nv), np.zeros(model.nv)
    q[qo + idx] = _joint_array(req.positions, names, "positions", optional=False)
    v[vo + idx] = _joint_array(req.velocities, names, "velocities")
    a[vo + idx] = _joint_array(req.accelerations, names, "accelerations")
    root = model.root_joint
    if root is not None:
        if not is_default_pose(req.base_pose):
            q[:root.nq] = root_coordinates(model, req.base_pose)
        for x, msg, field in ((v, req.base_twist, "velocities"), (a, req.base_acceleration, "accelerations")):
            try:
                x[:root.nv] = rd.root_twist_coordinates(model, finite(twist(msg), f"base {field}"))
            except ValueError as exc:
                raise ValueError(f"base {field}: {exc}") from None
    return q, v, a


def _actuated(model, req, names, node_loops):
    if req.actuated_joints:
        actuated = list(req.actuated_joints)
        check_names(actuated, model, "actuated_joints", complete=False)
    elif node_loops is not None and node_loops.actuated:
        actuated = node_loops.actuated
    else:
        actuated = names
    return tuple(n for n in model.joint_names if n in actuated)     # model order: one cache key per set


def _complete(model, loops, names, missing, q, v, a):
    """The missing joints' positions assembled, their velocities and accelerations solved (the named
    joints and a base fixed); ValueError naming them when the loops leave them undetermined."""
    undetermined = [n for n in missing if n not in loop_joints(model, loops)] if loops else missing
    if undetermined:
        raise ValueError(f"joint_names: missing joints {undetermined} (only joints on a loop's path may be left "
                         "out: the node assembles them from the loops)")
    free_q, free_v = np.zeros(model.nq, bool), np.zeros(model.nv, bool)
    for name in missing:
        j = model.joint_by_name[name]
        free_q[j.idx_q:j.idx_q + j.nq], free_v[j.idx_v:j.idx_v + j.nv] = True, True
    q = rd.assemble(model, q, loops, fixed=~free_q)
    J = rd.constraint_jacobian(model, q, 0, (), loops)[0][:, free_v]
    if np.linalg.matrix_rank(J, tol=1e-9 * max(np.abs(J).max(initial=0.0), 1e-300)) < J.shape[1]:
        raise ValueError(f"joint_names: the loops do not determine the missing joints {missing} from the named "
                         "ones here: name more of them")
    v, a = complete_motion(model, loops, q, v, a, free_v)
    return q, v, a


def constrained_inverse_dynamics(model, req, res, node_contacts, node_loops, wrench_type):
    """~/constrained_inverse_dynamics: the actuated joints' efforts and the constraint wrenches for the
    request's motion (wrench_type makes a LinkWrench); ValueError naming the field, the constraint or
    the joints otherwise."""
    contacts, loops = request_constraints(model, req, node_contacts, node_loops)
    if not contacts and not loops:
        raise ValueError("no constraints: give contact_frames or loops, or set the node's contacts.frames or "
                         "loops (for inverse dynamics without constraints: ~/inverse_dynamics)")
    if req.objective not in ("",) + OBJECTIVES:
        raise ValueError(f"objective: {req.objective!r} is not one of {', '.join(OBJECTIVES)} (empty: min_force)")
    names = list(req.joint_names) or list(model.joint_names)
    check_names(names, model, "joint_names", complete=False)
    missing = [n for n in model.joint_names if n not in names]
    q, v, a = _state(model, req, names)
    if missing:
        q, v, a = _complete(model, loops, names, missing, q, v, a)
    passive = np.zeros(model.nv)
    passive[model.joint_offset[1] + np.array([model.joint_index[n] for n in names], dtype=np.intp)] = _joint_array(
        req.passive_efforts, names, "passive_efforts")
    tau, forces = rd.constrained_inverse_dynamics(model, q, v, a, _actuated(model, req, names, node_loops), contacts,
                                                  loops, passive_torques=passive, objective=req.objective or "min_force",
                                                  least_squares=req.least_squares)
    if not (all_finite(tau) and all_finite(forces)):
        raise ValueError("the efforts or constraint forces computed are not finite (the request's values are too large)")
    out = names + missing
    qo, vo = model.joint_offset
    idx = np.array([model.joint_index[n] for n in out], dtype=np.intp)
    res.joint_names = out
    res.positions, res.velocities, res.accelerations, res.efforts = (
        x[o + idx].tolist() for x, o in ((q, qo), (v, vo), (a, vo), (tau, vo)))
    res.constraint_wrenches = constraint_wrenches(contacts, loops, forces, wrench_type)
