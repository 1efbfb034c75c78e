"""Closed kinematic loops (closed_chain/__init__.py): with the loops parameter set, the law of the gravity and
feedforward torques is the constrained inverse dynamics on the actuated joints (actuated_joints, or
every joint joint_states carries), and the loop joints joint_states does not carry are assembled into
the measured state for every message, before the gravity part answers it (Newton steps warm-started
from the last solution); the node says once which joints it assembles. ~/constrained_inverse_dynamics
takes any contacts, loops and actuated joints (empty: the node's).

A message whose passive joints cannot be assembled (the measured joints out of the loops' reach), or
whose state the actuators cannot hold, publishes nothing: a counted, throttled rejection naming the
loop or the joints."""
import numpy as np
from robot_dynamics_interfaces import srv
from robot_dynamics_interfaces.msg import LinkWrench

from ... import dynamics as rd
from .. import closed_chain as chain
from ..base import Part, moving_frame
from . import constrained_inverse


class ClosedChain(Part):
    """The loops' law (node.law while loops is set), the assembly step and ~/constrained_inverse_dynamics."""

    kind = "constrained "

    def __init__(self, node):
        super().__init__(node)
        self.loops = None
        self.actuated = ()          # the actuated joints now (names, model order)
        self.assembled = ()         # the joints assembled for each message (names)
        self.fixed = None           # mask over q: what assembly keeps (all but the assembled joints)
        self.seen_changes = -1      # state.seen_changes the three above were made for
        self.failures = 0           # messages whose joints could not be assembled, this period
        node.serve(srv.ConstrainedInverseDynamics, "constrained_inverse_dynamics", self.constrained_inverse_dynamics,
                   with_config=True)

    @staticmethod
    def warm(config):
        """Assembly, constrained inverse dynamics (at rest, moving, each objective, least squares), the
        constraint Jacobian and the service, on the node's loops or a loop of two frames of the model."""
        model = config.model
        frame = moving_frame(model)
        if frame is None:
            return []
        spec = config.loops.spec if config.loops is not None else ((frame, model.frame_names[0], "point"),)
        names = tuple(model.joint_names)
        actuated = config.loops.actuated if config.loops is not None and config.loops.actuated else names
        q = config.loops.closed.copy() if config.loops is not None else rd.neutral(model)
        v = np.zeros(model.nv)
        calls = [("assemble", lambda: rd.assemble(model, q, spec, fixed=np.ones(model.nq, bool))),
                 ("assemble (free)", lambda: rd.assemble(model, q, spec)),
                 ("constraint_jacobian", lambda: rd.constraint_jacobian(model, q, 0, (), spec)),
                 ("constraint_jacobian (moving)", lambda: rd.constraint_jacobian(model, q, v, (), spec)),
                 ("constrained_inverse_dynamics (rest)",
                  lambda: rd.constrained_inverse_dynamics(model, q, 0, 0, actuated, loops=spec))]
        calls += [(f"constrained_inverse_dynamics ({objective}, {squares})",
                   lambda o=objective, s=squares: rd.constrained_inverse_dynamics(
                       model, q, v, v, actuated, loops=spec, passive_torques=v, objective=o, least_squares=s,
                       tolerance=None if s else 1e-8))
                  for objective in constrained_inverse.OBJECTIVES for squares in (False, True)]
        given = [n for n in names if config.loops is None or n in actuated or n not in config.loops.determined]
        request = srv.ConstrainedInverseDynamics.Request(
            joint_names=given, positions=[float(q[model.joint_offset[0] + model.joint_index[n]]) for n in given],
            loop_frames_a=[a for a, _, _ in spec], loop_frames_b=[b for _, b, _ in spec],
            loop_kinds=[kind for *_, kind in spec], actuated_joints=list(actuated))
        calls.append(("constrained_inverse_dynamics service", lambda: constrained_inverse.constrained_inverse_dynamics(
            model, request, srv.ConstrainedInverseDynamics.Response(), None, None, LinkWrench)))
        return calls

    def law(self, config):
        return self if config.loops is not None else None

    @property
    def answering(self):
        return self.loops is not None

    def configure(self, config, keep):
        self.loops, state = config.loops, self.node.state
        state.allow_missing(config.loops.optional if config.loops is not None
                            else np.zeros(len(config.model.joint_names), bool))
        self.assembled, self.failures, self.seen_changes = (), 0, -1   # the next message says what is assembled
        if self.loops is not None:      # the actuated joints, for a reference that comes before it
            self.actuated = self.loops.actuated or tuple(n for n, s in zip(config.model.joint_names, state.seen) if s)

    def announce(self, config, keep):
        if self.loops is None:
            return
        spec, names = self.loops, config.model.joint_names
        actuated = list(spec.actuated) if spec.actuated else "every joint joint_states carries"
        optional = [n for n, o in zip(names, spec.optional) if o]
        self.node.get_logger().info(
            f"closed loops {chain.shown(spec.spec)}: gravity and feedforward torques are the constrained inverse "
            f"dynamics on the actuated joints ({actuated}); {optional} are assembled from the loops when "
            "joint_states does not carry them")

    # --- the assembly step (before the gravity part) -------------------------------------------------
    def _measured(self, model, state):
        """The actuated and the assembled joints for what joint_states named so far (seen); the text
        that says which joints are assembled, the first time this set comes (else None)."""
        self.seen_changes = state.seen_changes
        names, seen, spec = model.joint_names, state.seen, self.loops
        self.actuated = spec.actuated or tuple(n for n, s in zip(names, seen) if s)
        assembled = tuple(n for n, o, s in zip(names, spec.optional, seen) if o and not s)
        if assembled == self.assembled:
            return None
        self.assembled = assembled
        fixed = np.ones(model.nq, bool)
        for name in assembled:
            j = model.joint_by_name[name]
            fixed[j.idx_q:j.idx_q + j.nq] = False
        fixed.flags.writeable = False
        self.fixed = fixed
        if not assembled:
            return None
        return self.node.once(("assembled", spec.spec, assembled), (
            f"joint_states carries no position for {list(assembled)}: the node assembles them from the loops "
            f"({chain.shown(spec.spec)}) for every message, from the last solution; actuated: {list(self.actuated)}"))

    def on_state(self, config, state, stamp, velocity, effort):
        if state.seen_changes != self.seen_changes:
            text = self._measured(config.model, state)
            if text:
                logger = self.node.get_logger()
                self.node.after_message.append(lambda: logger.info(text))
        if self.assembled:
            try:
                state.q[:] = rd.assemble(config.model, state.q, self.loops.spec, fixed=self.fixed)
            except rd.ConstraintError as exc:       # the message is answered with nothing
                self.failures += 1
                raise ValueError(f"the passive joints {list(self.assembled)} could not be assembled: {exc}; nothing "
                                 "published for this message") from None
        return None

    def status(self):
        if self.loops is None:
            return None
        failures, self.failures = self.failures, 0
        values = {"loops": chain.shown(self.loops.spec), "actuated joints": ", ".join(self.actuated) or "-",
                  "assembled joints": ", ".join(self.assembled) or "-", "messages not assembled": str(failures)}
        if failures:
            return "closed loops", "WARN", f"{failures} messages whose passive joints could not be assembled", values
        return "closed loops", "OK", "loops closed", values

    # --- the law ---------------------------------------------------------------------------------------
    def gravity(self, config, q):
        """The constrained gravity torques at rest (zero on the passive joints)."""
        return rd.constrained_inverse_dynamics(config.model, q, 0, 0, self.actuated, loops=self.loops.spec)[0]

    def feedforward(self, config, state, reference, feedback):
        """The constrained computed torque for the reference (chain.feedforward)."""
        if not self.actuated:
            raise ValueError("no actuated joints yet: actuated_joints is empty and no joint_states came (the "
                             "actuated joints are the ones joint_states carries)")
        return chain.feedforward(config.model, self.loops, self.actuated, state.q, state.v, reference, config.kp,
                                 config.kd, feedback, config.evaluate_at)[0]

    def published(self, config, stamp):
        """Nothing more goes out with the gravity torques."""

    # --- ~/constrained_inverse_dynamics ----------------------------------------------------------------
    @staticmethod
    def constrained_inverse_dynamics(config, request, response):
        """Run by node.serve on the configuration of the request."""
        constrained_inverse.constrained_inverse_dynamics(config.model, request, response, config.contacts, config.loops,
                                                         LinkWrench)
