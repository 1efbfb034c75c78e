"""What the simulated robots (sim_arm, sim_legged) share: the physics loop against the wall clock
or in lockstep with the controller, and the process's main with the dynamics node's signal rules."""
import threading
import time

import mujoco
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from ..ros.main import JOIN_TIMEOUT, StopSignals

MAX_LAG = 0.05          # s behind the wall clock the stepping may catch up on; beyond, sim time slows down
LOCKSTEP_RESEND = 0.1   # s without a command before the same state is published again (lockstep)


def step_loop(sim, before_step=None):
    """Until shutdown: publish the state, sleep until the next wall-clock tick, step with the latest
    command (commands are taken by an executor in another thread). `sim` has model, data, command
    (None until the first), fresh_command (an Event set by each command), lockstep, period_ns,
    steps and publish_state(); before_step(), if given, runs before each physics step."""
    period = sim.period_ns * 1e-9
    next_tick = time.monotonic()
    while rclpy.ok():
        sim.fresh_command.clear()
        sim.publish_state()
        next_tick = max(next_tick + period, time.monotonic() - MAX_LAG)
        time.sleep(max(0.0, next_tick - time.monotonic()))
        if sim.lockstep and not sim.fresh_command.wait(LOCKSTEP_RESEND):
            continue
        if sim.command is not None:
            sim.data.ctrl[:] = sim.command
            if before_step is not None:
                before_step()
            mujoco.mj_step(sim.model, sim.data)
            sim.steps += 1


def _spin(executor):
    try:
        executor.spin()
    except ExternalShutdownException:
        pass


def main(node_class, name, args=None, signals_received=()):
    """Run node_class() and its run() until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter or
    URDF, logged under `name`). Signals are taken as the dynamics node takes them
    (ros.main.StopSignals): a second Ctrl-C does not interrupt the cleanup."""
    stop = StopSignals(signals_received)     # before rclpy.init: rclpy chains its handler to these
    rclpy.init(args=args)
    executor = SingleThreadedExecutor()
    spinner = threading.Thread(target=_spin, args=(executor,), daemon=True)
    code = 0
    try:
        if not stop.received:
            node = node_class()
            executor.add_node(node)
            spinner.start()
            with stop.raising():
                node.run()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as exc:   # a bad parameter or URDF, named in the message
        if not stop.received:
            rclpy.logging.get_logger(name).fatal(str(exc))
            code = 1
    finally:
        rclpy.try_shutdown()    # ends the executor's spin, unless rclpy's signal thread shut the context
        executor.wake()         # down first: then this wakes it to see that
        if spinner.is_alive():
            spinner.join(JOIN_TIMEOUT)
        stop.ignore()
    return code
