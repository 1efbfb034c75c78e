"""What every part of the node shares: the `Part` interface, what the node does for the parts
(`Shared`: reporting, services run under the lock), the torque topic pair, and `HELD`, the law of
gravity and feedforward torques when nothing constrains the robot."""
import array
import math
import time

import numpy as np
from rclpy.event_handler import PublisherEventCallbacks
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import dynamics as rd
from ..control import computed_torque
from .messages import check_response_finite, error_text
from .work import awaitable


class Part:
    """What a feature serves (its part.py). DynamicsNode makes every part once, in `node.PARTS` order
    (the parts of features.FEATURES; `Part(node)`: its publishers, subscriptions, services and timers;
    node.part(Kind) is a part made before), then for every configuration it calls, in that order:

      warm(config)            static, before the configuration is used (the first time before any part
                              exists, so a service appears only once it answers at once): the calls,
                              [(name, callable)], that run on config.model every compiled function the
                              part may run (whatever its parameters), so no answer waits for numba
      heavy_warm(config)      static: the same for what the part runs in the heavy-request process
                              (node.heavy(..., process=True)), as [(name, fn, args)] (fn module-level,
                              args picklable: ros/worker.py), run there after the ready line
      law(config)             the law of gravity and feedforward torques this part imposes (contacts,
                              closed loops), or None; the first part that has one sets `node.law`
      configure(config, keep) under the node's lock: swap in what the configuration needs (nothing
                              logged). keep: the model's coordinates did not change (a parameter
                              change): keep what was measured
      announce(config, keep)  lock released: log what the configuration means for this part

    and, on the joint_states thread, for every message that completes the measured state (lock held):

      on_state(config, state, stamp, velocity, effort) -> warning or None
                              the part's answer to the message (publish its outputs); None as a class
                              attribute for a part that does not answer joint_states. A warning is
                              logged after the lock is released (`node.reject` counts and throttles).
      answering               whether on_state has anything to do now (the feedforward without a
                              reference, identification without a recording: no); a part whose
                              answering changes calls node.restep() (lock held)

    status() (lock held) gives the part's /diagnostics status of the last period, (name, level,
    message, {key: value}), or None; close() releases what the node does not own.

    Parts talk through the node: node.lock, node.config, node.law, node.state (the measured state),
    node.stats (the period's counters), and `Shared`'s node.reject / throttled / once / warn, node.serve
    (a service on the configuration of its request), node.heavy / node.work (a heavy request, off the
    callback threads: ros/work.py), node.refuse; node.after_message (what to run on the joint_states thread once
    the lock is released)."""

    on_state = None
    answering = True

    def __init__(self, node):
        self.node = node

    @staticmethod
    def warm(config):
        return ()

    @staticmethod
    def heavy_warm(config):
        return ()

    def law(self, config):
        return None

    def configure(self, config, keep):
        pass

    def announce(self, config, keep):
        pass

    def status(self):
        return None

    def close(self):
        pass


class Shared:
    """The node's methods the parts call (DynamicsNode is one): count and throttle what they report (lock
    held; the text returned is logged after the lock with `warn`), say why there is no model, and serve a
    service under the lock. Uses the node's lock, config, stats, last_error and logger."""

    def reject(self, text):
        """Count a bad input (lock held); the text to log, each distinct one at most every 2 s."""
        self.stats["rejected"] += 1
        self.last_error = text
        return self.throttled(text, text, 2.0)

    def throttled(self, key, text, period):
        """text, or None if `key` had its text logged less than `period` s ago (lock held)."""
        now = time.monotonic()
        if now - self._warned.get(key, -1e9) <= period:
            return None
        if len(self._warned) > 256:
            self._warned.clear()
        self._warned[key] = now
        return text

    def once(self, notice, text=None):
        """A notice's text the first time its key comes, else None; notice: (key, text), or a key and text."""
        key, text = notice if text is None else (notice, text)
        if key in self._said:
            return None
        if len(self._said) > 256:
            self._said.clear()
        self._said.add(key)
        return text

    def warn(self, text):
        """Log a warning returned from under the lock (logging may block: never under it)."""
        if text:
            self.get_logger().warning(text)

    def no_model(self):
        """Why there is no model, for a service answer."""
        if self.last_error:
            return f"no robot model: {self.last_error}"
        return ("no robot model loaded yet (set robot_description or urdf_file, or publish the URDF on "
                f"{self.resolve_topic_name('robot_description')})")

    def refuse(self, response, exc, name):
        """A service's answer to a request that failed with `exc` (lock released): a fresh response (nothing
        half-computed goes back), success=false and the error's text; counted, logged (throttled)."""
        response = type(response)()
        response.success, response.message = False, error_text(exc) or type(exc).__name__
        with self.lock:
            self.stats["rejected"] += 1
            text = self.throttled(("refused", name), f"{name}: {response.message}", 1.0)
        self.warn(text)     # throttled here: rclpy's own throttle finds its caller's frame (~0.1 ms) every call
        return response

    def heavy(self, label, fn, *args, process=False):
        """fn(*args) on the node's heavy-request thread, or with process=True in its heavy-request process
        (fn module-level, its arguments and result picklable): node.work, ros/work.py. Awaited:
        `result = await node.heavy(...)` in an async
        callback of a reentrant callback group (`heavy_group`). Busy (work.Busy) at once if the queue is
        full; the callback thread is free while fn runs, and the executor is woken when it is done."""
        return awaitable(self.work.submit(label, fn, *args, process=process), self._wake)

    def _wake(self):
        executor = self.executor
        if executor is not None:
            executor.wake()

    def serve(self, kind, name, handler, with_config=False, **kwargs):
        """Service ~/name: handler(model, request, response) (with_config: handler(config, ...)) on the
        configuration served when the request came, read under the lock; the handler computes with the
        lock released, with the main executor thread's own rd.Data of the model (rd's data=None: the
        joint_states thread and the heavy-request thread have theirs), so a request never delays joint_states
        by more than the GIL does. Any error, or a result that is not finite, becomes success=false with
        a message naming it."""
        def serve(request, response):
            try:
                with self.lock:
                    config = self.config
                if config is None:
                    raise ValueError(self.no_model())
                handler(config if with_config else config.model, request, response)
                check_response_finite(response)
                response.success, response.message = True, "ok"
            except Exception as exc:
                response = self.refuse(response, exc, handler.__name__)
            return response
        serve.__name__ = handler.__name__
        return self.create_service(kind, f"~/{name}", serve, **kwargs)


def publisher(node, kind, topic, depth=10):
    """A publisher without QoS event handlers: each costs the executor ~2 us on every wake-up at 1 kHz."""
    return node.create_publisher(kind, topic, depth,
                                 event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))


class TorqueTopics:
    """~/<what>_torques (JointState, stamped) and ~/<what>_commands (Float64MultiArray in `joints`
    order): messages built once per configuration and refilled; each published only to subscribers."""

    def __init__(self, node, what):
        self.node, self.what = node, what
        self.pub_state, self.state = publisher(node, JointState, f"~/{what}_torques"), JointState()
        self.pub_command, self.command = publisher(node, Float64MultiArray, f"~/{what}_commands"), Float64MultiArray()

    def configure(self, config):
        self.state.name = config.joints

    def subscribed(self):
        """Anyone subscribes to either topic."""
        return bool(self.pub_state.get_subscription_count() or self.pub_command.get_subscription_count())

    def publish(self, config, tau, stamp):
        """tau (model v order) to both topics; nothing is published if a torque is not finite (a finite
        state can still overflow): the warning to log is returned."""
        effort = array.array("d", tau[config.out_v].tobytes())
        if not math.isfinite(sum(effort)):      # NaN and inf survive the sum; ~0.2 us
            return self.node.reject(f"{self.what} torques not finite for this state (values too large): not published")
        if self.pub_state.get_subscription_count():
            self.state.header.stamp = stamp
            self.state.effort = effort
            self.pub_state.publish(self.state)
        if self.pub_command.get_subscription_count():
            self.command.data = effort
            self.pub_command.publish(self.command)
        return None


class Held:
    """The law without constraints: every joint actuated, a floating base held in the air
    (rd.gravity_torques and control.computed_torque). Another law (contacts, closed loops) has the
    same three methods and `kind`, the words that name its torques in a warning."""

    kind = ""

    @staticmethod
    def gravity(config, q):
        """g(q) over v; ValueError if it cannot be computed (the gravity part then publishes nothing)."""
        return rd.gravity_torques(config.model, q)

    @staticmethod
    def feedforward(config, state, reference, feedback):
        """The computed torque for the reference (q_d, v_d, a_d) from the measured state; the gains
        act only with feedback (every joint measured). On config.feedforward_model: without g(q) when
        the drives compensate gravity (parameter drive_compensates_gravity)."""
        q_d, v_d, a_d = reference
        return computed_torque(config.feedforward_model, state.q, state.v, q_d, v_d, a_d, config.kp if feedback else 0.0,
                               config.kd if feedback else 0.0, config.evaluate_at)

    @staticmethod
    def published(config, stamp):
        """After the gravity torques of a message went out: what goes with them (contact forces)."""


HELD = Held()


def moving_frame(model):
    """A frame that a joint moves (the last one), or None: what the warm-up calls take a frame at."""
    return next((name for name in reversed(model.frame_names) if model.frame(name).body >= 0), None)


def warm_state(config):
    """What warm-up calls take: the model, a frame that a joint moves (None if none: no calls at a frame),
    the neutral configuration and a zero velocity."""
    model = config.model
    return model, moving_frame(model), rd.neutral(model), np.zeros(model.nv)
