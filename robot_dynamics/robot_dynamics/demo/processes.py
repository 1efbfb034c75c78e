"""What every closed-loop demo (closed_loop_demo, external_demo, legged_demo, five_bar_demo,
timing_demo) does with processes: rclpy up for the demo with Ctrl-C taken in its loops
(interrupt.py), the child processes (a simulator, the robot_dynamics node) started and stopped, and
the loop of one run that spins this process's controller while it watches the children, a stalled
simulation and the progress."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager

import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.signals import SignalHandlerOptions

from . import interrupt

STALL_TIMEOUT = 60.0  # s of wall time without sim time advancing (start-up included) before a run fails
STOP_TIMEOUT = 5.0    # s a child gets to exit after SIGINT before it is killed
SPIN_STEP = 0.05      # s: the longest a loop of this process waits before it looks at a Ctrl-C again


class RosSession:
    """`with RosSession() as ros:` a demo's runs, rclpy initialised without its signal handlers (a
    Ctrl-C is taken by interrupt.check() in the loops) and shut down after. A Ctrl-C or SIGTERM ends
    the block, every process it started stopped (`running`), and sets `ros.exit_code` (130 or 143;
    0 otherwise)."""

    def __init__(self):
        self.exit_code = 0

    def __enter__(self):
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        return self

    def __exit__(self, kind, error, trace):
        rclpy.try_shutdown()
        if kind is None or not issubclass(kind, KeyboardInterrupt):
            return False
        print("\ninterrupted: every process stopped")
        self.exit_code = interrupt.exit_code()
        return True


def arguments(doc, plot):
    """A demo's command line: its description (the docstring's first paragraph) and --output, the
    PNG to write (default out/<plot>)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--output", default=os.path.join("out", plot), help="PNG to write (default: %(default)s)")
    return parser


def output_path(path):
    """`path`, its folder made if missing (where a demo writes its plot)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return path


@contextmanager
def running(command):
    """Start a command with its output in a temporary log; stop it on leaving, also on errors and
    Ctrl-C (SIGINT, then SIGKILL after STOP_TIMEOUT). Yields (process, log)."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield process, log
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def spin_step(executor):
    """One spin of the executor (waiting at most SPIN_STEP s), then a Ctrl-C taken (interrupt.py)."""
    executor.spin_once(timeout_sec=SPIN_STEP)
    interrupt.check()


def spin_until(executor, done, deadline, failure):
    """spin_step until done() or, past the monotonic deadline, RuntimeError(failure)."""
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(failure)
        spin_step(executor)


class StallWatch:
    """Fails a run whose sim time has not advanced for STALL_TIMEOUT s of wall time."""

    def __init__(self, name):
        self.name, self.since, self.time = name, time.monotonic(), 0.0

    def update(self, sim_time):
        if sim_time > self.time:
            self.since, self.time = time.monotonic(), sim_time
        elif time.monotonic() - self.since > STALL_TIMEOUT:
            raise RuntimeError(f"{self.name}: sim time stuck at {self.time:.3f} s for {STALL_TIMEOUT:g} s")


def check_alive(children):
    for process, log in children:
        if process.poll() is not None:
            log.seek(0)
            output = log.read().decode(errors="replace")[-3000:]
            name = " ".join(process.args[1:3])
            raise RuntimeError(f"{name} exited with code {process.returncode}:\n{output}")


def drive(run, controller, sim, node, heard, done, show_progress=False, step=None, after=None):
    """The loop of one closed-loop run: this process's `controller` (a Node with `sim_time`, the last
    sim time it heard) spun until done(); the simulator command `sim` started at once and the node
    command `node` (None: no node) once heard(), so that the recording starts with the loop; the
    children checked alive, a stalled sim time failed, the progress shown; step(executor, children)
    after each spin, after(executor) before the children stop. The controller is destroyed at the
    end. Returns (after's result, the real-time factor).

    The controller is spun by rclpy's EventsExecutor (C++; experimental in Kilted), spin_once from this
    thread only (its spin() in another thread delivered nothing here): a lockstep run's steps cost this
    process 0.9 ms of CPU each instead of 2.0 with the SingleThreadedExecutor, which rebuilds its wait
    set in Python every spin (measured 2026-11-28: payload hold of 2.5 s, 5.0 -> 2.0 CPU-s)."""
    executor = EventsExecutor()
    executor.add_node(controller)
    progress = Progress(run, show_progress)
    result = None
    try:
        with ExitStack() as stack:
            children = [stack.enter_context(running(sim))]
            stall = StallWatch(run.name)
            while not done():
                spin_step(executor)
                check_alive(children)
                if node and heard() and len(children) == 1:
                    children.append(stack.enter_context(running(node)))
                if step:
                    step(executor, children)
                stall.update(controller.sim_time)
                progress.show(controller.sim_time)
            if after:
                result = after(executor)
    finally:
        executor.shutdown()
        controller.destroy_node()
    progress.done(controller.sim_time)
    return result, progress.real_time_factor(controller.sim_time)


class Progress:
    """One status line per run: start-up, then sim time and real-time factor (updated in place on a
    terminal)."""

    def __init__(self, run, enabled):
        self.run, self.enabled = run, enabled
        self.start, self.started, self.shown = time.monotonic(), None, 0.0
        self.interactive = sys.stdout.isatty()
        self.print("starting processes")

    def real_time_factor(self, sim_time):
        return sim_time / (time.monotonic() - self.started) if self.started else 0.0

    def print(self, text, final=False):
        if self.enabled and (final or self.interactive):
            print(f"\r  {self.run.name:<32} {text:<60}", end="\n" if final else "", flush=True)

    def show(self, sim_time):
        now = time.monotonic()
        if sim_time > 0 and self.started is None:
            self.started = now
        if now - self.shown >= 0.25:
            self.shown = now
            self.print(f"sim time {sim_time:5.2f} / {self.run.duration:.2f} s   real-time factor "
                       f"{self.real_time_factor(sim_time):.2f}" if self.started
                       else f"waiting for the loop to close ({now - self.start:.1f} s)")

    def done(self, sim_time):
        self.print(f"done: {sim_time:.2f} s of sim time, "
                   f"real-time factor {self.real_time_factor(sim_time):.2f}", final=True)
