"""How the public functions call the kernels: the one call path every API module shares, below them all.

    buffers           data.Data: a model's buffers; data=None is the calling thread's own (data.of)
    one call          Kernel: a kernel module's per-state entry point; call(kernel, model, data, threads,
                      n, args, inputs): one state (n = 0) or a batch of n states (drive: lanes or rows on
                      one thread, or threads), the kernel status turned into an error naming the input and
                      the batch row (raise_status); SingularMassMatrixError
    fast paths        data_of: one state's Data; the C entries (kernels/entries.py, rigid_body's fast
                      paths); plain_data + Kernel.run: the numba entry point without its type dispatch
    input checks      vector, plain, batch_size; output, fresh (batch outputs); thread_count, check_threads
    frames, wrenches  frame_spec, external_rows: a frame and external wrenches as the kernels take them

A public function is its input checks, its fast path and one `call`. The algorithms (rigid_body,
derivatives, constrained, identification, observer, ...) import this module, never each other's
privates; `dynamics` is the facade that re-exports them.
"""
import math
import os
import threading

import llvmlite.binding as llvm
import numba
import numpy as np
from numba.core import types

from . import kernels as K
from .data import LAST, MAIN, THREADS, Data, of  # noqa: F401 (Data: re-exported)
from .kernels import batch as _batch
from .kernels.common import INPUT_LIMIT, SINGULAR_TOL
from .layout import AXES
from .model import REFERENCES

REF_CODE = {"world": K.WORLD, "local": K.LOCAL, "local_world_aligned": K.LOCAL_WORLD_ALIGNED}
NO_EXT = np.zeros((0, K.EXT_COLS))
#: read only: the frame specs of a reference that is none (the fast paths' `d.frame_specs.get(reference,
#: NO_SPECS).get(frame)`; the checked path names it)
NO_SPECS = {}
F64, BOOL = np.dtype(np.float64), np.dtype(np.bool_)
#: states, and states x nv, per batch below which threads are not worth starting: handing a chunk to a
#: pool thread costs ~0.1-0.2 ms here (PUMA RNEA, the cheapest per state, breaks even at ~1000 states)
PARALLEL_MIN_BATCH, PARALLEL_MIN_WORK = 64, 6000


def lane_count():
    """States a batch runs at once (kernels/lanes.py): ROBOT_DYNAMICS_LANES, else 8 where the CPU
    has AVX-512 and 4 elsewhere (AVX2 registers hold 4 doubles; LLVM splits wider vectors)."""
    if "ROBOT_DYNAMICS_LANES" in os.environ:
        return int(os.environ["ROBOT_DYNAMICS_LANES"])
    return 8 if "+avx512f" in llvm.get_host_cpu_features().flatten() else 4


#: the lane marker every batch kernel is called with: its count is part of the compiled type, so
#: each count has its own machine code in numba's cache
LANES = K.Lanes(lane_count())


def default_threads():
    """Threads for batches: ROBOT_DYNAMICS_THREADS, else every core numba may use."""
    return int(os.environ.get("ROBOT_DYNAMICS_THREADS", numba.config.NUMBA_NUM_THREADS))


# --- input checks ---------------------------------------------------------------------------
def vector(x, n, name, batch=None):
    """x as a C-contiguous float64 array of shape (n,) or (N, n); batch: the N required. Writeable: a
    read-only x is copied, as numba would compile each kernel again for it (the kernels only read x)."""
    if type(x) is np.ndarray and x.shape == (n,) and not batch and x.dtype == F64 and x.flags.num & 0x401 == 0x401:
        return x     # the common case, checked cheaply (flags: C-contiguous, writeable)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[-1] != n or (batch is not None and (a.ndim == 2) != (batch > 0)) \
            or (batch and a.shape[0] != batch):
        want = f"({batch}, {n})" if batch else f"({n},)" if batch == 0 else f"({n},) or (N, {n})"
        raise ValueError(f"{name} must have shape {want}, got shape {a.shape}")
    return a if a.flags.c_contiguous and a.flags.writeable else np.array(a, order="C")


def plain(x, n, dtype=F64, unit=(8,)):
    """x is already what the kernels take for one state: an array of this dtype, shape (n,)
    and unit stride (the fast paths' cheap check; the kernels only read it)."""
    return type(x) is np.ndarray and x.dtype is dtype and x.strides == unit and len(x) == n


def data_of(model, data, last=LAST, threads=THREADS, main=MAIN, thread=threading.get_ident):
    """The Data of a single-state fast path: `data`, else the thread's own (data.of, written out: the last
    one used, the thread asked only where the threading module knows several or the last one was another
    thread's). A few tens of ns: a threading.local attribute or a thread id per call cost ~0.03 us."""
    if data is None:
        d = last.data
        if d is None or d.packed is not model.packed or not (len(threads) == 1 and d.thread == main
                                                             or d.thread == thread()):
            d = of(model)
        return d
    return data if data.packed is model.packed else of(model, data)


def plain_data(model, data, q, v=None, a=None, f64=F64):
    """The Data of a fast path that calls its kernel's numba entry point (`Direct`), or None for the
    checked path: q (and v, a) must be 1-D float64 arrays (only read; no dtype or ndim: no array). The
    kernels check lengths and unit stride (common.sized: a status, then the checked path); numba's entry
    point checks the item size, not the dtype nor the ndim (another ndim overwrites its stack)."""
    try:
        if q.dtype is not f64 or q.ndim != 1 or v is not None and (
                v.dtype is not f64 or v.ndim != 1 or a is not None and (a.dtype is not f64 or a.ndim != 1)):
            return None
    except AttributeError:
        return None
    return data_of(model, data)


def batch_size(a):
    return a.shape[0] if a.ndim == 2 else 0


#: transparent huge pages' size on x86-64 (and arm64 with 4 KB pages)
HUGE_PAGE = 2 << 20
#: fresh batch outputs up to this size are faulted in by the calling thread (`fresh`)
PREFAULT_MAX = 64 << 20


def fresh(shape):
    """np.empty(shape) for a batch's output: from 2 MB up it starts on a huge-page boundary, and up
    to 64 MB the calling thread faults its pages in (a write per 4 KB) before the kernels' threads
    write it. Measured on this VM (N = 10000, bench_derivatives.py and A/B runs):
    - numpy asks Linux for huge pages for arrays of 4 MB or more, but an allocation starts anywhere,
      and its ends fault in 4 KB pages, ~2 us each: panda's derivatives (3 x 5 MB) took 1160 faults
      a call, aligned 5, and 1.95 -> 1.77 us/state on two threads.
    - two threads faulting in fresh memory at once are at times many times slower (panda's
      regressor, 57 MB, on two threads: median 2.8-3.1 us/state, up to 9.8, against 0.73 at best);
      faulted in first by one thread: 0.89 (0.85-1.07). Above 64 MB (talos' derivatives, 115 MB
      each; its regressors, 1 GB) faulting in first cost 10-60 %, so the threads do it there
      (`out=` is the way to skip it)."""
    nbytes = 8 * math.prod(shape)
    if nbytes < HUGE_PAGE:
        return np.empty(shape)
    pages = -(-nbytes // HUGE_PAGE)
    raw = np.empty((pages + 1) * HUGE_PAGE, np.uint8)     # whole huge pages past the boundary
    start = -raw.ctypes.data % HUGE_PAGE
    x = raw[start:start + nbytes].view(np.float64)
    if nbytes <= PREFAULT_MAX:
        x[::512] = 0.0
    return x.reshape(shape)


def output(out, shape):
    """A fresh array of `shape` (`fresh`), or `out` checked: a C-contiguous, writeable float64 array
    of that shape (a batch into reused memory skips the cost of fresh pages)."""
    if out is None:
        return fresh(shape)
    if not (type(out) is np.ndarray and out.shape == shape and out.dtype == np.float64 and out.flags.c_contiguous
            and out.flags.writeable):
        raise ValueError(f"out must be a C-contiguous, writeable float64 array of shape {shape}, got "
                         + (f"{out.dtype} of shape {out.shape}" if isinstance(out, np.ndarray) else repr(type(out))))
    return out


class SingularMassMatrixError(ValueError):
    """Forward or hybrid dynamics met a mass matrix that is not positive definite: no unique
    acceleration answers the torques. The message names the joint and the suspect links."""


def raise_status(model, status, inputs):
    """Turn a kernel status (or a batch's status array) into an error that names the input."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    where = f" (batch row {row})" if len(status) > 1 else ""
    kind, body = code % K.STATUS_BODY, code // K.STATUS_BODY - 1
    if kind == K.BAD_QUATERNION:
        joint = model.joint_by_name[model.body_joint_names[body]]
        a = joint.idx_q + 3
        quat = np.atleast_2d(inputs["q"])[row, a:a + 4]
        raise ValueError(f"q[{a}:{a + 4}], the quaternion (x y z w) of floating joint {joint.name!r}, must "
                         f"have unit norm; got norm {np.linalg.norm(quat):.6g}{where}")
    if kind == K.SINGULAR:
        raise SingularMassMatrixError(singular_message(model, body, where))
    if kind == K.OVERFLOW:
        raise ValueError(f"the result is not finite{where}: the inputs are too large for double precision")
    for name, value in inputs.items():
        x = np.asarray(value)
        x = x[row] if len(status) > 1 else x
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or inf{where}")
        if np.any(np.abs(x) > INPUT_LIMIT):
            raise ValueError(f"{name} contains a value beyond {INPUT_LIMIT:g} in magnitude{where}: too large "
                             "to compute with in double precision")
    raise ValueError(f"non-finite input{where}")


def singular_message(model, body, where):
    """Name the joints that move the singular coordinate (a leader and its mimics) and the links
    they move."""
    coordinate = model.v_source[model.idx_v[body]]
    bodies = [b for b in range(model.nb) if model.v_source[model.idx_v[b]] == coordinate]
    joints = ", ".join(repr(model.body_joint_names[b]) for b in bodies)
    links = list(dict.fromkeys(link for b in bodies for link in model.body_subtree_links(b)))
    warned = [w for w in model.warnings if any(f"link {link!r}" in w for link in links)]
    text = (f"the mass matrix is not positive definite at this state{where}: the inertia that joint "
            f"{joints} moves is singular, so no unique acceleration answers the torques. Suspect links "
            f"(moved by {joints}): {', '.join(links)}. A zero or non-physical inertia in the URDF causes this")
    if warned:
        text += "; the loader warned: " + "; ".join(warned)
    return text


def solve_spd(model, M, b, coordinates=None, rows=None):
    """x with M x = b for the symmetric positive definite M (n x n, or a batch N x n x n; b: n or n x k,
    with the batch's leading axis) by a Cholesky factorization M = L L^T and two triangular solves
    (LAPACK's potrf and potrs through scipy, state by state; no inverse is formed). M's rows and columns are the
    coordinates of v, or those listed in `coordinates` (hybrid dynamics' unknown block); a matrix
    that is not positive definite raises SingularMassMatrixError naming the joint of the first
    coordinate whose pivot fails (and the batch row: `rows` gives each state's row where M holds a
    subset of a batch)."""
    from scipy.linalg.lapack import dpotrf, dpotrs  # noqa: PLC0415 (scipy on first use)
    if M.ndim == 3:     # state by state, the same LAPACK calls: a batch equals its single states bitwise
        x = np.empty(np.broadcast_shapes(b.shape, M.shape[:1] + b.shape[1:]))
        for r in range(len(M)):
            x[r] = _solve_one(model, M[r], b[r], coordinates, r if rows is None else rows[r], dpotrf, dpotrs)
        return x
    return _solve_one(model, M, b, coordinates, None, dpotrf, dpotrs)


def _solve_one(model, M, b, coordinates, row, dpotrf, dpotrs):
    """One state's solve_spd (LAPACK directly: scipy's wrappers cost tens of us per call)."""
    L, info = dpotrf(M, lower=1, clean=0)
    if info != 0 or not np.all(np.diagonal(L) ** 2 > SINGULAR_TOL * np.diagonal(M)):
        raise _singular_spd(model, M, coordinates, row)
    return dpotrs(L, b, lower=1)[0]


def _singular_spd(model, M, coordinates, row):
    """SingularMassMatrixError for M whose factorization fails (a pivot keeping no more than SINGULAR_TOL
    of M_jj, as the kernels' Cholesky), naming the joint of that coordinate (and the batch row)."""
    try:
        pivots = np.diagonal(np.linalg.cholesky(M)) ** 2
        k = int(np.flatnonzero(~(pivots > SINGULAR_TOL * np.diagonal(M)))[0]) + 1
    except np.linalg.LinAlgError:     # the first failing pivot: the smallest leading block that fails
        k = next(k for k in range(1, len(M) + 1) if not _factors(M[:k, :k]))
    u = k - 1 if coordinates is None else coordinates[k - 1]
    full = int(np.flatnonzero(model.v_source == u)[0])
    body = int(np.argmax(np.where(model.idx_v <= full, model.idx_v, -1)))
    return SingularMassMatrixError(singular_message(model, body, "" if row is None else f" (batch row {row})"))


def _factors(A):
    try:
        np.linalg.cholesky(A)
        return True
    except np.linalg.LinAlgError:
        return False


# --- the one call path ----------------------------------------------------------------------------
class Direct:
    """A compiled function called directly, skipping numba's type dispatch (~0.4 us of a ~1 us single
    call). Only the fast paths call it, with arguments of the types it is bound to: those of its first
    call, arrays taken as C-contiguous and writeable (arrays checked by `plain`/`plain_data`, the Data's
    buffers, NO_EXT). The entry point checks that each array has the right item size, not its layout:
    the kernels check the unit stride (common.sized), so a strided or read-only first call binds the
    same machine code as any other."""

    def __init__(self, kernel):
        self.kernel = kernel

    def run(self, *args):      # first call: compile (or load from the cache), then bind run
        sig = tuple(types.Array(t.dtype, t.ndim, "C") if isinstance(t, types.Array) else t
                    for t in map(numba.typeof, args))
        self.kernel.compile(sig)
        self.run = self.kernel.overloads[sig].entry_point
        return self.run(*args)


class Kernel(Direct):
    """A kernel module's per-state entry point `name(model, *args, W) -> status` (W: the module's
    workspace, from the Data), run by `call` for one state or a batch (its module declares it to the
    batch drivers: kernels/batch.py's Algorithm), or directly (`run`) by the fast paths."""

    def __init__(self, module, name):
        super().__init__(getattr(module, name))
        self.module, self.name, self.algorithm = module, name, _batch.ALGORITHMS[name]
        self.scratch = module.__name__.rsplit(".", 1)[1]     # the Data's attribute of its workspace


def call(kernel, model, data, threads, n, args, inputs, m=None, error=None, packed=None):
    """Run `kernel` on checked arguments `args` (its arguments between the model and the workspace:
    the batched ones with n rows): one state (n = 0) or a batch of n (`drive`), with `data`'s buffers
    (None: the thread's own). A non-zero status raises error(model, status, inputs) (default
    raise_status; `inputs`: the inputs by name, or a function giving them), naming the input and the
    batch row. m: the constraint rows of a kernel whose workspace depends on them; packed: another
    array of the model's shape to compute with (identification's unit payloads). Returns the status."""
    d = of(model, data)
    W = getattr(d, kernel.scratch) if m is None else d.workspace(kernel.module, m)
    packed = model.packed if packed is None else packed
    if n:
        status = drive(kernel, packed, n, threads, args, W, d)
        bad = status.any()
    else:
        status = bad = kernel.kernel(packed, *args, W)
    if bad:
        (error or raise_status)(model, status, inputs() if callable(inputs) else inputs)
    return status


# --- frames and wrenches --------------------------------------------------------------------
def frame_spec(model, d, frame, reference):
    """The kernels' row for a frame and the reference of its Jacobian or velocity (kept in Data d,
    `d.frame_specs[reference][frame]`: the fast paths look it up without building a key)."""
    specs = d.frame_specs.get(reference)
    if specs is None:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}, got {reference!r}")
    spec = specs.get(frame)
    if spec is None:
        f = model.frame(frame)
        Q = model.packed[f.body, AXES:AXES + 9].reshape(3, 3) if f.body >= 0 else np.eye(3)
        spec = np.empty(K.FRAME_COLS)
        spec[K.F_BODY], spec[K.F_REF] = f.body, REF_CODE[reference]
        spec[K.F_ROT:K.F_ROT + 9] = (Q.T @ f.rotation).reshape(9)     # in the body's joint frame
        spec[K.F_POS:K.F_POS + 3] = Q.T @ f.translation
        specs[frame] = spec
    return spec


def external_rows(model, d, external_wrenches, batch):
    """{frame: wrench or (wrench, reference)} -> kernel rows (N or 1, k, EXT_COLS) (frame specs kept in Data d)."""
    n = max(batch, 1)
    if not external_wrenches:
        return np.zeros((batch, 0, K.EXT_COLS)) if batch else NO_EXT
    rows = np.empty((n, len(external_wrenches), K.EXT_COLS))
    for k, (frame, value) in enumerate(external_wrenches.items()):
        wrench, reference = value if isinstance(value, tuple) else (value, "local_world_aligned")
        rows[:, k, :K.FRAME_COLS] = frame_spec(model, d, frame, reference)
        rows[:, k, K.F_WRENCH:] = vector(wrench, 6, f"external wrench on {frame!r}",
                                          batch if np.ndim(wrench) == 2 else 0)
    return rows if batch else rows[0]


def check_threads(threads):
    """threads as the batch functions take it: None (every core numba may use) or an integer from 1 to
    numba's thread count; ValueError naming `threads` otherwise."""
    if threads is None:
        return None
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= limit:
        raise ValueError(f"threads must be None or an integer from 1 to {limit} (the threads numba has here), "
                         f"got {threads!r}")
    return int(threads)


def thread_count(batch, threads, nv):
    """The threads a batch of `batch` states of a model with nv velocities runs on."""
    if batch < PARALLEL_MIN_BATCH or batch * nv < PARALLEL_MIN_WORK:
        return 1
    return max(1, min(threads or default_threads(), batch))


def drive(kernel, packed, n, threads, args, W, d):
    """A kernel over a batch of n states (kernels/batch.py): L states at a time (LANES) with d's lane
    scratch, W for the states that run alone, or one at a time for a kernel without a lane step; on
    one thread or on threads (`_batch.batch`). Returns the per-state status."""
    alg = kernel.algorithm
    nthreads = thread_count(n, threads, d.nv_nv[0])
    status = np.zeros(n, np.int64)
    if alg.lanes is None:
        run = bound(_batch.rows, (alg, packed, status, 0, n, W), args)
        if nthreads > 1:
            return _batch.batch(run, alg, packed, W, nthreads, None, None, status, args)
        run(alg, packed, status, 0, n, W, args)
        return status
    size = LANES.count * (W.size + sum(x[0].size for x, role in zip(args, alg.roles) if role in "iob"))
    B = [d.lane_scratch(size, LANES, t) for t in range(nthreads)]
    run = bound(_batch.in_lanes, (alg, packed, status, 0, n, W, B[0], LANES), args)
    if nthreads > 1:
        return _batch.batch(run, alg, packed, W, nthreads, LANES, B, status, args)
    run(alg, packed, status, 0, n, W, B[0], LANES, args)
    return status


ARRAY_FLAGS = 0x1 | 0x2 | 0x100 | 0x400    # what numba's array type reads: C, F contiguous, aligned, writeable
_BOUND = {}     # (driver, algorithm, lanes, kinds of the arguments) -> the driver's compiled entry point


def kinds(values):
    """What numba's types of these values depend on (ndim, dtype, flags of arrays), cheaply."""
    return tuple((x.ndim, x.dtype.num, x.flags.num & ARRAY_FLAGS) if type(x) is np.ndarray
                 else kinds(x) if type(x) is tuple else type(x) for x in values)


def bound(driver, head, args):
    """The compiled entry point of a batch driver (`head` its arguments before the kernel's `args`,
    its star arguments, passed as one tuple) per algorithm, lanes and `kinds`: numba's typed dispatch
    of a driver call costs ~20 us here (its markers are typed in Python). Compiled or loaded once."""
    key = (driver, head[0].name, head[-1] if head[-1] is LANES else None, kinds(head[1:]), kinds(args))
    run = _BOUND.get(key)
    if run is None:
        argtypes = tuple(driver.typeof_pyval(x) for x in (*head, *args))
        folded = driver._compiler.fold_argument_types(argtypes, {})[1]
        run = _BOUND[key] = driver.compile(tuple(types.BaseTuple.from_types(t.types) if isinstance(
            t, types.StarArgTuple) else t for t in folded))
    return run
