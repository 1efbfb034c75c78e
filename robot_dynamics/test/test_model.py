"""robot_dynamics/model.py: what a Model holds and lets be set (armature, checked and counted once
per coordinate), the depth-first body order the kernels rely on, and a quaternion from outside the
library made unit within tf2's tolerance. The loader that builds it: test_urdf.py; what its packed
array holds under each column name: test_layout.py."""
import os

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.model import subtree_ends, unit_quaternion

MIMIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mimic_continuous_fixed.urdf")


def test_armature():
    model = load_urdf(MIMIC)
    q = np.linspace(-0.3, 0.4, model.nq)
    m0 = rd.mass_matrix(model, q)
    arm = np.arange(1.0, model.nv + 1) / 10
    model.armature = arm
    np.testing.assert_allclose(rd.mass_matrix(model, q) - m0, np.diag(arm), atol=1e-12)
    np.testing.assert_array_equal(model.armature, arm)
    for bad in (arm[:-1], -arm, np.full(model.nv, np.inf)):
        with pytest.raises(ValueError, match="armature must be 6 finite non-negative numbers"):
            model.armature = bad


def test_subtree_ranges_of_a_depth_first_tree():
    """CRBA takes each body's subtree as the contiguous range body .. SUBTREE_END - 1."""
    assert list(subtree_ends(np.array([-1, 0, 1, 0, 3, 3]))) == [6, 3, 3, 6, 5, 6]
    with pytest.raises(ValueError, match="not in depth-first order at body 0"):
        subtree_ends(np.array([-1, 0, -1, 1]))


def test_a_quaternion_from_outside_is_made_unit_within_tf2s_tolerance():
    np.testing.assert_allclose(unit_quaternion([0.0, 0.0, 0.0, 1.004]), [0.0, 0.0, 0.0, 1.0], rtol=0, atol=1e-15)
    q = unit_quaternion(np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9]) * 0.995)
    assert abs(np.linalg.norm(q) - 1.0) < 1e-15
    for bad, words in (([0.0, 0.0, 0.0, 1.02], r"norm 1\.02"), ([0.0, 0.0, 0.0], "4 finite numbers"),
                       ([0.0, 0.0, np.nan, 1.0], "4 finite numbers"), ([0.0] * 4, r"norm 0\)")):
        with pytest.raises(ValueError, match=f"base orientation must be .*{words}"):
            unit_quaternion(bad, "base orientation")
