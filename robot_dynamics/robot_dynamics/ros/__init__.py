"""The ROS 2 layer: the dynamics node, messages <-> arrays around the library, nothing else.

Each feature of the node is one folder, the same shape every time:

    <feature>/__init__.py   no rclpy: the feature's logic on plain messages and arrays, tested without
                            DDS; PARAMETERS, its parameters ({name: parameters.ParameterSpec}: default,
                            description, the form it takes, its check); settings(params, config), what it
                            adds to the configuration (optional); parts(), its Part classes (imported
                            only when the node asks: they import rclpy)
    <feature>/part.py       rclpy: its Part(s) (base.Part): publishers, subscriptions, services, status,
                            the answer to each joint_states message
    <feature>/*.py          more of its logic without rclpy, when it is long

features.py lists the features (FEATURES, one line each, in the order the node makes their parts and
they answer joint_states): a new feature is its folder and one line there.

What they share:

    main                 the process: signals, executors and threads, clean exit (python -m robot_dynamics.ros)
    node                 DynamicsNode: the configuration's lifecycle, the lock; makes every feature's parts
    features             FEATURES, the list of features, and PARAMETERS, every parameter (no rclpy)
    parameters           ParameterSpec, the value checks, the shared parameters: the model's, joints (no rclpy)
    config               Config: the model and every feature's settings, built whole (no rclpy)
    messages             joint names, poses, twists and wrenches <-> model arrays (no rclpy)
    constraint_requests  a request's contacts and loops, the constraint wrenches of an answer (no rclpy)
    base                 Part (the interface), Shared (the node's reporting and services under the lock),
                         TorqueTopics, HELD (the law of gravity and feedforward torques without constraints)
    declared             the parameters declared on the node and stored as used
    work                 HeavyWork: the heavy requests' queue and the thread that waits for them (no rclpy)
    worker               Worker: the process heavy requests run in, a child of the node (no rclpy)

Only `main`, `node`, `base`, `declared` and the features' `part` modules import rclpy. Nothing here is
imported by the library (robot_dynamics.*), which runs without ROS.
"""
