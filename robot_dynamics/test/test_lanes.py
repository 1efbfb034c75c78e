"""Batches across SIMD lanes (kernels/lanes.py): every batch kernel runs L states at a time, and must
give what single calls give (the scalar kernels), bitwise, on every test robot, for batch sizes 1, 3, L, L + 1
and 10000 (ragged ends), on one thread and two; a state that fails in a block is run again alone
and its error names its batch row, as before."""
import numpy as np
import pytest

from oracle import SINGULAR_ROTOR, URDFS
from robot_dynamics import calling, load_urdf
from robot_dynamics import dynamics as rd
from robot_dynamics.kernels import Lanes

L = calling.LANES.count
SIZES = (1, 3, L, L + 1)
ROBOTS = [(name, False) for name in URDFS] + [("panda", True), ("talos", True), ("solo12", True)]


def frame_of(m):
    return m.frame_names[-1]


def wrench(a):
    """A wrench per state, made of its accelerations (so that a state gives the same alone)."""
    return 0.3 * (np.resize(a, 6) if a.ndim == 1 else np.stack([np.resize(row, 6) for row in a]))


#: name -> function of (model, q, v, a) for one state or a batch
ALGORITHMS = {
    "inverse_dynamics": lambda m, q, v, a: rd.inverse_dynamics(m, q, v, a),
    "inverse_dynamics+wrench": lambda m, q, v, a: rd.inverse_dynamics(m, q, v, a, {frame_of(m): wrench(a)}),
    "gravity_torques": lambda m, q, v, a: rd.gravity_torques(m, q),
    "mass_matrix": lambda m, q, v, a: rd.mass_matrix(m, q),
    "forward_dynamics": lambda m, q, v, a: rd.forward_dynamics(m, q, v, a),
    "forward_dynamics+wrench": lambda m, q, v, a: rd.forward_dynamics(m, q, v, a, {frame_of(m): (wrench(a), "local")}),
    "hybrid_dynamics": lambda m, q, v, a: np.concatenate(
        rd.hybrid_dynamics(m, q, v, np.arange(m.nv) % 3 == 0, a, 2 * a), axis=-1),
    "hybrid_dynamics, a mask per state": lambda m, q, v, a: np.concatenate(
        rd.hybrid_dynamics(m, q, v, np.abs(v) > 1.0, a, 2 * a), axis=-1),
    "frame_jacobian world": lambda m, q, v, a: rd.frame_jacobian(m, q, frame_of(m), "world"),
    "frame_jacobian local": lambda m, q, v, a: rd.frame_jacobian(m, q, frame_of(m), "local"),
    "frame_jacobian local_world_aligned": lambda m, q, v, a: rd.frame_jacobian(m, q, frame_of(m)),
    "frame_placement": lambda m, q, v, a: rd.frame_placement(m, q, frame_of(m)),
    "joint_torque_regressor": lambda m, q, v, a: rd.joint_torque_regressor(m, q, v, a),
    "centroidal_momentum_matrix": lambda m, q, v, a: rd.centroidal_momentum_matrix(m, q),
    "inverse_dynamics_derivatives": lambda m, q, v, a: np.stack(rd.inverse_dynamics_derivatives(m, q, v, a), -3),
    "forward_dynamics_derivatives": lambda m, q, v, a: np.stack(rd.forward_dynamics_derivatives(m, q, v, a), -3),
}


def random_states(m, n, seed):
    rng = np.random.default_rng(seed)
    q = rd.random_configuration(m, rng, n)
    return q, rng.uniform(-2, 2, (n, m.nv)), rng.uniform(-3, 3, (n, m.nv))


def assert_batch_equals_single_calls(m, f, n, seed, threads=None):
    """Bitwise, the derivatives too: the lane code fuses the same multiply-adds as the scalar code
    (access._element_pointer; measured before that: up to 1.59e-13 of the largest entry)."""
    Q, V, A = random_states(m, n, seed)
    batch = f(m, Q, V, A) if threads is None else calling_with_threads(f, m, Q, V, A, threads)
    for s in range(n):
        np.testing.assert_array_equal(batch[s], f(m, Q[s], V[s], A[s]), err_msg=f"state {s} of {n}")


def calling_with_threads(f, m, Q, V, A, threads):
    old = calling.default_threads
    calling.default_threads = lambda: threads
    try:
        return f(m, Q, V, A)
    finally:
        calling.default_threads = old


@pytest.fixture(scope="module", params=ROBOTS, ids=lambda r: f"{r[0]}{'-freeflyer' if r[1] else ''}")
def robot(request):
    return load_urdf(URDFS[request.param[0]], floating_base=request.param[1])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_small_and_ragged_batches_equal_single_calls(robot, algorithm):
    for n in SIZES:
        assert_batch_equals_single_calls(robot, ALGORITHMS[algorithm], n, seed=n)


@pytest.mark.parametrize("name", [("panda", False), ("talos", True)], ids=["panda", "talos-freeflyer"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_batches_of_10000_equal_single_calls(name, algorithm):
    """Most blocks full, the last ragged; one thread (lanes) and two (a lane driver per thread). The
    forward-dynamics derivatives of talos (cond(M) ~9e4) amplify a last-bit difference the most."""
    m = load_urdf(URDFS[name[0]], floating_base=name[1])
    assert_batch_equals_single_calls(m, ALGORITHMS[algorithm], 10000 - 3, seed=1, threads=1)
    assert_batch_equals_single_calls(m, ALGORITHMS[algorithm], 1001, seed=2, threads=2)


def test_both_lane_widths_give_the_same_results(monkeypatch):
    """L = 4 (AVX2) and L = 8 (AVX-512) compile to their own code and agree with single calls. The
    width the machine does not use is compiled here (the warm-up compiles the other): the lane steps
    of RNEA, ABA and the Jacobian, which use every lane accessor (access.py, lanes.py) that CRBA's and
    the derivatives' lane steps are made of; those three would add ~70 s of compile to the run."""
    m = load_urdf(URDFS["talos"], floating_base=True)
    for count in (4, 8):
        monkeypatch.setattr(calling, "LANES", Lanes(count))
        for algorithm in ("inverse_dynamics", "forward_dynamics", "frame_jacobian local"):
            for n in (count - 1, count + 1):
                assert_batch_equals_single_calls(m, ALGORITHMS[algorithm], n, seed=count + n)


def bad_row(x, row, value, column=0):
    x = x.copy()
    x[row, column] = value
    return x


@pytest.mark.parametrize("n", [L + 1, 40])
def test_errors_name_the_batch_row(n):
    """A bad state among good ones: its block runs again state by state; the error names its row,
    and the row count does not matter (in the first block or a later one, ragged or full)."""
    m = load_urdf(URDFS["talos"], floating_base=True)
    Q, V, A = random_states(m, n, seed=3)
    row = n - 2
    with pytest.raises(ValueError, match=rf"quaternion .* must have unit norm; got norm .*\(batch row {row}\)"):
        rd.inverse_dynamics(m, bad_row(Q, row, 2.0, 3), V, A, threads=1)
    for f in (lambda q, v, a: rd.mass_matrix(m, q, threads=1), lambda q, v, a: rd.forward_dynamics(m, q, v, a, threads=1),
              lambda q, v, a: rd.frame_jacobian(m, q, "left_sole_link", threads=1),
              lambda q, v, a: rd.inverse_dynamics_derivatives(m, q, v, a, threads=1),
              lambda q, v, a: rd.forward_dynamics_derivatives(m, q, v, a, threads=1),
              lambda q, v, a: rd.joint_torque_regressor(m, q, v, a, threads=1),
              lambda q, v, a: rd.centroidal_momentum_matrix(m, q, threads=1)):
        with pytest.raises(ValueError, match=rf"quaternion .* \(batch row {row}\)"):
            f(bad_row(Q, row, 2.0, 3), V, A)
        with pytest.raises(ValueError, match=rf"q contains NaN or inf \(batch row {row}\)"):
            f(bad_row(Q, row, np.nan, 10), V, A)
    with pytest.raises(ValueError, match=rf"v contains NaN or inf \(batch row {row}\)"):
        rd.inverse_dynamics(m, Q, bad_row(V, row, np.inf), A, threads=1)
    with pytest.raises(ValueError, match=rf"tau contains a value beyond 1e\+50 in magnitude \(batch row {row}\)"):
        rd.forward_dynamics(m, Q, V, bad_row(A, row, 1e60), threads=1)
    # the states around it are computed as usual
    good = rd.forward_dynamics(m, Q[:row], V[:row], A[:row], threads=1)
    np.testing.assert_array_equal(good[-1], rd.forward_dynamics(m, Q[row - 1], V[row - 1], A[row - 1]))


def test_a_singular_state_is_named_among_regular_ones():
    """A pivot that fails in one lane: the block runs again state by state and the error names
    the row whose articulated inertia is singular (the rotor's joint, when its angle makes it so)."""
    from robot_dynamics.dynamics import SingularMassMatrixError
    m = load_urdf(SINGULAR_ROTOR)
    n = 2 * L + 3
    q, v, tau = np.zeros((n, m.nv)), np.zeros((n, m.nv)), np.ones((n, m.nv))
    with pytest.raises(SingularMassMatrixError, match=r"\(batch row 0\)"):
        rd.forward_dynamics(m, q, v, tau, threads=1)
    known = np.ones((n, m.nv), bool)    # the singular coordinate known in every state but one
    known[:, 1] = True
    known[n - 1, 1] = False
    qdd, t = rd.hybrid_dynamics(m, q[:n - 1], v[:n - 1], known[:n - 1], np.zeros((n - 1, m.nv)), tau[:n - 1],
                                threads=1)
    assert np.all(np.isfinite(qdd)) and np.all(np.isfinite(t))
    with pytest.raises(SingularMassMatrixError, match=rf"\(batch row {n - 1}\)"):
        rd.hybrid_dynamics(m, q, v, known, np.zeros((n, m.nv)), tau, threads=1)


def test_mass_matrix_into_out():
    """mass_matrix(out=): the batch (lanes, then two threads) and a single state fill the given array
    and return it, equal to fresh results; a wrong array is refused before anything is written."""
    m = load_urdf(URDFS["talos"], floating_base=True)
    Q = random_states(m, 2 * L + 3, seed=5)[0]
    expected = rd.mass_matrix(m, Q, threads=1)
    for threads in (1, 2):
        out = np.full((len(Q), m.nv, m.nv), np.nan)
        assert rd.mass_matrix(m, Q, threads=threads, out=out) is out
        np.testing.assert_array_equal(out, expected)
    one = np.full((m.nv, m.nv), np.nan)
    assert rd.mass_matrix(m, Q[1], out=one) is one
    np.testing.assert_array_equal(one, expected[1])
    for bad in (np.zeros((len(Q), m.nv, m.nv), np.float32), np.zeros((len(Q), m.nv, m.nv + 1)),
                np.zeros((len(Q), m.nv, 2 * m.nv))[:, :, ::2], [[0.0]]):
        with pytest.raises(ValueError, match=rf"out must be a C-contiguous, writeable float64 array of shape "
                                             rf"\({len(Q)}, {m.nv}, {m.nv}\)"):
            rd.mass_matrix(m, Q, out=bad)
