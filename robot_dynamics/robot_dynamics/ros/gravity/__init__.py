"""~/gravity_torques and ~/gravity_commands: the law's gravity torques (g(q), rd.gravity_torques; with
contacts or closed loops the torques that hold the robot on them: contacts/, closed_chain/) for every
joint_states message that completes the measured state, stamped with it (part.py: GravityOutput). The
control path: the first output to answer each message. Its parameters are the model's (gravity,
payload.*, joints: parameters.SHARED)."""

PARAMETERS = {}


def parts():
    from .part import GravityOutput
    return (GravityOutput,)
