"""Identification in the node, one home for it (no rclpy here; the parts are part.py's):
- the payload on a link, ~/identify_payload (this module): the request checked, joint_states samples
  recorded, the payload estimated by the library, the response filled. The part (PayloadIdentification)
  records under the node's lock (cheap appends from the joint_states callback) and estimates on a
  worker thread, outside the lock; tested without DDS.
- the whole robot, ~/excitation_trajectory and ~/identify_dynamics (dynamics.py: the joint_states
  buffer of identification.buffer_seconds, the requests, an applied estimate and how it composes with
  the configuration; the part DynamicsIdentification, ~/robot_description_identified).

Methods (robot_dynamics.dynamics, docs/identification.md; Atkeson, An and Hollerbach, 1986):
- 'momentum' (default): `identify_payload_from_momentum` on every recorded sample. It integrates the
  momentum balance over windows of identification.window seconds, so it needs no accelerations:
  neither positions nor velocities are differentiated, and effort noise is averaged over each
  window. Move the payload's link through different orientations (the wrist joints), a few seconds.
- 'static': the still stretches of the recording (every |velocity| < identification.still_velocity
  for at least STILL_TIME) are averaged into one pose each and passed to `identify_payload` without
  velocities: mass and centre of mass only (a point mass when applied). Hold several poses with
  the link in clearly different orientations.
The node does not estimate accelerations from measured positions at all: the momentum formulation
replaces them (differentiating positions twice would need a zero-phase low-pass filter on q and the
same filter on the efforts, with its cut-off traded against the excitation's bandwidth).

The recording: every joint_states message that is a complete observer sample (external.EffortSample:
position, velocity and effort of every model joint, finite) from the request on, until its stamps
span `duration`; the same stamp again is skipped; a stamp going back or a gap longer than
observer.max_interval stops it with an error. The identification runs against the model without
the node's configured payload, so the estimate is the whole payload on the link, and applying it
replaces payload.*.
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from ... import dynamics as rd
from ..parameters import ParameterSpec, floats, in_range, positive

PARAMETERS = {
    "identification.window": ParameterSpec(
        0.02, "momentum identification: window [s] over which the momentum balance is integrated",
        "a number of seconds in (0, 1]", in_range(0.0, 1.0, low_open=True)),
    "identification.buffer_seconds": ParameterSpec(
        60.0, "~/identify_dynamics: seconds of joint_states (complete samples with efforts) kept for identification, "
              "at most 64 MB of them (5 min of 1 kHz on 7 joints); 0: none kept",
        "a number of seconds in [0, 600]", in_range(0.0, 600.0)),
    "identification.still_velocity": ParameterSpec(
        0.01, "static identification: a sample is still when every |joint velocity| is below this [rad/s or m/s]",
        "a finite number > 0 [rad/s or m/s]", lambda v: positive([floats(v, scalar=True)])[0]),
}


@dataclass
class Settings:
    """config.identification: the estimates' settings."""
    window: float               # identification.window [s]
    still_velocity: float       # identification.still_velocity
    buffer_seconds: float       # identification.buffer_seconds [s]


def settings(params, config):
    return {"identification": Settings(params["identification.window"], params["identification.still_velocity"],
                                       params["identification.buffer_seconds"])}


def parts():
    from .part import DynamicsIdentification, PayloadIdentification
    return (PayloadIdentification, DynamicsIdentification)


METHODS = ("momentum", "static")
MAX_DURATION = 120.0        # s of joint_states per request
MAX_VALUES = 600_000        # samples x coordinates recorded at most (the estimate's memory: ~100 MB)
STALL_TIMEOUT = 5.0         # s of wall time without a usable sample before the recording gives up
STILL_TIME = 0.25           # s: the shortest still stretch that counts as a static pose
MAX_MASS_STD = 0.05         # apply refused if the mass's standard error exceeds this fraction of it
MAX_COM_STD = 0.01          # ... or the centre of mass's (norm of its three) exceeds this [m]
CHUNK = 4096                # samples per recording buffer (no copies while recording)


class Request:
    """A checked request: duration [ns], method, link, apply, point_mass; ValueError naming a bad field."""

    def __init__(self, request, params, model):
        duration = request.duration
        if not (math.isfinite(duration) and 0.0 < duration <= MAX_DURATION):
            raise ValueError(f"duration takes a number of seconds in (0, {MAX_DURATION:g}]; got {duration!r}")
        self.duration_ns = round(duration * 1e9)
        self.method = request.method or "momentum"
        if self.method not in METHODS:
            raise ValueError(f"method takes one of {', '.join(METHODS)} (empty: momentum); got {request.method!r}")
        self.link = request.link or params["payload.link"] or params["tip_link"]
        if not self.link:
            raise ValueError("link is empty and so are the parameters payload.link and tip_link: name the link "
                             "that carries the payload")
        try:
            body = model.frame(self.link).body
        except KeyError as exc:
            raise ValueError(f"link: {exc.args[0]}") from None
        if body < 0:
            raise ValueError(f"link {self.link!r} is fixed to the world: nothing the joints do moves a payload on it")
        self.apply = bool(request.apply)
        self.point_mass = bool(request.point_mass) or self.method == "static"


class Recorder:
    """Complete samples (stamp, q, v, tau) appended under the node's lock, in preallocated chunks.
    `add` returns True once the recording is finished (its stamps span the duration, or it failed:
    `error` says why). `arrays()` gives (t [s from the first sample], q, v, tau) afterwards."""

    def __init__(self, model, duration_ns, max_interval_ns):
        self.nq, self.nv = model.nq, model.nv
        self.duration_ns, self.max_interval_ns = duration_ns, max_interval_ns
        self.capacity = max(2, MAX_VALUES // max(self.nv, 1))
        self.chunks, self.count = [], 0
        self.first_stamp = self.last_stamp = None
        self.finished, self.error, self.capped = False, None, False
        self.last_sample_wall = time.monotonic()

    def add(self, stamp_ns, q, v, tau):
        if self.finished:
            return False
        if self.last_stamp is not None:
            dt = stamp_ns - self.last_stamp
            if dt == 0:
                return False
            if dt < 0 or dt > self.max_interval_ns:
                what = (f"a joint_states stamp went back by {-dt * 1e-9:.6g} s" if dt < 0 else
                        f"a gap of {dt * 1e-9:.6g} s between joint_states stamps (more than observer.max_interval)")
                return self.fail(f"{what} during the recording: record again")
        k = self.count % CHUNK
        if k == 0:
            self.chunks.append(np.empty((CHUNK, 1 + self.nq + 2 * self.nv)))
        row = self.chunks[-1][k]
        row[0] = 0.0 if self.first_stamp is None else (stamp_ns - self.first_stamp) * 1e-9
        row[1:1 + self.nq] = q
        row[1 + self.nq:1 + self.nq + self.nv] = v
        row[1 + self.nq + self.nv:] = tau
        self.count += 1
        if self.first_stamp is None:
            self.first_stamp = stamp_ns
        self.last_stamp = stamp_ns
        self.last_sample_wall = time.monotonic()
        if stamp_ns - self.first_stamp >= self.duration_ns:
            self.finished = True
        elif self.count >= self.capacity:
            self.finished = self.capped = True
        return self.finished

    def fail(self, error):
        self.finished, self.error = True, error
        return True

    @property
    def span(self):
        return 0.0 if self.first_stamp is None else (self.last_stamp - self.first_stamp) * 1e-9

    def arrays(self):
        data = np.concatenate(self.chunks)[:self.count] if self.count else np.empty((0, 1 + self.nq + 2 * self.nv))
        t = data[:, 0]
        q = np.ascontiguousarray(data[:, 1:1 + self.nq])
        v = np.ascontiguousarray(data[:, 1 + self.nq:1 + self.nq + self.nv])
        tau = np.ascontiguousarray(data[:, 1 + self.nq + self.nv:])
        return t, q, v, tau


def still_poses(t, q, v, tau, still_velocity, min_time=STILL_TIME):
    """The still stretches of a recording (every |v| < still_velocity for at least min_time s),
    each averaged into one pose: (q (P, nq), tau (P, nv))."""
    still = np.all(np.abs(v) < still_velocity, axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], still.astype(np.int8), [0]))))
    poses_q, poses_tau = [], []
    for start, stop in zip(edges[::2], edges[1::2]):
        if t[stop - 1] - t[start] >= min_time:
            poses_q.append(q[start:stop].mean(axis=0))
            poses_tau.append(tau[start:stop].mean(axis=0))
    return np.array(poses_q), np.array(poses_tau)


def estimate(model, request, recorder, window, still_velocity):
    """The PayloadEstimate of a finished recording (the library's), and what was used, as a text;
    ValueError naming why it cannot be identified."""
    if recorder.error:
        raise ValueError(recorder.error)
    t, q, v, tau = recorder.arrays()
    if len(t) < 2:
        raise ValueError(f"only {len(t)} joint_states samples with efforts and velocities of every model joint "
                         "were recorded")
    if request.method == "static":
        poses_q, poses_tau = still_poses(t, q, v, tau, still_velocity)
        if len(poses_q) == 0:
            raise ValueError(f"no still pose in the recording ({len(t)} samples over {t[-1]:.3g} s): hold the arm "
                             f"still (every |velocity| < identification.still_velocity = {still_velocity:g}) for "
                             f"at least {STILL_TIME:g} s in each of several poses")
        est = rd.identify_payload(model, request.link, poses_q, None, None, poses_tau, threads=1)
        return est, f"{len(poses_q)} still pose{'s' if len(poses_q) != 1 else ''} from {len(t)} samples over {t[-1]:.3g} s"
    dt = np.diff(t)
    samples = max(1, round(window / float(np.median(dt))))
    if len(t) - 1 < 2 * samples:
        raise ValueError(f"the recording is too short for the momentum method: {len(t)} samples over {t[-1]:.3g} s, "
                         f"less than two windows of identification.window ({window:g} s)")
    est = rd.identify_payload_from_momentum(model, request.link, q, v, tau, dt, window=samples, threads=1)
    return est, f"{len(t)} samples over {t[-1]:.3g} s, windows of {samples} samples"


def found(est):
    """None if the estimate is a payload (a mass significantly above zero: more than three standard
    errors when they are known), else why not."""
    if est.mass_std is not None and not est.mass > 3 * est.mass_std:
        return (f"no payload found: the mass {est.mass:.4g} kg is not significantly above 0 (standard error "
                f"{est.mass_std:.3g} kg)")
    if not est.mass > 0:
        return f"no payload found: the mass {est.mass:.4g} kg is not positive"
    return None


def parameters_to_apply(est, point_mass):
    """The payload.* parameters of an estimate, or ValueError saying why it is not applied."""
    if est.mass_std is None or not est.mass_std <= MAX_MASS_STD * est.mass:
        std = "unknown (no spare equations)" if est.mass_std is None else f"{est.mass_std:.3g} kg"
        raise ValueError(f"not applied: the mass {est.mass:.4g} kg is too uncertain (standard error {std}, more than "
                         f"{100 * MAX_MASS_STD:g} %); excite the link more or record longer")
    if est.com_std is not None and not np.linalg.norm(est.com_std) <= MAX_COM_STD:
        raise ValueError(f"not applied: the centre of mass is too uncertain (standard errors "
                         f"{np.round(est.com_std, 4).tolist()} m, norm more than {MAX_COM_STD:g} m); turn the link "
                         "through more orientations")
    try:
        return est.as_parameters(point_mass=point_mass)
    except ValueError as exc:
        raise ValueError(f"not applied: {exc}") from None


def _std(x, n):
    """Standard errors as a list of n, -1 where not available."""
    return [-1.0] * n if x is None else [float(v) for v in np.ravel(x)]


def fill_response(response, est, used):
    """The estimate into an IdentifyPayload response (what is not identified: zeros, its flag false;
    standard errors not available: -1)."""
    response.link, response.method, response.samples = est.link, est.method, int(est.samples)
    response.mass = float(est.mass)
    response.com = [0.0] * 3 if est.com is None else [float(x) for x in est.com]
    I = est.inertia
    response.inertia = [0.0] * 6 if I is None else [float(I[0, 0]), float(I[1, 1]), float(I[2, 2]), float(I[0, 1]),
                                                     float(I[0, 2]), float(I[1, 2])]
    response.mass_identified = bool(est.identified["mass"])
    response.com_identified = bool(est.identified["com"]) and est.com is not None
    response.inertia_identified = bool(est.identified["inertia"]) and I is not None
    response.physical = bool(est.physical)
    response.residual, response.condition_number = float(est.residual), float(est.condition_number)
    response.mass_std = -1.0 if est.mass_std is None else float(est.mass_std)
    response.com_std = _std(est.com_std, 3)
    S = est.inertia_std
    response.inertia_std = [-1.0] * 6 if S is None else [float(S[0, 0]), float(S[1, 1]), float(S[2, 2]),
                                                          float(S[0, 1]), float(S[0, 2]), float(S[1, 2])]
    response.message = (f"{est.method}: mass {est.mass:.4g} kg" +
                        (f", centre of mass {np.round(est.com, 4).tolist()} m" if est.com is not None else "") +
                        f" ({used}; residual {est.residual:.3g}, condition number {est.condition_number:.3g})")


NUMBERS = ("mass", "com", "inertia", "residual", "condition_number", "mass_std", "com_std", "inertia_std")


def response_finite(response):
    return all(math.isfinite(x) for name in NUMBERS for x in np.ravel(getattr(response, name)))
