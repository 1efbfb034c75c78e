"""External joint torques from the generalized momentum, and the wrench at a frame that explains
them (De Luca and Mattone, Sensorless robot collision detection and hybrid force/motion control,
2005; Haddadin, De Luca and Albu-Schaeffer, Robot collisions: a survey on detection, isolation,
and identification, 2017).

The observer's residual r = K (p(t) - p(0) - integral(tau + C^T qd - g + r) dt), p = M(q) qd, obeys
rdot = K (tau_ext - r): each joint's r follows the external torque with a first-order lag of gain
K (1/s; time constant 1/K), from measured positions, velocities and torques only, no
accelerations. It is sampled exactly for a torque held over each interval (see
kernels/observer.py): after a step of external torque at a sample, r_k = (1 - exp(-K t_k))
tau_ext at every later sample whatever K dt; the known torques tau - beta (beta = g - C^T qd) are
integrated by the trapezoidal rule. p and beta come from one compiled pass (kernels/momentum.py),
~ the cost of one inverse dynamics. Whatever the model leaves out (joint friction, an unmodelled
payload, torque sensor offsets) shows in r as external torque.

`MomentumObserver` runs it sample by sample (e.g. in a joint_states callback); `external_torques`
runs it over a recorded trajectory; `estimate_wrench` finds the wrench F at a frame whose J^T F
best explains r (damped least squares).
"""
import numpy as np

from .kernels import momentum as _momentum
from .kernels import observer as _observer
from .calling import Data, Direct, Kernel, batch_size, call, plain, plain_data, raise_status, vector
from .model import per_joint
from .rigid_body import frame_jacobian

COMPONENTS = {"wrench": slice(0, 6), "force": slice(0, 3), "torque": slice(3, 6)}
_INF = float("inf")


def _gains(model, gain):
    K_ = per_joint(gain, model.nv, "gain")
    if np.any(K_ <= 0):
        raise ValueError(f"gain must be positive (1/s, one value or one per coordinate of v: {model.nv}), got {gain!r}")
    return K_


def _dt(dt):
    try:
        h = float(dt)
    except (TypeError, ValueError):
        h = float("nan")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"dt must be a positive finite number of seconds, got {dt!r}")
    return h


class MomentumObserver:
    """The generalized-momentum observer of external joint torques, one sample at a time.

        obs = MomentumObserver(model, gain=50.0)     # 1/s, one value or one per coordinate of v
        obs.reset(q, v, tau)                         # first sample: r = 0
        r = obs.update(q, v, tau, dt)                # each next sample, dt seconds later
        F = obs.wrench("tool0")                      # the wrench at tool0 that best explains r

    tau: the measured joint torques (motor side, as the model's: armature included in M); r has
    the sign of an external torque acting on the robot (tau_ext in M qdd + C qd + g = tau +
    tau_ext, i.e. J^T F for a wrench F applied by the environment). The model is read at every
    update (a changed gravity, armature or payload applies from the next sample). Each observer
    has its own buffers (a Data of its own): observers of one model can run in different threads;
    calls to one observer must not overlap."""

    def __init__(self, model, gain):
        self.model = model
        self.gain = _gains(model, gain)
        self._X = np.zeros((_observer.X_ROWS, model.nv))
        self._data = Data(model)
        self._W = self._data.momentum
        self._q = None                  # the last sample's q (for `wrench`); None before reset
        self._trapezoid = False
        self._zero = np.zeros(model.nv)

    @property
    def ready(self):
        """reset has been called."""
        return self._q is not None

    @property
    def external_torques(self):
        """r after the last update (zero after reset), a copy."""
        self._require()
        return self._X[_observer.X_R].copy()

    @property
    def momentum(self):
        """p = M(q) v at the last sample, a copy."""
        self._require()
        return self._X[_observer.X_P].copy()

    def reset(self, q, v, tau=None):
        """Start from the sample (q, v) with r = 0. With tau, the first update integrates the
        known torques by the trapezoidal rule; without, by the rectangle rule (tau of the update)."""
        m = self.model
        q, v = vector(q, m.nq, "q", 0), vector(v, m.nv, "v", 0)
        t = self._zero if tau is None else vector(tau, m.nv, "tau", 0)
        status = _observer.observer_reset(m.packed, q, v, t, tau is not None, self._X, self._W)
        if status:
            self._q = None
            raise_status(m, status, dict(q=q, v=v, tau=t))
        self._q = q.copy()
        self._trapezoid = tau is not None

    def update(self, q, v, tau, dt):
        """The next sample, dt seconds after the previous one: returns r (nv,), the estimated
        external joint torques. ValueError naming the input (non-finite, wrong shape, a
        non-unit quaternion, dt not positive) leaves the observer at the previous sample."""
        m = self.model
        if plain_data(m, self._data, q, v, tau) is not None and type(dt) is float and 0.0 < dt < _INF \
                and self._q is not None:
            if not _STEP.run(m.packed, q, v, tau, dt, self.gain, self._trapezoid, self._X, self._W):
                self._q[:] = q
                self._trapezoid = True
                return self._X[_observer.X_R].copy()
        self._require()
        q, v, tau = vector(q, m.nq, "q", 0), vector(v, m.nv, "v", 0), vector(tau, m.nv, "tau", 0)
        status = _observer.observer_step(m.packed, q, v, tau, _dt(dt), self.gain, self._trapezoid, self._X, self._W)
        raise_status(m, status, dict(q=q, v=v, tau=tau))
        self._q[:] = q
        self._trapezoid = True
        return self._X[_observer.X_R].copy()

    def wrench(self, frame, reference="local_world_aligned", damping=0.0, components="wrench"):
        """The wrench [force; torque] at `frame` (at the last sample's q) whose J^T F best
        explains r: see `estimate_wrench`."""
        self._require()
        return estimate_wrench(self.model, self._q, frame, self._X[_observer.X_R], reference, damping, components)

    def collision(self, threshold):
        """Some |r_i| exceeds its threshold (one value or one per coordinate of v, N m or N):
        the collision detection of De Luca and Mattone."""
        self._require()
        limit = per_joint(threshold, self.model.nv, "threshold")
        return bool(np.any(np.abs(self._X[_observer.X_R]) > limit))

    def _require(self):
        if self._q is None:
            raise RuntimeError("the observer has no sample yet: call reset(q, v[, tau]) first")


def generalized_momentum(model, q, v, threads=None, data=None):
    """(p, beta): the generalized momentum p = M(q) v and beta = g(q) - C(q, v)^T v, the terms
    of the momentum balance pdot = tau - beta + tau_ext, from one compiled pass (no mass or
    Coriolis matrix; kernels/momentum.py). One state (nv,) each, or a batch (N, nv)."""
    d = plain_data(model, data, q, v)
    if d is not None:
        p, beta = np.empty(model.nv), np.empty(model.nv)
        if not _MOMENTUM.run(model.packed, q, v, p, beta, d.momentum):
            return p, beta
    q = vector(q, model.nq, "q")
    n = batch_size(q)
    v = vector(v, model.nv, "v", n)
    p, beta = np.empty(v.shape), np.empty(v.shape)
    call(_MOMENTUM, model, data, threads, n, (q, v, p, beta), dict(q=q, v=v))
    return p, beta


def external_torques(model, q, v, tau, dt, gain, threads=None, data=None):
    """The momentum observer over a recorded trajectory: r (N, nv) at each of N consecutive
    samples (q (N, nq), v, tau (N, nv)), dt apart (a number, or the N - 1 intervals, e.g.
    np.diff of the timestamps); r[0] = 0. The same sampling as MomentumObserver (reset with
    tau, then update): p and beta of all samples in one batch, then the recursion."""
    q = vector(q, model.nq, "q")
    if q.ndim != 2 or len(q) < 1:
        raise ValueError(f"q must be a trajectory of shape (N, {model.nq}), got shape {q.shape}")
    n = len(q)
    v, tau = vector(v, model.nv, "v", n), vector(tau, model.nv, "tau", n)
    gains = _gains(model, gain)
    d = np.asarray(dt, float)
    d = np.full(n - 1, float(d)) if d.ndim == 0 else d.reshape(-1)
    if d.shape != (n - 1,) or not np.all(np.isfinite(d)) or np.any(d <= 0):
        raise ValueError(f"dt must be a positive number or the {n - 1} positive intervals between the {n} samples, "
                         f"got {dt!r}")
    if not np.all(np.isfinite(tau)):
        raise ValueError(f"tau contains NaN or inf (batch row {int(np.flatnonzero(~np.isfinite(tau).all(1))[0])})")
    P, B = np.empty((n, model.nv)), np.empty((n, model.nv))
    call(_MOMENTUM, model, data, threads, n, (q, v, P, B), dict(q=q, v=v))
    R = np.empty((n, model.nv))
    bad = _observer.observer_run(P, B, tau, d, gains, R)
    if bad >= 0:
        raise ValueError(f"the observer's output is not finite at sample {bad}: the inputs are too large for double "
                         "precision")
    return R


def estimate_wrench(model, q, frame, tau_ext, reference="local_world_aligned", damping=0.0, components="wrench",
                    threads=None, data=None):
    """The wrench F = [force; torque] at `frame` (its origin, axes of `reference`: world, local
    or local_world_aligned) whose joint torques J^T F best explain tau_ext (e.g. the observer's
    r): F minimises |J^T F - tau_ext|^2 + damping^2 |F|^2 (damped least squares; damping in the
    units of J's rows, m for the force rows). damping = 0: the least-squares solution of least
    norm (a pseudo-inverse: F is unique when J has full row rank). components: 'wrench' (6
    unknowns), 'force' (a contact force at the frame origin, no torque) or 'torque'; the
    others are zero in F. One state (q (nq,), tau_ext (nv,)) -> (6,), or a batch -> (N, 6)."""
    if components not in COMPONENTS:
        raise ValueError(f"components must be one of {', '.join(COMPONENTS)}, got {components!r}")
    lam = float(damping) if np.isscalar(damping) and not isinstance(damping, (str, bytes)) else float("nan")
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"damping must be a finite number >= 0, got {damping!r}")
    J = frame_jacobian(model, q, frame, reference, threads, data)
    n = J.shape[0] if J.ndim == 3 else 0
    r = vector(tau_ext, model.nv, "tau_ext", n)
    if not np.all(np.isfinite(r)):
        raise ValueError("tau_ext contains NaN or inf")
    rows = COMPONENTS[components]
    if model.frame(frame).body < 0:
        raise ValueError(f"frame {frame!r} is fixed to the world: no wrench there moves a joint")
    if not n:                           # one state: compiled Cholesky (the SVD below if near-singular)
        F, A = np.empty(6), np.empty((6, 7))
        if _observer.damped_least_squares(J, rows.start, rows.stop, r, lam * lam, A, F):
            return _finite_wrench(F)
    Jc = J[..., rows, :]
    with np.errstate(over="ignore", invalid="ignore"):     # checked below
        if lam > 0:
            A = Jc @ np.swapaxes(Jc, -1, -2) + lam * lam * np.eye(Jc.shape[-2])
            Fc = np.linalg.solve(A, (Jc @ r[..., None]))[..., 0]
        else:
            Fc = (np.linalg.pinv(np.swapaxes(Jc, -1, -2), rcond=1e-10) @ r[..., None])[..., 0]
    F = np.zeros(J.shape[:-2] + (6,))
    F[..., rows] = Fc
    return _finite_wrench(F)


def _finite_wrench(F):
    if not np.all(np.isfinite(F)):
        raise ValueError("the wrench estimate is not finite: tau_ext is too large for double precision")
    return F


_STEP, _MOMENTUM = Direct(_observer.observer_step), Kernel(_momentum, "momentum")
