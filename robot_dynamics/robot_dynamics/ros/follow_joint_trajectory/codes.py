"""The result codes of control_msgs/action/FollowJointTrajectory and the error that carries one."""

SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = \
    0, -1, -2, -3, -4, -5
NAMES = {SUCCESSFUL: "SUCCESSFUL", INVALID_GOAL: "INVALID_GOAL", INVALID_JOINTS: "INVALID_JOINTS",
         OLD_HEADER_TIMESTAMP: "OLD_HEADER_TIMESTAMP", PATH_TOLERANCE_VIOLATED: "PATH_TOLERANCE_VIOLATED",
         GOAL_TOLERANCE_VIOLATED: "GOAL_TOLERANCE_VIOLATED"}
#: the most characters of a name an error_string quotes
SHOWN = 64


class GoalError(ValueError):
    """A goal refused or aborted: `code` (a Result error code) and the error_string."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code

    def __reduce__(self):       # pickled with its code (it comes back from the heavy-request process)
        return type(self), (self.code, str(self))


def shown(name):
    """A name as an error_string quotes it: repr, cut to SHOWN characters."""
    text = str(name)
    return repr(text) if len(text) <= SHOWN else f"{text[:SHOWN]!r}... ({len(text)} characters)"
