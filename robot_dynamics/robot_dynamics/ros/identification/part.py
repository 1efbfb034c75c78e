"""The identification parts. PayloadIdentification, ~/identify_payload (identification/__init__.py): record
joint_states for a duration, estimate the payload, answer, apply it to payload.* if asked.
DynamicsIdentification (dynamics.py): the joint_states buffer, ~/excitation_trajectory,
~/identify_dynamics and ~/robot_description_identified.

The handler is `async`, on the single-threaded main executor. A pending coroutine holds its callback
group: in the node's default (mutually exclusive) group it blocked every other callback of the node
(parameters, services, ~/reference) until the call ended, so the service has a ReentrantCallbackGroup
of its own. It awaits rclpy Futures completed from other threads (the joint_states thread when the
recording spans the duration, a worker thread with the estimate); a pending task is resumed only when
its executor wakes, so whoever completes one calls executor.wake(). A steady-clock watchdog timer ends
a recording that gets no usable sample for identification.STALL_TIMEOUT s. Applying uses
set_parameters_atomically on the node itself, in the executor's thread, so the checks run and the
parameters show the payload."""
import threading
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from robot_dynamics_interfaces import srv
from std_msgs.msg import String

from ... import dynamics as rd
from .. import identification
from ..base import Part, moving_frame
from ...regressor import joint_torque_regressor
from ..config import build_config
from ..external.part import ExternalTorquesOutput
from ..messages import error_text
from . import dynamics


@dataclass
class Recording:
    """A recording of ~/identify_payload: filled by the joint_states thread, `done` completed once."""
    recorder: object
    done: Future
    signalled: bool = False


class PayloadIdentification(Part):
    """Records the samples of the external-torques part: its `sample` is the current message's efforts
    (or None) and its `why_not` says why there are none."""

    def __init__(self, node):
        super().__init__(node)
        self.samples = node.part(ExternalTorquesOutput)
        self.recording = None       # Recording while a request records
        self.steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        # its own (reentrant) callback group: a pending call holds its group, and the default group's
        # (every other entity of this node) must run meanwhile; a second call is refused, not queued
        node.create_service(srv.IdentifyPayload, "~/identify_payload", self.identify_payload,
                            callback_group=ReentrantCallbackGroup())

    @staticmethod
    def warm(config):
        model, link = config.model, moving_frame(config.model)
        if link is None:
            return []
        rng = np.random.default_rng(0)
        q = rd.neutral(model) + np.zeros((6, 1))
        v, tau = rng.normal(size=(6, model.nv)), rng.normal(size=(6, model.nv))
        return [("identify_payload_from_momentum",
                 lambda: rd.identify_payload_from_momentum(model, link, q, v, tau, 1e-3, window=2, threads=1)),
                ("identify_payload (static)", lambda: rd.identify_payload(model, link, q, None, None, tau, threads=1))]

    def configure(self, config, keep):
        """A new configuration stops a recording in progress (announce completes its future)."""
        recording = self.recording
        if recording is not None and not recording.recorder.finished:
            recording.recorder.fail("the node's configuration changed during the recording (a parameter or the "
                                    "robot description): record again")

    def announce(self, config, keep):
        if self.recording is not None:
            self.signal()

    @property
    def answering(self):
        return self.recording is not None

    def on_state(self, config, state, stamp, velocity, effort):
        sample = self.samples.sample
        if sample is None:
            return None
        if self.recording.recorder.add(stamp.sec * 1_000_000_000 + stamp.nanosec, state.q, state.v, sample):
            self.node.after_message.append(self.signal)
        return None

    async def identify_payload(self, request, response):
        """Record joint_states for request.duration, estimate the payload on a worker thread (outside
        the lock), answer; apply if asked. Meanwhile the executor serves the node's other callbacks."""
        node = self.node
        try:
            with node.lock:
                config, busy = node.config, self.recording is not None
            if config is None:
                raise ValueError(node.no_model())
            if busy:
                raise ValueError("an identification is recording already: one at a time")
            params = node.params()
            checked = identification.Request(request, params, config.model)
            # the model without the configured payload: the estimate is the whole payload on the link
            bare = build_config({**params, "payload.mass": 0.0}, node.description(params), node.load_cache,
                                node.identified).model
            recording = Recording(identification.Recorder(config.model, checked.duration_ns,
                                                          config.observer.max_interval_ns),
                                  Future(executor=node.executor))
            with node.lock:
                if node.config is not config:
                    raise ValueError("the node's configuration changed while the request was checked: ask again")
                self.recording = recording
                node.restep()
            node.get_logger().info(f"identify_payload: recording {request.duration:g} s of joint_states for the "
                                   f"{checked.method} method (payload on {checked.link!r})")
            watchdog = node.create_timer(0.25, lambda: self.watch(recording), clock=self.steady_clock)
            try:
                await recording.done
            finally:
                node.destroy_timer(watchdog)
                with node.lock:
                    self.recording = None
                    node.restep()
            estimated = Future(executor=node.executor)
            threading.Thread(target=self.estimate, args=(bare, checked, recording.recorder, config.identification,
                                                         estimated),
                             name="identify_payload", daemon=True).start()
            est, used = await estimated
            identification.fill_response(response, est, used)
            if not identification.response_finite(response):
                raise ValueError("the estimate is not finite (the recorded values are too large)")
            if recording.recorder.capped:
                response.message += f"; the recording stopped at {recording.recorder.count} samples (memory cap)"
            problem = identification.found(est)
            if problem:     # the estimate is still given, for inspection
                response.message = f"{problem}. The estimate: {response.message}"
                return self.answered(response)
            response.success = True
            if checked.apply:
                self.apply(response, est, checked.point_mass)
        except Exception as exc:
            response = srv.IdentifyPayload.Response(success=False, message=error_text(exc) or type(exc).__name__)
        return self.answered(response)

    def answered(self, response):
        node = self.node
        if response.success:
            node.get_logger().info(f"identify_payload: {response.message}")
        else:
            with node.lock:
                node.stats["rejected"] += 1
            node.get_logger().warning(f"identify_payload: {response.message}")
        return response

    def apply(self, response, est, point_mass):
        """Set payload.* to the estimate through the node's own parameter checks; a refusal is
        answered with success=false and the estimate for inspection."""
        try:
            values = identification.parameters_to_apply(est, point_mass)
            result = self.node.set_parameters_atomically([Parameter(k, value=v) for k, v in values.items()])
            if not result.successful:
                raise ValueError(f"not applied: {result.reason}")
        except ValueError as exc:
            response.success, response.message = False, f"{exc}. The estimate: {response.message}"
            return
        response.applied = True
        response.message += "; applied to payload.*" + (" as a point mass" if point_mass else "")

    def estimate(self, model, checked, recorder, settings, done):
        """The worker thread: the library's estimate into the future."""
        try:
            done.set_result(identification.estimate(model, checked, recorder, settings.window,
                                                    settings.still_velocity))
        except Exception as exc:
            done.set_exception(ValueError(error_text(exc) or type(exc).__name__))
        self.wake()

    def watch(self, recording):
        """Watchdog timer (steady clock): a recording that gets no usable sample for STALL_TIMEOUT fails."""
        with self.node.lock:
            recorder = recording.recorder
            if not recorder.finished and time.monotonic() - recorder.last_sample_wall > identification.STALL_TIMEOUT:
                why = f": {self.samples.why_not}" if self.samples.why_not else ""
                recorder.fail(f"no joint_states with the positions, velocities and efforts of every model joint came "
                              f"for {identification.STALL_TIMEOUT:g} s ({recorder.count} samples recorded){why}")
        self.signal()

    def signal(self):
        """Complete the recording's future once it is finished (from any thread)."""
        with self.node.lock:
            recording = self.recording
            if recording is None or not recording.recorder.finished or recording.signalled:
                return
            recording.signalled = True
        recording.done.set_result(None)
        self.wake()

    def wake(self):
        executor = self.node.executor
        if executor is not None:
            executor.wake()


class DynamicsIdentification(Part):
    """The joint_states buffer (on the joint_states path: a row appended under the lock), and the services
    ~/excitation_trajectory and ~/identify_dynamics: their work in the node's heavy-request process
    (node.heavy: the executor free meanwhile, joint_states never waiting for it), one identification at
    a time; applying an estimate builds and swaps in a configuration with it (node.identified, config.py),
    announced on ~/robot_description_identified (transient local: latched) and /diagnostics."""

    def __init__(self, node):
        super().__init__(node)
        self.samples = node.part(ExternalTorquesOutput)    # its `sample`: the message's efforts, model order
        self.buffer = None          # dynamics.Buffer, None with identification.buffer_seconds 0
        self.running = False        # an identification is running
        self.last = ""              # what the last ~/identify_dynamics answered (/diagnostics)
        self.announcement = None    # for announce(): the URDF of an estimate applied, "" when dropped
        self.pub = node.create_publisher(String, "~/robot_description_identified", QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        node.create_service(srv.ExcitationTrajectory, "~/excitation_trajectory", self.excitation_trajectory,
                            callback_group=node.heavy_group)
        node.create_service(srv.IdentifyDynamics, "~/identify_dynamics", self.identify_dynamics,
                            callback_group=node.heavy_group)

    @staticmethod
    def heavy_warm(config):
        """The identification regressor's kernels (one thread, a batch wide enough for the lanes)."""
        model = config.model
        if not dynamics.identifiable(model):
            return []
        q = rd.neutral(model) + np.zeros((16, 1))
        v = np.random.default_rng(0).normal(size=(16, model.nv))
        return [("joint_torque_regressor (identification)", partial(joint_torque_regressor, threads=1),
                 (model, q, v, v))]

    def configure(self, config, keep):
        node, seconds = self.node, config.identification.buffer_seconds
        if seconds == 0 or not dynamics.identifiable(config.model):
            self.buffer = None
        elif keep and self.buffer is not None:
            self.buffer.seconds = seconds       # the samples stay (the same coordinates)
        else:
            self.buffer = dynamics.Buffer(config.model, seconds)
        if node.identified is not None and config.identified is None:       # another robot: the estimate goes
            node.identified, self.announcement = None, ""

    def announce(self, config, keep):
        text, self.announcement = self.announcement, None
        if text is None:
            return
        self.pub.publish(String(data=text))
        if not text:
            self.node.get_logger().warning(
                "the identified model is dropped: the robot changed (robot_description, urdf_file, root_link, tip_link "
                "or floating_base); the URDF's model serves")

    @property
    def answering(self):
        return self.buffer is not None

    def on_state(self, config, state, stamp, velocity, effort):
        sample = self.samples.sample
        if sample is not None:
            self.buffer.add(stamp.sec * 1_000_000_000 + stamp.nanosec, state.q, state.v, sample)
        return None

    # --- ~/excitation_trajectory ---------------------------------------------------------------------------
    async def excitation_trajectory(self, request, response):
        node = self.node
        try:
            with node.lock:
                config = node.config
            if config is None:
                raise ValueError(node.no_model())
            arguments, rate, lead_in = dynamics.excitation_arguments(request, config.model)
            traj, message = await node.heavy("~/excitation_trajectory", dynamics.excite, config.model, arguments,
                                             rate, lead_in, process=True)
            response.trajectory = message
            dynamics.fill_excitation(response, traj, message)
            if not (np.isfinite(response.condition_number) and all(
                    np.isfinite(p.positions).all() and np.isfinite(p.velocities).all()
                    and np.isfinite(p.accelerations).all() for p in message.points)):
                raise ValueError(f"no excitation found within the limits: {response.message}")
            response.success = True
            node.get_logger().info(f"excitation_trajectory: {response.message}")
        except Exception as exc:
            response = node.refuse(response, exc, "excitation_trajectory")
        return response

    # --- ~/identify_dynamics -----------------------------------------------------------------------------
    async def identify_dynamics(self, request, response):
        node = self.node
        try:
            window, bag, topic = dynamics.identify_arguments(request)
            with node.lock:
                config, buffer, busy = node.config, self.buffer, self.running
                if config is None:
                    raise ValueError(node.no_model())
                if busy:
                    raise ValueError("an identification is running already: one at a time")
                if not dynamics.identifiable(config.model):
                    raise ValueError(dynamics.NOT_IDENTIFIABLE.format(name=config.model.name))
                if not bag and buffer is None:
                    raise ValueError("no joint_states are buffered (parameter identification.buffer_seconds is 0): "
                                     "set it and record, or give a bag")
                snapshot, why = (buffer.take() if not bag else None), self.samples.why_not
                self.running = True
            params = node.params()
            try:
                what = f"the bag {bag!r} ({topic})"
                if not bag:     # the window is copied out of the snapshot in the heavy-request process
                    if not snapshot.rows:
                        raise ValueError("no joint_states buffered yet" + (
                            f": {why}" if why else " with the positions, velocities and efforts of every model joint"))
                    what = ("buffered joint_states" if window == 0 else
                            f"the last {window:g} s of buffered joint_states")
                est, duration, what, urdf = await node.heavy("~/identify_dynamics", dynamics.identified, config, bag,
                                                             topic, snapshot, window, what, process=True)
            finally:
                self.running = False
            dynamics.fill_identification(response, est, urdf, duration, what)
            if not dynamics.response_finite(response):
                raise ValueError("the estimate is not finite (the recorded values are too large)")
            response.success = True
            if request.apply:
                self.apply(response, dynamics.Correction.of(est, config, params, urdf, response.message))
        except Exception as exc:
            response = node.refuse(response, exc, "identify_dynamics")
        self.last = response.message if len(response.message) <= 300 else response.message[:300] + "..."
        if response.success:
            node.get_logger().info(f"identify_dynamics: {response.message}")
        return response

    def apply(self, response, correction):
        """The node's configuration rebuilt with the estimate and swapped in (the next message uses it); a
        refusal keeps the response's estimate, success=false and the reason."""
        node = self.node
        params = node.params()
        try:
            if not response.physical:
                raise ValueError("the estimate is not physically consistent")
            config = build_config(params, node.description(params), node.load_cache, correction)
            if config.identified is None:
                raise ValueError("the robot changed during the identification (robot_description, urdf_file, "
                                 "root_link, tip_link or floating_base)")
        except ValueError as exc:
            response.success = False
            response.message = f"not applied: {error_text(exc)}. The estimate: {response.message}"
            return
        node.identified, self.announcement = correction, correction.urdf
        node.apply(config, keep_state=True)
        response.applied = True
        response.message += "; applied: the node uses it from the next joint_states message"

    def status(self):
        """The status "identification" (lock held)."""
        config = self.node.config
        identified = config.identified if config is not None else None
        samples, seconds = self.buffer.span() if self.buffer is not None else (0, 0.0)
        values = {"identified model": "applied" if identified else "none: the URDF's",
                  "estimate": identified.summary if identified else "",
                  "buffered samples": str(samples), "buffered [s]": f"{seconds:.3f}",
                  "running": "yes" if self.running else "", "last request": self.last}
        message = ("the identified model is applied" if identified else "the URDF's model") + (
            f"; {seconds:.3g} s of joint_states buffered" if self.buffer is not None else "; no buffer")
        return "identification", "OK", message, values
