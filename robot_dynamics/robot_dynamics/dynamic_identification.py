"""Whole-robot dynamic identification: every body's inertial parameters, the joints' friction and
armature from joint torques measured along a motion (Atkeson, An and Hollerbach, Estimation of
inertial parameters of manipulator loads and links, IJRR 1986; Swevers, Ganseman, Tukel, De
Schutter and Van Brussel, Optimal robot excitation and identification, IEEE T-RA 1997), the
estimate physically consistent (Wensing, Kim and Slotine, Linear matrix inequalities for
physically consistent inertial parameter identification, IEEE RA-L 2017).

The measured torques are linear in the parameters,
    tau = Y(q, v, a) theta + armature * a + Y_f(v) phi + noise,
theta: each body's ten inertial parameters (regressor.py), phi: the friction coefficients
(friction.py: viscous v + Coulomb clip(v / band, -1, 1) + offset). Steps:
1. a = None: a = d/dt of v low-pass filtered forward and backward (zero phase).
2. The identifiable combinations of [theta, phi, armature] (base parameters): QR of the regressor
   stacked over random states (Gautier, Numerical calculation of the base inertial parameters of
   robots, 1991; regressor.base_of_regressor). The QR takes them in that order, so a dependent
   friction or armature term (the first joint's armature with its link's inertia about the axis)
   regroups into an inertial parameter.
3. The base regressor over the samples, joint j's row left out where |v_j| < rest_velocity (at
   rest or reversing, stiction holds and the Coulomb term is undefined), folded chunk by chunk
   into normal equations per joint (60 s at 1 kHz on 7 joints is 420 000 rows).
4. Least squares, then least squares weighted per joint by its noise, the RMS residual of the
   first (Gautier and Poignet, Extended Kalman filtering and weighted least squares dynamic
   identification of robot, Control Engineering Practice 2001).
5. The standard parameters x = [theta, phi, armature] behind the base ones: the solution of
       min ||W (A K x - tau)||^2 + prior_weight ||(x - x_0) / s||^2
       s.t. J(theta_b) >= 0 for every body b (feasible=True), viscous, Coulomb, armature >= 0
   with x_0 the user's model (the URDF): a prior that decides what the data leave open and pulls
   weakly excited combinations towards it (Sousa and Cortesao, Physical feasibility of robot
   base inertial parameter identification: a linear matrix inequality approach, IJRR 2014;
   Traversaro, Brossette, Escande and Nori, Identification of fully physical consistent inertial
   parameters using optimization on manifolds, IROS 2016). J is the pseudo-inertia
   [[tr(I)/2 1 - I, m c], [m c^T, m]] (I about the body origin): positive semi-definite exactly
   when a mass distribution has these parameters (mass >= 0, inertia about the centre of mass
   positive semi-definite with the triangle inequalities). s: per body, its mass (at least a
   tenth of the average body's) times 1, L, L^2 (L its size: the farthest of its centre of mass
   and its children's joints from its origin, at least 5 cm); per friction or armature
   coefficient, what would explain the joint's RMS torque alone: the URDF's inertias are trusted
   more than its friction and armature, which it seldom knows.
   The data term counts in units of each joint's noise (a chi-square), the prior as a Gaussian of
   standard deviations s / sqrt(prior_weight). prior_weight = 1e-4 by default, a weak prior: URDF
   inertias are often off by tens of percent (a tool, cables, motors), and on synthetic robots
   20-35 % heavier with an unknown 1.2 kg tool a weight of 1 pulled the weakly excited
   combinations towards the URDF enough to cost 5-15 % of held-out accuracy (PUMA, UR5) against a
   plain least squares; from 1e-2 down it matched or beat it.
   A semidefinite program, solved by Clarabel (physical_consistency.py says why that solver).
"""
import copy
from dataclasses import dataclass

import numpy as np

from .friction import friction_regressor, friction_torques
from .model import FRICTION_TERMS
from .physical_consistency import body_problems, nearest_standard
from .regressor import _FROM_PIN, _TO_PIN, BaseParameters, base_of_regressor, inertial_parameter_names, \
    joint_torque_regressor
from .rigid_body import inverse_dynamics

__all__ = ["DynamicsEstimate", "identify_dynamics"]   # the facade's names; the rest serve sibling modules and tests

#: rows per chunk of the stacked regressor (each chunk is N x nv x columns floats)
CHUNK = 4096
#: default cut-off of the acceleration filter: at most this [Hz], at most a tenth of the sample rate
CUTOFF_HZ, CUTOFF_FRACTION = 5.0, 0.1


@dataclass
class DynamicsEstimate:
    """What identify_dynamics found.

    model: a Model with the identified inertias, friction and armature, usable by every function
    of the library (a copy of the given one: the URDF's structure, limits and gravity).
    friction {joint: {"viscous", "coulomb", "offset"}}, armature {joint: value}: est.model's.
    residual: per joint (joint_names order), the RMS of measured minus predicted torque over the
    rows fitted [N m or N]; noise: the same after the first (unweighted) fit, the weights.
    condition_number: of the weighted base regressor with its columns scaled to unit norm.
    base: the base parameters (regressor.BaseParameters over parameter_names: the inertial
    parameters, then '<joint>.<friction term>', then '<joint>.armature'); base_values: their
    estimate (est.model's), base_std: their standard errors from the residual.
    samples: how many samples; rows: the (sample, joint) equations fitted; prior: the given model."""
    model: object
    friction: dict
    armature: dict
    residual: np.ndarray
    noise: np.ndarray
    condition_number: float
    base: BaseParameters
    base_values: np.ndarray
    base_std: np.ndarray
    samples: int
    rows: int
    feasible: bool
    prior: object

    def predict(self, q, v, a):
        """The torques the estimate explains: inverse dynamics of est.model (its armature
        included) plus its friction; one state or a batch."""
        return inverse_dynamics(self.model, q, v, a) + friction_torques(self.model, v)

    def to_urdf(self):
        """The URDF the model was loaded from with the identified <inertial> of every body and
        each joint's <dynamics damping friction> and <robot_dynamics armature friction_offset
        coulomb_band> (urdf_dynamics.py): load_urdf of it predicts what this estimate does."""
        from .urdf_export import urdf_with_dynamics
        return urdf_with_dynamics(self.prior, self.model)

    @property
    def physical(self):
        """Every body of est.model has a positive mass and an inertia about its centre of mass that
        a rigid body can have (physical_consistency.body_problems lists what is not)."""
        return not body_problems(self.model)

    def changes(self):
        """[(parameter name, given, identified)] over the standard parameters, largest relative
        change first (relative to the given value, or to the body's mass scale where it is 0)."""
        before, after = standard_parameters(self.prior), standard_parameters(self.model)
        names = parameter_names(self.model)
        size = np.maximum(np.abs(before), 1e-3 * np.abs(before).max())
        order = np.argsort(-np.abs(after - before) / size, kind="stable")
        return [(names[i], float(before[i]), float(after[i])) for i in order]


def parameter_names(model, friction=FRICTION_TERMS, armature=True):
    """Names of the identification's parameters: the inertial ones, then '<joint>.<term>' per
    joint and friction term, then '<joint>.armature'."""
    return (inertial_parameter_names(model) + [f"{j}.{t}" for j in model.joint_names for t in friction]
            + ([f"{j}.armature" for j in model.joint_names] if armature else []))


def standard_parameters(model, friction=FRICTION_TERMS, armature=True):
    """The model's values of parameter_names."""
    cols = [FRICTION_TERMS.index(t) for t in friction]
    return np.concatenate((model.inertia[:, _TO_PIN].ravel(), model.friction[:, cols].ravel(),
                           model.armature if armature else []))


def identification_regressor(model, q, v, a, friction=FRICTION_TERMS, armature=True, threads=None):
    """The regressor of parameter_names: (N, nv, columns), tau = this @ standard_parameters
    (+ the friction terms and armature not listed, at the model's values)."""
    Y = joint_torque_regressor(model, q, v, a, threads)
    n, c, k, nj, nt = len(q), Y.shape[2], model.joint_offset[1], len(model.joint_names), len(friction)
    E = np.zeros((n, model.nv, c + nj * (nt + bool(armature))))
    E[..., :c] = Y
    rows = k + np.arange(nj)
    E[:, rows[:, None], c + nt * np.arange(nj)[:, None] + np.arange(nt)] = friction_regressor(model, v, friction)
    if armature:
        E[:, rows, c + nt * nj + np.arange(nj)] = a[:, rows]
    return E


def identification_base(model, friction=FRICTION_TERMS, armature=True, seed=0):
    """The base parameters of parameter_names (BaseParameters): the identification regressor
    stacked over random states as regressor.base_parameters stacks Y."""
    names = parameter_names(model, friction, armature)
    n = max(20, -(-5 * len(names) // max(model.nv, 1)))
    rng = np.random.default_rng(seed)
    from .configuration import random_configuration
    q = np.atleast_2d(random_configuration(model, rng, n))
    v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    W = identification_regressor(model, q, v, a, friction, armature).reshape(n * model.nv, -1)
    return base_of_regressor(W, names)


def identify_dynamics(model, q, v, tau, a=None, t=None, friction=FRICTION_TERMS, armature=True, feasible=True,
                      cutoff=None, rest_velocity=None, prior_weight=1e-4, max_condition=1e4, threads=None,
                      progress=None):
    """Identify the robot's dynamics from measured samples (DynamicsEstimate; see the module).

    q (N, nq), v, tau (N, nv): samples in model.joint_names order (tau the measured joint
    torques, e.g. joint_states' effort). a (N, nv), or None with t (N,) the sample times [s]:
    then a = d/dt of v low-pass filtered forward and backward (4th-order Butterworth, zero phase)
    at `cutoff` [Hz] (default min(5 Hz, a tenth of the sample rate): motion below a quarter of
    it passes to 0.4 %, e.g. an excitation of 0.1 Hz and 5 harmonics); gaps over 3 sample periods
    split the filtering.
    friction: the terms to identify, any of ("viscous", "coulomb", "offset"); the others keep the
    model's values, as does the armature with armature=False. rest_velocity: below this speed a
    joint's row is left out (default twice its Coulomb band). feasible: keep every body physical
    (pseudo-inertia PSD) and friction and armature >= 0; False: bodies as the data say (the
    armature stays >= 0, as a Model needs). prior_weight: of the model as a prior (module, 5).
    progress: called with the fraction done after each chunk of samples.

    ValueError (never a silently wrong model) for: a malformed input (named), a floating or
    planar root (the base's six equations need the contact forces), too few rows for the base
    parameters, parameters the samples do not excite (a zero column, or a scaled condition number
    above max_condition: named, the combinations the data cannot determine), or a solver
    failure."""
    q, v, tau, a, t = _checked(model, q, v, tau, a, t)
    if a is None:
        a = accelerations(v, t, cutoff)
    friction = tuple(friction)
    if not set(friction) <= set(FRICTION_TERMS) or len(set(friction)) != len(friction):
        raise ValueError(f"friction takes terms of {FRICTION_TERMS}, each once, got {friction!r}")
    k, nj = model.joint_offset[1], len(model.joint_names)
    rest = 2 * model.coulomb_band if rest_velocity is None else np.asarray(rest_velocity, float).reshape(-1)
    if rest.shape not in ((1,), (nj,)) or not np.all(np.isfinite(rest)) or np.any(rest < 0):
        raise ValueError(f"rest_velocity must be one non-negative speed or one per joint, got {rest_velocity!r}")
    base = identification_base(model, friction, armature)
    # torques of the terms not identified, at the model's values
    keep = model.friction.copy()
    keep[:, [FRICTION_TERMS.index(term) for term in friction]] = 0.0
    fixed = copy.copy(model)
    fixed._friction = keep
    known = friction_torques(fixed, v) + (0.0 if armature else np.r_[np.zeros(k), model.armature] * a)
    G, g, c, n_rows = _normal_equations(model, base, q, v, a, tau - known, rest, friction, armature, threads,
                                        progress)
    _, noise, _ = _base_fit(base, G, g, c, n_rows, max_condition)
    # weights: each joint's noise, floored for noiseless data
    W = [1.0 / max(s, 1e-9 * np.sqrt(cj / max(nr, 1)), 1e-12) ** 2 for s, cj, nr in zip(noise, c, n_rows)]
    Gw, gw = sum(w * Gj for w, Gj in zip(W, G)), sum(w * gj for w, gj in zip(W, g))
    _, _, cond = _base_fit(base, [Gw], [gw], [float(np.dot(W, c))], [sum(n_rows)], max_condition)
    scales = _prior_scales(model, friction, armature, v, a, tau)
    x0 = standard_parameters(model, friction, armature)
    nb, nj, nt = model.nb, len(model.joint_names), len(friction)
    nonneg = list(10 * nb + np.flatnonzero(np.tile([t != "offset" for t in friction], nj))) if feasible else []
    nonneg += list(10 * nb + nj * nt + np.arange(nj)) if armature else []
    x = nearest_standard(base.matrix, Gw, gw, x0, scales, nb if feasible else 0, nonneg, prior_weight)
    out = _with_parameters(model, x, friction, armature)
    b = base.matrix @ x
    residual = np.sqrt(np.maximum([(cj - 2 * gj @ b + b @ Gj @ b) / max(nr, 1) for Gj, gj, cj, nr in
                                   zip(G, g, c, n_rows)], 0.0))
    norms = np.sqrt(np.diag(Gw))
    std = np.sqrt(np.maximum(np.diag(np.linalg.pinv(Gw / np.outer(norms, norms))), 0.0)) / norms
    return DynamicsEstimate(
        out, {j: dict(zip(FRICTION_TERMS, map(float, out.friction[i]))) for i, j in enumerate(model.joint_names)},
        dict(zip(model.joint_names, map(float, out.armature))), residual, np.asarray(noise), cond, base, b, std,
        len(q), int(sum(n_rows)), bool(feasible), model)


def accelerations(v, t, cutoff=None, order=4):
    """d/dt of the velocities v (N, n) sampled at times t, low-pass filtered forward and
    backward (Butterworth of `order`, zero phase; see identify_dynamics for the default cutoff),
    each stretch between gaps of more than 3 sample periods on its own, padded by 6 periods of the
    cut-off (scipy's default padding, 15 samples, left edge transients of 0.1 rad/s^2 at 2 Hz)."""
    from scipy.signal import butter, sosfiltfilt
    dt = np.diff(t)
    period = float(np.median(dt))
    fs = 1.0 / period
    fc = min(CUTOFF_HZ, CUTOFF_FRACTION * fs) if cutoff is None else float(cutoff)
    if not 0 < fc < fs / 2:
        raise ValueError(f"cutoff must be between 0 and half the sample rate ({fs / 2:.6g} Hz), got {cutoff!r}")
    sos = butter(order, fc, fs=fs, output="sos")
    a = np.empty_like(v)
    cuts = np.r_[0, np.flatnonzero(dt > 3 * period) + 1, len(v)]
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        if hi - lo < 3:
            raise ValueError(f"samples {lo}..{hi - 1} (t = {t[lo]:.6g} s) lie between gaps: too few to "
                             "differentiate")
        pad = min(hi - lo - 1, max(3 * (2 * len(sos) + 1), int(6 * fs / fc)))
        a[lo:hi] = np.gradient(sosfiltfilt(sos, v[lo:hi], axis=0, padlen=pad), t[lo:hi], axis=0)
    return a


# --- the steps ----------------------------------------------------------------------------------
def _checked(model, q, v, tau, a, t):
    multi = [f"{j.name!r} ({j.kind})" for j in model.joints if j.kind in ("floating", "planar")]
    if multi:
        raise ValueError(f"identify_dynamics needs a fixed base and one-coordinate joints: joint {multi[0]} has "
                         "no torque of its own (a free base's equations need the contact forces)")
    if not model.joint_names:
        raise ValueError("the model has no joints to identify")
    out = []
    for x, name, width in ((q, "q", model.nq), (v, "v", model.nv), (tau, "tau", model.nv), (a, "a", model.nv)):
        x = None if x is None else np.array(x, dtype=float, ndmin=2, copy=True)
        if x is not None:
            if x.ndim != 2 or x.shape[1] != width or (out and len(x) != len(out[0])):
                want = f"({len(out[0])}, {width})" if out else f"(N, {width})"
                raise ValueError(f"{name} must have shape {want} (samples in model.joint_names order), "
                                 f"got shape {x.shape}")
            bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
            if len(bad):
                raise ValueError(f"{name} has NaN or inf in sample {bad[0]} ({len(bad)} samples)")
        out.append(x)
    if a is None:
        if t is None:
            raise ValueError("give the accelerations a, or the sample times t to derive them from v")
        t = np.asarray(t, float).reshape(-1)
        if t.shape != (len(out[0]),) or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise ValueError(f"t must be {len(out[0])} finite, increasing sample times, got shape {t.shape}")
    return (*out[:3], out[3], t)


def _normal_equations(model, base, q, v, a, y, rest, friction, armature, threads, progress):
    """Per joint: G_j = A_j^T A_j, g_j = A_j^T y_j, c_j = y_j^T y_j and the rows, A_j the base
    regressor's rows of joint j where it moves faster than its rest velocity. Built per joint from
    the inertial regressor's row and the joint's own friction and armature columns, and only over
    the columns that are not zero in it (the bodies below the joint): a third of the work of the
    whole base regressor's rows on a 7-joint chain, and no (N, nv, columns) copies."""
    k, nj, p, nt, ncol = model.joint_offset[1], len(model.joint_names), len(base.columns), len(friction), 10 * model.nb
    inertial = np.flatnonzero(base.columns < ncol)
    extra = [(i, (c - ncol) // nt, (c - ncol) % nt) if c < ncol + nj * nt else (i, c - ncol - nj * nt, -1)
             for i, c in enumerate(base.columns) if c >= ncol]          # (position, joint, term; -1: armature)
    G, g, c, n_rows = np.zeros((nj, p, p)), np.zeros((nj, p)), np.zeros(nj), np.zeros(nj, int)
    for lo in range(0, len(q), CHUNK):
        s = slice(lo, lo + CHUNK)
        Y = joint_torque_regressor(model, q[s], v[s], a[s], threads)
        F = friction_regressor(model, v[s], friction)
        moving = np.abs(v[s, k:]) >= rest
        for j in range(nj):
            w = moving[:, j]
            Yj = np.take(Y[:, k + j][w], base.columns[inertial], axis=1)
            nz = np.flatnonzero(Yj.any(axis=0))
            own = [(i, t) for i, joint, t in extra if joint == j]
            columns = np.r_[inertial[nz], [i for i, _ in own]].astype(int)
            Aj = np.empty((len(Yj), len(columns)))
            Aj[:, :len(nz)] = Yj[:, nz]
            for col, (_, t) in enumerate(own, len(nz)):
                Aj[:, col] = F[w, j, t] if t >= 0 else a[s][w, k + j]
            yj = y[s][w, k + j]
            G[j][np.ix_(columns, columns)] += Aj.T @ Aj
            g[j][columns] += Aj.T @ yj
            c[j] += yj @ yj
            n_rows[j] += len(yj)
        if progress is not None:
            progress(min(1.0, (lo + CHUNK) / len(q)))
    return G, g, c, n_rows


def _base_fit(base, G, g, c, n_rows, max_condition):
    """Least squares of the base parameters from normal equations summed over G (a list per
    joint): (beta, RMS residual of each, condition number of the column-scaled problem);
    ValueError naming what the rows cannot determine."""
    Gt, gt, rows = sum(G), sum(g), int(sum(n_rows))
    p = len(base.columns)
    if rows < p:
        raise ValueError(f"{rows} equations (samples times moving joints) for {p} base parameters: record more "
                         "samples of the robot moving")
    norms = np.sqrt(np.diag(Gt))
    dead = [base.names[i] for i in np.flatnonzero(~(norms > 1e-12 * norms.max()))]
    if dead:
        raise ValueError(f"the samples do not excite {', '.join(dead)}: these parameters do not change any "
                         "measured torque (a joint never moving faster than its rest velocity?)")
    Gs = Gt / np.outer(norms, norms)
    w, V = np.linalg.eigh(Gs)
    cond = float(np.sqrt(w[-1] / w[0])) if w[0] > 0 else float("inf")
    if not cond <= max_condition:
        weak = V[:, w < w[-1] / max_condition ** 2]
        names = [base.names[i] for i in np.argsort(-np.abs(weak).max(axis=1))[:min(6, p)]
                 if np.abs(weak[i]).max() > 0.2]
        raise ValueError(f"the samples do not excite every base parameter (scaled condition number {cond:.3g} > "
                         f"{max_condition:.3g}): they cannot determine {'; '.join(names)}. Record a richer "
                         "motion (robot_dynamics.excitation_trajectory)")
    beta = (V @ ((V.T @ (gt / norms)) / w)) / norms
    noise = [np.sqrt(max(cj - 2 * gj @ beta + beta @ Gj @ beta, 0.0) / max(nr, 1))
             for Gj, gj, cj, nr in zip(G, g, c, n_rows)]
    return beta, noise, cond



def _prior_scales(model, friction, armature, v, a, tau):
    """s of the prior (module, step 5): per body, its mass scale times 1, L, L^2; per friction
    and armature coefficient, the value that would explain the joint's RMS torque alone."""
    k, nb = model.joint_offset[1], model.nb
    mass = model.inertia[:, 0]
    m = np.maximum(mass, max(0.1 * mass.sum() / max(nb, 1), 1e-3))
    L = np.full(nb, 0.05)                                       # the body's size: its COM, its children's joints
    L = np.maximum(L, np.linalg.norm(model.inertia[:, 1:4], axis=1) / np.where(mass > 0, mass, 1.0))
    np.maximum.at(L, model.parent[model.parent >= 0], np.linalg.norm(model.tree_translation[model.parent >= 0], axis=1))
    unit = np.array([1.0, 1, 1, 1, 2, 2, 2, 2, 2, 2])          # powers of L, PARAMETERS order
    inertial = (m[:, None] * L[:, None] ** unit).ravel()
    rms = lambda x: np.sqrt(np.mean(x * x, axis=0))             # noqa: E731
    torque = np.maximum(rms(tau[:, k:]), 1e-9)
    cols = friction_regressor(model, v, friction)               # (N, joints, terms)
    fric = (torque[:, None] / np.maximum(rms(cols), 1e-9)).ravel()
    arm = torque / np.maximum(rms(a[:, k:]), 1e-9) if armature else np.zeros(0)
    return np.concatenate((inertial, fric, arm))


def _with_parameters(model, x, friction, armature):
    """A copy of the model with the standard parameters x (parameter_names order)."""
    out = copy.deepcopy(model)
    nb, nj, nt = model.nb, len(model.joint_names), len(friction)
    theta = x[:10 * nb].reshape(nb, 10)
    for body in range(nb):
        out.set_body_inertia(body, theta[body, _FROM_PIN])
    f = out.friction
    f[:, [FRICTION_TERMS.index(t) for t in friction]] = x[10 * nb:10 * nb + nj * nt].reshape(nj, nt)
    out.friction = f
    if armature:
        arm = x[10 * nb + nj * nt:]
        if np.any(arm < -1e-9 * max(1.0, np.abs(arm).max())):
            raise ValueError(f"the identified armature {arm} is negative: the solver did not converge")
        out.armature = np.maximum(arm, 0.0)
    return out
