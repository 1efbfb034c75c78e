"""The closed-loop demo, shortened: scenario 1 (the node's gravity compensation holds the simulated
arm, zero efforts let it fall) over real DDS with the processes `make demo` starts, and Ctrl-C.
conftest.py gives the session a random ROS_DOMAIN_ID on localhost; no spawned process may outlive
its test."""
import importlib.util
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from rosnode import executable

from robot_dynamics import dynamics as rd
from robot_dynamics.urdf import load_urdf

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

HOLD_TIME = 1.0        # s of sim time per run (make demo: 5 s)
HOLD_TOLERANCE = 1e-3  # rad, per joint (the target for the 5 s hold)
FALL_MINIMUM = 0.1     # rad: the falling baseline leaves the start pose by far more than the hold
LAUNCH_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "launch", "demo.launch.py")


@pytest.fixture
def spawned(monkeypatch):
    """Every process started through subprocess.Popen during the test; all must have exited."""
    processes = []

    class RecordingPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            processes.append(self)

    monkeypatch.setattr(subprocess, "Popen", RecordingPopen)
    yield processes
    assert processes and all(process.poll() is not None for process in processes)


@pytest.fixture
def ros():
    rclpy = pytest.importorskip("rclpy")
    rclpy.init()
    yield
    rclpy.shutdown()


def test_gravity_compensation_holds_the_arm_that_otherwise_falls(ros, spawned):
    from robot_dynamics.demo import closed_loop_demo as demo  # imports rclpy

    model = load_urdf(demo.URDF)
    kp, kd = demo.pd_gains(model)
    hold, fall = (demo.record(run, model, kp, kd) for run in demo.scenario_runs(hold_time=HOLD_TIME)[:2])
    hold_drift, fall_drift = (np.abs(rec.error).max(axis=0) for rec in (hold, fall))
    assert hold.t[-1] >= HOLD_TIME and fall.t[-1] >= HOLD_TIME
    assert hold.t[0] == 0.0, "the recording must start with the loop"
    assert np.all(hold_drift < HOLD_TOLERANCE), hold_drift
    assert fall_drift.max() > FALL_MINIMUM, fall_drift
    np.testing.assert_allclose(hold.effort[-1], rd.gravity_torques(model, hold.q[-1]), atol=1e-6)
    ours = [p.args[2] for p in spawned if p.args[1:2] == ["-m"]]   # not matplotlib's first-run fc-list
    assert ours == ["robot_dynamics.demo.sim_arm", "robot_dynamics.ros", "robot_dynamics.demo.sim_arm"], ours


def test_an_unknown_payload_is_identified_and_the_hold_then_drifts_ten_times_less(ros, spawned):
    """Scenario 3 shortened: 1 s holds, 2 s of wrist moves (make demo: 3 s and 3.75 s)."""
    from robot_dynamics.demo import external_demo as demo  # imports rclpy

    scenario = demo.payload_scenario(hold_time=1.0, segment=0.5)
    f = demo.payload_figures(scenario)
    targets = demo.TARGETS
    assert scenario.identify.identified.applied and scenario.identify.identified.method == "momentum"
    assert abs(f["mass_error"]) < targets["mass"], f["mass"]
    assert f["com_error"] < targets["com"], f["com"]
    assert f["ratio"] >= targets["drift_ratio"], (f["before"], f["after"])
    assert scenario.identify.payload["payload.mass"] == f["mass"]       # the node applied it
    assert np.allclose(scenario.identify.payload["payload.com"], f["com"])


def test_a_push_is_flagged_at_once_and_its_force_estimated_and_never_flagged_without_it(ros, spawned):
    """Scenario 4 shortened: the first second of the move, a push from 0.3 s for 0.5 s (make demo:
    the whole 2.5 s, a push of 1 s)."""
    from robot_dynamics.demo import external_demo as demo  # imports rclpy

    scenario = demo.push_scenario(run_time=1.0, start=0.3, duration=0.5)
    f = demo.push_figures(scenario)
    assert f["early_flags"] == 0 and 0 <= f["latency"] <= demo.TARGETS["latency"], f
    assert f["error_max"] <= demo.TARGETS["wrench"], f["error_max"]
    # every state the loop answered had its observer outputs first (all but the run's last state)
    assert f["free_flags"] == 0 and f["free_samples"] >= len(scenario.free.t) - 1, f
    assert f["free_r"].max() < demo.CONTACT_THRESHOLD / 3, f["free_r"]


def test_contact_consistent_gravity_holds_the_standing_quadruped_that_otherwise_collapses(ros, spawned):
    """The legged demo shortened: solo12 standing in MuJoCo for 1 s on the node's contact-consistent
    gravity torques, and on its plain (base-held) gravity torques (make demo-legged: 5 s each, and
    zero efforts)."""
    from robot_dynamics.demo import legged_demo as demo  # imports rclpy
    from robot_dynamics.demo.solo12 import FEET, solo12_files, srdf_posture

    urdf, srdf = solo12_files()
    model = load_urdf(urdf, floating_base=True)
    posture, root = srdf_posture(srdf)
    contacts, plain = (demo.record(run, urdf, list(model.joint_names), posture, root)
                       for run in demo.runs(hold_time=1.0)[:2])
    assert contacts.t[-1] >= 1.0 and plain.t[-1] >= 1.0
    assert contacts.drift < demo.DRIFT_TARGET, contacts.drift
    assert plain.drift > 10 * demo.DRIFT_TARGET and plain.height_change < -5 * demo.DRIFT_TARGET, plain.drift
    # what the robot got is what contact inverse dynamics gives for where it stands
    q = np.concatenate((contacts.position[-1], contacts.quaternion[-1], contacts.q[-1]))
    tau, forces = rd.contact_inverse_dynamics(model, q, 0, 0, [(foot, "point") for foot in FEET])
    np.testing.assert_allclose(contacts.effort[-1], tau[6:], atol=1e-3)
    assert contacts.contact_forces and np.allclose(np.sum(contacts.contact_forces[-1][1], axis=0),
                                                   [0.0, 0.0, model.total_mass * 9.81], atol=1e-3)
    ours = [p.args[2] for p in spawned if p.args[1:2] == ["-m"]]
    assert ours == ["robot_dynamics.demo.sim_legged", "robot_dynamics.ros"] * 2, ours


def command_line(pid):
    """Process pid's command line (Linux /proc), None once it has exited."""
    try:
        with open(f"/proc/{pid}/cmdline") as cmdline:
            return cmdline.read().replace("\0", " ")
    except (FileNotFoundError, ProcessLookupError):
        return None


def children_of(pid):
    """Live child processes of pid (Linux /proc), as {pid: command line}."""
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):   # exited meanwhile
            continue
        command = command_line(entry)
        if int(fields[1]) == pid and fields[0] != "Z" and command is not None:
            children[int(entry)] = command
    return children


EXECUTABLE = executable("closed_loop_demo")


def interrupted_demo(command, signal_after):
    """Run the demo, send it SIGINT once signal_after(pid) returns, and return (exit code, output,
    the children it had then, its children left 15 s later)."""
    demo = subprocess.Popen(command + ["--output", os.devnull], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    children = {}
    try:
        signal_after(demo.pid)
        children = children_of(demo.pid)
        demo.send_signal(signal.SIGINT)
        output = demo.communicate(timeout=15)[0].decode()
        left = [pid for pid in children if os.path.exists(f"/proc/{pid}")]
    finally:    # on a failure too, nothing outlives the test (a child is killed only if its pid is still it)
        children.update(children_of(demo.pid))
        demo.kill()
        demo.wait()
        for pid, command in children.items():
            if command_line(pid) == command:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    return demo.returncode, output, children, left


def test_ctrl_c_stops_the_demo_and_every_process_it_started():
    def once_the_arm_runs(pid):     # sim_arm's own child: not the helper process `import mujoco` starts
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any("robot_dynamics.demo.sim_arm" in command for command in children_of(pid).values()):
                time.sleep(1.0)
                return
            time.sleep(0.1)
        raise AssertionError("the demo started no sim_arm")

    code, output, children, left = interrupted_demo([sys.executable, "-m", "robot_dynamics.demo.closed_loop_demo"],
                                                    once_the_arm_runs)
    assert code == 130, output
    assert "interrupted" in output and "Traceback" not in output, output
    assert any("robot_dynamics.demo.sim_arm" in command for command in children.values()), children
    assert not left, output


def loading_modules(pid, timeout=30.0):
    """Until numpy's core is mapped into process pid: the executable's first lines have run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/maps") as maps:
            if "_multiarray_umath" in maps.read():
                return
        time.sleep(0.002)
    raise AssertionError("the demo loaded no module")


@pytest.mark.parametrize("delay", [0.0, 0.2, 0.4, 0.6, 0.8, 1.1, 1.5])
def test_ctrl_c_while_the_demo_starts_is_never_lost(delay):
    """From the executable's first line on (ros2 run, make demo): a Ctrl-C while modules load (one
    inside `import mujoco` used to be swallowed by its `except ImportError`, and the demo ran on)
    or processes start stops the demo at once, cleanly."""
    def after_delay(pid):
        loading_modules(pid)
        time.sleep(delay)

    code, output, _, left = interrupted_demo([sys.executable, EXECUTABLE], after_delay)
    assert code == 130, output
    assert "interrupted" in output and "Traceback" not in output, output
    assert not left, output


def test_launch_file_starts_the_demo_setup():
    """launch/demo.launch.py against the real launch_ros API (ROS installs only)."""
    launch_ros = pytest.importorskip("launch_ros")
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument

    from robot_dynamics.demo import closed_loop_demo as demo  # imports rclpy

    spec = importlib.util.spec_from_file_location("demo_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    arguments = {a.name: a for a in description.entities if isinstance(a, DeclareLaunchArgument)}
    sim, node = [e for e in description.entities if isinstance(e, launch_ros.actions.Node)]
    assert (sim.node_executable, node.node_executable) == ("sim_arm", "dynamics_node")

    context = LaunchContext()
    context.launch_configurations.update(urdf_file=demo.URDF, controller=demo.CONTROLLER)
    for name in ("initial_positions", "lockstep"):
        default = arguments[name].default_value
        context.launch_configurations[name] = "".join(part.perform(context) for part in default)
    initial_positions = yaml.safe_load(context.launch_configurations["initial_positions"])
    assert np.array_equal(initial_positions, demo.START_POSE)
    assert context.launch_configurations["lockstep"] == "true"
    node._perform_substitutions(context)
    remappings = [tuple(rule) for rule in node.expanded_remapping_rules]
    assert remappings == [("~/gravity_commands", "/effort_controller/commands")]
