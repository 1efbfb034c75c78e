"""numba's cache notices only edits to a function's own file: a changed layout constant or an
edited helper in another module would leave stale machine code computing wrong numbers. The
guard in robot_dynamics/kernels/cache.py drops the cache when any kernel source changed."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = """
import numpy as np
from robot_dynamics import dynamics as rd, load_urdf
model = load_urdf({urdf!r})
model.armature = np.linspace(0.1, 0.6, 6)
q = np.linspace(-1.0, 1.0, 6)
print(repr(rd.mass_matrix(model, q).tolist()))
"""


CACHE = os.path.join(REPO, "robot_dynamics", "kernels", "__pycache__")


def seed_cache(root):
    """The checkout's compiled kernels (`make` warmed them) copied into the copy's own numba cache:
    numba keys its cache by the source's time stamp and size, which copytree keeps, and the guard's
    stamp comes along, so the copy loads them as the checkout does instead of compiling (~15 s of
    CPU for the mass matrix's kernels); the edits below then drop them as any edit would."""
    target = root / "robot_dynamics" / "kernels" / "__pycache__"
    target.mkdir(exist_ok=True)
    for name in os.listdir(CACHE) if os.path.isdir(CACHE) else ():
        if name.endswith((".nbi", ".nbc")) or name == "robot_dynamics.kernels.sources":
            shutil.copy2(os.path.join(CACHE, name), target)


@pytest.fixture()
def copy(tmp_path):
    """A private copy of the package, with its own numba cache (seeded: `seed_cache`)."""
    shutil.copytree(os.path.join(REPO, "robot_dynamics"), tmp_path / "robot_dynamics",
                    ignore=shutil.ignore_patterns("__pycache__"))
    seed_cache(tmp_path)
    return tmp_path


def mass_matrix(root):
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(urdf=os.path.join(REPO, "urdf", "puma560.urdf"))],
                         env=env, cwd=root, capture_output=True, text=True, timeout=300, check=True)
    return np.array(eval(out.stdout))


BATCH = """
import numpy as np
from robot_dynamics import dynamics as rd, load_urdf
from robot_dynamics.kernels import batch
model = load_urdf({urdf!r})
q = np.tile(np.linspace(-1.0, 1.0, 6), (9, 1))
rd.mass_matrix(model, q, threads=1)             # in lanes
rd.coriolis_matrix(model, q, q, threads=1)      # state by state
print(sum(sum(f.stats.cache_misses.values()) for f in (batch.rows, batch.in_lanes)),
      sum(sum(f.stats.cache_hits.values()) for f in (batch.rows, batch.in_lanes)))
"""


def swap_columns(root):
    """Swap two of Model.packed's columns in layout.py (their names and their entries in the
    table): the kernels must read them afresh."""
    path = root / "robot_dynamics" / "layout.py"
    text = path.read_text()
    names, first, second = "ARMATURE, SUBTREE_END,", '("ARMATURE", 1),', '("SUBTREE_END", 1),'
    assert text.count(names) == text.count(first) == text.count(second) == 1
    text = text.replace(names, "SUBTREE_END, ARMATURE,")
    path.write_text(text.replace(first, "@").replace(second, first).replace("@", second))

def test_a_changed_layout_constant_recompiles(copy):
    before = mass_matrix(copy)                  # loads the seeded cache
    assert list((copy / "robot_dynamics" / "kernels" / "__pycache__").glob("*.nbi"))
    swap_columns(copy)
    np.testing.assert_array_equal(mass_matrix(copy), before)


def test_without_the_guard_the_cache_would_be_stale(copy):
    """The same edit, with the guard's stamp forged to match: numba alone serves the stale code
    and the answer is wrong (so the test above can fail)."""
    before = mass_matrix(copy)
    swap_columns(copy)
    sys.path.insert(0, str(copy))
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location("guard_copy", copy / "robot_dynamics" / "kernels" / "cache.py")
        guard = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(guard)
        digest = guard.sources_digest()
    finally:
        sys.path.remove(str(copy))
    (copy / "robot_dynamics" / "kernels" / "__pycache__" / guard.STAMP).write_text(digest)
    assert not np.array_equal(mass_matrix(copy), before)


def test_the_batch_driver_is_loaded_from_the_cache_in_a_new_process(copy):
    """The one batch driver takes each kernel as a marker of a stable type (kernels/batch.py): a
    second process loads what the first compiled (a jitted function as an argument would miss). The
    copy's cache holds every kernel but the driver's."""
    for name in os.listdir(copy / "robot_dynamics" / "kernels" / "__pycache__"):
        if name.startswith(("batch.rows", "batch.in_lanes")):
            os.remove(copy / "robot_dynamics" / "kernels" / "__pycache__" / name)
    env = dict(os.environ, PYTHONPATH=str(copy))
    env.pop("NUMBA_CACHE_DIR", None)
    script = BATCH.format(urdf=os.path.join(REPO, "urdf", "puma560.urdf"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, cwd=copy, capture_output=True, text=True,
                           timeout=600, check=True).stdout.split() for _ in range(2)]
    misses, hits = zip(*[(int(run[0]), int(run[1])) for run in runs])
    assert misses[0] >= 2 and hits[0] == 0      # compiled: in_lanes (CRBA), rows (Coriolis)
    assert misses[1] == 0 and hits[1] >= 2      # loaded
