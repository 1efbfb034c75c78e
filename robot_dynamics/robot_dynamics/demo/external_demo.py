"""Scenarios 3 and 4 of the closed-loop demo (`make demo`): what the arm carries and what touches it,
found by the dynamics node from the efforts sim_arm reports (its actuator forces plus seeded noise).

Both run the PUMA 560 with the rotor inertias of Armstrong, Khatib and Burdick (1986) (the
`armature` Jm G^2 of urdf/puma560.urdf's header) in the simulator and in the node, and PD gains
Kp = M_ii w^2, Kd = 2 M_ii w (w = BANDWIDTH) from the mass matrix with those rotor inertias.

Scenario 3, an unknown payload: sim_arm carries PAYLOAD (2 kg on tool0, its centre of mass off the
flange axis), which the node's URDF lacks.
  3a  hold START_POSE with the node's gravity torques (~/gravity_torques for each measured state)
      plus the PD: the arm sags under the weight the node does not know.
  3b  identification: the wrist joints move through EXCITATION (quintic moves between wrist poses,
      Lynch and Park's quintic time scaling) under the node's computed-torque feedforward plus the
      PD, while the node's ~/identify_payload (method 'momentum', apply) records joint_states and
      estimates the payload (De Luca and Mattone 2005 for the momentum; Atkeson, An and Hollerbach
      1986 for the regressor); it sets its payload.* parameters. This process reads them back.
  3c  the hold of 3a again, with a node started with those payload.* parameters.
Scenario 4, a push: the quintic move of scenario 2 (feedforward + PD), the node's momentum observer
on (gain OBSERVER_GAIN, contact threshold CONTACT_THRESHOLD on every joint, the wrench at tool0 as a
contact force: `observer.wrench_components: force`).
  4a  PUSH (20 N at the origin of tool0, world axes) for 1 s during the move (sim_arm's wrench.*);
  4b  the same move without the push.
The figures: hold drift per joint (3a vs 3c), identification errors (3b), contact flag latency, the
wrench error from 100 ms after the push start, false flags (4a before the push, 4b).
"""
import os
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .. import dynamics as rd
from ..urdf import load_urdf
from .harness import (BANDWIDTH, GOAL_POSE, MOVE_TIME, SETTLE_TIME, START_POSE, URDF, Run, quintic,
                               record)

#: the targets of scenarios 3 and 4, checked by make test on shortened runs (test/test_demo.py)
TARGETS = dict(mass=0.02, com=0.005, drift_ratio=10.0, latency=0.020, wrench=0.05)
from .mujoco_model import Payload

#: Jm G^2 [kg m^2] per joint, AKB86's motor inertias times gear ratios squared (urdf/puma560.urdf header)
ARMATURE = [1.141, 4.754, 0.862, 0.202, 0.181, 0.206]
EFFORT_NOISE = 0.1          # N m, standard deviation of the noise on the efforts sim_arm reports
NOISE_SEED = 14
PAYLOAD = Payload("tool0", 2.0, (0.03, -0.02, 0.06), (0.004, 0.005, 0.003, 0.0005, 0.0, 0.0))
HOLD_TIME = 3.0             # s of each hold of scenario 3
#: wrist poses (joints 4, 5, 6, relative to START_POSE) visited by quintic moves in scenario 3b
WRIST_POSES = np.array([[0.0, 0.0, 0.0], [0.9, 0.7, 1.4], [-0.7, -0.6, -1.0], [0.6, -0.8, 1.2],
                        [-0.5, 0.5, -1.3], [0.0, 0.0, 0.0]])
SEGMENT = 0.75              # s per wrist move
IDENTIFY_MARGIN = 0.25      # s: the recording ends this long before the excitation does
OBSERVER_GAIN = 50.0        # 1/s
CONTACT_THRESHOLD = 1.0     # N m, every joint: ~10x the largest |r| of the move without push (measured, 4b)
PUSH = np.array([12.0, 0.0, -16.0])     # N, world axes: 20 N
PUSH_START, PUSH_DURATION = 0.5, 1.0    # s of sim time during the 2 s move


def arm_model():
    """The node's model in scenarios 3 and 4: the URDF with the rotor inertias, no payload."""
    model = load_urdf(URDF)
    model.armature = ARMATURE
    return model


def gains(model):
    inertia = np.diag(rd.mass_matrix(model, START_POSE))
    return inertia * BANDWIDTH**2, 2.0 * inertia * BANDWIDTH


SIM = {"armature": ARMATURE, "effort_noise": EFFORT_NOISE, "noise_seed": NOISE_SEED}
NODE = {"armature": ARMATURE}


def hold(t):
    return START_POSE, np.zeros(6), np.zeros(6)


def excitation(segment=SEGMENT, poses=WRIST_POSES):
    """t -> desired state: quintic moves of the wrist joints between `poses`, then a hold."""
    def desired(t):
        k = min(max(int(t // segment), 0), len(poses) - 2)
        a, b = START_POSE.copy(), START_POSE.copy()
        a[3:] += poses[k]
        b[3:] += poses[k + 1]
        return quintic(a, b, segment, t - k * segment)
    return desired


# --- scenario 3: an unknown payload -------------------------------------------------------------------
@dataclass
class PayloadScenario:
    unknown: object         # Recording of 3a
    identify: object        # Recording of 3b (identified: the response, payload: the node's parameters)
    identified: object      # Recording of 3c


def payload_sim():
    return {**SIM, "payload.link": PAYLOAD.link, "payload.mass": PAYLOAD.mass, "payload.com": list(PAYLOAD.com),
            "payload.inertia": list(PAYLOAD.inertia)}


def payload_scenario(hold_time=HOLD_TIME, segment=SEGMENT, show_progress=False):
    model = arm_model()
    pd = gains(model)
    sim = payload_sim()
    unknown = record(Run("3a hold: payload unknown", "gravity+pd", hold_time, hold, sim, NODE, pd), model, *pd,
                     show_progress=show_progress)
    excite_time = segment * (len(WRIST_POSES) - 1)
    request = {"duration": excite_time - IDENTIFY_MARGIN, "method": "momentum", "link": PAYLOAD.link, "apply": True}
    identify = record(Run("3b identify: wrist moves", "feedforward+pd", excite_time, excitation(segment), sim, NODE,
                          pd, identify=request), model, *pd, show_progress=show_progress)
    response = identify.identified
    if not (response.success and response.applied):
        raise RuntimeError(f"3b: ~/identify_payload did not identify and apply the payload: {response.message}")
    node = {**NODE, **{name: value for name, value in identify.payload.items()}}
    identified = record(Run("3c hold: identified payload", "gravity+pd", hold_time, hold, sim, node, pd), model, *pd,
                        show_progress=show_progress)
    return PayloadScenario(unknown, identify, identified)


def drift(recording):
    """max |q - START_POSE| per joint [rad]."""
    return np.abs(recording.q - START_POSE).max(axis=0)


def payload_figures(s):
    """The scenario's numbers: drifts, their ratio, identification errors."""
    r, p = s.identify.identified, s.identify.payload
    before, after = drift(s.unknown), drift(s.identified)
    return dict(before=before, after=after, ratio=before.max() / after.max(),
                mass=r.mass, mass_error=r.mass / PAYLOAD.mass - 1.0, com=np.array(r.com),
                com_error=np.linalg.norm(np.array(r.com) - PAYLOAD.com),
                inertia=np.array(r.inertia), mass_std=r.mass_std, com_std=np.array(r.com_std),
                samples=r.samples, applied=p, message=r.message)


def payload_table(s):
    f = payload_figures(s)
    joints = s.unknown.joints
    lines = ["scenario 3, a 2 kg payload the node does not know: hold drift max |q - q0| per joint [mrad] "
             "(node gravity torques + PD)",
             f"{'run':<34}" + "".join(f"{name:>10}" for name in joints) + f"{'max':>10}{'RTF':>6}"]
    for name, rec, d in (("3a hold, payload unknown", s.unknown, f["before"]),
                         ("3c hold, identified payload", s.identified, f["after"])):
        lines.append(f"{name:<34}" + "".join(f"{1e3 * x:10.4g}" for x in d) + f"{1e3 * d.max():10.4g}"
                     + f"{rec.real_time_factor:6.2f}")
    lines.append(f"drift shrinks {f['ratio']:.1f}x (max over joints)")
    true_inertia = np.array(PAYLOAD.inertia)
    lines += [
        f"3b identification ({f['samples']} samples, {s.identify.t[-1]:.2f} s of wrist moves, effort noise "
        f"{EFFORT_NOISE:g} N m): mass {f['mass']:.4f} kg (true {PAYLOAD.mass:g}; error {100 * f['mass_error']:+.3f} %, "
        f"std {f['mass_std']:.2g} kg)",
        f"   centre of mass {np.round(f['com'], 5).tolist()} m (true {list(PAYLOAD.com)}; error "
        f"{1e3 * f['com_error']:.3f} mm, std {np.round(1e3 * f['com_std'], 3).tolist()} mm)",
        f"   inertia about the COM {np.round(f['inertia'], 5).tolist()} kg m^2 (true {true_inertia.tolist()})",
        f"   the node's payload parameters after the call: mass {f['applied']['payload.mass']:.4f}, com "
        f"{np.round(f['applied']['payload.com'], 5).tolist()}, link {f['applied']['payload.link']}"]
    return "\n".join(lines)


# --- scenario 4: a push ------------------------------------------------------------------------------------
@dataclass
class PushScenario:
    push: object            # Recording of 4a
    free: object            # Recording of 4b
    start: float
    duration: float
    force: np.ndarray


def observer_node(threshold=CONTACT_THRESHOLD):
    return {**NODE, "observer.gain": [OBSERVER_GAIN], "observer.contact_threshold": [threshold],
            "observer.wrench_frame": "tool0", "observer.wrench_components": "force"}


def push_scenario(run_time=MOVE_TIME + SETTLE_TIME, start=PUSH_START, duration=PUSH_DURATION, force=PUSH,
                  show_progress=False, move_time=MOVE_TIME):
    """4a and 4b, each `run_time` s of sim time of the move (make test runs a part of it)."""
    model = arm_model()
    pd = gains(model)

    def move(t):
        return quintic(START_POSE, GOAL_POSE, move_time, t)
    pushed = {**SIM, "wrench.link": "tool0", "wrench.force": list(map(float, force)), "wrench.start": start,
              "wrench.duration": duration}
    runs = (Run(f"4a push {np.linalg.norm(force):g} N for {duration:g} s", "feedforward+pd", run_time, move, pushed,
                observer_node(), pd, observe=True),
            Run("4b the same move, no push", "feedforward+pd", run_time, move, SIM, observer_node(), pd, observe=True))
    push, free = (record(run, model, *pd, show_progress=show_progress) for run in runs)
    return PushScenario(push, free, start, duration, np.asarray(force, float))


def world_force(recording, model):
    """(stamps, estimated forces in world axes) of ~/external_wrench (published at tool0, its axes)."""
    t, w = recording.external["external_wrench"]
    index = {round(x * 1e3): k for k, x in enumerate(recording.t)}
    forces = []
    for stamp, wrench in zip(t, w):
        q = recording.q[index[round(stamp * 1e3)]]
        R = rd.frame_placement(model, q, "tool0")[:3, :3]
        forces.append(R @ np.asarray(wrench[:3]))
    return t, np.array(forces)


def push_figures(s):
    model = arm_model()
    t_c, contact = s.push.external["contact"]
    flags = t_c[contact.astype(bool)]
    early = flags[flags < s.start]
    during = flags[flags >= s.start]
    latency = during[0] - s.start if len(during) else float("nan")
    end = s.start + s.duration
    cleared = t_c[(t_c >= end) & ~contact.astype(bool)]
    t_w, F = world_force(s.push, model)
    window = (t_w >= s.start + 0.1) & (t_w < end)
    error = np.linalg.norm(F[window] - s.force, axis=1) / np.linalg.norm(s.force)
    t_f, contact_free = s.free.external["contact"]
    t_r, r_free = s.free.external["external_torques"]
    t_rp, r_push = s.push.external["external_torques"]
    return dict(latency=latency, early_flags=len(early), error_max=error.max(), error_mean=error.mean(),
                release=(cleared[0] - end) if len(cleared) else float("nan"),
                free_flags=int(contact_free.astype(bool).sum()), free_samples=len(contact_free),
                free_r=np.abs(r_free).max(axis=0), before_push_r=np.abs(r_push[t_rp < s.start]).max(axis=0),
                t_w=t_w, F=F)


def push_table(s):
    f = push_figures(s)
    joints = s.push.joints
    return "\n".join([
        f"scenario 4, a push of {np.round(s.force, 3).tolist()} N ({np.linalg.norm(s.force):g} N) on tool0 from "
        f"{s.start:g} s for {s.duration:g} s of the quintic move; observer gain {OBSERVER_GAIN:g} 1/s, contact "
        f"threshold {CONTACT_THRESHOLD:g} N m, effort noise {EFFORT_NOISE:g} N m",
        f"   contact flagged {1e3 * f['latency']:.0f} ms after the push started; flags before it: {f['early_flags']}; "
        f"cleared {1e3 * f['release']:.0f} ms after it ended",
        f"   estimated force vs applied, from 100 ms after the start to the end of the push: max error "
        f"{100 * f['error_max']:.2f} % of {np.linalg.norm(s.force):g} N (mean {100 * f['error_mean']:.2f} %)",
        f"   the same move without the push: {f['free_flags']} contact flags in {f['free_samples']} samples; "
        "max |external torque| per joint [N m]: " + " ".join(f"{j} {x:.3f}" for j, x in zip(joints, f["free_r"])),
        f"   (RTF {s.push.real_time_factor:.2f} / {s.free.real_time_factor:.2f})"])


# --- plot -------------------------------------------------------------------------------------------------
def plot_path(output):
    root, ext = os.path.splitext(output)
    return f"{root}_external{ext or '.png'}"


def plot(payload, push, path):
    figure = Figure(figsize=(15, 4.5), layout="constrained")
    held, forces, torques = figure.subplots(1, 3)
    for rec, style in ((payload.unknown, "--"), (payload.identified, "-")):
        for j, name in enumerate(rec.joints):
            held.plot(rec.t, 1e3 * (rec.q[:, j] - START_POSE[j]), style, color=f"C{j}",
                      label=name if style == "-" else None)
    held.set_title("3: hold, payload unknown (dashed) / identified (solid)", fontsize=10)
    held.set_xlabel("sim time [s]")
    held.set_ylabel("q - q0 [mrad]")
    held.legend(fontsize=8)
    f = push_figures(push)
    for k, axis in enumerate("xyz"):
        forces.plot(f["t_w"], f["F"][:, k], color=f"C{k}", label=f"estimated F{axis}")
        applied = np.where((f["t_w"] >= push.start) & (f["t_w"] < push.start + push.duration), push.force[k], 0.0)
        forces.plot(f["t_w"], applied, ":", color=f"C{k}", label=f"applied F{axis}")
    t_c, contact = push.push.external["contact"]
    forces.fill_between(t_c, 0, 1, where=contact.astype(bool), alpha=0.15, color="gray",
                        transform=forces.get_xaxis_transform(), label="contact flag")
    forces.set_title("4a: force at tool0, world axes [N]", fontsize=10)
    forces.set_xlabel("sim time [s]")
    forces.legend(fontsize=7, ncol=2)
    for rec, style in ((push.push, "-"), (push.free, ":")):
        t_r, r = rec.external["external_torques"]
        for j, name in enumerate(rec.joints):
            torques.plot(t_r, r[:, j], style, color=f"C{j}", label=name if style == "-" else None)
    torques.axhline(CONTACT_THRESHOLD, color="k", lw=0.8)
    torques.axhline(-CONTACT_THRESHOLD, color="k", lw=0.8)
    torques.set_title("4: external torques r, push (solid) / none (dotted), threshold", fontsize=10)
    torques.set_xlabel("sim time [s]")
    torques.set_ylabel("r [N m]")
    torques.legend(fontsize=8)
    figure.suptitle("robot_dynamics node: payload identification and the momentum observer (sim_arm, PUMA 560)")
    figure.savefig(path, dpi=90)
