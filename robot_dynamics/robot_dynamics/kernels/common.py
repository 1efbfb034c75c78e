"""What every kernel shares: status codes, the model's columns, input checks, scratch memory and
the batch drivers' chunks.

Status codes returned: OK (0), NONFINITE (NaN/inf in an input), BAD_QUATERNION (a floating
joint's quaternion far from unit norm) and SINGULAR (a mass matrix that is not positive
definite), the last two with the body at fault: code + STATUS_BODY * (body + 1); OVERFLOW (a
result too large for a double).
"""
import numpy as np
from numba.extending import overload

from ..layout import FREE, GRAVITY, JTYPE, NQ, NV, PARENT, PLANAR, VSCALE, VSRC, layout
from .jit import FAST, allocating, fast, generated
from .access import add, add1, put

OK, NONFINITE, BAD_QUATERNION, SINGULAR, OVERFLOW = 0, 1, 2, 3, 4
STATUS_BODY = 16        # a status names its body: code + STATUS_BODY * (body + 1)
#: a pivot of an articulated or joint-space inertia counts as zero below this fraction of the
#: terms it was computed from (twelve digits cancelled: rounding noise, not inertia)
SINGULAR_TOL = 1e-12
#: inputs beyond this magnitude are refused with the non-finite ones: no physical quantity comes
#: near it, and products of a few such values (v^2 r, m d^2 ...) would overflow a double
INPUT_LIMIT = 1e50
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
# a frame spec row: body, reference, rotation (9, row-major) and translation in the body
F_BODY, F_REF, F_ROT, F_POS, FRAME_COLS = layout((("BODY", 1), ("REF", 1), ("ROT", 9), ("POS", 3)))
# an external wrench row adds the wrench [force; torque] to a frame spec
F_WRENCH, EXT_COLS = layout((("WRENCH", 6),), FRAME_COLS)


@allocating
def body_rows(model, width, dense=False):
    """Scratch for one state: a row of `width` columns per body; dense: then a row per user
    coordinate for the dense system of mimic models (M | b | zeros | unknowns | x | L)."""
    nb, nv = model.shape[0] - 1, int(model[-1, NV])
    if dense:
        return np.empty((max(nb + nv, 1), max(width, 2 * nv + 4)))
    return np.empty((max(nb, 1), width))


@allocating
def rows_then(rows, width, shapes):
    """Scratch of `rows` rows `width` wide, then room for blocks of `shapes` (whole rows): a
    workspace with C-contiguous blocks after its rows (`views`)."""
    return np.empty((rows + (doubles(shapes) + width - 1) // width, width))


def views(flat, start, shapes):
    pass


@overload(views, jit_options=FAST)
def _views(flat, start, shapes):
    """C-contiguous views of the flat array from `start`, one after the other, of `shapes` (a tuple
    of (n,) and (rows, cols))."""
    lines = ["def impl(flat, start, shapes):", "    s = start"]
    for k, shape in enumerate(shapes):
        if len(shape) == 1:
            lines += [f"    v{k} = flat[s:s + shapes[{k}][0]]", f"    s += shapes[{k}][0]"]
        else:
            lines += [f"    v{k} = flat[s:s + shapes[{k}][0] * shapes[{k}][1]].reshape(shapes[{k}][0], shapes[{k}][1])",
                      f"    s += shapes[{k}][0] * shapes[{k}][1]"]
    lines.append("    return (" + "".join(f"v{k}, " for k in range(len(shapes))) + ")")
    return generated("\n".join(lines) + "\n", {})


def doubles(shapes):
    pass


@overload(doubles, jit_options=FAST)
def _doubles(shapes):
    """How many doubles blocks of `shapes` take (`views`)."""
    terms = " + ".join(f"shapes[{k}][0]" + (f" * shapes[{k}][1]" if len(shape) == 2 else "")
                       for k, shape in enumerate(shapes))
    return generated(f"def impl(shapes):\n    return {terms or 0}\n", {})


@fast
def chunk(t, n, nthreads):
    """Rows lo..hi of n that thread t of nthreads takes in a batch."""
    return t * n // nthreads, (t + 1) * n // nthreads


@fast
def finite(x):
    """No NaN or inf in x: sum(x_k * 0) is 0 unless some x_k is NaN or inf (no branch per
    element, so the loop vectorizes)."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
    return s == 0.0


@fast
def usable(x):
    """An input with no NaN or inf and nothing beyond INPUT_LIMIT in magnitude (branchless, as
    `finite`)."""
    s, big = 0.0, 0.0
    for k in range(x.shape[0]):
        s += x[k] * 0.0
        big = max(big, abs(x[k]))
    return s == 0.0 and big <= INPUT_LIMIT


@fast
def sized(model, x, n):
    """x has the model's number of coordinates (column n of the last row: NQ or NV) and unit stride
    (a strided array would be read as contiguous: this is checked first; NumPy gives an array of
    no or one entry any stride). The API's single-state fast paths leave both checks to the kernels
    (calling.plain_data checks dtype and ndim, which the compiled entry point cannot); elsewhere the
    inputs are made contiguous first."""
    return x.shape[0] == int(model[-1, n]) and (x.strides[0] == x.itemsize or x.shape[0] < 2)


@fast
def usable_given(known, qdd, tau):
    """qdd is usable where known, tau elsewhere."""
    for k in range(known.shape[0]):
        x = qdd[k] if known[k] else tau[k]
        if not (np.isfinite(x) and abs(x) <= INPUT_LIMIT):
            return False
    return True


@fast
def usable_rows(x):
    for k in range(x.shape[0]):
        if not usable(x[k]):
            return False
    return True


@fast
def parent(model, i):
    return int(model[i, PARENT])


@fast
def ndofs(model, i):
    jt = model[i, JTYPE]
    return 6 if jt == FREE else 3 if jt == PLANAR else 1


@fast
def fail(code, body):
    """A status naming the body at fault."""
    return code + STATUS_BODY * (body + 1)


@fast
def user_v(model, i, d):
    """Index in the user's v (and tau) of coordinate d of body i's joint."""
    return int(model[i, VSRC]) + d


@fast
def enter(X, a, b, x, shared, l=None):
    """X[a, b] = x, or += x where coordinates are shared (mimic joints add to their leader's): a
    kernel whose entries each get one term writes them once into zeroed memory (no read)."""
    if shared:
        add(X, a, b, l, x)
    else:
        put(X, a, b, l, x)


@fast
def add_torque(model, i, d, value, tau, l=None):
    """tau += G^T of coordinate d of body i's joint getting `value` (lane l, see lanes.py)."""
    add1(tau, user_v(model, i, d), l, model[i, VSCALE] * value)


@fast
def root_acceleration(model):
    """Gravity as a fictitious upward acceleration of the base (Featherstone, RBDA ch. 5)."""
    g = model.shape[0] - 1
    return (-model[g, GRAVITY], -model[g, GRAVITY + 1], -model[g, GRAVITY + 2], 0.0, 0.0, 0.0)
