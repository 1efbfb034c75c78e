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


def c_entry_calls(m, q, v, a, frame):
    """rigid_body.FAST's entries with the arguments their public functions pass (q, v and a in them)."""
    from robot_dynamics import rigid_body as R
    d = calling.of(m)
    rd.frame_jacobian(m, q, frame), rd.frame_placement(m, q, frame)      # the frame specs made
    spec, world = d.frame_specs["local_world_aligned"][frame], d.frame_specs["world"][frame]
    return {
        "inverse_dynamics": (lambda q, v, a: R.FAST["inverse_dynamics"](m.packed, q, v, a, calling.NO_EXT, m.nv, d.rnea),
                             lambda q, v, a: rd.inverse_dynamics(m, q, v, a)),
        "gravity_torques": (lambda q, v, a: R.FAST["gravity_torques"](m.packed, q, d.zero, m.nv, d.rnea),
                            lambda q, v, a: rd.gravity_torques(m, q)),
        "mass_matrix": (lambda q, v, a: R.FAST["mass_matrix"](m.packed, q, d.nv_nv, d.crba),
                        lambda q, v, a: rd.mass_matrix(m, q)),
        "coriolis_matrix": (lambda q, v, a: R.FAST["coriolis_matrix"](m.packed, q, v, d.nv_nv, d.coriolis),
                            lambda q, v, a: rd.coriolis_matrix(m, q, v)),
        "forward_dynamics": (lambda q, v, a: R.FAST["forward_dynamics"](m.packed, q, v, d.nothing_known, m.nv, a,
                                                                          calling.NO_EXT, d.aba),
                             lambda q, v, a: rd.forward_dynamics(m, q, v, a)),
        "frame_jacobian": (lambda q, v, a: R.FAST["frame_jacobian"](m.packed, q, spec, d.six_nv, d.H, d.jacobian),
                           lambda q, v, a: rd.frame_jacobian(m, q, frame)),
        "frame_placement": (lambda q, v, a: R.FAST["frame_placement"](m.packed, q, world, d.J, (4, 4), d.jacobian),
                            lambda q, v, a: rd.frame_placement(m, q, frame)),
    }


@pytest.mark.parametrize("built", [True, False], ids=["C", "not built"])
def test_the_c_entries_take_only_what_their_kernels_take(pair, monkeypatch, built):
    """kernels/entries.py through _entry.c's Entry (and, where the C extension is not built, entries.Checked:
    the same in Python): a plain float64 state gives the public function's answer; anything the kernel
    does not take as it is (another dtype, byte order or ndim, a strided or misaligned array, a list, a
    non-finite value: the kernel's status) gives None, and the public function's checked path answers it
    (read-only arrays are only read: the entry takes them)."""
    from robot_dynamics import rigid_body as R
    from robot_dynamics.kernels import entries
    if not built:
        assert entries.Entry is not None        # built here: Checked stands in as it would in a source tree
        monkeypatch.setattr(entries, "Entry", None)
        monkeypatch.setattr(R, "FAST", {name: entries.fast_path(name) for name in R.FAST})
        assert all(isinstance(entry, entries.Checked) for entry in R.FAST.values())
    m = pair.model
    q, v, a = pair.random_state(np.random.default_rng(11))
    assert set(c_entry_calls(m, q, v, a, m.frame_names[-1])) == set(R.FAST)
    misaligned = lambda x: np.frombuffer(b"\0" + x.tobytes(), np.float64, len(x), 1)     # noqa: E731
    for name, (entry, public) in c_entry_calls(m, q, v, a, m.frame_names[-1]).items():
        want = public(q, v, a)
        np.testing.assert_array_equal(entry(q, v, a), want, err_msg=name)
        ro = [x.copy() for x in (q, v, a)]
        for x in ro:
            x.flags.writeable = False
        np.testing.assert_array_equal(entry(*ro), want, err_msg=name)
        assert entry(q[None], v, a) is None, name           # a batch of one: the checked path's
        for other in (lambda x: x.astype(np.float32), lambda x: x.astype(">f8"), lambda x: np.repeat(x, 2)[::2],
                      misaligned, list):
            x = other(q)
            assert entry(x, v, a) is None, name
            np.testing.assert_array_equal(public(x, v, a), public(np.asarray(x, np.float64), v, a), err_msg=name)
        bad = q.copy()
        bad[0] = np.nan
        assert entry(bad, v, a) is None, name


def test_an_entry_refuses_what_it_cannot_describe():
    from robot_dynamics.kernels import _entry
    resolve = lambda: 0      # noqa: E731 (never called: the constructor refuses first)
    for kinds in ("d1d2", "d1o", "d3o1", "x1o1", "o1o1", "d1" * 12 + "o1"):
        with pytest.raises(ValueError, match="Entry"):
            _entry.Entry(kinds, resolve)
    entry = _entry.Entry("d1o1", lambda: 0)
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        entry(np.zeros(1))
    with pytest.raises(ValueError, match="no address"):
        entry(np.zeros(1), 1)


def test_a_read_only_or_mis_shaped_out_is_refused_naming_it():
    m = Pair("panda", False).model
    q = np.zeros(m.nq)
    for out in (np.zeros((m.nv, m.nv + 1)), np.zeros((m.nv, m.nv), np.float32), np.zeros((m.nv, m.nv)).T[::1, ::-1]):
        with pytest.raises(ValueError, match="out must be a C-contiguous, writeable float64 array"):
            rd.mass_matrix(m, q, out=out)
    ro = np.zeros((m.nv, m.nv))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a C-contiguous, writeable float64 array"):
        rd.mass_matrix(m, q, out=ro)
    out = np.zeros((m.nv, m.nv))
    assert rd.mass_matrix(m, q, out=out) is out
    np.testing.assert_array_equal(out, rd.mass_matrix(m, q))


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
