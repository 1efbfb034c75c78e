"""ROS 2 node `robot_dynamics`: the configuration and its lifecycle, and the parts of every feature.

Each feature is a folder of this package with its topics, services and parameters (features.FEATURES;
docs/node.md lists them and the path of a joint_states message to each output). The node makes every
feature's parts, in that order, and holds what they share: the parameters, the configuration, the
lock, the law of gravity and feedforward torques, the reporting (base.Shared). A configuration's
lifecycle: parameters (features.PARAMETERS, each checked) -> build_config (the model, every feature's
settings, an applied identified estimate of the same robot: config.py; a ValueError names the
parameter) -> warm-up (warming.py: no answer waits for numba) -> swapped in under the lock, each
part's `configure` -> each part's `announce` (lock released). A parameter change is built in the
on-set callback (refused with its reason: the old configuration serves on) and applied in the
post-set callback. Nothing non-finite leaves the node as a success: inputs are checked, and so is
every published or returned number."""
import threading

from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..model import Model
from . import declared, diagnostics
from .base import HELD, Shared
from .config import Config, build_config
from .features import FEATURES, PARAMETERS
from .joint_states.part import JointStatesInput
from .messages import error_text
from .parameters import ParameterError, StartupError, check_parameters
from .warming import warm, warm_heavy
from .work import HeavyWork
from .prefork import heavy_worker

#: heavy requests accepted and not finished (the running one included) before the next is refused
HEAVY_CAPACITY = 2

#: the node's parts, made and answering each joint_states message in this order (each may use those before it)
PARTS = tuple(kind for feature in FEATURES for kind in feature.parts())


class DynamicsNode(Shared, Node):
    """The node; joint_states arrives on a helper node (`joint_states_node`), spun by main() on a thread
    of its own. `lock` guards what the threads share: the configuration, the measured state, the parts'
    state, the counters, the output messages (the joint_states path computes under it); the services
    read the configuration under it and compute outside, each thread with its own rd.Data of the model
    (the joint_states thread, the main executor, the heavy-request thread `work`: work.py, worker.py).
    Nothing is logged while it is held. interrupted: a callable, true once the process was asked to stop
    (checked between warm-up calls). StartupError names a parameter or URDF invalid at start-up."""

    def __init__(self, interrupted=None, **kwargs):
        super().__init__("robot_dynamics", **kwargs)
        self._destroyed = False
        declared.declare(self, PARAMETERS)
        self.lock = threading.Lock()
        # heavy requests: off the callback threads, the Python-heavy ones in a child process (work.py, worker.py)
        self.work = HeavyWork("heavy", HEAVY_CAPACITY, heavy_worker((Model, Config)))
        self.heavy_group = ReentrantCallbackGroup()     # the async callbacks that await node.heavy
        self.config, self.law, self.state, self.parts = None, HELD, None, []
        self.load_cache, self._pending, self.topic_description, self._refused_description = {}, None, None, None
        self.stats, self.last_error, self._warned, self._said = diagnostics.period_stats(), "", {}, set()
        self.after_message = []         # what a part's on_state asks to run once the lock is released
        self.steps, self.ready = (), False      # steps: every answering part's on_state, in PARTS order (restep)
        self.identified = None      # an applied estimate (~/identify_dynamics), for every configuration of its robot
        try:
            params, config, warmed = self.params(), None, None
            if self.description(params) is not None:
                config = build_config(params, self.description(params), self.load_cache, self.identified)
                warmed = warm(self, PARTS, config, interrupted)     # before any service or topic exists
            declared.store_as_used(self, params, PARAMETERS)
            for kind in PARTS:
                self.parts.append(kind(self))
        except ValueError as exc:       # ParameterError, URDFError
            self.destroy_node()
            raise StartupError(error_text(exc)) from None
        except BaseException:
            self.destroy_node()
            raise
        self.joint_states_node = self.part(JointStatesInput).helper
        if config is not None:
            self.apply(config, warmed=warmed)
        else:
            self.get_logger().info("no robot_description or urdf_file parameter: waiting for a URDF on "
                                   f"{self.resolve_topic_name('robot_description')}; publishing nothing until then")
        # always: a description parameter emptied at run time falls back to the topic's
        self.create_subscription(String, "robot_description", self.on_description, QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.add_pre_set_parameters_callback(lambda changes: declared.as_used(changes, PARAMETERS))
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._post_set_parameters)

    # --- the configuration ---------------------------------------------------------------------------
    def params(self, changes=()):
        """Every parameter's value as used, with `changes` applied; ParameterError for a bad one."""
        values = {name: self.get_parameter(name).value for name in PARAMETERS}
        values.update({p.name: p.value for p in changes})
        return check_parameters(values, PARAMETERS)

    def description(self, params):
        return params["robot_description"] or params["urdf_file"] or self.topic_description

    def apply(self, config, keep_state=False, warmed=None):
        """Swap in a configuration (its model is new: build_config computed on it without the lock).
        keep_state: keep what was measured if the coordinates are the same (a parameter change);
        warmed: the seconds config's warm-up took, if it ran already."""
        warm_s = warm(self, PARTS, config) if warmed is None else warmed     # after the first: ~1 ms
        law = next((law for part in self.parts if (law := part.law(config)) is not None), HELD)
        with self.lock:
            old = self.config.model if self.config is not None else None
            keep = keep_state and old is not None and (config.model.joint_names, config.model.nq) == (
                old.joint_names, old.nq)
            self.config, self.law, self.last_error = config, law, ""
            for part in self.parts:
                part.configure(config, keep)
            self.restep()
        self.get_logger().info(config.summary())
        for part in self.parts:
            part.announce(config, keep)
        first, self.ready = not self.ready, True        # the ready lines are said once
        if first:
            self.get_logger().info(f"ready: every answer for {config.model.name!r} compiled or loaded ({warm_s:.2f} s)")
        warm_heavy(self, PARTS, config, first)

    def _on_set_parameters(self, changes):
        """Check the changed values and build the configuration they give; refuse naming the problem."""
        known = [p for p in changes if p.name in PARAMETERS]
        if not known:
            return SetParametersResult(successful=True)
        try:
            params = self.params(known)
            if self.config is not None and declared.unchanged(params, self.params(), known):
                self._pending = None    # the values in use, set again (`ros2 param load` of a dump): nothing to rebuild
                return SetParametersResult(successful=True)
            description = self.description(params)
            if description is None:
                if self.config is not None:
                    raise ParameterError("urdf_file", "parameters robot_description and urdf_file cannot both "
                                                      "be empty: no URDF came on the robot_description topic")
                pending = None      # no URDF yet: the model-dependent checks run when one arrives
            else:
                pending = build_config(params, description, self.load_cache, self.identified)
        except Exception as exc:
            declared.restore_types(self, known)
            return SetParametersResult(successful=False, reason=error_text(exc) or type(exc).__name__)
        self._pending = pending
        return SetParametersResult(successful=True)

    def _post_set_parameters(self, changes):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.apply(pending, keep_state=True)   # e.g. a gravity change keeps the measured state

    def on_description(self, msg):
        """A URDF on the robot_description topic: the model is rebuilt when it differs from the one
        served (a description republished unchanged, or refused already, changes nothing)."""
        params, text = self.params(), msg.data
        given = "robot_description" if params["robot_description"] else "urdf_file" if params["urdf_file"] else None
        if given is not None:
            self.topic_description = text       # kept: used if both parameters are emptied
            notice = self.once(("description ignored", given, params[given]), (
                f"a URDF came on {self.resolve_topic_name('robot_description')} and is not used: parameter {given} "
                "is set and wins (the topic's URDF is kept, and used if robot_description and urdf_file are both "
                "emptied)"))
            if notice:      # (one call site per severity: rclpy refuses a call site whose severity changes)
                self.get_logger().info(notice)
            else:
                self.get_logger().debug(f"robot_description: a URDF came, not used (parameter {given} is set)")
            return
        if (self.config is not None and self.config.description == text) or text == self._refused_description:
            self.get_logger().debug("robot_description: the same URDF again, nothing to rebuild")
            return
        try:
            config = build_config(params, text, self.load_cache, self.identified)
        except Exception as exc:   # a bad URDF must not stop the node
            error = f"model not (re)built: {error_text(exc)}"
            with self.lock:
                self.last_error = error
                self.stats["rejected"] += 1
            self._refused_description = text
            self.get_logger().error(error)
            return
        self.topic_description = text
        self.apply(config)

    # --- the parts -----------------------------------------------------------------------------------
    def restep(self):
        """The joint_states steps again: every part's on_state that has something to do (lock held)."""
        self.steps = tuple(part.on_state for part in self.parts if part.on_state is not None and part.answering)

    def part(self, kind):
        """The node's part of this class."""
        return next(part for part in self.parts if isinstance(part, kind))

    def destroy_node(self):
        if not self._destroyed:
            self._destroyed = True
            self.work.close()
            for part in self.parts:
                part.close()
            super().destroy_node()
