"""The generalized-momentum observer (De Luca and Mattone, 2005): p = M v and beta = g - C^T v
against Pinocchio; the residual r on simulated data with a known external wrench follows it as a
first-order lag of the chosen gain, is zero when nothing touches the robot, and the wrench at the
frame is recovered; bad input is refused by name and leaves the observer as it was."""
import numpy as np
import pytest

from oracle import Pair, pin, rel_err
from robot_dynamics import dynamics as rd

pytestmark = pytest.mark.robots("panda", "talos-freeflyer", "mimic", "mimic-freeflyer", "puma560", "biped-freeflyer",
                                "planar_base_arm", "floating_object_arm")
FRAME = "panda_hand"


@pytest.fixture(scope="module")
def panda():
    return Pair("panda").model


def test_momentum_and_beta_against_pinocchio(pair):
    """p = M v (Pinocchio's crba) and beta = g - C^T v (computeCoriolisMatrix, which has
    Mdot = C + C^T, and computeGeneralizedGravity), with armature in M; batches as single calls."""
    m, P = pair.model, pair
    if m.joint_names:
        m.armature = np.linspace(0.1, 0.7, len(m.joint_names))
    rng = np.random.default_rng(0)
    Q, V = [], []
    for _ in range(40):
        q, v, _ = pair.random_state(rng)
        pq, pv = P.pin_q(q), P.pin_v(v)
        M = P.ours_matrix(pin.crba(P.pin, P.data, pq), upper_only=True)
        M += np.diag(np.r_[np.zeros(m.joint_offset[1]), m.armature])
        C = P.ours_matrix(pin.computeCoriolisMatrix(P.pin, P.data, pq, pv))
        g = P.ours_v(pin.computeGeneralizedGravity(P.pin, P.data, pq))
        p, beta = rd.generalized_momentum(m, q, v)
        assert rel_err(p, M @ v) < 1e-9
        assert rel_err(beta, g - C.T @ v) < 1e-9
        Q.append(q)
        V.append(v)
    for n, threads in ((5, 1), (len(Q), 2)):
        p, beta = rd.generalized_momentum(m, np.array(Q[:n]), np.array(V[:n]), threads=threads)
        for k in range(n):
            single = rd.generalized_momentum(m, Q[k], V[k])
            np.testing.assert_allclose(p[k], single[0], rtol=0, atol=1e-12)
            np.testing.assert_allclose(beta[k], single[1], rtol=0, atol=1e-12)
    m.armature = 0.0 if m.joint_names else []


def sinusoid(model, t, seed=1):
    """A smooth joint trajectory: q, v, a at times t (one-coordinate joints)."""
    rng = np.random.default_rng(seed)
    A, w, ph = rng.uniform(0.2, 0.6, model.nv), rng.uniform(1.0, 3.0, model.nv), rng.uniform(0, 2 * np.pi, model.nv)
    arg = w * t[:, None] + ph
    return 0.2 + A * np.sin(arg), A * w * np.cos(arg), -A * w * w * np.sin(arg)


def first_order_response(tau_ext, t, gain, substeps=40):
    """The exact solution of rdot = K (tau_ext(t) - r), r(0) = 0, at the sample times, with
    tau_ext given as a function of time (integrated on a fine grid by the exponential midpoint
    rule, error ~ (dt / substeps)^2)."""
    r, out = np.zeros_like(gain), [np.zeros_like(gain)]
    for t0, t1 in zip(t[:-1], t[1:]):
        h = (t1 - t0) / substeps
        decay = np.exp(-gain * h)
        for s in range(substeps):
            r = decay * r + (1 - decay) * tau_ext(t0 + (s + 0.5) * h)
        out.append(r.copy())
    return np.array(out)


def ramp(t, start, duration=0.02):
    """0 before start, 1 after start + duration, smooth (C2) between: a contact building up."""
    x = np.clip((np.asarray(t) - start) / duration, 0.0, 1.0)
    return x * x * x * (10 - 15 * x + 6 * x * x)


def run(model, q, v, tau, dt, gain):
    """MomentumObserver over the samples (reset with tau), checked against external_torques."""
    obs = rd.MomentumObserver(model, gain)
    obs.reset(q[0], v[0], tau[0])
    r = [obs.external_torques] + [obs.update(q[k], v[k], tau[k], dt) for k in range(1, len(q))]
    offline = rd.external_torques(model, q, v, tau, dt, gain)
    np.testing.assert_allclose(np.array(r), offline, rtol=0, atol=1e-12)
    return offline, obs


def test_step_at_rest_is_followed_exactly_as_first_order(panda):
    """Held still against gravity while a wrench F pushes on the hand from t = 0: the motors give
    g(q) - J^T F, and r_k = (1 - exp(-K t_k)) J^T F at every sample, for K dt small and large."""
    m = panda
    q = rd.random_configuration(m, np.random.default_rng(3))
    F = np.array([4.0, -2.0, 7.0, 0.3, -0.5, 0.2])
    tau_ext = rd.wrench_to_joint_torques(m, q, FRAME, F)
    n, dt = 400, 1e-3
    t = np.arange(n) * dt
    Q, V = np.tile(q, (n, 1)), np.zeros((n, m.nv))
    tau = np.tile(rd.gravity_torques(m, q) - tau_ext, (n, 1))
    for gain in (np.full(m.nv, 25.0), np.linspace(10.0, 2000.0, m.nv)):     # K dt up to 2
        r, obs = run(m, Q, V, tau, dt, gain)
        np.testing.assert_allclose(r, (1 - np.exp(-np.outer(t, gain))) * tau_ext, rtol=0, atol=1e-12)
    # after ten time constants, the wrench at the hand explains r (J^T has full column rank)
    r, obs = run(m, Q, V, tau, dt, 25.0)
    scale = 1 - np.exp(-25.0 * t[-1])
    np.testing.assert_allclose(obs.wrench(FRAME), scale * F, rtol=0, atol=1e-9)
    for reference in ("world", "local", "local_world_aligned"):
        J = rd.frame_jacobian(m, q, FRAME, reference)
        F_ref = np.linalg.lstsq(J.T, tau_ext, rcond=None)[0]
        np.testing.assert_allclose(obs.wrench(FRAME, reference), scale * F_ref, rtol=0, atol=1e-9)
    # a pure force: components="force" finds it; damping shrinks it, as damped least squares does
    push = np.array([0.0, 5.0, -3.0, 0.0, 0.0, 0.0])
    r_push = rd.wrench_to_joint_torques(m, q, FRAME, push)
    np.testing.assert_allclose(rd.estimate_wrench(m, q, FRAME, r_push, components="force"), push, atol=1e-10)
    damped = rd.estimate_wrench(m, q, FRAME, r_push, damping=0.5, components="force")
    assert np.linalg.norm(damped) < np.linalg.norm(push) and damped @ push > 0


def test_wrench_estimate_is_damped_least_squares():
    """On the 2-link planar arm (two joints, a wrench has six unknowns: J J^T is singular) the
    estimate is the least-squares solution of least norm; with damping it is
    (J J^T + damping^2 1)^-1 J r; one state (compiled Cholesky, SVD when singular) and a batch
    (NumPy) agree; a full-rank J (panda) takes the Cholesky path, its answer is the SVD's."""
    from robot_dynamics import load_urdf
    from robot_dynamics.resources import bundled_urdf
    arm = load_urdf(bundled_urdf("planar_2link"))
    q = np.array([0.3, 1.1])
    r = rd.wrench_to_joint_torques(arm, q, "tip", [0.0, 0.0, -2.0, 0.0, 0.0, 0.0])
    for components, rows in (("wrench", slice(0, 6)), ("force", slice(0, 3)), ("torque", slice(3, 6))):
        J = rd.frame_jacobian(arm, q, "tip")[rows]
        F = rd.estimate_wrench(arm, q, "tip", r, components=components)
        np.testing.assert_allclose(F[rows], np.linalg.lstsq(J.T, r, rcond=None)[0], rtol=0, atol=1e-12)
        damped = rd.estimate_wrench(arm, q, "tip", r, damping=0.3, components=components)
        np.testing.assert_allclose(damped[rows], np.linalg.solve(J @ J.T + 0.09 * np.eye(J.shape[0]), J @ r),
                                   rtol=0, atol=1e-12)
        batch = rd.estimate_wrench(arm, np.tile(q, (3, 1)), "tip", np.tile(r, (3, 1)), damping=0.3,
                                   components=components)
        np.testing.assert_allclose(batch, np.tile(damped, (3, 1)), rtol=0, atol=1e-12)
        assert not np.any(np.delete(F, np.arange(6)[rows]))
    np.testing.assert_allclose(rd.estimate_wrench(arm, q, "tip", r, components="force")[[0, 2]], [0.0, -2.0],
                               atol=1e-12)
    m = Pair("panda").model
    qp = rd.random_configuration(m, np.random.default_rng(12))
    rp = np.random.default_rng(13).normal(size=m.nv)
    J = rd.frame_jacobian(m, qp, FRAME)
    np.testing.assert_allclose(rd.estimate_wrench(m, qp, FRAME, rp), np.linalg.pinv(J.T) @ rp, rtol=0, atol=1e-10)


def test_static_floating_base_holds_the_same_law():
    """A free-flying biped held in the air: the base's six rows see the wrench too."""
    m = Pair("biped", True).model
    q = rd.random_configuration(m, np.random.default_rng(4))
    frame = m.frame_names[-1]
    F = np.array([1.0, 2.0, -3.0, 0.1, 0.2, -0.1])
    tau_ext = rd.wrench_to_joint_torques(m, q, frame, F)
    n, dt, gain = 200, 2e-3, 40.0
    t = np.arange(n) * dt
    tau = np.tile(rd.gravity_torques(m, q) - tau_ext, (n, 1))
    r, obs = run(m, np.tile(q, (n, 1)), np.zeros((n, m.nv)), tau, dt, gain)
    np.testing.assert_allclose(r, (1 - np.exp(-gain * t))[:, None] * tau_ext, rtol=0, atol=1e-12)


def test_in_motion_follows_the_first_order_response(panda):
    """A prescribed motion, the motor torques from inverse dynamics minus J^T F(t) (a push ramped
    in over 20 ms from t = 0.2 s): r follows the exact first-order response of the time-varying
    J(q(t))^T F(t) within the trapezoidal rule's O(dt^2), and is zero before the push up to it.
    The error falls ~4x when dt halves (second order: the sampling, not the model, limits it).
    (A step between two samples is seen as a ramp over that interval: what the samples say.)"""
    m = panda
    F = np.array([3.0, -4.0, 5.0, 0.2, 0.1, -0.3])
    gain = np.full(m.nv, 30.0)

    def tau_ext(s):
        qs = sinusoid(m, np.atleast_1d(s))[0]
        return ramp(s, 0.2)[..., None] * rd.wrench_to_joint_torques(m, qs, FRAME, np.tile(F, (len(qs), 1)))
    errors = []
    for dt in (2e-3, 1e-3):
        t = np.arange(int(round(0.6 / dt)) + 1) * dt
        q, v, a = sinusoid(m, t)
        ext = tau_ext(t)
        r, _ = run(m, q, v, rd.inverse_dynamics(m, q, v, a) - ext, dt, gain)
        ref = first_order_response(lambda s: tau_ext(s)[0], t, gain)
        err, scale = np.abs(r - ref).max(), np.abs(ext).max()
        assert err < 1e-3 * scale, (dt, err, scale)        # measured 7.8e-4 (2 ms), 1.9e-4 (1 ms) N m
        before = t < 0.2
        assert np.abs(r[before]).max() < 2e-5, "no push, no external torque (up to the integration rule)"
        errors.append(err)
    assert 3.0 < errors[0] / errors[1] < 5.0, errors


def rk4(model, q, v, tau_of, wrench_of, t0, h):
    """One classical Runge-Kutta step of qdd = forward_dynamics (one-coordinate joints)."""
    def f(s, x, xd):
        return xd, rd.forward_dynamics(model, x, xd, tau_of(s, x, xd), wrench_of(s))
    k1 = f(t0, q, v)
    k2 = f(t0 + h / 2, q + h / 2 * k1[0], v + h / 2 * k1[1])
    k3 = f(t0 + h / 2, q + h / 2 * k2[0], v + h / 2 * k2[1])
    k4 = f(t0 + h, q + h * k3[0], v + h * k3[1])
    return (q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            v + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))


def test_forward_simulation_with_a_push(panda):
    """Forward dynamics (ABA, an independent code path) integrated by RK4 at 0.1 ms: the arm under
    gravity compensation and damping swings, a wrench pushes the hand from t = 0.15 s (ramped in
    over 20 ms); sampled
    at 1 kHz, the observer's r follows the first-order response of J^T F along the simulated
    motion, and the wrench estimate at the hand converges to F."""
    m = panda
    rng = np.random.default_rng(6)
    q, v = rd.random_configuration(m, rng), rng.normal(0, 0.5, m.nv)
    F = np.array([-6.0, 2.0, 4.0, 0.0, 0.3, 0.0])
    t_push, h, sub, gain = 0.15, 1e-4, 10, 50.0

    def tau_of(s, x, xd):
        return rd.gravity_torques(m, x) - 2.0 * xd

    def wrench_of(s):
        return {FRAME: (ramp(s, t_push) * F, "local_world_aligned")}
    Q, V, TAU, EXT, T = [], [], [], [], []
    for k in range(4000):                      # 0.4 s
        s = k * h
        if k % sub == 0:
            Q.append(q), V.append(v), TAU.append(tau_of(s, q, v)), T.append(s)
        EXT.append(rd.wrench_to_joint_torques(m, q, FRAME, ramp(s, t_push) * F))
        q, v = rk4(m, q, v, tau_of, wrench_of, s, h)
    Q, V, TAU, EXT, T = map(np.array, (Q, V, TAU, EXT, T))
    r, obs = run(m, Q, V, TAU, 1e-3, gain)
    # the reference: rdot = K (J^T F - r) along the simulated path, on the 0.1 ms grid
    ref, rr = [np.zeros(m.nv)], np.zeros(m.nv)
    decay = np.exp(-gain * h)
    for k in range(len(EXT) - 1):
        rr = decay * rr + (1 - decay) * 0.5 * (EXT[k] + EXT[k + 1])
        if (k + 1) % sub == 0:
            ref.append(rr.copy())
    ref = np.array(ref[:len(r)])
    scale = np.abs(EXT).max()
    assert np.abs(r - ref).max() < 1e-3 * scale, np.abs(r - ref).max() / scale
    before = T < t_push
    assert np.abs(r[before]).max() < 1e-3 * scale
    # after 12 time constants the estimate is F up to the last milliseconds' change of J(q) F
    F_hat = obs.wrench(FRAME)
    assert np.abs(F_hat - F).max() < 0.02 * np.abs(F).max(), F_hat


def test_free_motion_at_rest_is_zero_to_model_precision(panda):
    """Holding still with the motors giving g(q), nothing pushes: r is zero to rounding."""
    m = panda
    q = rd.random_configuration(m, np.random.default_rng(8))
    n = 100
    r, obs = run(m, np.tile(q, (n, 1)), np.zeros((n, m.nv)), np.tile(rd.gravity_torques(m, q), (n, 1)), 1e-3, 100.0)
    assert np.abs(r).max() < 1e-12
    assert not obs.collision(1e-6)


def test_collision_threshold(panda):
    m = panda
    q = rd.random_configuration(m, np.random.default_rng(9))
    obs = rd.MomentumObserver(m, 200.0)
    g, ext = rd.gravity_torques(m, q), rd.wrench_to_joint_torques(m, q, FRAME, [0, 0, -20.0, 0, 0, 0])
    obs.reset(q, np.zeros(m.nv), g)
    obs.update(q, np.zeros(m.nv), g, 1e-3)
    assert not obs.collision(0.5)
    for _ in range(20):
        obs.update(q, np.zeros(m.nv), g - ext, 1e-3)
    assert obs.collision(0.5) and not obs.collision(np.abs(ext) + 1.0)


def test_bad_input_is_refused_by_name_and_leaves_the_observer_as_it_was(panda):
    m = panda
    q = rd.random_configuration(m, np.random.default_rng(10))
    z, g = np.zeros(m.nv), rd.gravity_torques(m, q)
    with pytest.raises(ValueError, match="gain"):
        rd.MomentumObserver(m, 0.0)
    with pytest.raises(ValueError, match="gain"):
        rd.MomentumObserver(m, [1.0, 2.0])
    obs = rd.MomentumObserver(m, 10.0)
    with pytest.raises(RuntimeError, match="reset"):
        obs.update(q, z, g, 1e-3)
    with pytest.raises(RuntimeError, match="reset"):
        obs.wrench(FRAME)
    with pytest.raises(ValueError, match="q contains NaN"):
        obs.reset(np.full(m.nq, np.nan), z)
    assert not obs.ready
    obs.reset(q, z, g)
    obs.update(q, z, g - 1.0, 1e-3)
    reference = rd.MomentumObserver(m, 10.0)
    reference.reset(q, z, g)
    reference.update(q, z, g - 1.0, 1e-3)
    bad = [(dict(q=np.r_[q[:-1], np.nan]), "q contains NaN"), (dict(v=np.full(m.nv, np.inf)), "v contains NaN"),
           (dict(tau=np.r_[np.nan, g[1:]]), "tau contains NaN"), (dict(dt=0.0), "dt"), (dict(dt=-1e-3), "dt"),
           (dict(dt=float("nan")), "dt"), (dict(dt=float("inf")), "dt"), (dict(dt="soon"), "dt"), (dict(q=q[:-1]), r"q must have shape"),
           (dict(tau=np.ones((2, m.nv))), r"tau must have shape"), (dict(v=np.full(m.nv, 1e200)), "beyond 1e\\+50 in magnitude")]
    for change, message in bad:
        args = dict(q=q, v=z, tau=g - 1.0, dt=1e-3)
        args.update(change)
        with pytest.raises(ValueError, match=message):
            obs.update(**args)
    for x, y in ((obs, reference),):       # the failed calls changed nothing
        np.testing.assert_array_equal(x.update(q, z, g - 1.0, 1e-3), y.update(q, z, g - 1.0, 1e-3))
    # lists, read-only and strided arrays take the checked path and give the same
    ro = np.array(q)
    ro.flags.writeable = False
    a, b = rd.MomentumObserver(m, 10.0), rd.MomentumObserver(m, 10.0)
    a.reset(q, z, g), b.reset(list(q), list(z), list(g))
    np.testing.assert_array_equal(a.update(q, z, g - 1, 1e-3),
                                  b.update(ro, np.repeat(z, 2)[::2], list(g - 1), np.float64(1e-3)))
    with pytest.raises(ValueError, match="unit norm"):
        biped = Pair("biped", True).model
        o = rd.MomentumObserver(biped, 10.0)
        qb = rd.neutral(biped)
        qb[3:7] = [0.0, 0.0, 0.5, 0.5]
        o.reset(qb, np.zeros(biped.nv))
    with pytest.raises(ValueError, match="reference"):
        rd.estimate_wrench(m, q, FRAME, z, reference="base")
    with pytest.raises(ValueError, match="damping"):
        rd.estimate_wrench(m, q, FRAME, z, damping=-1.0)
    with pytest.raises(ValueError, match="components"):
        rd.estimate_wrench(m, q, FRAME, z, components="moment")
    with pytest.raises(ValueError, match="tau_ext"):
        rd.estimate_wrench(m, q, FRAME, np.full(m.nv, np.nan))
    with pytest.raises(KeyError, match="unknown frame"):
        rd.estimate_wrench(m, q, "nowhere", z)
    with pytest.raises(ValueError, match="fixed to the world"):
        rd.estimate_wrench(m, q, "panda_link0", z)
    with pytest.raises(ValueError, match="not finite"):
        rd.estimate_wrench(m, q, FRAME, np.full(m.nv, 1e308))
    with pytest.raises(ValueError, match="beyond 1e\\+50 in magnitude"):
        rd.generalized_momentum(m, q, np.full(m.nv, 1e200))
    with pytest.raises(ValueError, match=r"v contains NaN or inf \(batch row 1\)"):
        rd.generalized_momentum(m, [q, q], [z, np.full(m.nv, np.nan)])
    n = 5
    Q, Z = np.tile(q, (n, 1)), np.zeros((n, m.nv))
    with pytest.raises(ValueError, match="dt"):
        rd.external_torques(m, Q, Z, Z, np.ones(n), 10.0)
    with pytest.raises(ValueError, match="tau contains NaN"):
        rd.external_torques(m, Q, Z, np.full((n, m.nv), np.nan), 1e-3, 10.0)
    with pytest.raises(ValueError, match=r"trajectory"):
        rd.external_torques(m, q, z, z, 1e-3, 10.0)
