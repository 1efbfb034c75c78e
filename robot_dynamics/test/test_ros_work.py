"""The node's heavy-request queue without DDS (robot_dynamics.ros.work: no rclpy): calls run in order on
one worker thread, at most `capacity` accepted and not finished, refused beyond with the label, the
queue and its limit; close cancels what waits and joins the worker; `awaitable` hands the result to a
coroutine driven as rclpy's executor drives one, woken once when the work is done."""
import threading

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
