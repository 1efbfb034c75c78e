"""The node's process: signals, the two executors and their threads, a clean exit every time.

Run the node with the `dynamics_node` executable (ros2 run robot_dynamics dynamics_node) or
`python -m robot_dynamics.ros`; both catch a signal from their first lines on.
"""
import faulthandler
import signal
import threading
from contextlib import contextmanager

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from .node import DynamicsNode
from .parameters import StartupError

JOIN_TIMEOUT = 5.0      # s to wait for the joint_states thread at exit (it is woken; it never took long)
#: s from the start of the cleanup to a forced exit (`exit_watchdog`)
EXIT_WATCHDOG = 6.0


class StopSignals:
    """SIGINT and SIGTERM, from main()'s first line to its return, as one request to stop.

    The first signal raises KeyboardInterrupt in the main thread while armed (the main executor spins
    there; rclpy's handler, which is chained after this one, wakes the executors so that the main
    thread gets to run it). Before that (start-up, model loading) it is only recorded, and main()
    stops before spinning. Every later signal is ignored: a terminal's Ctrl-C signals the whole
    process group and ros2 launch forwards one more SIGINT, and the second must not interrupt the
    cleanup. Before main(), a signal ends the process at once (robot_dynamics/executables.py)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.received = []
        self.armed = False
        for signum in self.SIGNALS:
            signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        self.received.append(signum)
        if self.armed and len(self.received) == 1:
            self.armed = False
            raise KeyboardInterrupt

    def ignore(self):
        """From now on ignore SIGINT and SIGTERM at the OS level: the process is ending, and Python's
        finalisation would put back their default handlers (a late second Ctrl-C would then kill it
        with SIGINT instead of letting it exit 0)."""
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)

    @contextmanager
    def raising(self):
        """Within: the first signal raises KeyboardInterrupt (at once, if one came already)."""
        self.armed = True
        try:
            if self.received:
                raise KeyboardInterrupt
            yield
        finally:
            self.armed = False


def exit_watchdog():
    """The process is ending: if it has not exited within EXIT_WATCHDOG s, print every thread's
    stack to stderr and exit with code 1. The cleanup and exit take ~0.3 s (under 1 s with every
    core busy); once in several hundred signalled stops of test_shutdown (under heavy load, not
    reproduced in 170 tries since) the node did not exit within 8 s: never hang, say where."""
    faulthandler.dump_traceback_later(EXIT_WATCHDOG, exit=True)


def _spin_joint_states(executor, main_executor, failure):
    """The joint_states thread. An error in it stops the main executor too; main() raises it."""
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
    except Exception as exc:
        failure.append(exc)
        main_executor.shutdown(timeout_sec=0)


def _startup_hint(text):
    if "Sequence should be of same type" in text:
        return (" (rcl reads each list of a parameter file or -p override as one type: write every number "
                "of a list of floats with a decimal point, e.g. [0.0, 0.0, -9.81], not [0, 0, -9.81])")
    return ""


def main(args=None):
    """Run the node until SIGINT or SIGTERM: exit code 0, or 1 if it cannot start as configured."""
    stop = StopSignals()     # before rclpy.init: rclpy chains its handler to these
    logger = rclpy.logging.get_logger("robot_dynamics")
    try:
        rclpy.init(args=args)
    except Exception as exc:    # e.g. a parameter file rcl cannot read: rcl said why, add what to do
        text = str(exc)
        logger.fatal(f"cannot start: {text}{_startup_hint(text)}")
        stop.ignore()
        return 1
    # the executors before the node: a signal during start-up then finds them whole
    executor, joint_states_executor = SingleThreadedExecutor(), SingleThreadedExecutor()
    node, failure, code = None, [], 0
    thread = threading.Thread(target=_spin_joint_states, args=(joint_states_executor, executor, failure),
                              name="joint_states", daemon=True)
    try:
        if not stop.received:
            node = DynamicsNode(interrupted=lambda: bool(stop.received))
            joint_states_executor.add_node(node.joint_states_node)
            thread.start()
            executor.add_node(node)
            with stop.raising():
                executor.spin()
            if failure:
                raise failure[0]
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except StartupError as exc:
        if not stop.received:
            logger.fatal(f"cannot start: {exc}")
            code = 1
    except Exception:
        if not stop.received:    # else a signal during start-up shut the context down under it
            raise
    finally:
        stop.armed = False
        exit_watchdog()
        # shutdown first: it joins rclpy's signal thread, which triggers every executor's SIGINT
        # guard condition unsynchronised (destroying one under it crashed ~1 exit in 10). That thread
        # wakes the executors *before* it shuts the context down, and then nobody wakes them: wake
        # the joint_states executor here (it has no timer), so that it sees the context down
        rclpy.try_shutdown()
        joint_states_executor.wake()
        if thread.is_alive():
            thread.join(JOIN_TIMEOUT)
            if thread.is_alive():
                logger.error(f"the joint_states thread did not stop within {JOIN_TIMEOUT} s")
        executor.shutdown()
        joint_states_executor.shutdown()
        if node is not None:
            node.destroy_node()
        stop.ignore()
    return code
