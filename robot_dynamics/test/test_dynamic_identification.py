"""Whole-robot identification against synthetic ground truth (identification_truth.py: the URDF's
robot 20-35 % heavier, a 1.2 kg tool it does not know, friction and armature; 0.05 N m torque
noise) on the PUMA, panda and a UR5: held-out torques within 1.5x the noise, friction within
10 %, every body physical, the exported URDF's gravity torques within 2 %, a=None nearly as good
as given accelerations; noiseless samples give the true base parameters; against a plain least
squares on Pinocchio's regressor and against FIGAROH on the same samples; bad inputs refused by
name. Each robot's samples: 3000 at 200 Hz (15 s) along its excitation trajectory."""
import numpy as np
import pytest

import identification_truth as truth_data
from oracle import pin
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.dynamic_identification import identification_regressor, parameter_names, standard_parameters
from robot_dynamics.physical_consistency import body_problems, pseudo_inertia

ROBOTS = list(truth_data.ROBOTS)
SIGMA = truth_data.TORQUE_NOISE
T = np.arange(3000) / 200.0


def rms(x):
    return np.sqrt(np.mean(np.square(x), axis=0))


@pytest.fixture(scope="module", params=ROBOTS)
def case(request):
    """Samples of one robot and its identification with given accelerations (feasible)."""
    name = request.param
    q, v, a, tau = truth_data.measure(name, T, np.random.default_rng(0))
    prior = truth_data.prior(name)
    est = rd.identify_dynamics(prior, q, v, tau, a=a)
    return name, prior, (q, v, a, tau), est


def held_out_error(name, est, seed=9):
    """RMS per joint of held-out measured torques minus the estimate's prediction (a fresh
    trajectory, fresh noise), and of the noise-free torques minus it."""
    q, v, a, tau = truth_data.held_out(name)
    noise = SIGMA * np.random.default_rng(seed).normal(size=tau.shape)
    predicted = est.predict(q, v, a)
    return rms(tau + noise - predicted), rms(tau - predicted)


def test_held_out_torques_within_the_noise(case):
    name, _, _, est = case
    measured, exact = held_out_error(name, est)
    print(f"{name}: held-out RMS error / noise: measured {np.round(measured / SIGMA, 3)}, "
          f"noise-free {np.round(exact / SIGMA, 3)}")
    assert np.all(measured <= 1.5 * SIGMA), measured
    assert np.all(est.residual <= 1.1 * SIGMA) and np.all(est.residual >= 0.9 * SIGMA), est.residual


def test_friction_within_ten_percent_and_armature_where_identifiable(case):
    name, _, _, est = case
    true = truth_data.truth(name)
    error = np.abs(est.model.friction - true.friction) / np.abs(true.friction)
    print(f"{name}: friction relative error, max per term (viscous, Coulomb, offset) {error.max(axis=0).round(4)}")
    assert np.all(error <= 0.10), error
    assert est.friction[true.joint_names[0]]["viscous"] == est.model.friction[0, 0]
    # an armature is identifiable when its base parameter is the armature alone
    alone = [i for i, c in enumerate(est.base.combinations) if len(c) == 1 and next(iter(c)).endswith(".armature")]
    assert alone, est.base.names
    for i in alone:
        j = true.joint_names.index(est.base.leading[i][:-len(".armature")])
        assert abs(est.model.armature[j] - true.armature[j]) <= 0.1 * true.armature[j], (j, est.model.armature)


def test_every_body_physical(case):
    name, prior, samples, est = case
    assert est.feasible and est.physical and not body_problems(est.model)
    for b in range(est.model.nb):
        J = pseudo_inertia(rd.inertial_parameters(est.model)[b])
        assert np.linalg.eigvalsh(J)[0] > 0, (name, b)
    # the data fit: what feasibility costs is within the noise's own spread
    free = rd.identify_dynamics(prior, *samples[:2], samples[3], a=samples[2], feasible=False)
    assert np.all(est.residual <= free.residual * 1.02), (est.residual, free.residual)
    print(f"{name}: non-physical bodies without the constraints: {[b for b, _ in body_problems(free.model)]}")


def test_exported_urdf_gravity_within_two_percent_and_round_trip(case):
    name, prior, _, est = case
    text = est.to_urdf()
    loaded = load_urdf(text, tip=truth_data.ROBOTS[name][1])
    q, v, a, _ = truth_data.held_out(name)
    g, g_true = rd.gravity_torques(loaded, q), rd.gravity_torques(truth_data.truth(name), q)
    error = np.linalg.norm(g - g_true) / np.linalg.norm(g_true)
    print(f"{name}: exported URDF gravity torques, relative error {error:.2e}")
    assert error <= 0.02
    # load_urdf(est.to_urdf()) predicts what est predicts
    scale = np.abs(est.predict(q, v, a)).max()
    np.testing.assert_allclose(loaded.friction, est.model.friction, rtol=0, atol=0)
    np.testing.assert_allclose(loaded.armature, est.model.armature, rtol=0, atol=0)
    assert np.abs((rd.inverse_dynamics(loaded, q, v, a) + rd.friction_torques(loaded, v))
                  - est.predict(q, v, a)).max() <= 1e-12 * scale
    assert not loaded.warnings


def test_without_accelerations_nearly_as_good(case):
    """Velocity noise 2e-3 rad/s; a = None differentiates the filtered velocities."""
    name, prior, _, _ = case
    q, v, a, tau = truth_data.measure(name, T, np.random.default_rng(0), velocity_noise=truth_data.VELOCITY_NOISE)
    given = held_out_error(name, rd.identify_dynamics(prior, q, v, tau, a=a))
    derived = held_out_error(name, rd.identify_dynamics(prior, q, v, tau, t=T))
    print(f"{name}: held-out noise-free error / noise, a given {np.round(given[1] / SIGMA, 3)}, "
          f"a = None {np.round(derived[1] / SIGMA, 3)}")
    assert np.all(derived[0] <= 1.05 * given[0]), (derived[0], given[0])
    assert np.all(derived[1] <= 0.4 * SIGMA)


def test_noiseless_samples_give_the_true_base_parameters():
    name = "panda"
    q, v, a, _ = truth_data.measure(name, T[:1500], np.random.default_rng(0))
    true = truth_data.truth(name)
    tau = rd.inverse_dynamics(true, q, v, a) + rd.friction_torques(true, v)
    est = rd.identify_dynamics(truth_data.prior(name), q, v, tau, a=a)
    expected = est.base.matrix @ standard_parameters(true)
    assert np.abs(est.base_values - expected).max() <= 1e-7 * np.abs(expected).max()
    assert np.abs(est.predict(q, v, a) - tau).max() <= 1e-8 * np.abs(tau).max()


def test_prediction_is_the_identification_regressor_times_the_parameters(case):
    _, _, (q, v, a, _), est = case
    E = identification_regressor(est.model, q[:50], v[:50], a[:50])
    assert np.abs(E @ standard_parameters(est.model) - est.predict(q[:50], v[:50], a[:50])).max() <= 1e-10
    assert len(parameter_names(est.model)) == E.shape[-1]


def test_terms_not_identified_keep_the_models_values():
    """Only viscous friction identified: the model's Coulomb friction, offset and armature (here
    the true ones) are taken as known."""
    name = "ur5"
    q, v, a, tau = truth_data.measure(name, T[:1500], np.random.default_rng(2))
    prior, true = truth_data.prior(name), truth_data.truth(name)
    prior.friction = np.c_[np.zeros(6), true.friction[:, 1:]]
    prior.armature = true.armature
    est = rd.identify_dynamics(prior, q, v, tau, a=a, friction=("viscous",), armature=False)
    np.testing.assert_array_equal(est.model.friction[:, 1:], true.friction[:, 1:])
    np.testing.assert_array_equal(est.model.armature, true.armature)
    np.testing.assert_allclose(est.model.friction[:, 0], true.friction[:, 0], rtol=0.1)
    assert not any(n.endswith((".coulomb", ".offset", ".armature")) for n in est.base.parameter_names)
    assert np.all(est.residual <= 1.1 * SIGMA)
    prior.friction = true.friction                      # no friction term identified: all of it known
    none = rd.identify_dynamics(prior, q, v, tau, a=a, friction=(), armature=False)
    assert np.all(none.residual <= 1.1 * SIGMA) and np.array_equal(none.model.friction, true.friction)


# --- against an independent identification on the same samples ---------------------------------
def pinocchio_least_squares(name, q, v, a, tau):
    """A plain least squares on Pinocchio's computeJointTorqueRegressor (looped over the samples)
    with viscous, Coulomb (the same smoothed sign as the truth's), offset and armature columns:
    minimum-norm standard parameters. Returns a predictor and the parameters."""
    model = pin.buildModelFromXML(truth_data.urdf_of_model(truth_data.prior(name)))
    data = model.createData()
    order = [model.getJointId(j) - 1 for j in truth_data.prior(name).joint_names]
    assert order == list(range(model.nv))

    def regressor(q, v, a):
        rows = [pin.computeJointTorqueRegressor(model, data, q[k], v[k], a[k]) for k in range(len(q))]
        n, nv = len(q), model.nv
        extra = np.zeros((n, nv, 4 * nv))
        for j in range(nv):
            extra[:, j, 4 * j:4 * j + 4] = np.c_[v[:, j], np.clip(v[:, j] / 0.01, -1, 1), np.ones(n), a[:, j]]
        return np.concatenate((np.array(rows), extra), axis=2).reshape(n * nv, -1)
    theta = np.linalg.lstsq(regressor(q, v, a), tau.reshape(-1), rcond=None)[0]
    return (lambda q, v, a: (regressor(q, v, a) @ theta).reshape(len(q), -1)), theta


@pytest.mark.parametrize("name", ROBOTS)
def test_no_worse_than_least_squares_on_pinocchios_regressor(name):
    q, v, a, tau = truth_data.measure(name, T, np.random.default_rng(0))
    predict, theta = pinocchio_least_squares(name, q, v, a, tau)
    ours = rd.identify_dynamics(truth_data.prior(name), q, v, tau, a=a)
    qh, vh, ah, tauh = truth_data.held_out(name)
    theirs_error, ours_error = rms(tauh - predict(qh, vh, ah)), rms(tauh - ours.predict(qh, vh, ah))
    nb = ours.model.nb
    theirs_physical = [np.linalg.eigvalsh(pseudo_inertia(theta[10 * b:10 * b + 10]))[0] >= 0 for b in range(nb)]
    print(f"{name}: held-out noise-free RMS error / noise: ours {np.round(ours_error / SIGMA, 3)}, least squares on "
          f"Pinocchio's regressor {np.round(theirs_error / SIGMA, 3)}; its non-physical bodies: "
          f"{[b for b in range(nb) if not theirs_physical[b]]} of {nb}")
    no_worse(ours_error, theirs_error)
    assert ours.physical


def no_worse(ours_error, theirs_error):
    """Ours no worse: against measured held-out torques (RMS sqrt(e^2 + noise^2) for a noise-free
    error e) to 0.5 %, against the noise-free torques to 5 % (ours leaves out the rows at rest,
    which noise-free synthetic friction does not need: a few percent of a tenth of the noise)."""
    measured = [np.sqrt(np.mean(e ** 2) + SIGMA ** 2) for e in (ours_error, theirs_error)]
    assert measured[0] <= 1.005 * measured[1] and measured[0] <= 1.5 * SIGMA, measured
    assert np.sqrt(np.mean(ours_error ** 2)) <= 1.05 * np.sqrt(np.mean(theirs_error ** 2))


def test_no_worse_than_figaroh():
    """FIGAROH's regressor (Pinocchio's, with its viscous, Coulomb, armature and offset columns),
    its zero-column elimination and pivoted-QR base parameters, least squares; on panda. FIGAROH's
    Coulomb column is sign(v) where the synthetic truth smooths it within 0.01 rad/s: both sides
    leave out the rows of joints slower than 0.02 rad/s (ours does by default) and are compared on
    the held-out rows that move."""
    regressor_mod = pytest.importorskip("figaroh.tools.regressor")
    qr = pytest.importorskip("figaroh.tools.qrdecomposition")
    name = "panda"
    q, v, a, tau = truth_data.measure(name, T, np.random.default_rng(0))
    robot = type("Robot", (), {})()
    robot.model = pin.buildModelFromXML(truth_data.urdf_of_model(truth_data.prior(name)))
    robot.data = robot.model.createData()
    config = {"has_friction": True, "has_actuator_inertia": True, "has_joint_offset": True,
              "is_joint_torques": True, "act_idxv": list(range(robot.model.nv))}
    W = regressor_mod.build_regressor_basic(robot, q, v, a, config)          # rows joint by joint
    moving = np.abs(v.T.reshape(-1)) >= 0.02
    names = {f"p{i}": 0.0 for i in range(W.shape[1])}
    eliminated, kept = regressor_mod.get_index_eliminate(W[moving], names, 1e-6)
    decomposer = qr.QRDecomposer()
    _, base = decomposer.decompose_with_pivoting(tau.T.reshape(-1)[moving],
                                                 regressor_mod.build_regressor_reduced(W[moving], eliminated), kept)
    theta = np.linalg.pinv(decomposer.get_M()) @ np.array(list(base.values()))
    ours = rd.identify_dynamics(truth_data.prior(name), q, v, tau, a=a)
    qh, vh, ah, tauh = truth_data.held_out(name)
    W = regressor_mod.build_regressor_basic(robot, qh, vh, ah, config)
    W = regressor_mod.build_regressor_reduced(W, eliminated)
    theirs = (W @ theta).reshape(-1, len(qh)).T
    rows = np.abs(vh) >= 0.02
    theirs_error, ours_error = ([np.sqrt(np.mean((tauh - p)[rows[:, j], j] ** 2)) for j in range(qh.shape[1])]
                                for p in (theirs, ours.predict(qh, vh, ah)))
    theirs_error, ours_error = np.array(theirs_error), np.array(ours_error)
    print(f"{name}: held-out noise-free RMS error / noise: ours {np.round(ours_error / SIGMA, 3)}, FIGAROH "
          f"{np.round(theirs_error / SIGMA, 3)}")
    no_worse(ours_error, theirs_error)


# --- friction_torques and refusals ------------------------------------------------------------
def test_friction_torques():
    m = truth_data.truth("puma560")
    v = np.array([0.5, -0.004, 0.0, 0.02, -2.0, 1e-3])
    f = m.friction
    expected = f[:, 0] * v + f[:, 1] * np.clip(v / 0.01, -1, 1) + f[:, 2]
    np.testing.assert_allclose(rd.friction_torques(m, v), expected, rtol=1e-15)
    V = np.random.default_rng(1).normal(size=(20, 6))
    np.testing.assert_array_equal(rd.friction_torques(m, V)[3], rd.friction_torques(m, V[3]))
    m.coulomb_band = 0.1
    assert rd.friction_torques(m, v)[3] == pytest.approx(f[3, 0] * 0.02 + f[3, 1] * 0.2 + f[3, 2])
    for bad in (np.zeros(5), np.full(6, np.nan), np.zeros((2, 3, 6))):
        with pytest.raises(ValueError, match="v must be 6 finite"):
            rd.friction_torques(m, bad)
    for bad, what in (([[1.0, 2.0]] * 6, "friction must be 6 rows of 3"), (np.full((6, 3), np.inf), "friction")):
        with pytest.raises(ValueError, match=what):
            m.friction = bad
    with pytest.raises(ValueError, match="coulomb_band must be positive"):
        m.coulomb_band = 0.0
    floating = load_urdf(truth_data.ROBOTS["puma560"][0], floating_base=True)
    assert not rd.friction_torques(floating, np.ones(12))[:6].any()


def test_refusals_name_the_problem():
    prior = truth_data.prior("puma560")
    q, v, a, tau = truth_data.measure("puma560", T[:600], np.random.default_rng(0))
    identify = rd.identify_dynamics
    with pytest.raises(ValueError, match=r"v must have shape \(600, 6\)"):
        identify(prior, q, v[:-1], tau, a=a)
    bad = tau.copy()
    bad[17, 2] = np.nan
    with pytest.raises(ValueError, match="tau has NaN or inf in sample 17"):
        identify(prior, q, v, bad, a=a)
    with pytest.raises(ValueError, match="give the accelerations a, or the sample times t"):
        identify(prior, q, v, tau)
    with pytest.raises(ValueError, match="t must be 600 finite, increasing"):
        identify(prior, q, v, tau, t=np.zeros(600))
    with pytest.raises(ValueError, match="friction takes terms of"):
        identify(prior, q, v, tau, a=a, friction=("viscous", "stiction"))
    with pytest.raises(ValueError, match="equations .* for .* base parameters"):
        identify(prior, q[:5], v[:5], tau[:5], a=a[:5])
    still = v.copy()
    still[:, 3] = 0.0                                   # joint4 never moves: its friction cannot be seen
    with pytest.raises(ValueError, match="do not excite joint4.viscous, joint4.coulomb, joint4.offset"):
        identify(prior, q, still, tau, a=a)
    one_pose = np.tile(q[:1], (600, 1))                 # gravity is the same in every sample: the offsets too
    with pytest.raises(ValueError, match="scaled condition number .* cannot determine .*offset"):
        identify(prior, one_pose, v, tau, a=a)
    with pytest.raises(ValueError, match="needs a fixed base"):
        identify(load_urdf(truth_data.ROBOTS["puma560"][0], floating_base=True), np.zeros((10, 13)),
                 np.zeros((10, 12)), np.zeros((10, 12)), a=np.zeros((10, 12)))
    with pytest.raises(ValueError, match="prior_weight must be a positive number"):
        identify(prior, q, v, tau, a=a, prior_weight=0.0)
