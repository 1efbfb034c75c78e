"""The node's heavy-request child forked at the process's start, before rclpy loads (worker.py's child,
without a new interpreter importing the library again).

    prefork()                                  # executables.dynamics_node, before it imports rclpy
    worker = heavy_worker((Model, Config))     # node.py: a Worker whose first child is that one

A spawned child (`python -m robot_dynamics.ros.worker`) imports numpy, numba, scipy and the library
and loads numba's code generators before its first request: ~1.7 s of CPU, measured here, for a child
that then spends ~0.2 s loading the heavy requests' compiled kernels. The node loads all of that too,
so `prefork` loads it first and forks: the child starts with it (~0.2 s of CPU in all, and ready ~1 s
sooner). Only a process with a single thread forks (the node's before rclpy, whose import starts two
threads, and with OPENBLAS_NUM_THREADS=1, which the node sets): another thread could hold a lock the
child would then wait on forever. Elsewhere, and for every later start of a child (after one died),
the Worker spawns one as before.
"""
import os
import signal
import subprocess
import sys
import time
import traceback

from .worker import Worker, batch_threads, main, niceness

#: the child `prefork` started, until `heavy_worker` takes it
_FORKED = None


def threads():
    """The threads of this process (0 where /proc does not say)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


class Forked:
    """A child made by `prefork`, with the part of subprocess.Popen's interface Worker uses."""

    def __init__(self, pid, stdin, stdout):
        self.pid, self.stdin, self.stdout, self.returncode = pid, stdin, stdout, None

    def poll(self):
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:       # reaped by someone else: ended, how is unknown
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self):
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


def prefork():
    """Fork the heavy-request child now, if this process has a single thread, after importing the
    library and loading numba's code generators (see the module docstring). Returns the child's pid, or
    None where it does not fork (another thread, no fork, an invalid niceness: the first request then
    says why, as a spawned child's does)."""
    global _FORKED
    if _FORKED is not None or not hasattr(os, "fork") or threads() != 1:
        return None
    try:
        niceness()
    except ValueError:
        return None
    from numba.core.registry import cpu_target    # noqa: PLC0415 (loaded by the node anyway)

    import robot_dynamics.dynamics                 # noqa: F401, PLC0415
    cpu_target.target_context.refresh()
    if threads() != 1:
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    from_parent, to_child = os.pipe()      # the requests
    from_child, to_parent = os.pipe()      # the answers
    pid = os.fork()
    if pid == 0:                # the child: never returns into the caller
        code = 1
        try:
            os.close(to_child)
            os.close(from_child)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)   # the caller's handlers are not the child's
            os.environ.setdefault("ROBOT_DYNAMICS_THREADS", batch_threads())    # as a spawned child's
            code = main(inp=os.fdopen(from_parent, "rb"), out=os.fdopen(to_parent, "wb"))
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code or 0)
    os.close(from_parent)
    os.close(to_parent)
    _FORKED = Forked(pid, os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb"))
    return pid


def heavy_worker(shared):
    """The node's Worker ("heavy", sharing objects of the types `shared`): its first child the one
    `prefork` forked, if any."""
    global _FORKED
    first, _FORKED = _FORKED, None
    return Worker("heavy", shared=shared, first=first)
