"""The ROS 2 layer: the dynamics node, messages <-> arrays around the library, nothing else.

    main         the process: signals, executors and threads, clean exit (python -m robot_dynamics.ros)
    node         DynamicsNode: the parameters, the configuration, and the parts that serve it (PARTS)
    parts/       one module per feature of the node (its topics, services, state, status; parts/__init__)
    parameters   every parameter, what it takes and its check (no rclpy)
    config       the model and gains built whole from the checked parameters (no rclpy)
    state        the measured state from joint_states and ~/base_pose (no rclpy)
    messages     joint names, poses, twists and wrenches <-> model arrays (no rclpy)
    services     the dynamics services as functions of (model, request, response) (no rclpy)
    diagnostics  what /diagnostics reports (no rclpy)
    external     the momentum observer on joint_states efforts: samples, dt, contact, wrench (no rclpy)
    identification  ~/identify_payload: request checks, the recorder, the estimate, the response (no rclpy)

Only `main`, `node` and `parts` import rclpy; the rest is tested without DDS. Nothing here is imported by
the library (robot_dynamics.*), which runs without ROS.
"""
