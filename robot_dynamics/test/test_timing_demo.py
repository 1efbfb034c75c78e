"""The timing demo's three timings of its path (demo/timing_demo.py, make demo-timing), without the
simulation: (a) within the light payload's effort limits but beyond the 3 kg arm's, (b) the node's
timing (the library's, interpolation scheme) and (c) within EFFORT_SCALE of the limits, (b) faster
than (c): what the demo's table shows in closed loop."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd

demo = pytest.importorskip("robot_dynamics.demo.timing_demo")      # rclpy, matplotlib


def test_the_three_timings():
    heavy, light = demo.arm(demo.PAYLOAD["payload.mass"]), demo.arm(demo.LIGHT)
    path = rd.path_through_waypoints(demo.WAYPOINTS, demo.GRIDPOINTS)
    t_a, q_a, v_a, a_max = demo.uniform_timing(path, light)
    assert np.all(demo.WAYPOINTS >= light.lower_limits) and np.all(demo.WAYPOINTS <= light.upper_limits)
    assert demo.peak_ratio(light, t_a, q_a, v_a, light.effort_limits) <= 1.0
    assert demo.peak_ratio(heavy, t_a, q_a, v_a, heavy.effort_limits) > 1.1          # the 3 kg arm saturates
    limits = demo.EFFORT_SCALE * heavy.effort_limits
    tp = rd.time_parameterize(heavy, *path, effort_limits=limits, discretization="interpolation")
    assert demo.peak_ratio(heavy, tp.t, tp.q, tp.v, limits) <= 1.01     # cubic segments between gridpoints
    t_c, q_c, v_c, k = demo.slowed(heavy, t_a, q_a, v_a)
    assert k > 1.0 and demo.peak_ratio(heavy, t_c, q_c, v_c, limits) <= 1.0
    assert tp.duration < 0.9 * t_c[-1] and a_max < 200.0
