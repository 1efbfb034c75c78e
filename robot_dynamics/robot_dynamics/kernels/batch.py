"""One batch driver for every kernel: a kernel's per-state entry point run over the states of a batch.

    rows      states lo..hi one at a time, on one thread, with one workspace
    in_lanes  states lo..hi L at a time (lanes.py): each block of states transposed into lane-last
              scratch (`blocks.gather`, checking the inputs), the kernel's lane step on all of them
              at once, the outputs transposed back (`blocks.scatter`); a block with an unusable input
              or a failing lane runs again state by state (`rows`), which gives each state its exact
              status, so that errors name the batch row
    batch     a batch over nthreads threads (the caller and POOL's threads, a `common.chunk` each),
              each with a copy of the caller's workspace, running `in_lanes` (or `rows` for kernels
              without a lane step)

A kernel takes part by declaring an `Algorithm` in its module: its per-state entry point
`name(model, *args, W) -> status` (W its workspace: an array, or a tuple of arrays), the role of
each argument between the model and W (ROLES), and optionally its lane step
`name_lanes(model, *lane args, WL, lanes) -> ok` (a role "r" argument as one row, "s" as given).
The drivers take the algorithm as a marker argument (`Algorithm`, typed `AlgorithmType(name)`: a
type with a stable name, so numba's cache holds across processes) and build each algorithm's code
from its roles when they compile (`@overload`s below). The cache guard (cache.py) drops this
module's cached code with every kernel's, so a changed algorithm is never run stale.
"""
from concurrent.futures import ThreadPoolExecutor

from llvmlite import ir
from numba import config, types
from numba.extending import NativeValue, models, overload, register_model, typeof_impl, unbox

from .blocks import gather, scatter, view2, view3
from .common import OK
from .jit import FAST, fast, generated, released
from .lanes import lanes_count

#: the role of a kernel argument: a state input (per state; checked in a lane block), an output (per
#: state), both (per state: given entries read, others written; the lane step checks what it reads),
#: one row for every state or one per state (a lane block needs its states' rows equal), shared by all
ROLES = {"i": "input", "o": "output", "b": "input and output", "r": "row", "s": "shared"}
ALGORITHMS = {}
#: the threads a batch runs on beside the calling one (numba's thread count: the cores it may use)
POOL = ThreadPoolExecutor(max_workers=max(1, config.NUMBA_NUM_THREADS - 1), thread_name_prefix="robot_dynamics-batch")


class Algorithm:
    """A kernel as the batch drivers run it: `state` its per-state entry point, `roles` a ROLES
    letter per argument between the model and the workspace, `lanes` its lane step (or None)."""

    def __init__(self, state, roles, lanes=None):
        assert set(roles) <= set(ROLES) and ("i" in roles or "b" in roles), roles
        self.name, self.state, self.roles, self.lanes = state.__name__, state, roles, lanes
        ALGORITHMS[self.name] = self

    def __repr__(self):
        return f"Algorithm({self.name})"


class AlgorithmType(types.Type):
    """The type of an Algorithm marker: its name, known when a driver compiles."""

    def __init__(self, name):
        self.algorithm = name
        super().__init__(name=f"Algorithm({name})")


@typeof_impl.register(Algorithm)
def _typeof_algorithm(val, c):
    return AlgorithmType(val.name)


@register_model(AlgorithmType)
class _AlgorithmModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(8))


@unbox(AlgorithmType)
def _unbox_algorithm(typ, obj, c):
    return NativeValue(ir.Constant(ir.IntType(8), 0))


def _state_args(roles, s):
    """The per-state argument expressions of the entry point for state `s`."""
    return [f"args[{k}]" if r == "s" else f"args[{k}][{s} if len(args[{k}]) > 1 else 0]" if r == "r"
            else f"args[{k}][{s}]" for k, r in enumerate(roles)]


# --- what each algorithm's code is, built from its roles when a driver compiles -------------------
def run_state(alg, model, args, s, W):
    pass


@overload(run_state, jit_options=FAST)
def _run_state(alg, model, args, s, W):
    """alg's entry point on state s of the batch arguments."""
    a = ALGORITHMS[alg.algorithm]
    w = ", ".join(f"W[{k}]" for k in range(len(W))) if isinstance(W, types.BaseTuple) else "W"
    return generated(f"def impl(alg, model, args, s, W):\n"
                      f"    return state(model, {', '.join(_state_args(a.roles, 's'))}, {w})\n", {"state": a.state})


def lane_blocks(alg, model, status, lo, hi, W, B, lanes, args):
    pass


@overload(lane_blocks, jit_options=FAST)
def _lane_blocks(alg, model, status, lo, hi, W, B, lanes, args):
    """States lo..hi, L at a time (see the module docstring): per-state arguments in lane-last views
    of B (outputs zeroed once: entries a kernel leaves alone stay zero), inputs gathered and checked,
    rows (role r) equal over the block, the lane step, then the outputs scattered back or the block
    run again state by state."""
    a = ALGORITHMS[alg.algorithm]
    lines = ["def impl(alg, model, status, lo, hi, W, B, lanes, args):",
             "    L = lanes_count(lanes)",
             "    WL, start = view3(B, 0, W.shape[0], W.shape[1], lanes)"]
    step, checks, given, outs = [], [], [], []
    for k, r in enumerate(a.roles):
        if r in "iob":
            view = f"view2(B, start, args[{k}].shape[1], lanes)" if args[k].ndim == 2 else \
                f"view3(B, start, args[{k}].shape[1], args[{k}].shape[2], lanes)"
            lines.append(f"    X{k}, start = {view}")
            step.append(f"X{k}")
            if r == "i":
                checks.append(f"gather(args[{k}], s0, n, X{k}, lanes)")
            else:
                outs.append(k)
                if r == "b":
                    given.append(f"gather(args[{k}], s0, n, X{k}, lanes)")
                else:
                    lines.append(f"    X{k}[:] = 0.0")
        elif r == "r":
            checks.append(f"(len(args[{k}]) == 1 or same_rows(args[{k}], s0, n))")
            step.append(f"args[{k}][s0 if len(args[{k}]) > 1 else 0]")
        else:
            step.append(f"args[{k}]")
    lines += ["    for s0 in range(lo, hi, L):",
              "        n = min(L, hi - s0)",
              f"        ok = {' & '.join(checks)}",
              "        if ok:"]
    lines += [f"            {g}" for g in given]
    lines += [f"            ok = step(model, {', '.join(step)}, WL, lanes)",
              "        if ok:"]
    lines += [f"            scatter(X{k}, args[{k}], s0, n, lanes)" for k in outs]
    lines += ["            status[s0:s0 + n] = OK",
              "        else:",
              "            rows(alg, model, status, s0, s0 + n, W, *args)"]
    return generated("\n".join(lines) + "\n", {
        "lanes_count": lanes_count, "view2": view2, "view3": view3, "gather": gather, "scatter": scatter,
        "same_rows": same_rows, "step": a.lanes, "rows": rows, "OK": OK})


# --- the drivers ------------------------------------------------------------------------------------
@fast
def same_rows(X, s0, n):
    """Rows s0 .. s0 + n - 1 of X are equal."""
    for s in range(s0 + 1, s0 + n):
        for k in range(X.shape[1]):
            if X[s, k] != X[s0, k]:
                return False
    return True


@released
def rows(alg, model, status, lo, hi, W, *args):
    """alg's entry point over states lo..hi of the batch arguments, on one thread, with workspace W."""
    for s in range(lo, hi):
        status[s] = run_state(alg, model, args, s, W)


@released
def in_lanes(alg, model, status, lo, hi, W, B, lanes, *args):
    """alg over states lo..hi, L at a time (the marker `lanes`), B the lane scratch (L doubles for
    each of the workspace's and each per-state argument's: calling.drive), W for the states that run alone."""
    lane_blocks(alg, model, status, lo, hi, W, B, lanes, args)


def batch(run, alg, model, W, nthreads, lanes, scratch, status, args):
    """alg over a batch on nthreads threads: `run` (the compiled `in_lanes` with lanes, else `rows`,
    called with the star arguments as one tuple: calling.bound) on a `common.chunk` of the states
    per thread, the calling thread's with W and scratch[0], each of POOL's with a copy of W and
    scratch[t]. The one-thread drivers release the GIL, so the chunks run at once: Python threads
    rather than numba's prange, whose parallel variant of every driver was a third of the kernels'
    compile time. Fills the per-state status."""
    n = len(status)

    def part(t, W):
        lo, hi = t * n // nthreads, (t + 1) * n // nthreads      # common.chunk
        if lanes is None:
            run(alg, model, status, lo, hi, W, args)
        else:
            run(alg, model, status, lo, hi, W, scratch[t], lanes, args)
    others = [POOL.submit(part, t, tuple(w.copy() for w in W) if isinstance(W, tuple) else W.copy())
              for t in range(1, nthreads)]
    try:
        part(0, W)
    finally:
        for other in others:
            other.result()
    return status
