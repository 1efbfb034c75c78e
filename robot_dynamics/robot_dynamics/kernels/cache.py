"""A guard for numba's on-disk cache of the kernels.

numba checks only the timestamp of a function's own file, and freezes the module constants it
read (layout.py's columns, the workspace tables) into the machine code; a helper inlined from
another module is frozen too. An edit anywhere else would leave stale machine code that silently
computes wrong numbers. So at import, before any kernel runs, a hash of every kernel source and of
layout.py (and numba's version) is compared with the one stored beside the cache; when they
differ, every cached kernel is dropped and compiles afresh on first use.
"""
import glob
import hashlib
import os

import numba
from numba.core.registry import CPUDispatcher

STAMP = "robot_dynamics.kernels.sources"


def sources_digest():
    """sha256 of numba's version, the kernel modules' sources and layout.py."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = sorted(glob.glob(os.path.join(here, "*.py"))) + [os.path.join(os.path.dirname(here), "layout.py")]
    digest = hashlib.sha256(numba.__version__.encode())
    for path in files:
        digest.update(os.path.basename(path).encode() + b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()


def kernels_of(modules):
    """The cached numba functions defined in these modules."""
    return [obj for module in modules for obj in vars(module).values()
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__ and obj._cache is not None]


def guard(modules):
    """Drop the cached machine code of the kernels in `modules` if any source changed since it
    was compiled (see the module docstring). Returns the cache folders that were cleared."""
    kernels = kernels_of(modules)
    stems = {module.__name__.rsplit(".", 1)[-1] for module in modules}
    digest, cleared = sources_digest(), []
    for folder in sorted({k._cache._cache_path for k in kernels}):
        stamp = os.path.join(folder, STAMP)
        try:
            with open(stamp) as fh:
                if fh.read() == digest:
                    continue
        except OSError:
            pass
        try:
            for path in glob.glob(os.path.join(folder, "*.nb[ic]")):
                if os.path.basename(path).split(".", 1)[0] in stems:
                    os.remove(path)
            os.makedirs(folder, exist_ok=True)
            with open(stamp + f".{os.getpid()}", "w") as fh:
                fh.write(digest)
            os.replace(stamp + f".{os.getpid()}", stamp)     # atomic: another process reads old or new
            cleared.append(folder)
        except OSError:     # a read-only install: numba then caches elsewhere or not at all
            pass
    return cleared
