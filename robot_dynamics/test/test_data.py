"""data.py: the model apart from its buffers (Pinocchio's Model and Data). No algorithm writes the
model; `data=` takes a Data of the model (refusing another model's), and without it each thread
gets its own Data of the model, which goes when the model goes."""
import gc
import threading
import weakref

import numpy as np
import pytest

from robot_dynamics import calling
from robot_dynamics import data as data_module
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.resources import bundled_urdf


@pytest.fixture(scope="module")
def puma():
    return load_urdf(bundled_urdf())


def state(m, seed=0):
    rng = np.random.default_rng(seed)
    return rd.random_configuration(m, rng), rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)


def every_call(m, q, v, a, data=None):
    """Calls that write buffers of every kind: kernels' workspaces, lane scratch, frame specs, masks."""
    frame = m.frame_names[-1]
    Q, V, A = (np.tile(x, (9, 1)) for x in (q, v, a))
    return [rd.inverse_dynamics(m, q, v, a, data=data), rd.inverse_dynamics(m, Q, V, A, data=data),
            rd.gravity_torques(m, q, data=data), rd.mass_matrix(m, Q, data=data), rd.coriolis_matrix(m, q, v, data=data),
            rd.forward_dynamics(m, q, v, a, data=data), rd.frame_jacobian(m, Q, frame, data=data),
            rd.frame_placement(m, q, frame, data=data), rd.joint_torque_regressor(m, q, v, a, data=data),
            *rd.inverse_dynamics_derivatives(m, q, v, a, data=data), rd.center_of_mass(m, q, data=data),
            rd.centroidal_momentum_matrix(m, Q, data=data), rd.frame_velocity(m, q, v, frame, data=data),
            *rd.generalized_momentum(m, q, v, data=data),
            *rd.constrained_forward_dynamics(m, q, v, a, [(frame, "point")], data=data)]


def test_no_algorithm_writes_the_model(puma):
    m = puma
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()}
    every_call(m, *state(m))
    assert vars(m).keys() == before.keys()
    for k, v in vars(m).items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_a_data_of_ones_own_gives_what_the_default_gives(puma):
    m = puma
    q, v, a = state(m, 1)
    default = every_call(m, q, v, a)
    mine = rd.Data(m)
    for x, y in zip(every_call(m, q, v, a, data=mine), default):
        np.testing.assert_array_equal(x, y)
    assert mine is not data_module.of(m) and mine.rnea is not data_module.of(m).rnea


def test_another_models_data_is_refused(puma):
    other = load_urdf(bundled_urdf())
    q, v, a = state(puma)
    for call in (lambda: rd.inverse_dynamics(puma, q, v, a, data=rd.Data(other)),
                 lambda: rd.mass_matrix(puma, np.tile(q, (3, 1)), data=rd.Data(other))):
        with pytest.raises(ValueError, match="data was made for another model"):
            call()


def test_each_thread_has_its_own_default_data(puma):
    """Two threads never share a default Data, while both live and after one has ended."""
    mine = data_module.of(puma)
    assert data_module.of(puma) is mine          # kept for the thread
    seen, has_it, checked = [], threading.Event(), threading.Event()

    def work():
        seen.extend([data_module.of(puma), data_module.of(puma)])
        has_it.set()
        checked.wait(30)
        seen.append(data_module.of(puma))

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert has_it.wait(30)
        assert data_module.of(puma) is mine      # while the worker lives, and after its calls
    finally:
        checked.set()
        worker.join()
    assert seen[0] is seen[1] is seen[2] and seen[0] is not mine
    # the last default Data used is the ended worker's: not the main thread's own
    assert calling.plain_data(puma, None, np.zeros(puma.nq)) is mine and data_module.of(puma) is mine


def test_two_threads_computing_at_once_get_their_own_answers(puma):
    """Each thread's results equal the single-threaded ones while another thread computes too."""
    m = puma
    states = [state(m, seed) for seed in range(20)]
    expected = [rd.forward_dynamics(m, *s) for s in states]
    errors = []

    def run(order):
        for k in order * 50:
            if not np.array_equal(rd.forward_dynamics(m, *states[k]), expected[k]):
                errors.append(k)
    workers = [threading.Thread(target=run, args=(list(range(20)),)),
               threading.Thread(target=run, args=(list(range(19, -1, -1)),))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors


def test_models_dropped_take_their_data_along():
    """Many models made, used and dropped: none of their Data stays alive (this thread's last one
    neither)."""
    alive, models_before = [], len(data_module._THREADS)
    for _ in range(30):
        m = load_urdf(bundled_urdf())
        q, v, a = state(m)
        rd.inverse_dynamics(m, q, v, a)
        rd.mass_matrix(m, np.tile(q, (9, 1)))
        alive.append(weakref.ref(data_module.of(m)))
        del m
    gc.collect()
    assert sum(r() is not None for r in alive) == 0
    assert len(data_module._THREADS) <= models_before
