"""physical_consistency: the nearest standard parameters within the constraints (the pseudo-inertia LMIs
and x >= 0 for friction and armature, Clarabel). Identification's own checks, the bodies physical after
identify_dynamics, are in test_dynamic_identification.py."""
import clarabel
import numpy as np
import pytest

from robot_dynamics.physical_consistency import NONNEG_SLACK, nearest_standard


def boundary_problem():
    """Two parameters with unit scales, the data wanting (1, -1): with x[1] >= 0 the answer is (1, 0)."""
    G = np.array([[2.0, 0.5], [0.5, 1.0]])
    return dict(K=np.eye(2), G=G, g=G @ np.array([1.0, -1.0]), x0=np.zeros(2), s=np.array([1.0, 0.5]), bodies=0,
                nonneg=[1])


class Shifted:
    """clarabel.DefaultSolver whose answer misses x[nonneg[0]] >= 0 by `miss` (with no body constrained,
    A is -M[nonneg]: nearest_standard's x_i + M_i d >= 0): a solver's feasibility tolerance, made exact."""
    miss = 0.0

    def __init__(self, P, q, A, b, cones, settings):
        self.solver = REAL_SOLVER(P, q, A, b, cones, settings)
        self.rows = A.toarray()                     # bodies=0: A is -M[nonneg] alone

    def solve(self):
        solution = self.solver.solve()
        e = np.zeros(len(self.rows))
        e[0] = self.miss                            # -M_i delta = miss: x_i + M_i (d + delta) = x_i - miss
        delta = np.linalg.lstsq(self.rows, e, rcond=None)[0]
        return type("Solution", (), dict(x=np.asarray(solution.x) + delta, status=solution.status))()


REAL_SOLVER = clarabel.DefaultSolver


@pytest.mark.parametrize("miss", [0.0, 1e-9, 1e-8, 0.5 * NONNEG_SLACK])
def test_a_nonnegative_parameter_the_solver_leaves_a_hair_below_zero_is_zero(monkeypatch, miss):
    """Clarabel's answer meets x >= 0 to its tolerance: an armature of -2e-9 came back Solved for a panda,
    and identify_dynamics refused it ("the solver did not converge"). Within NONNEG_SLACK of the scale it
    is zero exactly."""
    problem = boundary_problem()
    Shifted.miss = miss * problem["s"][1]
    monkeypatch.setattr(clarabel, "DefaultSolver", Shifted)
    x = nearest_standard(**problem)
    assert 0.0 <= x[1] < 1e-8                  # zero, or the solver's own answer from inside
    G = problem["G"]
    assert abs(x[0] - (1 - G[0, 1] / G[0, 0])) < 1e-4     # the misfit's minimum along x[1] = 0 (and the prior's pull)


def test_a_parameter_far_below_zero_is_not_hidden(monkeypatch):
    """Beyond the slack the value is the solver's: identify_dynamics then says the solve did not converge."""
    problem = boundary_problem()
    Shifted.miss = 100 * NONNEG_SLACK * problem["s"][1]
    monkeypatch.setattr(clarabel, "DefaultSolver", Shifted)
    x = nearest_standard(**problem)
    assert x[1] == pytest.approx(-100 * NONNEG_SLACK * problem["s"][1], rel=1e-3)
