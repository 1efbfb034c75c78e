"""What the simulated robots (sim_arm, sim_legged, sim_five_bar) share: the URDF, joints and numbers from their
parameters, the command subscription and the joint_states and /clock publishers (SimulatedRobot),
the physics loop against the wall clock or in lockstep with the controller, and the process's main
with the dynamics node's signal rules."""
import threading
import time

import mujoco
import numpy as np
import rclpy
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..ros.main import JOIN_TIMEOUT, StopSignals, exit_watchdog
from ..urdf import urdf_text

MAX_LAG = 0.05          # s behind the wall clock the stepping may catch up on; beyond, sim time slows down
LOCKSTEP_RESEND = 0.1   # s without a command before the same state is published again (lockstep)


def numbers(value, name, *sizes):
    """A parameter's value (a number, or a list of numbers) as an array of finite floats whose
    length is one of `sizes`; ValueError naming the parameter otherwise (booleans and strings are
    not numbers)."""
    values = [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    try:
        x = np.array([float(v) for v in values if not isinstance(v, (bool, str))])
    except TypeError:
        x = np.array([])
    if x.size not in sizes or len(values) != x.size or not np.all(np.isfinite(x)):
        count = " or ".join(map(str, sizes))
        raise ValueError(f"parameter {name} takes {count} finite number{'s' if sizes != (1,) else ''}, "
                         f"got {value!r}")
    return x


class SimulatedRobot(Node):
    """A MuJoCo robot behind the interface of a ros2_control robot with one effort controller: takes
    efforts on `<controller>/commands` (a command holds until the next one), publishes joint_states
    and /clock. Subclasses build `model` and call `attach`, then `start`, and publish their state in
    `publish_state`; `before_step` runs before each physics step."""

    def param(self, name):
        return self.get_parameter(name).value

    def urdf_and_joints(self):
        """The URDF text (robot_description, else urdf_file) and the `joints` parameter (None: unset)."""
        urdf = self.param("robot_description") or (self.param("urdf_file") and urdf_text(self.param("urdf_file")))
        if not urdf:
            raise ValueError("set the parameter urdf_file or robot_description")
        try:
            joints = self.param("joints")
        except ParameterUninitializedException:
            joints = None
        return urdf, joints

    def attach(self, model):
        """The compiled model, its data and the actuated joints' names and qpos / dof indices."""
        self.model, self.data = model, mujoco.MjData(model)
        self.joint_names = [model.actuator(i).name for i in range(model.nu)]
        ids = model.actuator_trnid[:, 0]
        self.qpos_index, self.dof_index = model.jnt_qposadr[ids], model.jnt_dofadr[ids]

    def start(self, description):
        """The stepping state, the publishers and the command subscription; logs `description` with the
        rate, the command topic and how it steps."""
        self.steps = 0
        self.command = None if self.param("wait_for_command") else np.zeros(self.model.nu)  # None: paused
        self.lockstep = self.param("lockstep")
        self.fresh_command = threading.Event()   # a command arrived since the state was published
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        command_topic = f"{self.param('controller')}/commands"
        self.create_subscription(Float64MultiArray, command_topic, self.on_command, 1)
        self.get_logger().info(f"{description}, {self.param('rate'):g} Hz, efforts on {command_topic}"
                               + (", paused until the first command" if self.command is None else "")
                               + (", lockstep with the commands" if self.lockstep else ""))

    def on_command(self, msg):
        if len(msg.data) != self.model.nu:
            self.get_logger().error(f"command of {len(msg.data)} efforts for {self.model.nu} joints: ignored",
                                    throttle_duration_sec=1.0)
            return
        command = np.array(msg.data)
        if not np.all(np.isfinite(command)):
            self.get_logger().error("command with NaN or inf efforts: ignored", throttle_duration_sec=1.0)
            return
        if self.command is None:
            self.get_logger().info("first command received: running")
        self.command = command
        self.fresh_command.set()

    def stamp(self):
        return Time(nanoseconds=self.steps * self.period_ns).to_msg()

    def publish_measured(self, stamp):
        """joint_states with the efforts the actuators applied over the last step, then /clock."""
        self.publish_joint_states(stamp, self.data.qfrc_actuator[self.dof_index])
        self.clock_pub.publish(Clock(clock=stamp))

    def publish_joint_states(self, stamp, effort):
        msg = JointState(name=self.joint_names)
        msg.header.stamp = stamp
        msg.position = self.data.qpos[self.qpos_index].tolist()
        msg.velocity = self.data.qvel[self.dof_index].tolist()
        msg.effort = effort.tolist()
        self.state_pub.publish(msg)

    def before_step(self):
        pass

    def run(self):
        """Until shutdown (step_loop)."""
        step_loop(self, self.before_step)


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


def main(node_class, name, args=None):
    """Run node_class() and its run() until SIGINT or SIGTERM (exit code 0; 1 for a bad parameter or
    URDF, logged under `name`). Signals are taken as the dynamics node takes them
    (ros.main.StopSignals): a second Ctrl-C does not interrupt the cleanup."""
    stop = StopSignals()     # before rclpy.init: rclpy chains its handler to these
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
        exit_watchdog()
        rclpy.try_shutdown()    # ends the executor's spin, unless rclpy's signal thread shut the context
        executor.wake()         # down first: then this wakes it to see that
        if spinner.is_alive():
            spinner.join(JOIN_TIMEOUT)
        stop.ignore()
    return code
