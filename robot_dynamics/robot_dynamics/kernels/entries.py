"""The single-state fast paths' C entry points: per kernel, a numba cfunc that takes its arguments'
data pointers and shapes and runs it: `fast_path(name)` is the C callable (_entry.c's Entry) that
takes the fast path's arguments, makes its output and calls the cfunc (no numba dispatch, no Python
object per argument, no np.empty).

Each entry is `f(data, shapes) -> status`: argument i at data[i], its shape in shapes[2 i] (and
shapes[2 i + 1] for a matrix), the kernel's arguments in the kernel's order. KINDS gives them as
Entry takes them ('d1' a float64 vector, 'd2' a matrix, 'b1' a bool vector, 'o1' / 'o2' the output):
the kinds of the fast path that calls it (frame_placement's output is the Jacobian kernel's H).

An entry is compiled on first use (`compiled`: numba's cache keeps it, as it keeps the kernels), so
that importing the library compiles nothing; it calls the kernel the dispatcher compiled for
C-contiguous arrays (the signature every fast path binds), and numba links that machine code in.
Where the C extension was never built (a source tree: `colcon test` after a plain `colcon build`
imports the sources), `Checked` does Entry's work in Python and calls the kernel through numba's
dispatcher: the same answers, ~1 us slower a call.
"""
import numpy as np
from numba import carray, cfunc, njit, types

from . import aba, coriolis, crba, jacobian, rnea

try:
    from ._entry import Entry
except ImportError:     # a source tree never built (`colcon test` after a plain `colcon build` runs the sources)
    Entry = None

#: int64 f(void **data, intp *shapes)
SIGNATURE = types.int64(types.CPointer(types.voidptr), types.CPointer(types.intp))
#: the cfuncs' options: the kernels' (jit.FAST) but numba's reference counting, which carray needs (the
#: views are over memory numba does not own: their counts are no-ops)
OPTIONS = {"error_model": "numpy", "fastmath": {"contract"}, "cache": True}
arg = njit(inline="always", error_model="numpy", cache=True)


@arg
def vector(data, shapes, i):
    return carray(data[i], (shapes[2 * i],), np.float64)


@arg
def matrix(data, shapes, i):
    return carray(data[i], (shapes[2 * i], shapes[2 * i + 1]), np.float64)


@arg
def flags(data, shapes, i):
    return carray(data[i], (shapes[2 * i],), np.bool_)


def rnea_entry(d, s):
    return rnea.rnea(matrix(d, s, 0), vector(d, s, 1), vector(d, s, 2), vector(d, s, 3), matrix(d, s, 4),
                     vector(d, s, 5), matrix(d, s, 6))


def gravity_entry(d, s):
    return rnea.gravity(matrix(d, s, 0), vector(d, s, 1), vector(d, s, 2), vector(d, s, 3), matrix(d, s, 4))


def crba_entry(d, s):
    return crba.crba(matrix(d, s, 0), vector(d, s, 1), matrix(d, s, 2), matrix(d, s, 3))


def coriolis_entry(d, s):
    return coriolis.coriolis(matrix(d, s, 0), vector(d, s, 1), vector(d, s, 2), matrix(d, s, 3), matrix(d, s, 4))


def aba_entry(d, s):
    return aba.aba(matrix(d, s, 0), vector(d, s, 1), vector(d, s, 2), flags(d, s, 3), vector(d, s, 4),
                   vector(d, s, 5), matrix(d, s, 6), matrix(d, s, 7))


def jacobian_entry(d, s):
    return jacobian.frame_jacobian(matrix(d, s, 0), vector(d, s, 1), vector(d, s, 2), matrix(d, s, 3),
                                   matrix(d, s, 4), matrix(d, s, 5))


#: fast path -> (entry, its kernel, its kinds): the arguments as rigid_body's fast paths pass them
KINDS = {
    "inverse_dynamics": (rnea_entry, rnea.rnea, "d2d1d1d1d2o1d2"),             # model, q, v, a, ext, tau, W
    "gravity_torques": (gravity_entry, rnea.gravity, "d2d1d1o1d2"),            # model, q, zero, tau, W
    "mass_matrix": (crba_entry, crba.crba, "d2d1o2d2"),                        # model, q, M, W
    "coriolis_matrix": (coriolis_entry, coriolis.coriolis, "d2d1d1o2d2"),      # model, q, v, C, W
    "forward_dynamics": (aba_entry, aba.aba, "d2d1d1b1o1d1d2d2"),              # model, q, v, known, qdd, tau, ext, W
    "frame_jacobian": (jacobian_entry, jacobian.frame_jacobian, "d2d1d1o2d2d2"),   # model, q, spec, J, H, W
    "frame_placement": (jacobian_entry, jacobian.frame_jacobian, "d2d1d1d2o2d2"),  # model, q, spec, J (scratch), H, W
}
_COMPILED = {}


def compiled(entry):
    """The cfunc of an entry function, compiled (or loaded from numba's cache) on first use."""
    if entry not in _COMPILED:
        _COMPILED[entry] = cfunc(SIGNATURE, **OPTIONS)(entry)
    return _COMPILED[entry]


def load():
    """Every entry's cfunc compiled or loaded now (a process that must not load code after it says it
    is ready: the node's warm-ups, warming.py and work.py)."""
    for function, _, _ in KINDS.values():
        compiled(function)


def fast_path(name):
    """The C entry of fast path `name` (KINDS): entry(*arguments) -> its output, or None for the checked
    path (_entry.c). Its cfunc is compiled or loaded at its first call. `Checked` where the C extension
    is not built."""
    function, kernel, kinds = KINDS[name]
    if Entry is None:
        return Checked(kinds, kernel)
    return Entry(kinds, lambda: compiled(function).address)


class Checked:
    """Entry's work in Python (_entry.c), for a source tree whose C extension was never built: each
    argument checked against its kind, the output made, the kernel called through numba's dispatcher;
    the output, or None. A read-only input is copied (numba's dispatcher would compile the kernel again
    for it; the kernels only read their inputs)."""

    def __init__(self, kinds, kernel):
        self.kinds = [(kinds[i], int(kinds[i + 1])) for i in range(0, len(kinds), 2)]
        self.kernel = kernel

    def __call__(self, *args):
        if len(args) != len(self.kinds):
            raise TypeError(f"Entry takes {len(self.kinds)} positional arguments")
        args = list(args)
        for i, (kind, ndim) in enumerate(self.kinds):
            if kind == "o" and type(args[i]) is not np.ndarray:
                args[i] = np.empty(args[i])
            x, dtype = args[i], np.bool_ if kind == "b" else np.float64
            if not (type(x) is np.ndarray and x.dtype == dtype and x.ndim == ndim and x.flags.c_contiguous
                    and x.flags.aligned and (x.flags.writeable or kind != "o")):
                return None
            if not x.flags.writeable:
                args[i] = x.copy()
        out = args[[kind for kind, _ in self.kinds].index("o")]
        return out if self.kernel(*args) == 0 else None
