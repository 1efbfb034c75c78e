"""A scripted arm motion shared by the observer and identification tests (test_ros_external and
test_ros_identification without DDS, test_observer_node and rosnode's streams over DDS): q, v and the
efforts that realise it."""
import copy

import numpy as np

from robot_dynamics import dynamics as rd
from robot_dynamics.payload import add_payload


def motion(model, t, payload=None, tau_ext=None):
    """A smooth motion of a 6-joint arm (all joints, the wrist most) at time t: q, v and the efforts
    that realise it for the model with `payload` (link, mass, com, inertia) and an external joint
    torque tau_ext(t, q) (M qdd + C qd + g = effort + tau_ext)."""
    k = np.arange(model.nv)
    w = 2 * np.pi * np.array([0.3, 0.4, 0.5, 0.9, 1.1, 1.3])
    amp = np.array([0.3, 0.3, 0.3, 0.9, 0.8, 1.0])
    q = np.array([0.4, -0.8, 1.2, 0.5, -0.6, 0.3]) + amp * np.sin(w * t + k)
    v = amp * w * np.cos(w * t + k)
    a = -amp * w**2 * np.sin(w * t + k)
    loaded = model
    if payload is not None:
        loaded = copy.deepcopy(model)
        add_payload(loaded, *payload)
    tau = rd.inverse_dynamics(loaded, q, v, a)
    if tau_ext is not None:
        tau = tau - tau_ext(t, q)
    return q, v, tau
