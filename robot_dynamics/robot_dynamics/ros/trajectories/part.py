"""~/reference -> ~/feedforward_torques and ~/feedforward_commands: a whole joint trajectory followed in
time, with joint_trajectory_controller's semantics, and the computed torque (the law's:
control.computed_torque, or with contacts the contact inverse dynamics) of the reference sampled at
each joint_states message's stamp.

  - header.stamp zero: the trajectory starts when it arrives (the node's clock: sim time with
    use_sim_time); else at that time. Points at start + time_from_start.
  - sampled at each joint_states message's stamp; a message stamped zero (`ros2 topic pub`, a driver
    that does not stamp) at the node's clock instead, as joint_trajectory_controller samples at the
    controller's time: said once in the log, and on /diagnostics while it lasts.
  - interpolation by the fields present (robot_dynamics.Trajectory, as the controller's `spline`):
    linear with positions only, cubic with velocities, quintic with accelerations too; before the
    first point the first point, at rest; after the last the last point, at rest.
  - joints by name in any order; every output joint must be named (else refused, naming them).
  - a trajectory that arrives while none serves serves at once (before its start: its first point, at
    rest); one that arrives while another serves replaces it from its start time (the old one serves
    the messages stamped before it).
  - without a trajectory (before the first, and after an empty trajectory cancels) the feedforward is
    the gravity torques of the measured state (the law's: the arm held where it is, as at the end of a
    trajectory; with friction.compensate, plus the friction at rest: its offset; zero with
    drive_compensates_gravity, the drives holding it), published only while someone subscribes; a
    cancel is said once in the log.
  - friction.compensate (friction/): the model's friction at the reference's velocity (the measured one
    with feedforward.evaluate_at 'measured') added to the computed torque.
  - drive_compensates_gravity: the feedforward without g(q) (computed on config.feedforward_model).
  - a refused trajectory changes nothing: the previous one serves on; the reason is logged and on
    /diagnostics ("last error" of "dynamics", and the status "reference").

The trajectory is checked and turned into a `Trajectory` (one compiled call per sample) when it
arrives; each joint_states message then costs one sample into preallocated arrays and the law's one
RNEA. A new trajectory is answered at once, sampled at and stamped with its start, only when the
feedforward does not depend on the measured state (evaluated at the desired state, no feedback
gains, no floating or planar base whose pose is measured): an output computed from the last measured
state, which may be old, never carries a new message's stamp. Otherwise the next message is answered.

~/time_parameterize and ~/check_trajectory (services.py): waypoints -> the torque-limited
time-optimal trajectory, and a timed trajectory -> the torques it needs against the limits.

Both are heavy requests (their work grows with gridpoints, points and samples, each bounded: the
.srv files state the limits): a request takes the lock only to read the configuration and the
measured state, then runs on the node's heavy-request thread (ros/work.py; refused at once, naming the
queue, when it is full), which also makes the response, so that the joint_states path and the other
services are not held up: the kernels it spends its time in release the GIL, and its answer is made
where it is sent (not copied from the node's heavy-request process: ros/work.py says which runs
where). Errors, and results that are not finite, become success=false with the message, as
node.serve does."""
from functools import partial

import numpy as np
from robot_dynamics_interfaces import srv
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ... import dynamics as rd
from ...control import computed_torque
from ..base import Part, TorqueTopics
from ..messages import error_text
from . import NS, Columns, Following, Schedule, services, stamp_ns


class ReferenceFeedforward(Part):

    def __init__(self, node):
        super().__init__(node)
        self.out = TorqueTopics(node, "feedforward")
        self.current_law = None
        self.schedule = Schedule()  # the trajectory serving now, those that start later, cancelled
        self.refused = ""           # why the last refused trajectory was refused
        self.base = 0               # q coordinates of multi-coordinate joints (taken as measured)
        self.on_state = None
        self.clock_sampled = False  # the last message answered was stamped zero: sampled at the node's clock
        node.create_subscription(JointTrajectory, "~/reference", self.on_reference, 1)   # only the latest counts

    @staticmethod
    def warm(config):
        model = config.model
        q, zero = rd.neutral(model), np.zeros(model.nv)
        calls = [(f"computed_torque ({evaluate_at}, gains {gain:g})",
                  lambda e=evaluate_at, g=gain: computed_torque(model, q, zero, q, zero, zero, g, g, e))
                 for evaluate_at in ("desired", "measured") for gain in (0.0, 1.0)]
        n, qo, vo = len(model.joint_names), *model.joint_offset
        if n:
            times, P = np.array([0.0, 1.0]), np.tile(q[qo:], (2, 1))
            out = (q.copy()[qo:], zero.copy()[vo:], zero.copy()[vo:])
            calls += [(f"Trajectory.sample ({kind})", lambda v=v, a=a: rd.Trajectory(times, P, v, a).sample(0.5, out))
                      for kind, v, a in (("linear", None, None), ("cubic", P, None), ("quintic", P, P))]
        return calls

    def configure(self, config, keep):
        self.out.configure(config)
        self.zero = np.zeros(config.model.nv)
        self.current_law = self.node.law
        self.base = config.model.joint_offset[0]
        if not keep:
            self.schedule.clear()
        self._step()

    def _step(self):
        """on_state for what is served now (lock held): the trajectory, gravity only, or nothing."""
        schedule = self.schedule
        self.on_state = self._follow if schedule.following is not None else self._gravity_only

    def _restep(self):
        """_step, and the node's joint_states steps again if they change (lock held)."""
        was = self.on_state
        self._step()
        if self.on_state != was:
            self.node.restep()

    answering = True

    # --- the hot path --------------------------------------------------------------------------
    def _follow(self, config, state, stamp, velocity, effort):
        """The law's feedforward for the reference at the message's stamp (zero: the node's clock)."""
        ns = stamp.sec * NS + stamp.nanosec
        notice = None
        if not ns:
            ns = self.node.get_clock().now().nanoseconds
            notice = self.node.once("clock sampled", (
                "joint_states are stamped zero: the reference is sampled at the node's clock (as "
                "joint_trajectory_controller samples at the controller's time), not at their stamps"))
        self.clock_sampled = not stamp.sec and not stamp.nanosec
        reference = self.schedule.at(ns).sample(ns)
        if self.base:
            reference[0][:self.base] = state.q[:self.base]
        return self._publish(config, state, reference, stamp) or notice

    def _gravity_only(self, config, state, stamp, velocity, effort):
        """No trajectory: the arm held where it is (published only to subscribers)."""
        if not self.out.subscribed():
            return None
        law = self.current_law
        try:
            tau = self.zero if config.drive_compensates_gravity else law.gravity(config, state.q)
        except ValueError as exc:
            return self.node.reject(f"{law.kind}feedforward (gravity only) not published: {error_text(exc)}")
        if config.friction.rest is not None:       # held at rest: the friction offset
            tau = tau + config.friction.rest
        return self.out.publish(config, tau, stamp)

    def _publish(self, config, state, reference, stamp):
        """The law's feedforward for the reference, and the friction at the velocity it is evaluated at
        (friction/); the feedback gains act once every joint has been measured."""
        law = self.current_law
        try:
            tau = law.feedforward(config, state, reference, state.complete and config.feedback)
        except ValueError as exc:
            return self.node.reject(f"{law.kind}feedforward torques not published: {error_text(exc)}")
        friction = config.friction.feedforward
        if friction is not None:
            tau = tau + friction(reference[1] if config.evaluate_at == "desired" else state.v)
        return self.out.publish(config, tau, stamp)

    # --- ~/reference -----------------------------------------------------------------------------
    def on_reference(self, msg):
        node = self.node
        now = node.get_clock().now().nanoseconds      # "start now" for a stamp of zero (sim time included)
        notice = None
        with node.lock:
            try:
                warning, notice = self._take(msg, now)
            except Exception as exc:
                warning = self._refuse(f"reference rejected: {error_text(exc) or type(exc).__name__}")
        node.warn(warning)
        if notice:
            node.get_logger().info(notice)

    def _refuse(self, text):
        self.refused = text
        return self.node.reject(text + "; the previous reference serves on")

    def _take(self, msg, now):
        """on_reference under the lock: (a warning to log or None, a notice or None)."""
        node = self.node
        config, state = node.config, node.state
        if config is None:
            return None, None
        if not msg.points:
            return None, self._cancel()
        try:
            # a closed chain's loop joints that joint_states does not carry either may be left out: completed
            # from the loops (loops.feedforward); the measured (actuated) joints must come
            optional = config.loops.optional & ~np.asarray(state.seen, bool) if config.loops else None
            cols = Columns(config, msg.joint_names, "reference", optional)
            times, P, V, A = cols.points(msg.points, state.q)
            start = stamp_ns(msg.header.stamp) or now
            following = Following(config.model, start, times, P, V, A, len(msg.points))
        except ValueError as exc:
            return self._refuse(f"reference rejected: {error_text(exc)}"), None
        self.schedule.take(following)   # serves now if none does, else replaces from its start on
        self.refused = ""
        self._restep()
        if config.evaluate_at == "desired" and not config.feedback and config.model.root_joint is None:
            # a function of the reference alone: answered at once, at and under its start
            return self._publish(config, state, following.sample(start), _time(start)), None
        return None, None

    # --- ~/follow_joint_trajectory executing a goal itself ---------------------------------------
    def follow(self, following):
        """A goal's trajectory (a Following) served as a ~/reference that came would be (lock held)."""
        self.schedule.take(following)
        self.refused = ""
        self._restep()

    def hold(self, following):
        """A goal's trajectory stopped (cancelled, aborted): if it still serves or waits to, every trajectory
        is dropped and the feedforward is the gravity torques of the measured state, the arm held where it is,
        as joint_trajectory_controller holds its position (lock held)."""
        if self.schedule.following is following or following in self.schedule.pending:
            self.schedule.cancel()
            self._restep()

    def _cancel(self):
        """An empty trajectory: every trajectory dropped, the feedforward gravity only (lock held). The
        notice to log, once per cancel (None if cancelled already)."""
        first = self.schedule.cancel()
        self._restep()
        if not first:
            return None
        return ("reference cancelled (an empty trajectory): the feedforward is the gravity torques of the measured "
                "state until the next trajectory" + (" (zero: drive_compensates_gravity)"
                                                    if self.node.config.drive_compensates_gravity else ""))

    def status(self):
        """The status "reference" (lock held)."""
        schedule = self.schedule
        following, pending = schedule.following, schedule.pending
        values = {"following": "", "points": "", "interpolation": "", "start [s]": "", "end [s]": "",
                  "waiting to start": str(len(pending)), "refused": self.refused,
                  "sampled at": "the node's clock (joint_states stamped zero)" if self.clock_sampled else "stamps"}
        if following is not None:
            values.update({"following": "yes", "points": str(following.points), "interpolation": following.interpolation,
                           "start [s]": f"{following.start / NS:.9f}",
                           "end [s]": f"{following.start / NS + following.duration:.9f}"})
            message = ("holding the last point of the trajectory" if schedule.done else
                       f"following a trajectory of {following.points} points ({following.interpolation})")
            message += f" that started at {following.start / NS:.9f} s"
            if self.clock_sampled:
                message += ", sampled at the node's clock (joint_states stamped zero)"
        elif pending:
            message = f"a trajectory starts at {pending[0].start / NS:.9f} s"
        else:
            hold = "zero (drive_compensates_gravity)" if self.node.config is not None and \
                self.node.config.drive_compensates_gravity else "gravity only"
            message = f"cancelled: {hold}" if schedule.cancelled else f"no reference: {hold}"
        if pending and following is not None:
            message += f"; the next starts at {pending[0].start / NS:.9f} s"
        if self.refused:        # the last reference message was refused: said until one is taken
            return "reference", "WARN", f"{message}; {self.refused}", values
        return "reference", "OK", message, values


def _time(ns):
    """Integer nanoseconds -> builtin_interfaces/Time."""
    from builtin_interfaces.msg import Time      # a message type: no rclpy
    sec, nanosec = divmod(int(ns), NS)
    return Time(sec=sec, nanosec=nanosec)


SERVICES = (("time_parameterize", srv.TimeParameterize, services.time_parameterize),
            ("check_trajectory", srv.CheckTrajectory, services.check_trajectory))


class TrajectoryServices(Part):

    def __init__(self, node):
        super().__init__(node)
        self.config = None
        for name, kind, handler in SERVICES:
            node.create_service(kind, f"~/{name}", self._service(handler), callback_group=node.heavy_group)

    def configure(self, config, keep):
        self.config = config

    @staticmethod
    def warm(config):
        """Each service once on a two-waypoint path of the model's joints (every limit given, so that a
        URDF without limits compiles them too), and a check along its interpolation (batches of states:
        the batch drivers, on one thread or several, kernels/batch.py)."""
        model = config.model
        if not model.joint_names:
            return []
        names, held = list(model.joint_names), rd.neutral(model)
        q = held[model.joint_offset[0]:]
        points = [JointTrajectoryPoint(positions=(q + k * 0.1).tolist(), velocities=[0.1] * len(names),
                                       accelerations=[0.0] * len(names)) for k in range(2)]
        points[1].time_from_start.sec = 1
        ones, large = [1.0] * len(names), [1e6] * len(names)
        trajectory = JointTrajectory(joint_names=names, points=points)
        check = srv.CheckTrajectory.Request(trajectory=trajectory, effort_limits=large, sample_period=0.01)
        calls = [("check_trajectory", partial(services.answer, services.check_trajectory, config, held, check,
                                              srv.CheckTrajectory.Response))]
        if model.joint_offset == (0, 0):        # time_parameterize times one-coordinate joints only
            request = srv.TimeParameterize.Request(waypoints=trajectory, velocity_limits=ones, acceleration_limits=ones,
                                                   effort_limits=large, gridpoints=rd.PARALLEL_MIN_BATCH)
            calls.append(("time_parameterize", partial(services.answer, services.time_parameterize, config, held,
                                                       request, srv.TimeParameterize.Response)))
        return calls

    def _service(self, handler):
        """The service's async callback: the configuration and the measured state read under the lock,
        the work and the response's making on the node's heavy-request thread (node.heavy: refused at
        once when its queue is full), the callback thread free meanwhile."""
        node = self.node
        label = f"~/{handler.__name__}"

        async def serve(request, response):
            try:
                with node.lock:
                    config = self.config
                    if config is None or node.config is None:
                        raise ValueError(node.no_model())
                    held = node.state.q.copy()
                response = await node.heavy(label, services.answer, handler, config, held, request, type(response))
                response.success, response.message = True, "ok"
            except Exception as exc:
                response = node.refuse(response, exc, handler.__name__)
            return response
        serve.__name__ = handler.__name__
        return serve
