"""Synthetic ground truth for whole-robot identification (tests and bench): the "real" robot is
the URDF's with heavier links, a tool the URDF does not know, joint friction and armature; its
torques along a trajectory, with seeded noise, are the measurements."""
import copy
import functools
import os
import re
import sysconfig

import numpy as np

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.payload import add_payload
from robot_dynamics.resources import bundled_urdf

ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
#: name -> (URDF path, load_urdf tip, the link carrying the tool)
ROBOTS = {
    "puma560": (bundled_urdf("puma560"), None, "tool0"),
    "panda": (os.path.join(ROBOTS_DIR, "panda_description", "urdf", "panda.urdf"), "panda_hand", "panda_hand"),
    "ur5": (os.path.join(ROBOTS_DIR, "ur_description", "urdf", "ur5_robot.urdf"), None, "tool0"),
}
#: torque noise [N m], one standard deviation, and velocity noise [rad/s] for the a=None cases
TORQUE_NOISE, VELOCITY_NOISE = 0.05, 2e-3


def prior(name):
    """The model as the URDF gives it (what identification starts from)."""
    path, tip, _ = ROBOTS[name]
    return load_urdf(path, tip=tip)


def truth(name):
    """The robot as it "really" is: every link 20-35 % heavier (mass, first moment and inertia
    scaled alike: a physical body), a 1.2 kg tool 8 cm out on the tool link, viscous, Coulomb
    and offset friction and armature on every joint. A fresh copy: tests may change it."""
    return copy.deepcopy(_truth(name))


@functools.lru_cache(maxsize=None)
def _truth(name):
    model = prior(name)
    n = len(model.joint_names)
    scale = np.linspace(1.2, 1.35, model.nb)
    for b in range(model.nb):
        model.set_body_inertia(b, model.inertia[b] * scale[b])
    add_payload(model, ROBOTS[name][2], 1.2, [0.0, 0.02, 0.08], [2e-3, 2e-3, 1.5e-3, 0, 0, 0])
    model.friction = np.c_[np.linspace(2.0, 0.4, n), np.linspace(3.0, 0.6, n), np.linspace(0.8, -0.3, n)]
    model.armature = np.linspace(0.4, 0.05, n)
    return model


@functools.lru_cache(maxsize=None)
def excitation(name, duration=10.0, rng=0):
    """An excitation trajectory of the prior model (deterministic: a fixed number of trials)."""
    return rd.excitation_trajectory(prior(name), duration, harmonics=4, rng=rng, time_budget=np.inf, starts=6,
                                    evaluations=40)


def measure(name, t, rng, trajectory=None, velocity_noise=0.0):
    """(q, v, a, tau): the true robot's torques along the trajectory at times t, with torque noise
    and, if asked, velocity noise (q, a exact)."""
    traj = trajectory or excitation(name)
    q, v, a = traj.sample(np.asarray(t) % traj.duration)
    model = truth(name)
    tau = rd.inverse_dynamics(model, q, v, a) + rd.friction_torques(model, v)
    tau = tau + TORQUE_NOISE * rng.normal(size=tau.shape)
    return q, v + velocity_noise * rng.normal(size=v.shape), a, tau


def held_out(name, n=400, seed=7):
    """States of another excitation trajectory (another seed) and the true robot's torques there
    (noise-free)."""
    traj = excitation(name, 10.0, 1)
    q, v, a = traj.sample(np.random.default_rng(seed).uniform(0, traj.duration, n))
    model = truth(name)
    return q, v, a, rd.inverse_dynamics(model, q, v, a) + rd.friction_torques(model, v)


def urdf_of_model(model):
    """The URDF text with only the links and joints of the model (a tip cut away), for Pinocchio."""
    text = model.urdf
    keep = set(model.frames) | set(model.joint_frames)
    for tag in ("link", "joint"):
        for m in list(re.finditer(rf'<{tag}\s+name="([^"]+)"[^>]*?(/>|>.*?</{tag}>)', text, re.S)):
            if m.group(1) not in keep:
                text = text.replace(m.group(0), "")
    return re.sub(r"<transmission.*?</transmission>", "", text, flags=re.S)
