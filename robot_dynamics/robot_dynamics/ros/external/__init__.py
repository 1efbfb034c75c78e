"""External torques from joint_states efforts: the generalized-momentum observer run sample by sample
(De Luca and Mattone, 2005; Haddadin, De Luca and Albu-Schaeffer, 2017), contact flags and the
wrench at a frame. Plain Python (no rclpy): the part (part.py: ExternalTorquesOutput) calls it under
the node's lock from the joint_states callback and publishes what it returns; tested without DDS.

The rule for efforts: the observer needs, in one joint_states message, the position, velocity and
effort of every model joint, all finite (one sample of the whole arm at one time, its header stamp
the sample's time). Messages that carry only some model joints (a second driver) still update the
measured state and the gravity torques but are not observer samples. If complete messages come
without efforts or velocities, the observer is off and says so once; a NaN or inf effort of a model
joint skips that message (warned, counted as rejected).

Time: dt is the difference of consecutive header stamps. The same stamp again (a resent state) is
answered with the same estimate; a stamp going back, or an interval longer than
observer.max_interval, restarts the observer at that sample: r = 0 there (the observer's initial
condition: it has seen no interval yet), counted and said once. Every complete sample is answered
on the output topics with its stamp, the first one too (r = 0), as every joint_states message is
answered with gravity torques.

A restart takes no effort for the interval before it: the first interval integrates the known
torques by the rectangle rule with the effort of its end (MomentumObserver.reset without tau),
the later ones by the trapezoidal rule. A driver or simulator that reports, at each stamp, the
effort applied over the interval that just ended (a zero-order hold, like a paused simulator's 0
before its first step) would otherwise make the first interval wrong by half a step of effort.
"""
import math
from dataclasses import dataclass

import numpy as np

from ...observer import MomentumObserver
from ..parameters import (ParameterError, ParameterSpec, a_boolean, a_string, floats, in_range, non_negative, one_of,
                          positive)

PARAMETERS = {
    "observer.enabled": ParameterSpec(
        True, "run the momentum observer on joint_states that carry efforts (~/external_torques, "
              "~/external_wrench, ~/contact)", "true or false", a_boolean),
    "observer.gain": ParameterSpec(
        [50.0], "observer gain K [1/s] (time constant 1/K): one value or one per `joints` entry",
        "one finite number > 0 [1/s], or one per `joints` entry", lambda v: positive(floats(v))),
    "observer.contact_threshold": ParameterSpec(
        [0.0], "contact when some |external torque| exceeds its threshold [N m or N]: one value or one "
               "per `joints` entry; 0: joint not monitored (all 0, the default: no contact detection)",
        "one finite number >= 0 [N m or N], or one per `joints` entry", lambda v: non_negative(floats(v))),
    "observer.wrench_frame": ParameterSpec(
        "", "frame of ~/external_wrench, at its origin in its axes (empty: tip_link; both empty: none)",
        "a frame name of the model that moves with a joint (a string)", a_string),
    "observer.wrench_components": ParameterSpec(
        "wrench", "what ~/external_wrench estimates: 'wrench' (force and torque), 'force' (a contact "
                  "force at the frame origin, torque 0) or 'torque'",
        "one of wrench, force, torque", one_of("wrench", "force", "torque")),
    "observer.max_interval": ParameterSpec(
        0.1, "a longer interval [s] between joint_states stamps restarts the observer",
        "a number of seconds in (0, 10]", in_range(0.0, 10.0, low_open=True)),
}


def settings(params, config):
    """config.observer: ObserverConfig."""
    return {"observer": observer_config(params, config.model, config.joints, config.out_v)}


def parts():
    from .part import ExternalTorquesOutput
    return (ExternalTorquesOutput,)


@dataclass
class ObserverConfig:
    """The observer's settings, checked against the model (config.observer)."""
    enabled: bool
    gain: np.ndarray            # 1/s per coordinate of v
    threshold: np.ndarray       # per coordinate of v; inf: not monitored
    detect: bool                # some joint monitored
    wrench_frame: str           # '' for none
    components: str
    max_interval_ns: int        # also the longest gap in a payload identification's recording
    unsupported: str = ""       # why the observer cannot run on this model ('' if it can)


def _per_joints(values, joints, out_v, nv, name, rest):
    """One value for every coordinate, or one per `joints` entry (the others get `rest(values)`)."""
    x = np.asarray(values, float)
    if len(x) == 1:
        return np.full(nv, x[0])
    if len(x) != len(joints):
        raise ParameterError(name, f"parameter {name} takes one value or one per `joints` entry "
                                   f"({len(joints)}); got {len(x)} values")
    out = np.full(nv, rest(x))
    out[out_v] = x
    return out


def observer_config(params, model, joints, out_v):
    """Checked parameter values -> ObserverConfig for `model`; ParameterError naming the parameter."""
    gain = _per_joints(params["observer.gain"], joints, out_v, model.nv, "observer.gain", np.max)
    threshold = _per_joints(params["observer.contact_threshold"], joints, out_v, model.nv,
                            "observer.contact_threshold", lambda x: 0.0)
    threshold = np.where(threshold > 0, threshold, np.inf)
    frame = params["observer.wrench_frame"] or params["tip_link"]
    if frame:
        name = "observer.wrench_frame" if params["observer.wrench_frame"] else "tip_link"
        try:
            body = model.frame(frame).body
        except KeyError as exc:
            raise ParameterError(name, f"parameter {name}: {exc.args[0]}") from None
        if body < 0:
            raise ParameterError(name, f"parameter {name}: frame {frame!r} is fixed to the world, no joint "
                                       "torque shows a wrench there; name a frame that a joint moves")
    unsupported = ""
    if model.root_joint is not None or any(j.kind in ("floating", "planar") for j in model.joints):
        unsupported = ("the model has a floating or planar joint whose velocity joint_states does not carry; "
                       "the observer needs every coordinate's velocity and effort")
    return ObserverConfig(params["observer.enabled"], gain, threshold, bool(np.isfinite(threshold).any()), frame,
                          params["observer.wrench_components"], round(params["observer.max_interval"] * 1e9),
                          unsupported)


def period_stats(nv):
    """Counters of one diagnostics period."""
    return dict(samples=0, max_abs=np.zeros(nv), contact_samples=0, contact_joints=set(), restarts=0, skipped=0)


class EffortSample:
    """Takes one joint_states message's efforts for the observer and the recorder: `take` returns the
    model-order effort vector of a complete sample, or None (and `notice` says why, or is None when
    the message is simply not one: a second driver's partial message). Lock held."""

    def __init__(self, model):
        self.model = model
        self.tau = np.zeros(model.nv)
        self.notice = None      # (key, text): the node says each key once
        self.complete_seen = False

    def take(self, jmap, velocity, effort):
        self.notice = None
        if len(jmap.joint) != len(self.model.joint_names):
            if len(effort) and len(jmap.joint) and not self.complete_seen:
                self.notice = ("partial", "joint_states messages carry efforts but not every model joint "
                               f"({len(jmap.joint)} of {len(self.model.joint_names)}): the observer and payload "
                               "identification need the position, velocity and effort of every model joint in "
                               "one message (set root_link / tip_link to leave the others out); paused")
            return None
        self.complete_seen = True
        if not len(effort):
            self.notice = ("no efforts", "joint_states carries no efforts: the momentum observer is off "
                           "(no ~/external_torques, ~/external_wrench or ~/contact) and payload identification "
                           "cannot record")
            return None
        if not len(velocity):
            self.notice = ("no velocities", "joint_states carries efforts but no velocities: the momentum "
                           "observer is off and payload identification cannot record")
            return None
        values = effort[jmap.src]
        if not np.isfinite(values).all():
            bad = jmap.joint[np.flatnonzero(~np.isfinite(values))[0]]
            self.notice = ("nan", f"joint_states efforts contain NaN or inf (joint {self.model.joint_names[bad]!r}): "
                                  "this message is no observer sample")
            return None
        self.tau[jmap.iv] = values
        return self.tau


class ExternalTorques:
    """The observer of one configuration, fed sample by sample under the node's lock.

    `update(q, v, tau, stamp_ns)` -> True when r (and the contact flag) answer this sample: a new
    estimate, r = 0 after a restart, or the same estimate for the same stamp again; False when
    the sample is skipped (the update failed). `notice` holds what to say once, if anything. `r` is
    the latest estimate in model v order, `contact` whether some monitored |r_i| exceeds its
    threshold, `contact_joints` which joints."""

    def __init__(self, config):
        self.model = config.model
        self.settings = s = config.observer
        self.observer = MomentumObserver(self.model, s.gain) if s.enabled and not s.unsupported else None
        self.last_stamp = None
        self.r = np.zeros(self.model.nv)
        self.contact, self.contact_joints = False, []
        self.names = [None] * self.model.nv
        for k, name in zip(self.model.joint_offset[1] + np.arange(len(self.model.joint_names)),
                           self.model.joint_names):
            self.names[k] = name
        self.notice = None
        self.stats = period_stats(self.model.nv)

    @property
    def running(self):
        return self.observer is not None

    def update(self, q, v, tau, stamp_ns):
        self.notice = None
        last, self.last_stamp = self.last_stamp, stamp_ns
        if last is not None and stamp_ns == last:
            return True                         # the same sample again (a resent state): the same answer
        dt = None if last is None else stamp_ns - last
        if dt is not None and 0 < dt <= self.settings.max_interval_ns:
            try:
                r = self.observer.update(q, v, tau, dt * 1e-9)
            except ValueError as exc:           # the observer stays at the previous sample
                self.last_stamp = last
                self.stats["skipped"] += 1
                self.notice = ("overflow", f"external torques not computed for this joint_states message ({exc})")
                return False
            if not math.isfinite(r.sum()):      # not expected (the library refuses these), never published
                self._restart(q, v)
                self.last_stamp = None
                self.notice = ("overflow", "external torques not finite for this joint_states message: the "
                                           "observer restarts at the next one")
                return False
            self.r = r
            self._flag(r)
            return True
        if dt is not None:
            self.stats["restarts"] += 1
            why = (f"a joint_states stamp went back by {-dt * 1e-9:.6g} s" if dt < 0 else
                   f"an interval of {dt * 1e-9:.6g} s between joint_states stamps exceeds observer.max_interval "
                   f"({self.settings.max_interval_ns * 1e-9:g} s)")
            self.notice = ("restart", f"{why}: the momentum observer restarted (r = 0 from that sample); "
                                      "further restarts are counted in /diagnostics")
        self._restart(q, v)
        return True

    def _restart(self, q, v):
        self.observer.reset(q, v)
        self.r = np.zeros(self.model.nv)
        self.contact, self.contact_joints = False, []

    def _flag(self, r):
        stats = self.stats
        stats["samples"] += 1
        size = np.abs(r)
        np.maximum(stats["max_abs"], size, out=stats["max_abs"])
        if not self.settings.detect:
            return
        over = size > self.settings.threshold
        self.contact = bool(over.any())
        if self.contact:
            self.contact_joints = [self.names[k] for k in np.flatnonzero(over)]
            stats["contact_samples"] += 1
            stats["contact_joints"].update(self.contact_joints)
        else:
            self.contact_joints = []

    def wrench(self):
        """The wrench [force; torque] at the wrench frame, in its axes, that best explains r."""
        s = self.settings
        return self.observer.wrench(s.wrench_frame, "local", components=s.components)

    def take_stats(self):
        stats, self.stats = self.stats, period_stats(self.model.nv)
        return stats


def diagnostic(config, stats, state_text):
    """(level, message, {key: value}) of the external-torques status for one period.
    state_text: why the observer is not running ('' when it is)."""
    s = config.observer if config is not None else None
    values = {}
    if s is None:
        return "OK", "no model", values
    joints = config.joints
    values["gain [1/s]"] = " ".join(f"{g:g}" for g in s.gain[config.out_v])
    values["contact threshold"] = " ".join("off" if not np.isfinite(t) else f"{t:g}" for t in s.threshold[config.out_v])
    values["wrench frame"] = s.wrench_frame or "none"
    if not s.enabled:
        return "OK", "off (observer.enabled is false)", values
    if s.unsupported:
        return "OK", f"off: {s.unsupported}", values
    if stats is None or not stats["samples"]:
        values["samples"] = "0"
        return ("WARN" if stats and stats["skipped"] else "OK"), (state_text or "waiting for joint_states with efforts"), values
    values["samples"] = str(stats["samples"])
    for name, x in zip(joints, stats["max_abs"][config.out_v]):
        values[f"max |external torque| {name}"] = f"{x:.4g}"
    values["contact samples"] = str(stats["contact_samples"])
    values["restarts"] = str(stats["restarts"])
    values["skipped"] = str(stats["skipped"])
    if stats["contact_samples"]:
        flagged = [j for j in config.model.joint_names if j in stats["contact_joints"]]
        return "WARN", f"contact at {', '.join(flagged)} ({stats['contact_samples']} samples)", values
    return "OK", "running" + ("" if s.detect else " (contact detection off: set observer.contact_threshold)"), values
