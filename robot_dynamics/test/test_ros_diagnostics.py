"""/diagnostics without DDS (robot_dynamics.ros.diagnostics: no rclpy): the status "dynamics" of a period."""
from robot_dynamics.ros.diagnostics import period_stats, summary


def test_diagnostics_say_stale_input_and_the_names_that_came():
    stats = period_stats()
    level, message, values = summary(stats, 1.0, "puma560", ["joint1"], "", "", "", ["finger"])
    assert level == "WARN" and message == "waiting for joint_states of ['joint1']; joint_states came naming none " \
                                          "of them: ['finger']" and values["joint_states names not in the model"] == "finger"
    level, message, values = summary(stats, 1.0, "puma560", [], "", "", "no joint_states for 2 s")
    assert (level, message, values["stale input"]) == ("WARN", "stale input: no joint_states for 2 s",
                                                       "no joint_states for 2 s")
    assert summary(stats, 1.0, "puma560", [], "", "")[:2] == ("OK", "serving")
