"""The package's executables (`ros2 run robot_dynamics <name>`, console scripts in
lib/robot_dynamics): the node and the demo programs.

Each takes SIGINT and SIGTERM before it imports anything heavy: a signal that comes before its
program's main() takes them over (during the second or so of imports: numpy, numba, rclpy, MuJoCo;
several seconds on a loaded machine) ends the process at once, with the code the program gives a
stop (0 for the node and the simulators, 130 / 143 for the demos), since nothing has started yet
(no node, no child process, no file). Waiting for the imports instead made a stop take as long as
they did (3.6-4.9 s at a load average of 10 on 2 cores), and a KeyboardInterrupt raised inside one
of them may be lost (in an extension module's initialisation it becomes ImportError, which a
library may swallow). Only the interpreter's start and the script wrapper's own lookup of this
entry point (~50 ms) come before it. This module and the package's __init__ import nothing but the
standard library for that reason.
"""
import importlib
import os
import signal
import sys


def _stopped(signum):
    return 0


def _interrupted(signum):
    """A demo's stop (demo/interrupt.py): said, and the shell's code, 130 for SIGINT, 143 for SIGTERM."""
    os.write(1, b"\ninterrupted: before the demo started anything\n")
    return 128 + signum


def _run(module, exit_code=_stopped, before=None):
    """main() of `module`; until it takes the signals over, a signal exits at once with exit_code(signum).
    When main() returns, everything it started is stopped (threads joined, nodes destroyed, child
    processes ended, files closed), and the process exits right after flushing its output: the
    interpreter's finalisation (freeing the ~150000 objects of numba, llvmlite and rclpy) took 0.45 s
    of CPU after every stop of the node, 2 s at a load average of 10 on 2 cores. before: called first,
    under the same signal handling (the node's heavy-request child forked: ros/prefork.py)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, frame: os._exit(exit_code(signum)))
    if before is not None:
        before()
    code = importlib.import_module(module).main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def one_blas_thread(environ=os.environ):
    """OPENBLAS_NUM_THREADS=1 unless the user set it: read once, when numpy loads OpenBLAS, so before
    any import of numpy. The node's numerical work is numba's (one thread per call below a batch of
    64) and small dense algebra; OpenBLAS' threads spinning beside the joint_states thread on 2 cores
    made a 480 x 50 SVD take 0.57 s instead of 1 ms."""
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def dynamics_node():
    """The dynamics node (robot_dynamics.ros.main), its heavy-request child forked first (before rclpy
    loads and starts threads: ros/prefork.py)."""
    one_blas_thread()
    return _run("robot_dynamics.ros.main", before=_fork_heavy_child)


def _fork_heavy_child():
    importlib.import_module("robot_dynamics.ros.prefork").prefork()


def sim_arm():
    """The demo's simulated arm (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_arm")


def closed_loop_demo():
    """The closed-loop demo: node + simulated arm, table and plot."""
    return _run("robot_dynamics.demo.closed_loop_demo", _interrupted)


def sim_legged():
    """The legged demo's simulated robot (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_legged")


def legged_demo():
    """The legged demo: node + simulated solo12 standing, table and plot."""
    return _run("robot_dynamics.demo.legged_demo", _interrupted)


def sim_five_bar():
    """The five-bar demo's simulated parallel robot (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_five_bar")


def five_bar_demo():
    """The five-bar demo: node + simulated five-bar (closed loop), table and plot."""
    return _run("robot_dynamics.demo.five_bar_demo", _interrupted)


if __name__ == "__main__":      # python -m robot_dynamics.executables <name> [--ros-args ...]
    name = sys.argv.pop(1)
    sys.exit(globals()[name]())
