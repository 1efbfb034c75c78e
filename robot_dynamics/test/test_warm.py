"""python -m robot_dynamics.warm shares the compiling between processes: families of functions
claimed once each, and numba's cache saves made atomic across the processes."""
import fcntl
import os

import pytest
from numba.core import caching

from robot_dynamics import load_urdf, warm
from robot_dynamics.resources import bundled_urdf


def test_functions_that_share_kernels_form_one_family_in_call_order():
    named = [(name, name) for name in ("inverse_dynamics", "mass_matrix", "gravity_torques", "inverse_dynamics",
                                       "centroidal_momentum_matrix", "lie", "center_of_mass")]
    groups = warm.families(named)
    assert [[name for name, _ in g] for g in groups] == [
        ["inverse_dynamics", "gravity_torques", "inverse_dynamics"], ["mass_matrix"],
        ["centroidal_momentum_matrix", "center_of_mass"], ["lie"]]


def test_the_families_name_functions_warm_calls():
    """A misspelt name would silently compile a family's kernels in two processes at once."""
    m = load_urdf(bundled_urdf())
    names = {name for name, _ in warm.calls(m)} | {name for name, _ in warm.closed_chain_calls(load_urdf(
        warm.five_bar_urdf(bundled_urdf())))}
    assert set(warm.FAMILIES) <= names and set(warm.FAMILIES.values()) <= names


def test_each_family_is_compiled_by_one_process(tmp_path):
    """Two processes over the same claims folder (here in turn): every family runs once in all."""
    ran = []
    groups = [[(f"f{k}.{j}", lambda k=k, j=j: ran.append((k, j))) for j in range(2)] for k in range(4)]
    os.close(os.open(tmp_path / "family-2", os.O_CREAT | os.O_WRONLY))     # taken by another process
    warm.compile_families(groups, str(tmp_path), quiet=True)
    warm.compile_families(groups, str(tmp_path), quiet=True)
    assert sorted(set(ran)) == [(k, j) for k in (0, 1, 3) for j in range(2)]
    assert len(ran) == 2 * 2 * 3        # timed() calls each twice: compile, then warm


def test_numba_cache_saves_hold_an_exclusive_lock(tmp_path, monkeypatch):
    seen = []

    def save(self, key, data):          # stands in for numba's: is the lock held while it runs?
        with open(tmp_path / "save.lock") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("held")
        return key, data
    monkeypatch.setattr(caching.IndexDataCacheFile, "save", save)
    assert warm.lock_numba_cache(str(tmp_path))
    assert caching.IndexDataCacheFile.save(None, "key", "data") == ("key", "data")
    assert seen == ["held"]


def test_jobs_must_be_positive():
    with pytest.raises(SystemExit):
        warm.main(["--jobs", "0", "--quiet"])
