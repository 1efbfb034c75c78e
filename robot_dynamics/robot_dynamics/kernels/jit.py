"""The numba decorators every kernel module uses, the threading setting they need, and the code
that `@overload`s generate (`generated`).

The kernels allocate nothing, so they are compiled without numba's reference counting
(_nrt=False): the atomic increments and decrements around every helper call and array view
cost single calls 10-25 %. Only the `workspace` functions allocate.

`released` is `fast` that releases the GIL while it runs (numba's nogil): the entry points called from
Python with a batch or a long loop (the batch drivers, TOPP-RA's passes, the interpolation of many
samples), which the node's heavy requests spend their time in while its joint_states thread computes
beside them. Not the single-state entry points: the joint_states path calls them directly and a
release and re-acquire per call would only add to it.
"""
from numba import njit

#: the kernels' options; an `@overload` used inside them compiles with them too (`jit_options=FAST`): a
#: view made without reference counting and released with it would free the memory under it
FAST = {"error_model": "numpy", "fastmath": {"contract"}, "_nrt": False}
fast = njit(cache=True, **FAST)
released = njit(cache=True, nogil=True, **FAST)
inline = njit(cache=True, inline="always", **FAST)
allocating = njit(cache=True, error_model="numpy", fastmath={"contract"})


def generated(source, names):
    """The function `impl` that `source` defines, with `names` as its globals: an `@overload`'s code
    written for the types it is compiled for (a tuple's length, an algorithm's roles)."""
    scope = {}
    exec(compile(source, "<robot_dynamics.kernels>", "exec"), dict(names), scope)
    return scope["impl"]
