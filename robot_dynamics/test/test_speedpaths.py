"""The speed paths: the single-state fast paths (compiled code called directly) give what the general
path gives; fresh batch outputs are plain arrays, on huge-page boundaries and faulted in (_fresh)."""
import resource

import numpy as np
import pytest

from oracle import Pair
from robot_dynamics import calling
from robot_dynamics import dynamics as rd
from robot_dynamics.kernels.trig import sin_cos


@pytest.fixture(scope="module", params=[("panda", False), ("biped", True)], ids=["panda", "biped-freeflyer"])
def pair(request):
    return Pair(*request.param)


def variants(x):
    """x as the fast path takes it, then a list, a read-only array and a strided one."""
    ro = x.copy()
    ro.flags.writeable = False
    strided = np.repeat(x, 2)[::2]
    return [x, list(x), ro, strided]


def batch(x, like):
    """x, repeated per row when `like` is a batch."""
    return np.tile(x, (len(like), 1)) if np.ndim(like) == 2 else x


def test_fast_and_general_paths_agree(pair):
    m = pair.model
    q, v, a = pair.random_state(np.random.default_rng(7))
    known = np.arange(m.nv) % 2 == 0
    frame = m.frame_names[-1]
    F = np.arange(6.0)
    calls = {
        "tau": lambda q, v, a: rd.inverse_dynamics(m, q, v, a),
        "g": lambda q, v, a: rd.gravity_torques(m, q),
        "M": lambda q, v, a: rd.mass_matrix(m, q),
        "C": lambda q, v, a: rd.coriolis_matrix(m, q, v),
        "qdd": lambda q, v, a: rd.forward_dynamics(m, q, v, a),
        "hybrid": lambda q, v, a: np.concatenate(rd.hybrid_dynamics(m, q, v, batch(known, q), a, a), axis=-1),
        "J": lambda q, v, a: rd.frame_jacobian(m, q, frame, "local"),
        "H": lambda q, v, a: rd.frame_placement(m, q, frame),
        "JtF": lambda q, v, a: rd.wrench_to_joint_torques(m, q, frame, batch(F, q)),
    }
    for name, call in calls.items():
        fast = call(q, v, a)
        np.testing.assert_array_equal(call(q, v, a), fast, err_msg=name)        # second call: direct
        for x in zip(variants(q), variants(v), variants(a)):
            np.testing.assert_array_equal(call(*x), fast, err_msg=name)
        # a batch of one: same kernels (J^T F summed by einsum instead of @: rounding only)
        np.testing.assert_allclose(call(q[None], v[None], a[None])[0], fast, rtol=1e-14, atol=1e-14, err_msg=name)


def test_a_plain_array_of_the_wrong_length_is_refused_as_before(pair):
    """The fast paths leave the lengths to the kernels (calling.plain_data): a plain float64 array
    one entry short or long gets the checked path's error naming it."""
    m = pair.model
    q, v, a = pair.random_state(np.random.default_rng(9))
    frame = m.frame_names[-1]
    calls = {"qva": [lambda q, v, a: rd.inverse_dynamics(m, q, v, a), lambda q, v, a: rd.forward_dynamics(m, q, v, a),
                     lambda q, v, a: rd.joint_torque_regressor(m, q, v, a),
                     lambda q, v, a: rd.inverse_dynamics_derivatives(m, q, v, a)],
             "qv": [lambda q, v, a: rd.coriolis_matrix(m, q, v), lambda q, v, a: rd.generalized_momentum(m, q, v),
                    lambda q, v, a: rd.centroidal_state(m, q, v), lambda q, v, a: rd.frame_velocity(m, q, v, frame)],
             "q": [lambda q, v, a: rd.gravity_torques(m, q), lambda q, v, a: rd.mass_matrix(m, q),
                   lambda q, v, a: rd.frame_jacobian(m, q, frame), lambda q, v, a: rd.frame_placement(m, q, frame),
                   lambda q, v, a: rd.center_of_mass(m, q)]}
    for used, group in calls.items():
        for call in group:
            call(q, v, a)               # the fast path is bound
            for name in used:
                x = dict(q=q, v=v, a=a)[name]
                for wrong in (x[:-1].copy(), np.append(x, 0.0)):
                    with pytest.raises(ValueError, match=r"^(q|v|a|tau) must have shape"):
                        call(**dict(dict(q=q, v=v, a=a), **{name: wrong}))


def test_every_fast_path_takes_strided_and_read_only_arrays(pair):
    """plain_data leaves the stride to the kernels (common.sized): a strided array (every other
    entry, reversed, or one entry broadcast) or a read-only one gives, on every fast path, what its
    contiguous copy gives."""
    m = pair.model
    q, v, a = pair.random_state(np.random.default_rng(10))
    frame = m.frame_names[-1]
    calls = {
        "center_of_mass": lambda q, v, a: rd.center_of_mass(m, q),
        "center_of_mass_jacobian": lambda q, v, a: rd.center_of_mass_jacobian(m, q),
        "centroidal_momentum_matrix": lambda q, v, a: rd.centroidal_momentum_matrix(m, q),
        "centroidal_state": lambda q, v, a: np.concatenate(rd.centroidal_state(m, q, v)),
        "potential_energy": lambda q, v, a: rd.potential_energy(m, q),
        "frame_velocity": lambda q, v, a: rd.frame_velocity(m, q, v, frame),
        "frame_acceleration": lambda q, v, a: rd.frame_acceleration(m, q, v, a, frame),
        "generalized_momentum": lambda q, v, a: np.concatenate(rd.generalized_momentum(m, q, v)),
        "joint_torque_regressor": lambda q, v, a: rd.joint_torque_regressor(m, q, v, a),
        "inverse_dynamics_derivatives": lambda q, v, a: np.stack(rd.inverse_dynamics_derivatives(m, q, v, a)),
        "forward_dynamics_derivatives": lambda q, v, a: np.stack(rd.forward_dynamics_derivatives(m, q, v, a)),
        "inverse_dynamics": lambda q, v, a: rd.inverse_dynamics(m, q, v, a),
        "forward_dynamics": lambda q, v, a: rd.forward_dynamics(m, q, v, a),
        "gravity_torques": lambda q, v, a: rd.gravity_torques(m, q),
        "mass_matrix": lambda q, v, a: rd.mass_matrix(m, q),
        "frame_jacobian": lambda q, v, a: rd.frame_jacobian(m, q, frame),
    }

    def strided(x):
        ro = x.copy()
        ro.flags.writeable = False
        return [np.repeat(x, 2)[::2], x[::-1].copy()[::-1], ro]
    for name, call in calls.items():
        want = call(q, v, a)
        for x in zip(strided(q), strided(v), strided(a)):
            assert not all(y.flags.c_contiguous and y.flags.writeable for y in x)
            np.testing.assert_array_equal(call(*x), want, err_msg=name)
    one = np.broadcast_to(np.float64(0.25), (m.nv,))       # stride 0
    np.testing.assert_array_equal(rd.inverse_dynamics(m, q, one, one), rd.inverse_dynamics(m, q, one.copy(), one.copy()))


def test_a_strided_first_call_binds_the_contiguous_entry_point():
    """calling.Direct binds the machine code of C-contiguous, writeable arrays whatever the arrays
    of its first call (a strided one before compiled an entry point for any layout, minutes here);
    the kernel refuses the strided array (a status: the checked path takes it)."""
    from numba.core import types
    from robot_dynamics.kernels import crba
    pair = Pair("panda", False)
    m = pair.model
    q = pair.random_state(np.random.default_rng(12))[0]
    kernel = calling.Kernel(crba, "crba")
    d = calling.of(m)
    M = np.empty((m.nv, m.nv))
    assert kernel.run(m.packed, np.repeat(q, 2)[::2], M, d.crba) != 0
    signatures = list(crba.crba.overloads)
    assert all(t.layout == "C" and t.mutable for sig in signatures for t in sig if isinstance(t, types.Array))
    assert kernel.run(m.packed, q, M, d.crba) == 0
    np.testing.assert_array_equal(M, rd.mass_matrix(m, q))


def test_fast_path_leaves_inputs_alone(pair):
    m = pair.model
    q, v, a = pair.random_state(np.random.default_rng(8))
    copies = [x.copy() for x in (q, v, a)]
    rd.forward_dynamics(m, q, v, a)
    rd.hybrid_dynamics(m, q, v, np.ones(m.nv, bool), v, a)
    for x, c in zip((q, v, a), copies):
        np.testing.assert_array_equal(x, c)


def test_sin_cos_matches_libm():
    """The kernels' own sine and cosine (Cody-Waite reduction, Taylor series) against NumPy's,
    to half an ulp of 1 absolute, over small and huge angles and the quadrant boundaries."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-s, s, 20000) for s in (1.0, 10.0, 1e3, 1e6, 1e9)]
                       + [np.arange(-8, 9) * np.pi / 4, [0.0, -0.0, 1e-300, 5e-324, np.nan, np.inf, -np.inf]])
    got = np.array([sin_cos(t) for t in x])
    with np.errstate(invalid="ignore"):     # sin(inf) is NaN
        want = np.stack([np.sin(x), np.cos(x)], axis=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(x)
    assert np.abs(got[finite] - want[finite]).max() <= np.spacing(1.0) / 2


@pytest.mark.parametrize("shape", [(3, 4), (1000, 8, 8), (4096, 8, 8), (5000, 9, 9), (2, 1024, 1024)])
def test_fresh_batch_output_is_a_plain_array_on_a_huge_page_boundary(shape):
    """calling.fresh: what np.empty(shape) gives (float64, C-contiguous, writeable, its own
    memory), starting on a 2 MB boundary from 2 MB up (whole huge pages: no 4 KB faults)."""
    arrays = [calling.fresh(shape) for _ in range(3)]
    for x in arrays:
        assert x.shape == shape and x.dtype == np.float64 and x.flags.c_contiguous and x.flags.writeable
        if x.nbytes >= calling.HUGE_PAGE:
            assert x.ctypes.data % calling.HUGE_PAGE == 0
        x[...] = 1.0
    assert not any(np.may_share_memory(a, b) for k, a in enumerate(arrays) for b in arrays[k + 1:])


def test_fresh_batch_output_up_to_64_mb_is_faulted_in_by_the_caller():
    """Writing all of a fresh 40 MB output faults no page in any more (without the prefault: at
    least 20 huge pages, or 10240 small ones): the kernels' threads never fault it in together."""
    x = calling.fresh((5000, 1000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    x[...] = 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 3


def test_large_batch_outputs_start_on_a_huge_page_boundary():
    """The batch outputs of the API come from _fresh: 10000 states of panda's derivatives (5 MB each)."""
    pair = Pair("panda", False)
    m, rng = pair.model, np.random.default_rng(3)
    S = [pair.random_state(rng) for _ in range(2)]
    Q, V, A = (np.repeat(np.array([s[k] for s in S]), 5000, axis=0) for k in range(3))
    M = rd.mass_matrix(m, Q)
    for got in (rd.inverse_dynamics_derivatives(m, Q, V, A), (M,)):
        for x in got:
            assert x.ctypes.data % calling.HUGE_PAGE == 0
            np.testing.assert_array_equal(x[4999], x[0])
    np.testing.assert_array_equal(M[-1], rd.mass_matrix(m, Q[-1]))
