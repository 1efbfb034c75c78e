"""~/centroidal (CentroidalState) for models with a floating or planar root: the centre of mass, its
velocity and the centroidal momentum of each joint_states message that completes the measured state,
stamped with it, from rd.centroidal_state (one call), to subscribers only. For a fixed base the
topic does not exist (a publisher is made for root models only). Nothing runs on joint_states
without a subscriber: the publisher's "matched" event (on the main executor) takes the part into the
node's steps when the first subscriber comes and out when the last one goes, so the callback
without one is the callback without this part (get_subscription_count on every message cost ~0.9 us).

q is the measured state's (joint_states, ~/base_pose); v its joint velocities with the base's from
~/base_twist (geometry_msgs/TwistStamped in the root link's frame, as the services' base_twist and
nav_msgs/Odometry's twist: the velocity of the link's origin and its angular velocity, both in its
axes), the last one received; until one comes (per model) the base is taken at rest and the message
says so (base_twist_measured: false). The base twist is used here only: the other outputs take the
base at rest, as before."""
import math

import numpy as np
from geometry_msgs.msg import TwistStamped
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.qos import qos_profile_sensor_data
from robot_dynamics_interfaces.msg import CentroidalState

from ... import dynamics as rd
from ..base import Part
from ..messages import error_text, root_link, twist


class CentroidalOutput(Part):

    answering = False       # root models with a subscriber only

    def __init__(self, node):
        super().__init__(node)
        self.pub = self.twist_sub = None
        self.root = self.subscribed = False
        self.msg = CentroidalState()
        self.v = None               # the velocity used: the base's from ~/base_twist, the joints' measured
        self.base_nv = 0
        self.base_link = ""

    @staticmethod
    def warm(config):
        model = config.model
        if model.root_joint is None:
            return []
        return [("centroidal_state", lambda: rd.centroidal_state(model, rd.neutral(model), np.zeros(model.nv)))]

    def configure(self, config, keep):
        node, model = self.node, config.model
        root = model.root_joint
        self.root = root is not None
        if root is None:
            if self.pub is not None:
                node.destroy_publisher(self.pub)
                node.destroy_subscription(self.twist_sub)
                self.pub = self.twist_sub = None
            self.v, self.subscribed, self.answering = None, False, False
            return
        if self.pub is None:
            events = PublisherEventCallbacks(matched=self.on_matched, use_default_callbacks=False)
            self.pub = node.create_publisher(CentroidalState, "~/centroidal", 10, event_callbacks=events)
            self.twist_sub = node.create_subscription(TwistStamped, "~/base_twist", self.on_base_twist,
                                                      qos_profile_sensor_data)
        if not (keep and self.v is not None and len(self.v) == model.nv):
            self.v, self.msg.base_twist_measured = np.zeros(model.nv), False
        self.base_nv, self.base_link = root.nv, root_link(model)
        self.answering = self.subscribed

    def on_matched(self, info):
        """The publisher's matched event (main executor): subscribers came or went."""
        with self.node.lock:
            self.subscribed = info.current_count > 0
            answering, self.answering = self.answering, self.root and self.subscribed
            if self.answering != answering:
                self.node.restep()

    def on_state(self, config, state, stamp, velocity, effort):
        v, n = self.v, self.base_nv
        v[n:] = state.v[n:]
        try:
            c, cdot, h = rd.centroidal_state(config.model, state.q, v)
        except ValueError as exc:
            return self.node.reject(f"centroidal state not published: {error_text(exc)}")
        x = c.tolist() + cdot.tolist() + h.tolist()
        if not math.isfinite(sum(x)):     # NaN and inf survive the sum (a NumPy sum cost ~1 us, this ~0.2)
            return self.node.reject("centroidal state not finite for this state (values too large): not published")
        msg = self.msg
        msg.header.stamp, msg.header.frame_id = stamp, state.base_frame
        (p := msg.com).x, p.y, p.z = x[0:3]
        (p := msg.com_velocity).x, p.y, p.z = x[3:6]
        (p := msg.linear_momentum).x, p.y, p.z = x[6:9]
        (p := msg.angular_momentum).x, p.y, p.z = x[9:12]
        self.pub.publish(msg)
        return None

    def on_base_twist(self, msg):
        """~/base_twist (main executor): the base's velocity for ~/centroidal, or a counted warning."""
        node = self.node
        with node.lock:
            if self.v is None:
                return
            try:
                frame_id = msg.header.frame_id
                if frame_id and frame_id != self.base_link:
                    raise ValueError(f"header.frame_id {frame_id!r}: the twist must be given in the base link's "
                                     f"frame {self.base_link!r} (or with an empty frame_id), as nav_msgs/Odometry's")
                self.v[:self.base_nv] = rd.root_twist_coordinates(node.config.model, twist(msg.twist))
                self.msg.base_twist_measured = True
                return
            except ValueError as exc:
                warning = node.reject(f"base_twist rejected: {exc}")
        node.warn(warning)

    def close(self):
        self.v = None
