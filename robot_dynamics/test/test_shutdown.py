"""The node stops cleanly on every signal: exit code 0, no traceback, within STOP_LIMIT, whenever the
signal comes (while its modules load, during rclpy's start, while the model loads, idle or under a
1 kHz joint_states stream) and however many come (a terminal's Ctrl-C under ros2 launch gives it
two SIGINTs: one from the terminal, one forwarded by launch).

Each run starts the installed executable (lib/robot_dynamics/dynamics_node, what ros2 run and ros2
launch start; `make` builds it into the workspace overlay) or `python -m robot_dynamics.ros`, waits until the process
catches SIGTERM (the first line of the node's code has run: before it, the interpreter starts and
the ROS wheels re-exec Python, and a signal then gets Python's default handling), waits a random
time (stratified: delays()), and signals it."""
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from rosnode import executable, rclpy

from robot_dynamics.resources import bundled_urdf
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

EXECUTABLE = executable("dynamics_node")
STOP_LIMIT = 3.0        # s from the (first) signal to the exit
MAX_DELAY = 1.5         # s after the node's code started: covers imports, rclpy.init, model loading, spinning
RUNS = 2                # per pattern, entry and traffic: their delays stratified over MAX_DELAY (delays())
PATTERNS = {            # name: signals, each (delay after the previous, signal)
    "SIGINT": [(0.0, signal.SIGINT)],
    "SIGTERM": [(0.0, signal.SIGTERM)],
    "two SIGINTs": [(0.0, signal.SIGINT), (0.03, signal.SIGINT)],
}
PUMA = bundled_urdf("puma560")
JOINTS = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]


def catches_sigterm(pid):
    """True once the process has a handler for SIGTERM (Python has none by default)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(caught & (1 << (signal.SIGTERM - 1)))


class Stream:
    """joint_states at ~1 kHz on a topic, from a thread of the test process."""

    def __init__(self, topic):
        self.node = rclpy.create_node(f"shutdown_stream_{os.getpid()}")
        self.pub = self.node.create_publisher(JointState, topic, rclpy.qos.qos_profile_sensor_data)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        msg = JointState(name=JOINTS, position=[0.1] * 6, velocity=[0.0] * 6)
        while self.running:
            self.pub.publish(msg)
            time.sleep(0.001)

    def close(self):
        self.running = False
        self.thread.join()
        self.node.destroy_node()


@pytest.fixture(scope="module")
def ros():
    rclpy.init()
    yield
    rclpy.shutdown()


def delays(rng, count):
    """`count` delays in 0..MAX_DELAY, one in each of `count` equal slices, in random order: the runs of
    one entry and traffic together reach every phase of the start, where plain random delays leave gaps
    by chance (4 of them per pattern did, with twice the node starts)."""
    width = MAX_DELAY / count
    return [(slot + rng.random()) * width for slot in rng.sample(range(count), count)]


def run_once(command, pattern, delay):
    """Start, wait for the node's code, wait `delay` s, signal; the exit code and output."""
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            end = time.monotonic() + 30.0
            while not catches_sigterm(process.pid) and process.poll() is None and time.monotonic() < end:
                time.sleep(0.002)
            assert process.poll() is None, "the node exited before it was signalled"
            time.sleep(delay)
            for pause, signum in PATTERNS[pattern]:
                time.sleep(pause)
                process.send_signal(signum)
            first = time.monotonic() - sum(pause for pause, _ in PATTERNS[pattern])
            try:
                code = process.wait(timeout=STOP_LIMIT + 5.0)
            except subprocess.TimeoutExpired:
                code = None
            took = time.monotonic() - first
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.seek(0)
        return code, took, log.read()


@pytest.mark.parametrize("traffic", [False, True], ids=["idle", "1 kHz joint_states"])
@pytest.mark.parametrize("entry", ["executable", "module"])
def test_every_signal_stops_the_node_cleanly(ros, entry, traffic):
    assert os.access(EXECUTABLE, os.X_OK), f"{EXECUTABLE} missing: `make` installs it"
    slots = iter(delays(random.Random(), RUNS * len(PATTERNS)))
    failures = []
    for k in range(RUNS):
        for pattern in PATTERNS:
            name = f"stop{os.getpid()}_{entry}_{int(traffic)}_{k}_{pattern.replace(' ', '')}"
            topic = f"/{name}/joint_states_in"
            program = [EXECUTABLE] if entry == "executable" else [sys.executable, "-m", "robot_dynamics.ros"]
            command = program + ["--ros-args", "-r", f"__node:={name}", "-r", f"joint_states:={topic}",
                                 "-p", f"urdf_file:={PUMA}"]
            stream = Stream(topic) if traffic else None
            try:
                delay = next(slots)
                code, took, output = run_once(command, pattern, delay)
            finally:
                if stream:
                    stream.close()
            if code != 0 or took > STOP_LIMIT or "Traceback" in output:
                failures.append(f"{pattern} {delay:.3f} s after start: exit code {code} after {took:.2f} s\n"
                                f"{output[-2000:]}")
    assert not failures, f"{len(failures)} of {RUNS * len(PATTERNS)} runs:\n" + "\n".join(failures)


def test_an_exit_that_hangs_is_ended_by_the_watchdog_with_every_stack():
    """main()'s cleanup starts exit_watchdog(): a process that then hangs (here: sleeps)
    exits with code 1 after EXIT_WATCHDOG s and prints where each thread was. Timed from the moment
    the child armed it (its imports take several seconds on a loaded machine)."""
    from robot_dynamics.ros.main import EXIT_WATCHDOG
    code = ("import time\nfrom robot_dynamics.ros.main import exit_watchdog\n"
            "exit_watchdog()\nprint(time.monotonic(), flush=True)\ntime.sleep(60)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=EXIT_WATCHDOG + 60)
    armed = float(result.stdout.split()[0])     # CLOCK_MONOTONIC: one clock for every process of the machine
    assert result.returncode == 1
    assert EXIT_WATCHDOG <= time.monotonic() - armed < EXIT_WATCHDOG + 10
    assert "most recent call first" in result.stderr and 'File "<string>", line 5' in result.stderr, result.stderr
