"""The node's features, in order, and every parameter they declare (no rclpy).

A feature is a folder of this package (see the package docstring): `PARAMETERS` (its parameters:
{name: parameters.ParameterSpec}), optionally `settings(params, config)` (what it adds to the
configuration, {attribute: value}, built by config.build_config in this order: a feature may read the
settings of those before it), and `parts()` (its Part classes: rclpy, imported only when the node asks).
The node makes the parts in this order and they answer each joint_states message in it (the closed
chain's assembly before gravity, gravity first of the outputs: the control path).

Adding a feature: its folder, and one line in FEATURES."""
from . import (centroidal, closed_chain, contacts, diagnostics, external, follow_joint_trajectory, friction, gravity,
               identification, inverse_kinematics, joint_states, services, trajectories)
from .parameters import SHARED

FEATURES = (
    joint_states,           # joint_states and ~/base_pose -> the measured state; the hot path; status "dynamics"
    contacts,               # contacts.*: the law standing on contacts, ~/contact_forces, ~/constrained_forward_dynamics
    closed_chain,           # loops: the passive joints assembled, the constrained law, ~/constrained_inverse_dynamics
    friction,               # friction.*: friction compensation in the gravity and feedforward outputs (no part)
    gravity,                # ~/gravity_torques, ~/gravity_commands
    trajectories,           # ~/reference -> ~/feedforward_*; ~/time_parameterize, ~/check_trajectory
    follow_joint_trajectory,  # execution.*: ~/follow_joint_trajectory (forwarded, or executed as the reference)
    external,               # observer.*: ~/external_torques, ~/external_wrench, ~/contact
    identification,         # ~/identify_payload
    services,               # ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics, ~/wrench_to_joint_torques
    diagnostics,            # /diagnostics
    centroidal,             # ~/centroidal, ~/base_twist
    inverse_kinematics,     # ~/inverse_kinematics
)

#: every parameter of the node: the shared ones, then each feature's
PARAMETERS = {**SHARED, **{name: spec for feature in FEATURES for name, spec in feature.PARAMETERS.items()}}
