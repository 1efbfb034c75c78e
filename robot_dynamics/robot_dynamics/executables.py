"""The package's executables (`ros2 run robot_dynamics <name>`, console scripts in
lib/robot_dynamics): the node and the demo programs.

Each records SIGINT and SIGTERM before it imports anything heavy, and hands what came to its
program's main(): a Ctrl-C during the second or so of imports (numpy, numba, rclpy, MuJoCo) must not
raise KeyboardInterrupt inside one of them (a KeyboardInterrupt in an extension module's
initialisation becomes ImportError, which a library may swallow: the program then ran on). Only
the interpreter's start and the script wrapper's own lookup of this entry point (~50 ms) come before
it. This module and the package's __init__ import nothing but the standard library for that reason.
"""
import importlib
import os
import signal
import sys


def _run(module):
    received = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, frame: received.append(signum))
    main = importlib.import_module(module).main
    return main(signals_received=received)


def one_blas_thread(environ=os.environ):
    """OPENBLAS_NUM_THREADS=1 unless the user set it: read once, when numpy loads OpenBLAS, so before
    any import of numpy. The node's numerical work is numba's (one thread per call below a batch of
    64) and small dense algebra; OpenBLAS' threads spinning beside the joint_states thread on 2 cores
    made a 480 x 50 SVD take 0.57 s instead of 1 ms."""
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def dynamics_node():
    """The dynamics node (robot_dynamics.ros.main)."""
    one_blas_thread()
    return _run("robot_dynamics.ros.main")


def sim_arm():
    """The demo's simulated arm (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_arm")


def closed_loop_demo():
    """The closed-loop demo: node + simulated arm, table and plot."""
    return _run("robot_dynamics.demo.closed_loop_demo")


def sim_legged():
    """The legged demo's simulated robot (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_legged")


def legged_demo():
    """The legged demo: node + simulated solo12 standing, table and plot."""
    return _run("robot_dynamics.demo.legged_demo")


def sim_five_bar():
    """The five-bar demo's simulated parallel robot (MuJoCo)."""
    return _run("robot_dynamics.demo.sim_five_bar")


def five_bar_demo():
    """The five-bar demo: node + simulated five-bar (closed loop), table and plot."""
    return _run("robot_dynamics.demo.five_bar_demo")


if __name__ == "__main__":      # python -m robot_dynamics.executables <name> [--ros-args ...]
    name = sys.argv.pop(1)
    sys.exit(globals()[name]())
