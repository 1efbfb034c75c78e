"""Contacts (contacts/__init__.py): with contacts.frames set on a floating-base model, the law of the gravity
and feedforward torques is contact-consistent (the base's weight shared among the contacts), and
~/contact_forces carries the forces that go with each ~/gravity_torques message; the
~/constrained_forward_dynamics service takes any contacts and loops (empty: the node's).

A state the contacts cannot hold (ConstraintError) publishes neither torques nor forces for that
message: a counted, throttled rejection (the gravity and feedforward parts report it)."""
import numpy as np
from robot_dynamics_interfaces import srv
from robot_dynamics_interfaces.msg import ContactForces, LinkWrench

from ... import dynamics as rd
from .. import contacts
from ..base import Part, publisher, warm_state
from ..constraint_requests import all_finite, fill_wrenches


class Standing(Part):
    """The contacts' law (node.law while contacts.frames is set), ~/contact_forces and
    ~/constrained_forward_dynamics."""

    kind = "contact-consistent "

    def __init__(self, node):
        super().__init__(node)
        self.pub, self.msg = None, ContactForces()     # ~/contact_forces exists only while contacts are set
        self.msg_contacts = None     # the contacts the message's wrenches were made for
        self.forces = None           # the forces of the last gravity torques
        node.serve(srv.ConstrainedForwardDynamics, "constrained_forward_dynamics", self.constrained_forward_dynamics,
                   with_config=True)

    @staticmethod
    def warm(config):
        model, frame, q, zero = warm_state(config)
        if frame is None:
            return []
        positions = [0.0] * len(model.joint_names)
        requests = (srv.ConstrainedForwardDynamics.Request(positions=positions, contact_frames=[frame],
                                                           contact_kinds=["point"]),
                    srv.ConstrainedForwardDynamics.Request(positions=positions, loop_frames_a=[frame],
                                                           loop_frames_b=[model.frame_names[0]], loop_kinds=["point"],
                                                           baumgarte_kp=1.0, baumgarte_kd=1.0))
        calls = [(f"contact_inverse_dynamics ({kind})", lambda k=kind: rd.contact_inverse_dynamics(
                    model, q, zero, zero, ((frame, k),))) for kind in ("point", "6d")]
        calls.append(("contact_inverse_dynamics (v = a = 0)",
                      lambda: rd.contact_inverse_dynamics(model, q, 0, 0, ((frame, "point"),))))
        calls += [("constrained_forward_dynamics", lambda r=request: contacts.constrained_forward_dynamics(
            model, r, srv.ConstrainedForwardDynamics.Response(), None, LinkWrench)) for request in requests]
        return calls

    def law(self, config):
        return self if config.contacts is not None else None

    def announce(self, config, keep):
        """~/contact_forces made when contacts are set, removed when they are not (lock released)."""
        node = self.node
        if config.contacts is not None and self.pub is None:
            self.pub = publisher(node, ContactForces, "~/contact_forces")
        elif config.contacts is None and self.pub is not None:
            pub, self.pub = self.pub, None
            node.destroy_publisher(pub)

    # --- the law ---------------------------------------------------------------------------------------
    def gravity(self, config, q):
        """Contact-consistent gravity torques at rest; their forces kept for `published`."""
        tau, forces = contacts.gravity(config.model, q, config.contacts)
        if not all_finite(forces):
            raise ValueError("the contact forces are not finite for this state (values too large)")
        self.forces = forces
        return tau

    def feedforward(self, config, state, reference, feedback):
        """The contact-consistent computed torque for the reference (contacts.feedforward)."""
        q_d, v_d, a_d = reference
        zero = np.zeros(config.model.nv)
        tau, _ = contacts.feedforward(config.model, config.contacts, state.q, state.v, q_d, v_d, a_d,
                                      config.kp if feedback else zero, config.kd if feedback else zero,
                                      config.evaluate_at)
        return tau

    def published(self, config, stamp):
        """~/contact_forces with the forces of the gravity torques just published (to subscribers)."""
        pub = self.pub
        if pub is None or not pub.get_subscription_count():
            return
        msg, spec = self.msg, config.contacts
        if self.msg_contacts is not spec:     # a new configuration: new wrenches
            msg.wrenches = [LinkWrench() for _ in spec.frames]
            self.msg_contacts = spec
        msg.header.stamp = stamp
        fill_wrenches(msg.wrenches, spec.frames, spec.sizes, self.forces)
        pub.publish(msg)

    # --- ~/constrained_forward_dynamics ----------------------------------------------------------------
    @staticmethod
    def constrained_forward_dynamics(config, request, response):
        """Run by node.serve on the configuration of the request."""
        contacts.constrained_forward_dynamics(config.model, request, response, config.contacts, LinkWrench)
