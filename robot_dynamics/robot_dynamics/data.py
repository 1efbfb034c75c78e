"""What the algorithms write, apart from the model (Pinocchio's Model and Data).

A `Model` describes the robot and no algorithm writes it. A `Data` holds one model's buffers: each
kernel's scratch for one state (made by the kernel module's own `workspace(model, ...)`, kept as
`data.<kernel module>`), the lane scratch of one-thread batches, and constants derived from the
model (frame specs, constraint rows, coordinate masks, joint limits).

Every public function takes `data=`: a `Data(model)` that a thread or a service keeps for itself,
or None for the calling thread's own Data of that model (`of`): two threads never share buffers.
A thread's Data of a model lives as long as the model (dropped with it). The fast paths find it in
a few tens of nanoseconds (`calling.plain_data`): the last default Data used is kept (`LAST`), and
is the calling thread's when the threading module knows one thread only and it was the main
thread's, or when it says so (`Data.thread`); a threading.local or a thread id per call cost 2-4 % of a single call.
"""
import threading
import weakref

import numpy as np

from . import kernels as K
from .model import REFERENCES

__all__ = ["Data"]   # the facade's name; `of` serves calling.py


class Data:
    """The buffers of one model's algorithms (see the module docstring): `data.rnea`,
    `data.crba`, ... are those kernels' single-state workspaces (made with the Data: plain
    attributes, the fast paths read them in ~20 ns; a `__getattr__` on the class, even one never
    called, slowed every attribute of the Data by ~0.1 us), `workspace(kernel, m)` the same for
    kernels whose scratch depends on the call's constraint rows, made on first use."""

    def __init__(self, model, thread=None):
        self.packed = model.packed      # the model's array: a Data serves the model that owns it
        self.thread = thread            # the thread whose default Data this is (None: made by the user)
        self.zero = np.zeros(model.nv)                  # read only: v = a = 0 of the fast paths
        self.nothing_known = np.zeros(model.nv, bool)   # read only: forward dynamics' mask
        self.J, self.H = np.empty((6, model.nv)), np.empty((4, 4))    # the output a fast path drops
        self.lanes = [np.empty(0)]      # lane scratch of a batch's threads, the caller's first (grown: `lane_scratch`)
        self.frame_specs = {r: {} for r in REFERENCES}  # reference -> {frame: the kernels' frame spec row}
        # the shapes of one state's matrix outputs (a tuple built per call cost ~0.03 us of ~1 us)
        self.nv_nv, self.six_nv, self.three_nv = (model.nv, model.nv), (6, model.nv), (3, model.nv)
        self.constraint_rows = {}       # (contacts, loops) -> (C, labels, m)
        self.masks = {}                 # (what, given) -> a coordinate mask (joint names, passive, free)
        self.ik_limits = None           # inverse kinematics' bounds per q entry
        self._sized = {}                # kernel module -> (m, its workspace for up to m constraint rows)
        for name in UNSIZED:
            setattr(self, name, getattr(K, name).workspace(self.packed))

    def workspace(self, kernel, m):
        """The single-state workspace of a kernel module whose scratch depends on the call's count m
        of constraint rows (its `workspace(model, m)`): made on first use and kept, grown for a
        larger m (a larger workspace serves a smaller call)."""
        have = self._sized.get(kernel)
        if have is None or have[0] < m:
            have = self._sized[kernel] = (m, kernel.workspace(self.packed, m))
        return have[1]

    def lane_scratch(self, size, lanes, thread=0):
        """At least `size` doubles of lane scratch for thread `thread` of a batch (0: the caller; kept,
        grown: a batch's threads fault in no fresh memory on each call)."""
        while len(self.lanes) <= thread:
            self.lanes.append(np.empty(0))
        if self.lanes[thread].shape[0] < size:
            self.lanes[thread] = K.lane_scratch(size, lanes)
        return self.lanes[thread]


#: the kernel modules whose workspace depends on the model alone: made with each Data
UNSIZED = tuple(m.__name__.rsplit(".", 1)[1] for m in K.MODULES
                if hasattr(m, "workspace") and m.workspace.py_func.__code__.co_argcount == 1)


class _Last:
    """The default Data the last call without `data=` used (of the thread `LAST.data.thread`)."""
    data = None


LAST = _Last()
#: the threads the threading module knows: with only one, the main thread, the last default Data
#: used is its own if it was made for it (not for a thread that has ended since: `MAIN`)
THREADS = threading._active
MAIN = threading.main_thread().ident
#: id(model) -> {thread id: Data}: each thread's Data of a live model (dropped with the model)
_THREADS = {}


def of(model, data=None):
    """The Data a call uses: `data` when given (it must be the model's), else the calling thread's
    Data of the model, made on first use (`calling.plain_data` does the same, written out)."""
    if data is not None:
        if data.packed is not model.packed:
            raise ValueError(f"data was made for another model than {model.name!r}: make one with Data(model)")
        return data
    d = LAST.data
    if d is not None and d.packed is model.packed and (len(THREADS) == 1 and d.thread == MAIN
                                                       or d.thread == threading.get_ident()):
        return d
    ident = threading.get_ident()
    per_thread = _THREADS.get(id(model))
    if per_thread is None:
        per_thread = _THREADS[id(model)] = {}
        weakref.finalize(model, _forget, id(model))
    d = per_thread.get(ident)
    if d is None or d.packed is not model.packed:
        d = per_thread[ident] = Data(model, ident)
    LAST.data = d
    return d


def _forget(model_id):
    """A model is gone: drop every thread's Data of it (and the last one used, if it was one)."""
    gone = _THREADS.pop(model_id, {})
    if any(d is LAST.data for d in gone.values()):
        LAST.data = None
