"""What the algorithms write, apart from the model (Pinocchio's Model and Data).

A `Model` describes the robot and no algorithm writes it. A `Data` holds one model's buffers: each
kernel's scratch for one state (made by the kernel module's own `workspace(model, ...)` on first
use, and kept as `data.<kernel module>`), the lane scratch of one-thread batches, and constants
derived from the model (frame specs, constraint rows, coordinate masks, joint limits).

Every public function takes `data=`: a `Data(model)` that a thread or a service keeps for itself,
or None for the calling thread's own Data of that model (`of`): two threads never share buffers.
A thread's Data of a model lives as long as the model (dropped with it).
"""
import threading
import weakref

import numpy as np

from . import kernels as K


class Data:
    """The buffers of one model's algorithms (see the module docstring): `data.rnea`,
    `data.crba`, ... are those kernels' single-state workspaces, `workspace(kernel, *sizes)` the
    same for kernels whose scratch depends on the call (constraint rows)."""

    def __init__(self, model):
        self.packed = model.packed      # the model's array: a Data serves the model that owns it
        self.zero = np.zeros(model.nv)                  # read only: v = a = 0 of the fast paths
        self.nothing_known = np.zeros(model.nv, bool)   # read only: forward dynamics' mask
        self.J, self.H = np.empty((6, model.nv)), np.empty((4, 4))    # the output a fast path drops
        self.lanes = np.empty(0)        # lane scratch of one-thread batches (grown: `lane_scratch`)
        self.frame_specs = {}           # (frame, reference) -> the kernels' frame spec row
        self.constraint_rows = {}       # (contacts, loops) -> (C, labels, m)
        self.masks = {}                 # (what, given) -> a coordinate mask (joint names, passive, free)
        self.ik_limits = None           # inverse kinematics' bounds per q entry
        self._sizes = {}                # kernel module name -> the sizes its workspace was made for

    def workspace(self, kernel, *sizes):
        """The single-state workspace of a kernel module: its `workspace(model, *sizes)`, made on
        first use and kept as the attribute named as the module; sizes (a count of constraint
        rows) only ever grow it (a larger workspace serves a smaller call)."""
        name = kernel.__name__.rsplit(".", 1)[1]
        have = self._sizes.get(name)
        if have is None or any(s > h for s, h in zip(sizes, have)):
            grown = tuple(max(s, h) for s, h in zip(sizes, have)) if have is not None else sizes
            setattr(self, name, kernel.workspace(self.packed, *grown))
            self._sizes[name] = grown
        return getattr(self, name)

    def __getattr__(self, name):
        """data.<kernel module> for a kernel without sizes: its workspace, made on first use."""
        kernel = getattr(K, name, None)
        if kernel is None or not hasattr(kernel, "workspace") or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.workspace(kernel)

    def lane_scratch(self, size, lanes):
        """At least `size` doubles of lane scratch for one-thread batches (kept, grown)."""
        if self.lanes.shape[0] < size:
            self.lanes = K.lane_scratch(size, lanes)
        return self.lanes


class _ThreadLast(threading.local):
    data = None         # the Data this thread used last without a `data=` (of the model owning data.packed)


LAST = _ThreadLast()
#: id(model) -> {thread id: Data}: each thread's Data of a live model (dropped with the model)
_THREADS = {}


def of(model, data=None):
    """The Data a call uses: `data` when given (it must be the model's), else the calling thread's
    Data of the model, made on first use. The fast paths write `d = data or last()` and call this
    only when `d.packed is not model.packed`."""
    if data is not None:
        if data.packed is not model.packed:
            raise ValueError(f"data was made for another model than {model.name!r}: make one with Data(model)")
        return data
    d = LAST.data
    if d is not None and d.packed is model.packed:
        return d
    per_thread = _THREADS.get(id(model))
    if per_thread is None:
        per_thread = _THREADS[id(model)] = {}
        weakref.finalize(model, _forget, id(model))
    ident = threading.get_ident()
    d = per_thread.get(ident)
    if d is None or d.packed is not model.packed:
        d = per_thread[ident] = Data(model)
    LAST.data = d
    return d


def _forget(model_id):
    """A model is gone: drop every thread's Data of it (this thread's last one too)."""
    gone = _THREADS.pop(model_id, {})
    if any(d is LAST.data for d in gone.values()):
        LAST.data = None
