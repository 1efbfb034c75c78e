import os
import random
import sys

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# DDS isolation for every ROS test of this session (and the processes they start)
os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_terminal_summary(terminalreporter):
    """The real URDFs that Pinocchio refuses, with what our loader says of each (test_robot_sweep)."""
    sweep = sys.modules.get("test_robot_sweep")
    refused = getattr(sweep, "REFUSED_BY_PINOCCHIO", None)
    if refused:
        terminalreporter.section("URDFs that Pinocchio refuses")
        for path, what in sorted(refused.items()):   # example-robot-data's, then pybullet_data/...
            terminalreporter.write_line(f"{path}: {what}")


@pytest.fixture(scope="module")
def client():
    """A test client node over DDS (rosnode.Client) for a module's ROS tests; at the end every
    node process the module started is stopped (rosnode.stop_all)."""
    from rosnode import Client, rclpy, stop_all    # noqa: PLC0415 (the library tests run without ROS)
    rclpy.init()
    c = Client()
    yield c
    c.close()
    stop_all()
    rclpy.shutdown()
