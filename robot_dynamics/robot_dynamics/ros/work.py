"""Heavy requests off the callback threads (no rclpy): `HeavyWork`, one worker thread and a bounded
queue, shared by every part of the node.

What is heavy: a request whose work grows with its fields (timing a path, checking a trajectory, an
IK search with restarts, identification, retiming a goal). Such a request must not delay the
joint_states path nor the other services: its handler submits the work here and waits for the
future without holding a callback thread (`awaitable`: an async rclpy handler on a reentrant callback
group; the executor is woken when the work is done, no polling).

    work = HeavyWork(name="heavy", capacity=2)      # one per node (the node's `work`), shared by parts
    future = work.submit(label, fn, *args)          # Busy(message) when full; fn runs on the worker
    work.close()                                    # at shutdown: pending futures cancelled, worker joined

Where a call runs is the caller's choice (`submit(..., process=True)`): requests whose work is Python
(identification's fits, the excitation search, the IK search's restarts) run in the node's child
process (worker.py's Worker, given as `worker`), where they cannot take the interpreter lock from the
joint_states thread (measured, bench_node.py --identify, panda at 1 kHz, identifications back to
back: 410-853 messages dropped in 10 s on the thread, 10-250 in the process). Requests whose work is
kernels that release the GIL and whose answers are large messages (TOPP-RA, checking a trajectory,
a goal's retiming) run on the thread, with no copies there and back: goals retimed in the process
measured the same as on the thread (bench_node.py --goals, within this VM's noise). Memory is
bounded by each service's limits on its request times `capacity`, and given back after each request
(malloc_trim).

The queue holds at most `capacity` requests accepted and not finished, the running one included;
beyond that `submit` raises Busy naming the label, the queue and its limit, at once (a client is
told, not kept waiting). One worker: on two cores, one core stays for joint_states and the
executors, and two heavy requests at once would only take turns on the other."""
import ctypes
import ctypes.util
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future

#: the interpreter's switch interval (s) while a HeavyWork exists: a thread waiting for the GIL asks
#: the one holding it to drop it after this long (Python's default is 5 ms; at 0.1 ms the threads
#: convoyed: bench_node.py --goals had stalls of 130 ms and 3x the drops)
SWITCH_INTERVAL = 0.001
#: at close, how long the worker process may take to end by itself before it is killed (s): a request
#: running there cannot be interrupted otherwise, and the node's exit watchdog (6 s) counts it (a
#: warm-up of the heavy parts still running at a load of 4 on 2 cores took the exit past it)
CLOSE_GRACE = 0.5


def _trim():
    """glibc's malloc_trim(0), or a no-op elsewhere: memory a heavy request freed goes back to the system
    (glibc raises its mmap threshold after a large array is freed, so the next ones come from the heap,
    which it keeps: 100 MB held after a fuzz of the largest requests without it)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return lambda _: 0


malloc_trim = _trim()


class Busy(RuntimeError):
    """A heavy request refused because the queue is full; str() is the message for the client."""


class HeavyWork:
    """One worker thread running submitted calls in order; at most `capacity` accepted and not finished.
    worker: a worker.Worker, the process the calls submitted with process=True run in, or None: every
    call on the thread itself."""

    def __init__(self, name="heavy", capacity=2, worker=None):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity!r}")
        self.name, self.capacity, self.worker = name, int(capacity), worker
        self._queue = deque()           # (label, future, fn, args, counted, in the process) waiting
        self._running = None            # the label of the call running, or None
        self._running_counted = False   # whether it counts against capacity (submit's counted)
        self._closed = False
        self._cv = threading.Condition()
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._work, name=f"{name} work", daemon=True)
        self._thread.start()

    def submit(self, label, fn, *args, counted=True, process=False):
        """A Future of fn(*args), run on the worker; Busy if `capacity` requests are queued or running,
        RuntimeError once closed. label names the request in errors (e.g. "~/time_parameterize").
        counted=False: not a request (the warm-up), never refused and not counted against `capacity`.
        process: run in the worker process (fn module-level, its arguments and result picklable), if
        the HeavyWork has one; else on the worker thread."""
        future = Future()
        with self._cv:
            if self._closed:
                raise RuntimeError(f"{label}: the node is shutting down (queue {self.name!r} closed)")
            queued = self._pending()
            if counted and queued >= self.capacity:     # those the caller cancelled while they waited do not count
                self._queue = deque(item for item in self._queue if not item[1].cancelled())
                queued = self._pending()
            if counted and queued >= self.capacity:
                raise Busy(f"{label}: busy: {queued} request{'s' if queued != 1 else ''} already queued "
                           f"(queue {self.name!r}, at most {self.capacity})")
            self._queue.append((label, future, fn, args, counted, process and self.worker is not None))
            self._cv.notify()
        return future

    def _pending(self):
        return sum(item[4] for item in self._queue) + self._running_counted

    def pending(self):
        """Requests accepted and not finished (the running one included)."""
        with self._cv:
            return self._pending()

    def running(self):
        """The label of the request running, or None."""
        with self._cv:
            return self._running

    def close(self, timeout=5.0):
        """Refuse new requests, cancel those waiting, end the worker process (killed if it has not ended
        within CLOSE_GRACE s: the request running there fails) and join the worker thread (waiting up to
        `timeout` s for a request running on it to finish; it cannot be interrupted). True if the
        thread has ended."""
        with self._cv:
            self._closed = True
            waiting, self._queue = list(self._queue), deque()
            self._cv.notify_all()
        for _, future, *_ in waiting:
            future.cancel()
        if self.worker is not None:         # the request running, if any, ends with its process
            self.worker.stop(min(timeout, CLOSE_GRACE))
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _work(self):
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                label, future, fn, args, counted, in_process = self._queue.popleft()
                if not future.set_running_or_notify_cancel():     # cancelled while waiting
                    continue
                self._running, self._running_counted = label, counted
            result = error = None
            try:
                result = self.worker.call(label, fn, args) if in_process else fn(*args)
            except BaseException as exc:    # noqa: B036 (given to the caller, never lost)
                error = exc
            del fn, args
            if not in_process:      # (the worker process trims its own heap)
                malloc_trim(0)
            with self._cv:      # finished before the caller hears of it: pending() and the queue's room agree
                self._running, self._running_counted = None, False
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
            del result, error


def warm_up(calls):
    """The heavy parts' warm-up calls [(name, fn, args)] (Part.heavy_warm), run where the heavy requests
    run: [(name, seconds, error text or "")]. A call that fails has compiled what it reached (the real
    call will say why)."""
    done = []
    for name, fn, args in calls:
        t = time.perf_counter()
        try:
            fn(*args)
            error = ""
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        done.append((name, time.perf_counter() - t, error))
    return done


class awaitable:
    """`await awaitable(future, wake)` in an async rclpy callback: the future's result (or its
    exception raised). rclpy's executor resumes a waiting coroutine each time it wakes up;
    `wake` (the executor's wake, node.executor.wake) is called when the future is done, from the
    worker thread, so the handler resumes at once and nothing polls. The callback must be in a
    reentrant callback group (else it holds the node's default group while it waits)."""

    def __init__(self, future, wake):
        self.future = future
        future.add_done_callback(lambda _: _wake(wake))

    def __await__(self):
        while not self.future.done():
            yield
        return self.future.result()


def _wake(wake):
    try:
        wake()
    except Exception:   # the executor is gone (shutdown): nobody waits any more
        pass
