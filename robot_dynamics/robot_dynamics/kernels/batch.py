"""One batch driver for every kernel: a kernel's per-state entry point run over the states of a batch.

    rows      states lo..hi one at a time, on one thread, with one workspace
    in_lanes  states lo..hi L at a time (lanes.py): each block of states transposed into lane-last
              scratch (`blocks.gather`, checking the inputs), the kernel's lane step on all of them
              at once, the outputs transposed back (`blocks.scatter`); a block with an unusable input
              or a failing lane runs again state by state (`rows`), which gives each state its exact
              status, so that errors name the batch row
    batch     a batch over nthreads threads (prange over `common.chunk`s), each with a copy of the
              caller's workspace, running `in_lanes` (or `rows` for kernels without a lane step)

A kernel takes part by declaring an `Algorithm` in its module: its per-state entry point
`name(model, *args, W) -> status` (W its workspace: an array, or a tuple of arrays), the role of
each argument between the model and W (ROLES), and optionally its lane step
`name_lanes(model, *lane args, WL, lanes) -> ok` (a role "r" argument as one row, "s" as given).
The drivers take the algorithm as a marker argument (`Algorithm`, typed `AlgorithmType(name)`: a
type with a stable name, so numba's cache holds across processes) and build each algorithm's code
from its roles when they compile (`@overload`s below). The cache guard (cache.py) drops this
module's cached code with every kernel's, so a changed algorithm is never run stale.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import NativeValue, models, overload, register_model, typeof_impl, unbox

from .blocks import gather, lane_scratch, scatter, view2, view3
from .common import OK, chunk
from .jit import FAST, fast, generated, parallel, prange, released
from .lanes import lanes_count

#: the role of a kernel argument: a state input (per state; checked in a lane block), an output (per
#: state), both (per state: given entries read, others written; the lane step checks what it reads),
#: one row for every state or one per state (a lane block needs its states' rows equal), shared by all
ROLES = {"i": "input", "o": "output", "b": "input and output", "r": "row", "s": "shared"}
ALGORITHMS = {}


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


def batch_size(alg, args):
    pass


@overload(batch_size, jit_options=FAST)
def _batch_size(alg, args):
    """The number of states: the rows of the first per-state argument."""
    k = next(k for k, r in enumerate(ALGORITHMS[alg.algorithm].roles) if r in "iob")
    return lambda alg, args: len(args[k])


def fresh_copy(W):
    pass


@overload(fresh_copy)
def _fresh_copy(W):
    """A thread's own workspace: a copy of the caller's (an array, or a tuple of arrays)."""
    if isinstance(W, types.BaseTuple):
        return generated("def impl(W):\n    return (" + "".join(f"W[{k}].copy(), " for k in range(len(W))) + ")\n",
                          {})
    return lambda W: W.copy()


def lane_size(alg, W, args, lanes):
    pass


@overload(lane_size, jit_options=FAST)
def _lane_size(alg, W, args, lanes):
    """Doubles of lane scratch `lanes` needs: the workspace and each per-state argument, L times."""
    if isinstance(lanes, types.NoneType):
        return lambda alg, W, args, lanes: 0
    sizes = " + ".join(["W.size"] + [f"args[{k}][0].size" for k, r in enumerate(ALGORITHMS[alg.algorithm].roles)
                                     if r in "iob"])
    return generated(f"def impl(alg, W, args, lanes):\n    return lanes_count(lanes) * ({sizes})\n",
                      {"lanes_count": lanes_count})


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


def states(alg, model, status, lo, hi, W, B, lanes, args):
    pass


@overload(states)
def _states(alg, model, status, lo, hi, W, B, lanes, args):
    """States lo..hi on this thread (of `batch`): in lanes, or one at a time without lanes (None) or a
    lane step; the one-thread drivers called as compiled functions of their own (as `fast`)."""
    if isinstance(lanes, types.NoneType) or ALGORITHMS[alg.algorithm].lanes is None:
        return lambda alg, model, status, lo, hi, W, B, lanes, args: rows(alg, model, status, lo, hi, W, *args)
    return lambda alg, model, status, lo, hi, W, B, lanes, args: in_lanes(alg, model, status, lo, hi, W, B, lanes,
                                                                           *args)


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
    """alg over states lo..hi, L at a time (the marker `lanes`), B the lane scratch (`lane_size`
    doubles), W for the states that run alone."""
    lane_blocks(alg, model, status, lo, hi, W, B, lanes, args)


@parallel
def batch(alg, model, W, nthreads, lanes, *args):
    """alg over a batch on nthreads threads, each with a copy of W and lane scratch of its own, L
    states at a time (lanes None: one at a time). Returns the per-state status."""
    n = batch_size(alg, args)
    status = np.zeros(n, np.int64)
    size = lane_size(alg, W, args, lanes)
    for t in prange(nthreads):
        lo, hi = chunk(t, n, nthreads)
        states(alg, model, status, lo, hi, fresh_copy(W), lane_scratch(size, lanes), lanes, args)
    return status
