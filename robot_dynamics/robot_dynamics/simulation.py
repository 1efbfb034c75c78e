"""A simulator: forward dynamics, or constrained forward dynamics under contacts, integrated in
time on the joints' Lie groups (`rd.integrate`). Re-exported by `dynamics` (`rd.simulate`,
`rd.spring_damper_floor`).

    traj = rd.simulate(model, q0, v0, dt=1e-3, steps=1000)              # falls under gravity
    traj.times, traj.q, traj.v                                          # (steps + 1,), (steps + 1, nq), ...

Integrators (kernels/simulate.py has the equations): "rk4", fourth-order Runge-Kutta-Munthe-Kaas
on the groups (default); "semi_implicit_euler" (symplectic Euler); "euler", explicit Euler as in
Kajita et al., Humanoid Robots, section 6.1.2. What they conserve (docs/simulation.md, measured):
a free-floating robot without gravity keeps its centroidal momentum and kinetic energy to 3e-13 to
7e-10 over 1000 RK4 steps of 1 ms; the Euler methods drift by 3e-4 to 3e-2 there (they step the
velocity in the moving joint frames); the angular momentum of Kajita's tumbling box drifts by 1.5e-8
under RK4 over 5 s at the book's dt = 0.02 s, by 3-6 % under the Euler methods (the book's own
code: 5.9 %). Semi-implicit Euler's energy error stays bounded on a pendulum, explicit Euler's grows.

tau: None (zero), an array (nv,) held constant, (steps, nv) one per step (held over the step), or a
callable tau(t, q, v) -> (nv,) evaluated at every stage. external_wrenches: {frame: wrench or
(wrench, reference)} as `rd.forward_dynamics` takes them, held constant, or a callable
(t, q, v) -> such a dict (or None), e.g. `spring_damper_floor`. contacts (and loops, baumgarte):
as `rd.constrained_forward_dynamics`; external wrenches then enter as J^T F. A batch of initial
states (N, nq) and (N, nv) runs them all (a callable then gets the batch, and tau may also be
(N, steps, nv)). Arrays of torques with constant wrenches and no contacts run in one compiled loop;
otherwise every stage calls the library from Python.

Never returns a non-finite state: a step whose state overflows, or a mass matrix that is not positive
definite, raises an error that names the step and its time; so does a callable's answer of the wrong
kind (ValueError or TypeError), and an exception a callable raises comes back as a RuntimeError naming
the step, its time and the callable, the user's exception chained (`__cause__`).
"""
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from . import calling as _call
from . import kernels as K
from .constrained import constrained_forward_dynamics
from .kernels import configuration as _config
from .kernels import simulate as _sim
from .rigid_body import forward_dynamics, frame_jacobian, frame_placement, wrench_to_joint_torques

DIVERGED = ("the state is no longer finite (or beyond 1e50): the simulation diverged; a smaller dt, or another "
            "integrator, may hold it")
INTEGRATORS = {"euler": _sim.EULER, "semi_implicit_euler": _sim.SEMI_IMPLICIT, "rk4": _sim.RK4}


class Simulation(NamedTuple):
    times: np.ndarray   #: (steps + 1,): 0, dt, ..., steps dt
    q: np.ndarray       #: (steps + 1, nq), or (N, steps + 1, nq) for a batch of initial states
    v: np.ndarray       #: (steps + 1, nv), or (N, steps + 1, nv)


def simulate(model, q0, v0, dt, steps, tau=None, external_wrenches=None, contacts=(), integrator="rk4",
             loops=(), baumgarte=None, threads=None, data=None):
    """Simulation (times, q, v) of `steps` steps of length dt from (q0, v0): see the module docstring."""
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {', '.join(INTEGRATORS)}, got {integrator!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite positive number of seconds, got {dt!r}")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    steps = int(steps)
    q0 = _call.vector(q0, model.nq, "q0")
    n = _call.batch_size(q0)
    v0 = _call.vector(v0, model.nv, "v0", n)
    try:        # the initial state checked as forward dynamics checks it (finite, unit quaternions, M > 0)
        forward_dynamics(model, q0, v0, np.zeros(v0.shape), data=data)
    except ValueError as e:
        raise type(e)(f"the initial state (q0, v0): {e}") from None
    times = dt * np.arange(steps + 1)
    method = INTEGRATORS[integrator]
    if not callable(tau) and not callable(external_wrenches) and not contacts and not loops:
        Q, V = _compiled(model, data, q0, v0, dt, steps, _torques(model, tau, steps, n), external_wrenches, method,
                         times, threads)
    else:
        Q, V = _stepped(model, data, q0, v0, dt, steps, tau, external_wrenches, contacts, loops, baumgarte, method,
                        times, threads)
    return Simulation(times, Q, V)


def _torques(model, tau, steps, n):
    """tau as the kernel's (N or 1, steps or 1, nv) array."""
    nv = model.nv
    if tau is None:
        return np.zeros((1, 1, nv))
    t = np.asarray(tau, dtype=np.float64)
    if t.shape == (nv,):
        t = t.reshape(1, 1, nv)
    elif t.shape == (steps, nv) and steps:
        t = t.reshape(1, steps, nv)
    elif n and t.shape == (n, steps, nv) and steps:
        pass
    else:
        want = f"({nv},), ({steps}, {nv})" + (f" or ({n}, {steps}, {nv})" if n else "")
        raise ValueError(f"tau must be a callable tau(t, q, v) or an array of shape {want}, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("tau contains NaN or inf")
    return np.ascontiguousarray(t)


def _failure(model, status, Q, step, times, where=""):
    """The error of a failed step: divergence, or what raise_status says of the state (a mass
    matrix that is not positive definite)."""
    prefix = f"simulation failed at step {step} (t = {times[step]:.6g} s){where}: "
    if status % K.STATUS_BODY in (K.NONFINITE, K.OVERFLOW):
        raise ValueError(prefix + DIVERGED)
    try:
        _call.raise_status(model, status, {"q": Q})
    except ValueError as e:
        raise type(e)(prefix + str(e)) from None


def _compiled(model, data, q0, v0, dt, steps, TAU, external_wrenches, method, times, threads):
    n = _call.batch_size(q0)
    ext = _call.external_rows(model, _call.of(model, data), external_wrenches, 0)
    N = max(n, 1)
    Q0, V0 = q0.reshape(N, model.nq), v0.reshape(N, model.nv)
    Q, V = np.empty((N, steps + 1, model.nq)), np.empty((N, steps + 1, model.nv))
    failed = np.zeros((N, 1), np.int64)

    def failure(model, status, inputs):
        row = int(np.flatnonzero(status)[0])
        step = int(failed[row, 0])
        _failure(model, int(status[row]), Q[row, step], step, times, f" (batch row {row})" if n else "")
    _call.call(_SIMULATION, model, data, threads, N, (Q0, V0, TAU, ext, float(dt), method, Q, V, failed), None,
               error=failure)
    return (Q, V) if n else (Q[0], V[0])


_SIMULATION = _call.Kernel(_sim, "simulation")


def _stepped(model, data, q0, v0, dt, steps, tau, external_wrenches, contacts, loops, baumgarte, method, times,
             threads):
    """The same methods as the compiled loop, a library call per stage (callables, contacts)."""
    n = _call.batch_size(q0)
    TAU = None if callable(tau) else _torques(model, tau, steps, n)

    def torques(t, s, q, v):
        if TAU is None:
            x = _call.vector(_user(tau, "tau(t, q, v)", t, q, v), model.nv, "tau(t, q, v)")
            if x.ndim > v.ndim or (x.ndim == 2 and x.shape != v.shape) or not np.all(np.isfinite(x)):
                raise ValueError(f"tau(t, q, v) must return {v.shape} or ({model.nv},) finite torques, got {x!r}")
            return np.broadcast_to(x, v.shape).copy()
        x = TAU[:, min(s, TAU.shape[1] - 1)]
        return x if n else x[0]

    def accel(t, s, q, v):
        u = torques(t, s, q, v)
        ext = external_wrenches
        if callable(external_wrenches):
            ext = _user(external_wrenches, "external_wrenches(t, q, v)", t, q, v)
            if ext is not None and not isinstance(ext, Mapping):
                raise TypeError(f"external_wrenches(t, q, v) must return a dict {{frame: wrench or (wrench, reference)}} "
                                f"or None, got {type(ext).__name__}")
        if not (contacts or loops):
            return forward_dynamics(model, q, v, u, ext, threads=threads, data=data)
        for frame, value in (ext or {}).items():
            wrench, reference = value if isinstance(value, tuple) else (value, "local_world_aligned")
            u = u + wrench_to_joint_torques(model, q, frame, wrench, reference, data=data)
        return constrained_forward_dynamics(model, q, v, u, contacts, loops, baumgarte, threads, data)[0]

    shape = q0.shape[:-1]
    Q, V = np.empty(shape + (steps + 1, model.nq)), np.empty(shape + (steps + 1, model.nv))
    Q[..., 0, :], V[..., 0, :] = q0, v0
    for s in range(steps):
        q, v, t = Q[..., s, :], V[..., s, :], times[s]
        try:
            a1 = accel(t, s, q, v)
            if method == _sim.EULER:
                Q[..., s + 1, :], V[..., s + 1, :] = _integrate(model, q, v, dt), v + dt * a1
            elif method == _sim.SEMI_IMPLICIT:
                V[..., s + 1, :] = v + dt * a1
                Q[..., s + 1, :] = _integrate(model, q, V[..., s + 1, :], dt)
            else:
                k, a = [v], [a1]
                for c in (0.5 * dt, 0.5 * dt, dt):
                    theta = c * k[-1]
                    vs = v + c * a[-1]
                    a.append(accel(t + c, s, _integrate(model, q, theta, 1.0), vs))
                    k.append(_rate(model, theta, vs))
                Q[..., s + 1, :] = _integrate(model, q, dt / 6 * (k[0] + 2 * k[1] + 2 * k[2] + k[3]), 1.0)
                V[..., s + 1, :] = v + dt / 6 * (a[0] + 2 * a[1] + 2 * a[2] + a[3])
        except _Raised as e:          # the user's callable raised: said with the step, theirs chained
            raise RuntimeError(f"simulation failed at step {s} (t = {t:.6g} s): {e.name} raised "
                               f"{type(e.error).__name__}: {e.error}") from e.error
        except (ValueError, TypeError, KeyError) as e:   # diverged, M not positive definite, a callable's answer
            prefix = f"simulation failed at step {s} (t = {t:.6g} s): "
            if str(e).startswith(("q contains", "v contains")):     # the state itself: it diverged
                raise ValueError(prefix + DIVERGED) from None
            raise type(e)(prefix + (e.args[0] if isinstance(e, KeyError) and e.args else str(e))) from None
    return Q, V


class _Raised(Exception):
    """A user's callable raised `error` (an Exception, not KeyboardInterrupt or SystemExit)."""

    def __init__(self, name, error):
        super().__init__(name)
        self.name, self.error = name, error


def _user(fn, name, t, q, v):
    """fn(t, q, v), a callable the user passed; what it raises comes back as _Raised."""
    try:
        return fn(t, q, v)
    except Exception as e:  # noqa: BLE001 (any of the user's errors, re-raised with the step by the loop)
        raise _Raised(name, e) from e


def _integrate(model, q, v, dt):
    Q, W = np.atleast_2d(q), np.ascontiguousarray(np.atleast_2d(v))
    out = np.empty(Q.shape)
    _config.integrate_rows(model.packed, np.ascontiguousarray(Q), W, dt, out)
    return out.reshape(np.shape(q))


def _rate(model, theta, v):
    T, W = np.ascontiguousarray(np.atleast_2d(theta)), np.ascontiguousarray(np.atleast_2d(v))
    out = np.empty(T.shape)
    _config.tangent_rate_rows(model.packed, T, W, out)
    return out.reshape(np.shape(theta))


def spring_damper_floor(model, frames, stiffness=1.0e4, damping=1.0e3, friction=None, mu=None, height=0.0,
                        data=None):
    """The floor of Kajita et al., Humanoid Robots, section 6.3.4, as an external-wrench callable
    for `simulate`: each frame's origin below the plane z = height gets the force
    f = [-D_t v_x, -D_t v_y, -K (z - height) - D v_z] at that origin (world axes), v the origin's
    velocity, K the stiffness [N/m], D the damping [N s/m] and D_t the viscous friction (default D,
    the book's choice); mu: if given, the horizontal force is capped at mu f_z (Coulomb). A state
    batch gets a batch of wrenches."""
    frames = [frames] if isinstance(frames, str) else list(frames)
    for f in frames:
        model.frame(f)      # KeyError naming it, now rather than mid-simulation
    values = dict(stiffness=stiffness, damping=damping, height=height,
                  friction=damping if friction is None else friction, mu=np.inf if mu is None else mu)
    for name, x in values.items():
        if not (np.isfinite(x) or (name == "mu" and x == np.inf)) or (name != "height" and x < 0):
            raise ValueError(f"{name} must be a finite non-negative number, got {x!r}")
    K, D, Dt, mu, z0 = (values[k] for k in ("stiffness", "damping", "friction", "mu", "height"))

    def wrenches(t, q, v):
        out = {}
        for f in frames:
            p = frame_placement(model, q, f, data=data)[..., :3, 3]
            vel = np.einsum("...ij,...j->...i", frame_jacobian(model, q, f, "local_world_aligned", data=data)[..., :3, :],
                            v)
            below = p[..., 2] < z0
            fz = np.where(below, -K * (p[..., 2] - z0) - D * vel[..., 2], 0.0)
            ft = np.where(below[..., None], -Dt * vel[..., :2], 0.0)
            if np.isfinite(mu):
                norm = np.linalg.norm(ft, axis=-1)
                cap = mu * np.maximum(fz, 0.0)
                ft = ft * np.where(norm > cap, cap / np.where(norm > 0, norm, 1.0), 1.0)[..., None]
            w = np.zeros(p.shape[:-1] + (6,))
            w[..., :2], w[..., 2] = ft, fz
            out[f] = (w, "local_world_aligned")
        return out

    return wrenches
