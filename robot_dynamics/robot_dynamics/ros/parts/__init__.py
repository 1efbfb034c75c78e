"""The node's features, one object each: a `Part` holds its publishers, subscriptions and services,
its state, its status for /diagnostics, its reaction to a new configuration and its answer to each
joint_states message; `ros/node.py` (DynamicsNode) makes them and wires them.

    base            Part (the interface), TorqueTopics (a JointState + Float64MultiArray pair), HELD
                    (the law of gravity and feedforward torques without constraints)
    joint_states    JointStatesInput: the bare helper node and its joint_states subscription, ~/base_pose,
                    the measured state, the hot path (every part's `on_state`, in order), the status
                    "dynamics" (rate, latency, missing and stale input)
    gravity         GravityOutput: ~/gravity_torques, ~/gravity_commands
    feedforward     ReferenceFeedforward: ~/reference (a JointTrajectory followed in time) ->
                    ~/feedforward_torques, ~/feedforward_commands
    standing        Standing: contacts (the contact-consistent law of gravity and feedforward,
                    ~/contact_forces), ~/constrained_forward_dynamics
    external        ExternalTorquesOutput: the momentum observer, ~/external_torques, ~/external_wrench,
                    ~/contact, the status "external torques"
    identification  PayloadIdentification: ~/identify_payload
    services        DynamicsServices: ~/inverse_dynamics, ~/forward_dynamics, ~/hybrid_dynamics,
                    ~/wrench_to_joint_torques
    trajectory_services  TrajectoryServices: ~/time_parameterize, ~/check_trajectory (outside the lock)
    diagnostics     Diagnostics: /diagnostics, one status per part that has one
    centroidal      CentroidalOutput: ~/centroidal (floating or planar root), ~/base_twist
    inverse_kinematics  InverseKinematicsService: ~/inverse_kinematics

A new feature is a new part (a module here) and one line in `node.PARTS`. The plain logic each part
calls (no rclpy) stays in `ros/*.py`, tested without DDS.
"""
