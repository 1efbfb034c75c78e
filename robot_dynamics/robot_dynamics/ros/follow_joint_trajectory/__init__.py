"""The logic of ~/follow_joint_trajectory, the node's control_msgs/action/FollowJointTrajectory front
of the arm's controller, without rclpy (tested without DDS):

    codes       the action's result codes; GoalError (a code and its error_string)
    goal        a goal checked as joint_trajectory_controller checks one, with bounds on its size:
                Options (execution.*), check -> Plan
    execution   a Plan as sent on: retimed within the limits (execution.retime) or checked, every
                point with its inverse dynamics (drive_compensates_gravity): prepare -> Execution
    tolerances  joint_trajectory_controller's path and goal tolerances for a trajectory the node
                executes itself: defaults, from_goal, state_error, verdict
"""
