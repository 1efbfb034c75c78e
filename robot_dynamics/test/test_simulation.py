"""rd.simulate: conservation (momentum and energy by Pinocchio), closed-form pendulum periods, Kajita's
box and top against independent references (scipy's DOP853 on the book's equations) and against
the book's own algorithms, batches, the stepped (callable, contacts) path against the compiled one,
and errors that name the step."""
import numpy as np
import pytest
import scipy.integrate
import scipy.interpolate
import scipy.special

from oracle import URDFS, Pair, pin
from robot_dynamics import dynamics as rd
from robot_dynamics import lie, load_urdf
from robot_dynamics.demo import kajita as kj

PENDULUM = """<robot name="pendulum"><link name="base"/><link name="bob"><inertial><origin xyz="0 0 -{l}"/>
<mass value="{m}"/><inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="hinge" type="continuous"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/></joint></robot>"""


def momentum_and_energy(pair, Q, V):
    h = np.array([pin.computeCentroidalMomentum(pair.pin, pair.data, pair.pin_q(q), pair.pin_v(v)).vector
                  for q, v in zip(Q, V)])
    E = np.array([pin.computeKineticEnergy(pair.pin, pair.data, pair.pin_q(q), pair.pin_v(v))
                  + pin.computePotentialEnergy(pair.pin, pair.data, pair.pin_q(q)) for q, v in zip(Q, V)])
    return h, E


@pytest.mark.parametrize("name,floating", [("biped", True), ("solo12", True), ("talos", True),
                                           ("floating_object_arm", False)])
def test_a_free_floating_robot_without_gravity_keeps_momentum_and_energy(name, floating):
    """RK4, dt = 1 ms, 1000 steps from random joint velocities: centroidal momentum (Pinocchio's) to
    1e-9 relative and kinetic energy to 1e-9 relative (measured: 3e-13 to 4e-11 and 1e-11)."""
    pair = Pair(name, floating_base=floating)
    pair.model.gravity = [0.0, 0.0, 0.0]
    pair.pin.gravity.linear[:] = 0.0
    q0, v0, _ = pair.random_state(np.random.default_rng(0))
    traj = rd.simulate(pair.model, q0, v0, 1e-3, 1000)
    h, E = momentum_and_energy(pair, traj.q[::50], traj.v[::50])
    assert np.abs(h - h[0]).max() <= 1e-9 * np.abs(h[0]).max()
    assert np.abs(E - E[0]).max() <= 1e-9 * E[0]
    assert np.allclose(np.linalg.norm(traj.q[:, 3:7], axis=1), 1.0, atol=1e-14) if floating else True


def pendulum_period(traj):
    """Time between successive upward zero crossings of q, located by cubic Hermite interpolation
    on (q, v) between the samples."""
    t, q, v = traj.times, traj.q[:, 0], traj.v[:, 0]
    crossings = []
    for k in np.flatnonzero((q[:-1] < 0) & (q[1:] >= 0)):
        dt = t[k + 1] - t[k]
        poly = scipy.interpolate.CubicHermiteSpline([0, dt], q[k:k + 2], v[k:k + 2])
        crossings.append(t[k] + next(r for r in poly.roots() if -1e-12 <= r <= dt + 1e-12))
    return np.diff(crossings)


@pytest.mark.parametrize("amplitude", [0.01, 1.0, 2.5, 3.0])
def test_pendulum_period(amplitude):
    """T = 4 K(sin^2(a/2)) / w0 (complete elliptic integral of the first kind), w0^2 = m g l / I;
    at 0.01 rad within 7e-6 of the small-amplitude 2 pi / w0 (the first correction is a^2 / 16)."""
    m, l, i, g = 1.5, 0.8, 2e-3, 9.81
    model = load_urdf(PENDULUM.format(l=l, m=m, i=i))
    model.gravity = [0.0, 0.0, -g]
    w0 = np.sqrt(m * g * l / (i + m * l * l))
    exact = 4 * scipy.special.ellipk(np.sin(amplitude / 2) ** 2) / w0
    traj = rd.simulate(model, [-amplitude], [0.0], 1e-3, int(3.2 * exact / 1e-3))
    periods = pendulum_period(traj)
    assert len(periods) >= 2
    assert np.abs(periods / exact - 1).max() < 1e-9, periods / exact - 1
    if amplitude == 0.01:
        assert abs(periods[0] * w0 / (2 * np.pi) - 1) < 7e-6


# --- Kajita et al., Humanoid Robots, ch. 6 -----------------------------------------------------------
def box_reference(times):
    """Euler's equations of the box in body axes and R' = R [w], by DOP853 at rtol 1e-12: (R, w_world)."""
    _, inertia = kj.box_inertia()
    Ib, Ibi = np.diag(inertia), 1 / np.diag(inertia)

    def f(t, y):
        w, R = y[:3], y[3:].reshape(3, 3)
        return np.concatenate((Ibi * -np.cross(w, Ib * w), (R @ lie.hat(w)).reshape(9)))
    sol = scipy.integrate.solve_ivp(f, (0, times[-1]), np.concatenate((kj.BOX["w0"], np.eye(3).reshape(9))),
                                    method="DOP853", rtol=1e-12, atol=1e-12, t_eval=times)
    R = sol.y[3:].T.reshape(-1, 3, 3)
    return R, np.einsum("nij,jn->ni", R, sol.y[:3])


def test_rk4_is_fourth_order_on_the_group():
    """The box's attitude after 5 s against the exact motion: halving dt divides the error by 16
    (measured 4.2e-7, 2.6e-8, 1.6e-9; stages without dexp^-1 would give ratios of 4)."""
    model, q0, v0 = kj.box_model()
    errors = []
    for dt in (0.04, 0.02, 0.01):
        traj = rd.simulate(model, q0, v0, dt, round(5 / dt))
        errors.append(np.abs(lie.quaternion_to_matrix(traj.q[:, 3:7]) - box_reference(traj.times)[0]).max())
    assert errors[0] < 1e-6 and all(14 < a / b < 18 for a, b in zip(errors, errors[1:])), errors


def test_kajitas_box_rk4_keeps_its_angular_momentum_the_books_euler_does_not():
    """Section 6.1.2 with the book's numbers (0.1 x 0.4 x 0.9 m, 36 kg, w0 = (1, 1, 1), dt = 0.02 s,
    5 s). The book's explicit Euler (its code, in NumPy) drifts the angular momentum by ~5 %
    (measured 5.9 %, |L| -4.1 %); rd.simulate's RK4 by 1.5e-8 and follows the exact motion."""
    t, R, w, L = kj.simulate_box("rk4")
    tb, Rb, wb, Lb = kj.book_box()
    n0 = np.linalg.norm(L[0])
    assert 0.03 < np.linalg.norm(Lb[-1] - Lb[0]) / n0 < 0.08
    assert np.linalg.norm(L - L[0], axis=1).max() / n0 < 1e-7
    R_ref, w_ref = box_reference(t)
    assert np.abs(w - w_ref).max() < 2e-6 and np.abs(R - R_ref).max() < 2e-6
    assert np.abs(wb - w_ref).max() > 0.05                   # the book's motion at its dt, 1st order
    for integrator in ("euler", "semi_implicit_euler"):     # ours: first order too, a few per cent
        _, _, _, Le = kj.simulate_box(integrator)
        assert 0.01 < np.linalg.norm(Le - Le[0], axis=1).max() / n0 < 0.08


def top_reference(times):
    """The book's top (section 6.3.4: SE3dynamics with TopForce, world spatial velocity) by DOP853 at
    rtol 1e-9 (1e-10 m from rtol 1e-11; its step control finds the floor's onset, where the damping force jumps): (tip p, R)."""
    def f(t, y):
        p, R, vo, w = y[:3], y[3:12].reshape(3, 3), y[12:15], y[15:]
        dvo, dw = kj.book_se3dynamics(p, R, vo, w, *kj.book_top_force(p, R, vo, w))
        return np.concatenate((vo + np.cross(w, p), (lie.hat(w) @ R).reshape(9), dvo, dw))

    y0 = np.concatenate((kj.TOP["p0"], lie.exp3([kj.TOP["tilt"], 0, 0]).reshape(9), np.zeros(3), kj.TOP["w0"]))
    sol = scipy.integrate.solve_ivp(f, (0, times[-1]), y0, method="DOP853", rtol=1e-9, atol=1e-10, t_eval=times)
    return sol.y[:3].T, sol.y[3:12].T.reshape(-1, 3, 3)


def test_kajitas_spinning_top_reproduces_the_books_motion():
    """Section 6.3.4 with the book's numbers (dt = 0.002 s, 2 s, K = 1e4 N/m, D = 1e3 N s/m). The
    tip lands at t = sqrt(2 h / g) = 0.247 s and the top precesses about it. rd.simulate (RK4 with
    rd.spring_damper_floor) follows the exact motion of the book's equations to 1 mm; the book's
    explicit Euler is first order: off by ~0.12 m at its dt, ten times less at dt / 10."""
    t, p, R = kj.simulate_top("rk4")
    p_ref, R_ref = top_reference(t)
    c2 = 2 * kj.top_inertia()[2]
    head, head_ref = p + R @ c2, p_ref + R_ref @ c2
    assert np.abs(p - p_ref).max() < 1e-3 and np.abs(head - head_ref).max() < 1e-3
    landing = t[np.argmax(p[:, 2] < 0)]
    assert abs(landing - np.sqrt(2 * 0.3 / 9.8)) < 0.004
    turn = np.unwrap(np.arctan2(head[:, 1] - p[:, 1], head[:, 0] - p[:, 0]))
    assert abs(turn[-1] - turn[150]) > np.pi / 2           # the axis precesses
    errors = []
    for dt in (kj.TOP["dt"], kj.TOP["dt"] / 10):
        tb, pb, Rb, _, _ = kj.book_top(dt=dt)
        k = np.round(tb / kj.TOP["dt"]).astype(int)
        on = np.isclose(tb, k * kj.TOP["dt"], atol=1e-12)
        errors.append(np.abs(pb[on] + Rb[on] @ c2 - head_ref[k[on]]).max())
    assert 0.05 < errors[0] < 0.3 and 5 < errors[0] / errors[1] < 20, errors


# --- the simulator's paths and batches --------------------------------------------------------------
def test_batches_callables_and_the_compiled_loop_agree():
    model = load_urdf(URDFS["biped"], floating_base=True)
    rng = np.random.default_rng(3)
    Q0, V0 = rd.random_configuration(model, rng, 3), rng.normal(size=(3, model.nv))
    tau = rng.normal(size=(50, model.nv))
    for integrator in ("rk4", "semi_implicit_euler", "euler"):
        batch = rd.simulate(model, Q0, V0, 2e-3, 50, tau=tau, integrator=integrator)
        assert batch.q.shape == (3, 51, model.nq) and batch.v.shape == (3, 51, model.nv)
        for n in range(3):
            one = rd.simulate(model, Q0[n], V0[n], 2e-3, 50, tau=tau, integrator=integrator)
            assert np.array_equal(one.q, batch.q[n]) and np.array_equal(one.v, batch.v[n])
        # the same torques from a callable: the stepped path (a library call per stage). RK4's last stage
        # is at the step's end, where a function of time would give the next step's torque: a constant one
        constant = rd.simulate(model, Q0, V0, 2e-3, 50, tau=tau[7], integrator=integrator)
        called = rd.simulate(model, Q0, V0, 2e-3, 50, tau=lambda t, q, v: tau[7], integrator=integrator)
        assert np.abs(called.q - constant.q).max() < 1e-13 and np.abs(called.v - constant.v).max() < 1e-12
        if integrator != "rk4":
            called = rd.simulate(model, Q0, V0, 2e-3, 50, tau=lambda t, q, v: tau[int(round(t / 2e-3))],
                                 integrator=integrator)
            assert np.abs(called.q - batch.q).max() < 1e-13 and np.abs(called.v - batch.v).max() < 1e-12
    wrench = {model.frame_names[-1]: np.array([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])}
    fixed = rd.simulate(model, Q0[0], V0[0], 1e-3, 20, external_wrenches=wrench)
    called = rd.simulate(model, Q0[0], V0[0], 1e-3, 20, external_wrenches=lambda t, q, v: wrench)
    assert np.abs(fixed.q - called.q).max() < 1e-13


def test_the_compiled_loop_reads_only_what_it_wrote():
    """The simulation's scratch (its Data's) filled with NaN beforehand changes nothing."""
    for model in (load_urdf(PENDULUM.format(l=1.0, m=1.0, i=1e-3)), load_urdf(URDFS["biped"], floating_base=True)):
        q0, v0, data = rd.neutral(model), np.linspace(-1, 1, model.nv), rd.Data(model)
        clean = rd.simulate(model, q0, v0, 1e-3, 20, data=data)
        for array in data.simulate[:2]:
            array[...] = np.nan
        dirty = rd.simulate(model, q0, v0, 1e-3, 20, data=data)
        assert np.array_equal(clean.q, dirty.q) and np.array_equal(clean.v, dirty.v)


def test_a_contact_holds_a_swinging_box_at_its_corner():
    """A box hung by a point contact at a corner (constrained forward dynamics on the stepped path):
    the corner stays put to 1e-9 m and the energy to 1e-9 over 1 s of swinging, RK4 at 1 ms."""
    urdf = """<robot name="b"><link name="box"><inertial><mass value="2"/><inertia ixx="0.05" iyy="0.04" izz="0.02"
      ixy="0" ixz="0" iyz="0"/></inertial></link><link name="corner"/><joint name="c" type="fixed"><parent link="box"/>
      <child link="corner"/><origin xyz="0.1 0.15 0.2"/></joint></robot>"""
    pair = Pair("kajita_box", True, path=_write(urdf))
    model = pair.model
    q0 = np.array([0, 0, 0, *lie.matrix_to_quaternion(lie.exp3([0.3, -0.2, 0.1])), ])
    v0 = np.zeros(6)
    traj = rd.simulate(model, q0, v0, 1e-3, 1000, contacts=[("corner", "point")])
    corner = rd.frame_placement(model, traj.q, "corner")[:, :3, 3]
    assert np.abs(corner - corner[0]).max() < 1e-9
    _, E = momentum_and_energy(pair, traj.q[::100], traj.v[::100])
    assert np.abs(E - E[0]).max() < 1e-9 * model.total_mass * 9.81 * 0.3
    assert np.abs(traj.q[-1] - q0).max() > 0.05           # it did swing


def _write(text):
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".urdf")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


def test_spring_damper_floor_is_kajitas_top_force():
    """The helper's force at the tip equals the book's TopForce floor term (world axes)."""
    model, q0, v0 = kj.top_model()
    floor = kj.floor(model)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q = q0.copy()
        q[:3] = rng.uniform(-0.2, 0.2, 3)
        v = rng.normal(size=6)
        R = lie.quaternion_to_matrix(q[3:7])
        w = R @ v[3:]
        vo = R @ v[:3] - np.cross(w, q[:3])          # the book's vo: velocity of the point at the origin
        f, _ = kj.book_top_force(q[:3], R, vo, w)
        wrench, reference = floor(0.0, q, v)["top"]
        gravity = np.array([0, 0, -kj.top_inertia()[0] * kj.TOP["g"]])
        assert reference == "local_world_aligned" and np.allclose(wrench[:3], f - gravity, rtol=1e-12, atol=1e-9)
        assert np.all(wrench[3:] == 0)


def test_spring_damper_floor_caps_friction_and_takes_batches():
    """mu caps the horizontal force at mu f_z (Coulomb); a batch of states gets a batch of wrenches;
    above the floor nothing acts."""
    model, q0, _ = kj.top_model()
    rng = np.random.default_rng(5)
    Q = np.tile(q0, (30, 1))
    Q[:, :3] = rng.uniform(-0.05, 0.05, (30, 3))
    V = rng.normal(size=(30, 6))
    plain = rd.spring_damper_floor(model, ["top"], 1e4, 1e3)(0.0, Q, V)["top"][0]
    capped = rd.spring_damper_floor(model, "top", 1e4, 1e3, mu=0.3)(0.0, Q, V)["top"][0]
    below = Q[:, 2] < 0
    assert plain.shape == (30, 6) and np.all(plain[~below] == 0) and np.all(capped[~below] == 0)
    assert np.array_equal(capped[:, 2], plain[:, 2])
    horizontal = np.linalg.norm(capped[:, :2], axis=1)
    assert np.all(horizontal <= 0.3 * np.maximum(capped[:, 2], 0) * (1 + 1e-12))
    assert np.all(horizontal <= np.linalg.norm(plain[:, :2], axis=1) * (1 + 1e-12))
    assert np.any(horizontal < 0.5 * np.linalg.norm(plain[:, :2], axis=1))     # the cap did bite
    with pytest.raises(ValueError, match="stiffness must be a finite non-negative number"):
        rd.spring_damper_floor(model, "top", stiffness=-1.0)
    with pytest.raises(KeyError, match="unknown frame"):
        rd.spring_damper_floor(model, "nowhere")


def test_errors_name_the_step_or_the_input():
    model = load_urdf(PENDULUM.format(l=1.0, m=1.0, i=1e-3))
    with pytest.raises(ValueError, match=r"simulation failed at step \d+ \(t = .* s\): the state is no longer finite"):
        rd.simulate(model, [1.0], [1e45], 1e3, 200, integrator="euler")
    top, q0, v0 = kj.top_model()       # the book's floor with 25 times its dt: explicit Euler blows up
    with pytest.raises(ValueError, match=r"simulation failed at step \d+ \(t = .* s\): the state is no longer finite"):
        rd.simulate(top, q0, v0, 0.05, 2000, external_wrenches=kj.floor(top), integrator="euler")
    with pytest.raises(ValueError, match=r"simulation failed at step 0 \(t = 0 s\): tau\(t, q, v\)"):
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, tau=lambda t, q, v: [1.0, 2.0])
    with pytest.raises(ValueError, match=r"tau must be a callable tau\(t, q, v\) or an array of shape \(1,\), \(5, 1\)"):
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, tau=np.zeros((4, 1)))
    with pytest.raises(ValueError, match="integrator must be one of euler, semi_implicit_euler, rk4"):
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, integrator="verlet")
    with pytest.raises(ValueError, match="dt must be a finite positive"):
        rd.simulate(model, [1.0], [0.0], 0.0, 5)
    biped = load_urdf(URDFS["biped"], floating_base=True)
    q = rd.neutral(biped)
    q[6] = 3.0
    with pytest.raises(ValueError, match=r"the initial state \(q0, v0\): .*quaternion"):
        rd.simulate(biped, q, np.zeros(biped.nv), 1e-3, 5)
    assert rd.simulate(model, [1.0], [0.0], 1e-3, 0).q.shape == (1, 1)


def test_a_callable_that_fails_is_named_with_the_step():
    """external_wrenches returning a list is a TypeError naming the step; a callable that raises comes
    back as a RuntimeError naming the step, its time and the callable, the user's exception chained."""
    model = load_urdf(PENDULUM.format(l=1.0, m=1.0, i=1e-3))
    frame = model.frame_names[-1]
    with pytest.raises(TypeError, match=r"simulation failed at step 0 \(t = 0 s\): external_wrenches\(t, q, v\) must "
                                        r"return a dict .* or None, got list"):
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, external_wrenches=lambda t, q, v: [frame, np.zeros(6)])

    def late(t, q, v):
        if t > 2.5e-3:
            raise ZeroDivisionError("the controller's own bug")
        return np.zeros(1)
    with pytest.raises(RuntimeError, match=r"simulation failed at step 2 \(t = 0.002 s\): tau\(t, q, v\) raised "
                                           r"ZeroDivisionError: the controller's own bug") as info:
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, tau=late)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    with pytest.raises(RuntimeError, match=r"step 0 .*external_wrenches\(t, q, v\) raised KeyError") as info:
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, external_wrenches=lambda t, q, v: {}["x"])
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(KeyError, match=r"simulation failed at step 0 .*unknown frame 'nowhere'"):
        rd.simulate(model, [1.0], [0.0], 1e-3, 5, external_wrenches=lambda t, q, v: {"nowhere": np.zeros(6)})
