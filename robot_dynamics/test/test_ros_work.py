"""The node's heavy-request queue without DDS (robot_dynamics.ros.work: no rclpy): calls run in order on
one worker thread, at most `capacity` accepted and not finished, refused beyond with the label, the
queue and its limit; close cancels what waits and joins the worker; `awaitable` hands the result to a
coroutine driven as rclpy's executor drives one, woken once when the work is done."""
import threading
import time

import pytest

from robot_dynamics.ros.work import Busy, HeavyWork, awaitable


@pytest.fixture
def work():
    w = HeavyWork(name="heavy", capacity=2)
    yield w
    w.close()


def test_calls_run_on_the_worker_in_order(work):
    seen = []
    futures = [work.submit(f"call {k}", lambda k=k: seen.append((k, threading.current_thread().name)) or k)
               for k in range(2)]
    assert [f.result(timeout=10) for f in futures] == [0, 1]
    assert seen == [(0, "heavy work"), (1, "heavy work")]
    assert work.pending() == 0


def test_full_queue_refuses_naming_label_queue_and_limit(work):
    gate = threading.Event()
    running = work.submit("~/time_parameterize", gate.wait, 10)
    waiting = work.submit("~/time_parameterize", lambda: "second")
    assert work.pending() == 2
    with pytest.raises(Busy) as refused:
        work.submit("~/check_trajectory", lambda: None)
    assert str(refused.value) == ("~/check_trajectory: busy: 2 requests already queued (queue 'heavy', at most 2)")
    gate.set()
    assert running.result(timeout=10) is True and waiting.result(timeout=10) == "second"
    assert work.submit("~/check_trajectory", lambda: 3).result(timeout=10) == 3     # room again


def test_the_warm_up_is_not_a_request_it_takes_no_room(work):
    gate = threading.Event()
    warm = work.submit("warm-up", gate.wait, 10, counted=False)
    deadline = time.monotonic() + 10
    while work.running() != "warm-up" and time.monotonic() < deadline:
        time.sleep(0.001)
    first, second = (work.submit("~/time_parameterize", lambda k=k: k) for k in (1, 2))
    assert work.pending() == 2 and work.running() == "warm-up"
    with pytest.raises(Busy):
        work.submit("~/check_trajectory", lambda: None)
    assert work.submit("warm-up", lambda: "again", counted=False)       # never refused
    gate.set()
    assert warm.result(timeout=10) is True and (first.result(timeout=10), second.result(timeout=10)) == (1, 2)


def test_an_error_goes_to_the_caller_and_the_worker_goes_on(work):
    def fails():
        raise ValueError("gridpoints must be at most 10000")
    with pytest.raises(ValueError, match="gridpoints"):
        work.submit("x", fails).result(timeout=10)
    assert work.submit("y", lambda: 1).result(timeout=10) == 1


def test_a_cancelled_request_does_not_run(work):
    gate, ran = threading.Event(), []
    first = work.submit("first", gate.wait, 10)
    second = work.submit("second", lambda: ran.append(1))
    assert second.cancel()
    third = work.submit("third", lambda: 3)        # the cancelled one's place
    gate.set()
    assert first.result(timeout=10) and third.result(timeout=10) == 3
    assert ran == [] and second.cancelled()


def test_close_cancels_waiting_joins_the_worker_and_refuses_after():
    work = HeavyWork(name="heavy", capacity=2)
    gate, started = threading.Event(), threading.Event()

    def first():
        started.set()
        return gate.wait(10)

    running = work.submit("first", first)
    waiting = work.submit("second", lambda: "never")
    assert started.wait(10)         # the worker has taken the first: close() must wait for it, not cancel it
    threading.Timer(0.05, gate.set).start()
    assert work.close(timeout=10)
    assert running.result(timeout=0) is True and waiting.cancelled()
    with pytest.raises(RuntimeError, match="shutting down .*'heavy'"):
        work.submit("third", lambda: None)


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity"):
        HeavyWork(capacity=0)


def drive(coroutine, woken):
    """Step a coroutine as rclpy's executor does (send(None) per wake-up) until it returns."""
    steps = 0
    while True:
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value, steps
        steps += 1
        assert woken.wait(10), "the executor was never woken"
        woken.clear()


@pytest.mark.parametrize("fails", [False, True])
def test_awaitable_wakes_the_executor_once_done(work, fails):
    gate, woken = threading.Event(), threading.Event()

    def compute():
        gate.wait(10)
        if fails:
            raise ValueError("too many points")
        return 42

    async def handler():
        try:
            return await awaitable(work.submit("~/check_trajectory", compute), woken.set)
        except ValueError as exc:
            return str(exc)

    coroutine = handler()
    coroutine.send(None)            # the first step submits and waits
    gate.set()
    assert woken.wait(10)
    woken.clear()
    result, _ = drive(coroutine, woken)
    assert result == ("too many points" if fails else 42)


def test_the_node_process_asks_openblas_for_one_thread_unless_the_user_set_it():
    from robot_dynamics.executables import one_blas_thread
    environ = {}
    one_blas_thread(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "1"}
    environ = {"OPENBLAS_NUM_THREADS": "4"}
    one_blas_thread(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "4"}


def test_the_kernels_heavy_requests_run_in_release_the_gil():
    """The batch drivers (every batched algorithm: TOPP-RA's and check_trajectory's inverse dynamics,
    the IK solve, the regressors), TOPP-RA's passes and the interpolation of many samples release the
    GIL (numba nogil), so the joint_states thread computes beside a heavy request; the single-state
    entry points of the joint_states path do not (a release per call would only cost it)."""
    from robot_dynamics.kernels import batch, interpolation, reachability, rnea
    released = [batch.rows, batch.in_lanes, reachability.first_bad_gridpoint, reachability.stage_rows,
                reachability.time_optimal, reachability.last_acceleration, reachability.assemble,
                interpolation.sample_rows, interpolation.first_bad]
    assert [f.__name__ for f in released if not f.targetoptions.get("nogil")] == []
    assert not rnea.rnea.targetoptions.get("nogil") and not interpolation.sample.targetoptions.get("nogil")


# --- the node's heavy-request process (robot_dynamics.ros.worker) ------------------------------------------
@pytest.fixture(scope="module")
def puma():
    from robot_dynamics import load_urdf
    return load_urdf("puma560")


@pytest.fixture
def worker():
    from robot_dynamics.model import Model
    from robot_dynamics.ros.worker import Worker
    w = Worker("heavy", shared=(Model,))
    yield w
    w.stop()


def test_a_call_runs_in_the_child_and_its_result_or_error_comes_back(worker, puma):
    import os

    import numpy as np

    from robot_dynamics import dynamics as rd
    from robot_dynamics.ros.follow_joint_trajectory.codes import GoalError
    assert worker.call("~/x", os.getpid, ()) == worker.pid != os.getpid()
    q = np.linspace(-1.0, 1.0, puma.nq)
    assert np.array_equal(worker.call("~/x", rd.gravity_torques, (puma, q)), rd.gravity_torques(puma, q))
    big = np.random.default_rng(0).normal(size=(30000, 7))       # arrays cross out of band, writable there
    assert worker.call("~/x", np.copyto, (big, 0.0)) is None and np.array_equal(worker.call("~/x", np.negative, (big,)),
                                                                                 -big)
    with pytest.raises(ValueError, match=r"q must have shape \(6,\)"):
        worker.call("~/x", rd.gravity_torques, (puma, q[:5]))
    with pytest.raises(GoalError, match="refused") as raised:      # the code comes back with it
        worker.call("~/x", exec, ("raise error", {"error": GoalError(-4, "refused")}))
    assert raised.value.code == -4


def test_a_shared_object_is_sent_once_and_kept(worker, puma):
    """The model crosses at its first call; later calls name it by a key (the child's object is the same
    one each time), and the child forgets the oldest beyond KEPT."""
    from robot_dynamics.ros import worker as module
    first = worker.call("~/x", id, (puma,))
    assert worker.call("~/x", id, (puma,)) == first and len(worker._keys) == 1
    import copy
    copies = [copy.deepcopy(puma) for _ in range(module.KEPT)]
    for m in copies:
        worker.call("~/x", id, (m,))
    assert len(worker._keys) == module.KEPT and worker._forget      # puma, the oldest, to be dropped
    assert worker.call("~/x", len, ([copies[-1]],)) == 1 and not worker._forget


def test_trajectories_cross_as_columns_and_come_back_equal(worker):
    import copyreg

    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from robot_dynamics.ros import worker as module
    points = [JointTrajectoryPoint(positions=[0.1 * k, 2.0], velocities=[1.0, -1.0] if k else [], effort=[3.0, 4.0])
              for k in range(3)]
    points[2].time_from_start.sec, points[2].time_from_start.nanosec = 7, 5
    trajectory = JointTrajectory(joint_names=["a", "b"], points=points)
    trajectory.header.frame_id = "world"
    assert copyreg.dispatch_table[JointTrajectory] is module._reduce_trajectory
    assert worker.call("~/x", list, ([trajectory, JointTrajectory()],)) == [trajectory, JointTrajectory()]


def test_the_child_runs_at_its_niceness_and_ignores_sigint(monkeypatch, worker):
    import os
    import signal
    import time
    monkeypatch.setenv("ROBOT_DYNAMICS_HEAVY_NICE", "7")
    assert worker.call("~/x", os.nice, (0,)) == os.nice(0) + 7 or os.nice(0) + 7 > 19
    os.kill(worker.pid, signal.SIGINT)      # a terminal's Ctrl-C: the node stops the child, not the signal
    time.sleep(0.2)
    assert worker.call("~/x", os.getpid, ()) == worker.pid


def test_by_default_the_child_runs_at_niceness_10(monkeypatch, worker):
    import os
    monkeypatch.delenv("ROBOT_DYNAMICS_HEAVY_NICE", raising=False)
    assert worker.call("~/x", os.nice, (0,)) == min(19, os.nice(0) + 10)
    assert worker.call("~/x", os.sched_getscheduler, (0,)) == os.SCHED_OTHER


@pytest.mark.parametrize("value", ["20", "-1", "ten"])
def test_a_bad_niceness_is_refused_naming_the_variable(monkeypatch, worker, value):
    import os
    monkeypatch.setenv("ROBOT_DYNAMICS_HEAVY_NICE", value)
    with pytest.raises(ValueError, match=f"ROBOT_DYNAMICS_HEAVY_NICE must be an integer 0 to 19, got '{value}'"):
        worker.call("~/x", os.getpid, ())


def test_a_child_that_dies_fails_its_request_and_the_next_starts_a_new_one(worker, puma):
    import os

    from robot_dynamics.ros.worker import WorkerDied
    first = worker.call("~/x", os.getpid, ())
    worker.call("~/x", id, (puma,))
    with pytest.raises(WorkerDied, match=r"~/x: the worker process ended while it ran \(exit code 3\)"):
        worker.call("~/x", os._exit, (3,))
    assert worker.pid is None and not worker._keys     # what it held is forgotten, sent again
    assert worker.call("~/x", os.getpid, ()) != first
    assert worker.call("~/x", len, ([puma],)) == 1


PREFORK = r"""
import os, signal, sys, time
from robot_dynamics.ros import prefork as module
from robot_dynamics.ros.worker import WorkerDied
os.environ.pop("ROBOT_DYNAMICS_HEAVY_NICE", None)
child = module.prefork()
assert child and module.threads() == 1, (child, module.threads())    # forked before any thread exists
import rclpy                                            # what the node loads next: its threads are not the child's
w = module.heavy_worker(())
assert w.call("x", os.getpid, ()) == child == w.pid     # the first start takes the forked child
assert w.call("x", os.getppid, ()) == os.getpid()
assert w.call("x", os.nice, (0,)) == min(19, os.nice(0) + 10)
assert w.call("x", eval, ("'robot_dynamics.dynamics' in __import__('sys').modules",))   # the library, loaded
assert not w.call("x", eval, ("'rclpy' in __import__('sys').modules",))  # not what was loaded after the fork
os.kill(child, signal.SIGINT)                           # ignored, as the spawned child does
time.sleep(0.2)
assert w.call("x", os.getpid, ()) == child
try:
    w.call("x", os._exit, (3,))
except WorkerDied as exc:
    assert "(exit code 3)" in str(exc), exc
else:
    raise AssertionError("a child that died was not reported")
again = w.call("x", os.getpid, ())                      # a later start runs a new interpreter
assert again != child and w._proc.__class__.__name__ == "Popen", w._proc
w.stop()
print("ok")
"""


def test_the_nodes_first_child_is_forked_before_rclpy_loads_and_serves_as_a_spawned_one():
    """dynamics_node forks the heavy-request child before it imports rclpy (prefork.py): the child
    has the library loaded, its niceness, ignores SIGINT, and a child that dies is replaced by a spawned
    one. A process with another thread does not fork (the test process has pytest-xdist's)."""
    import os
    import subprocess
    import sys

    from robot_dynamics.ros import prefork as module
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")     # as the node sets it (executables.one_blas_thread)
    out = subprocess.run([sys.executable, "-c", PREFORK], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
    import threading
    started = threading.Event()
    t = threading.Thread(target=started.wait, daemon=True)
    t.start()
    try:
        assert module.prefork() is None and module._FORKED is None
    finally:
        started.set()
        t.join()


def test_close_stops_the_child_and_the_request_it_ran():
    import os
    import time

    from robot_dynamics.ros.worker import Worker, WorkerDied
    work = HeavyWork(name="heavy", capacity=2, worker=Worker("heavy"))
    assert work.submit("~/x", os.getpid).result(30) == os.getpid()        # on the thread unless asked
    pid = work.submit("~/x", os.getpid, process=True).result(30)
    assert pid != os.getpid()
    running = work.submit("~/sleep", time.sleep, 60, process=True)
    time.sleep(0.5)
    assert work.close(timeout=2.0)
    with pytest.raises(WorkerDied, match="~/sleep"):
        running.result(5)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_every_features_configuration_crosses_to_the_child_and_computes_the_same():
    """The configuration is pickled to the heavy-request process (the model by key inside it): every
    feature's settings must be (no lambdas); friction compensation computes the same there."""
    import numpy as np

    from robot_dynamics.model import Model
    from robot_dynamics.resources import bundled_urdf
    from robot_dynamics.ros import friction as compensation
    from robot_dynamics.ros.config import Config
    from robot_dynamics.ros.worker import Worker
    from rosconfig import configured, params
    puma, biped, five_bar = (bundled_urdf(name) for name in ("puma560", "floating_base_biped", "five_bar"))
    configs = [configured(puma, urdf_file=puma, payload__mass=1.0, payload__link="link6",
                          drive_compensates_gravity=True),
               configured(biped, urdf_file=biped, floating_base=True, contacts__frames=["left_sole", "right_sole"],
                          contacts__kind="6d"),
               configured(five_bar, urdf_file=five_bar, loops=["end_effector right_distal_tip 6d"],
                          actuated_joints=["left_base_joint", "right_base_joint"])]
    friction = configured(puma, urdf_file=puma)
    friction.model.friction = np.c_[np.linspace(2.0, 0.4, 6), np.linspace(3.0, 0.6, 6), np.linspace(0.8, -0.3, 6)]
    friction.friction = compensation.settings(params(friction__compensate_gravity="viscous"), friction)["friction"]
    worker = Worker("heavy", shared=(Model, Config))
    try:
        for config in configs:
            assert worker.call("~/x", getattr, (config, "joints")) == config.joints
        v = np.array([0.3, -0.2, 0.005, 1.0, -1.0, 0.0])
        for law in (friction.friction.feedforward, friction.friction.gravity):
            assert np.array_equal(worker.call("~/x", law, (v,)), law(v))
    finally:
        worker.stop()
