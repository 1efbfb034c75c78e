"""Memory for lanes (see lanes.py): the accessors through which a kernel written once reads and
writes one state or L states in lane-last arrays, and the moves of whole tiles between row-major
states and lane-last scratch.

    at, put, add, sub   A[i, c] (=, +=, -=) for one state; the L lanes A[i, c, 0:L] as one vector
    at1, put1, add1, sub1   x[k] of a vector; x[k, 0:L] for lanes
    first, first1       A[i, c] / x[k] of one state; lane 0 for lanes (a value every lane shares)
    transpose_tile      an L x L tile between (N, m) row-major states and (m, L) lane-last scratch
    matrix_at           a matrix (with its lanes) in flat scratch

An array without a lane dimension (the model, a frame spec) is shared by every lane: `at` reads it
as a number, which meets the lanes by broadcast.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .lanes import LaneVec, _one_state


@intrinsic
def address(typingctx, A):
    """The address of A's first element (to align scratch)."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))
    return types.int64(A), codegen


@intrinsic
def prefetch(typingctx, A, k):
    """Ask for the cache line of the k-th element of the flat, C-contiguous A (llvm.prefetch: a
    read, kept in all cache levels)."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        ptr = builder.gep(data, [context.cast(builder, args[1], sig.args[1], types.intp)])
        i8p = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p] + [ir.IntType(32)] * 3),
                                            "llvm.prefetch.p0")
        i32 = ir.IntType(32)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.none(A, k), codegen


def _transpose(builder, rows):
    """The L x L transpose of L vectors of L doubles (L a power of 2): log2 L stages, each swapping
    one bit of the row index with the same bit of the lane index by shuffles of row pairs."""
    n, i32 = len(rows), ir.IntType(32)
    rows, bit = list(rows), 1
    while bit < n:
        for j in range(n):
            if j & bit:
                continue
            lo, hi = rows[j], rows[j | bit]
            first = [(n if x & bit else 0) + (x & ~bit) for x in range(n)]
            second = [(n if x & bit else 0) + (x | bit) for x in range(n)]
            rows[j] = builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(i32, n), first))
            rows[j | bit] = builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(i32, n), second))
        bit <<= 1
    return rows


def _row_pointer(context, builder, aryty, ary, row, col):
    """Pointer to the 2-D C-contiguous ary[row, col]."""
    arr = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer2(context, builder, arr.data, cgutils.unpack_tuple(builder, arr.shape),
                                     cgutils.unpack_tuple(builder, arr.strides), aryty.layout, [row, col])


@intrinsic
def transpose_tile(typingctx, src, r0, c0, dst, d0, e0, lanes):
    """dst[d0 + j, e0 + l] = src[r0 + l, c0 + j] for j, l < L (2-D C-contiguous arrays): an L x L
    tile moved between row-major states and lane-last scratch, L vector loads, L log2 L shuffles and
    L vector stores instead of L^2 scalar moves."""
    def codegen(context, builder, sig, args):
        n = sig.args[6].count
        vt = ir.VectorType(ir.DoubleType(), n)
        r0, c0, d0, e0 = (context.cast(builder, args[k], sig.args[k], types.intp) for k in (1, 2, 4, 5))
        rows = []
        for l in range(n):
            row = builder.add(r0, ir.Constant(r0.type, l))
            ptr = _row_pointer(context, builder, sig.args[0], args[0], row, c0)
            rows.append(builder.load(builder.bitcast(ptr, vt.as_pointer()), align=8))
        for j, col in enumerate(_transpose(builder, rows)):
            ptr = _row_pointer(context, builder, sig.args[3], args[3], builder.add(d0, ir.Constant(d0.type, j)), e0)
            builder.store(col, builder.bitcast(ptr, vt.as_pointer()), align=8)
        return context.get_dummy_value()
    return types.none(src, r0, c0, dst, d0, e0, lanes), codegen


# --- the accessors: W[i, c] and q[k] for one state, W[i, c, 0:L] and q[k, 0:L] for lanes ---------
def _element_pointer(context, builder, aryty, ary, indices, types_, count):
    """Pointer to ary[indices..., 0] of a lane array (its last dimension is the `count` lanes).

    That last dimension is the constant L, not the shape read at run time: LLVM then knows
    W[i, c, :] and W[i, c', :] apart (constant offsets in a row), as it knows W[i, c] and W[i, c']
    in the scalar code, so both paths reuse the same loads and products, and fuse the same
    multiply-adds (`contract`: a product with two uses is not fused). With the run-time stride the
    lane code reloaded the inertia after storing h = I v and fused m v_0 there, the scalar code
    shared it with Idot: the derivatives differed in the last bit (now bitwise equal)."""
    arr = context.make_array(aryty)(context, builder, ary)
    inds = [context.cast(builder, x, t, types.intp) for x, t in zip(indices, types_)]
    inds.append(ir.Constant(ir.IntType(64), 0))
    shape = cgutils.unpack_tuple(builder, arr.shape)
    shape[-1] = ir.Constant(ir.IntType(64), count)      # constant lane stride: same alias facts as scalar code
    return cgutils.get_item_pointer2(context, builder, arr.data, shape,
                                     cgutils.unpack_tuple(builder, arr.strides), aryty.layout, inds)


@intrinsic
def _load(typingctx, A, index, l):
    """The L doubles at A[index..., 0:L] (index a tuple of integers)."""
    def codegen(context, builder, sig, args):
        idx_types = list(sig.args[1])
        ptr = _element_pointer(context, builder, sig.args[0], args[0], cgutils.unpack_tuple(builder, args[1]), idx_types,
                               sig.return_type.count)
        vt = ir.VectorType(ir.DoubleType(), sig.return_type.count)
        return builder.load(builder.bitcast(ptr, vt.as_pointer()), align=8)
    return LaneVec(l.count)(A, index, l), codegen


@intrinsic
def _store(typingctx, A, index, l, x):
    """A[index..., 0:L] = x (a number: in every lane)."""
    def codegen(context, builder, sig, args):
        ptr = _element_pointer(context, builder, sig.args[0], args[0], cgutils.unpack_tuple(builder, args[1]),
                               list(sig.args[1]), sig.args[2].count)
        value = context.cast(builder, args[3], sig.args[3], LaneVec(sig.args[2].count))
        builder.store(value, builder.bitcast(ptr, value.type.as_pointer()), align=8)
        return context.get_dummy_value()
    return types.none(A, index, l, x), codegen


def at(A, i, c, l):
    pass


@overload(at)
def _at(A, i, c, l):
    """A[i, c] of one state, or its L lanes A[i, c, 0:L] (A without a lane dimension: A[i, c],
    shared by every lane, as the model is)."""
    if _one_state(l) or A.ndim == 2:
        return lambda A, i, c, l: A[i, c]
    return lambda A, i, c, l: _load(A, (i, c), l)


def put(A, i, c, l, x):
    pass


@overload(put)
def _put(A, i, c, l, x):
    """A[i, c] = x, lane by lane for lanes."""
    if _one_state(l):
        def one(A, i, c, l, x):
            A[i, c] = x
        return one
    return lambda A, i, c, l, x: _store(A, (i, c), l, x)


def add(A, i, c, l, x):
    pass


@overload(add)
def _add(A, i, c, l, x):
    """A[i, c] += x."""
    if _one_state(l):
        def one(A, i, c, l, x):
            A[i, c] += x
        return one
    return lambda A, i, c, l, x: _store(A, (i, c), l, _load(A, (i, c), l) + x)


def sub(A, i, c, l, x):
    pass


@overload(sub)
def _sub(A, i, c, l, x):
    """A[i, c] -= x."""
    if _one_state(l):
        def one(A, i, c, l, x):
            A[i, c] -= x
        return one
    return lambda A, i, c, l, x: _store(A, (i, c), l, _load(A, (i, c), l) - x)


def first(A, i, c, l):
    pass


@overload(first)
def _first(A, i, c, l):
    """A[i, c] of one state, A[i, c, 0] for lanes: a value every lane shares (a joint's unknown
    coordinates, a frame's body)."""
    if _one_state(l) or A.ndim == 2:
        return lambda A, i, c, l: A[i, c]
    return lambda A, i, c, l: A[i, c, 0]


def first1(x, k, l):
    pass


@overload(first1)
def _first1(x, k, l):
    """x[k] of one state, x[k, 0] for lanes (see `first`)."""
    if _one_state(l) or x.ndim == 1:
        return lambda x, k, l: x[k]
    return lambda x, k, l: x[k, 0]


def at1(x, k, l):
    pass


@overload(at1)
def _at1(x, k, l):
    """x[k] of one state's vector, or its L lanes x[k, 0:L] (x without a lane dimension: x[k])."""
    if _one_state(l) or x.ndim == 1:
        return lambda x, k, l: x[k]
    return lambda x, k, l: _load(x, (k,), l)


def put1(x, k, l, value):
    pass


@overload(put1)
def _put1(x, k, l, value):
    if _one_state(l):
        def one(x, k, l, value):
            x[k] = value
        return one
    return lambda x, k, l, value: _store(x, (k,), l, value)


def add1(x, k, l, value):
    pass


@overload(add1)
def _add1(x, k, l, value):
    """x[k] += value."""
    if _one_state(l):
        def one(x, k, l, value):
            x[k] += value
        return one
    return lambda x, k, l, value: _store(x, (k,), l, _load(x, (k,), l) + value)


def sub1(x, k, l, value):
    pass


@overload(sub1)
def _sub1(x, k, l, value):
    """x[k] -= value."""
    if _one_state(l):
        def one(x, k, l, value):
            x[k] -= value
        return one
    return lambda x, k, l, value: _store(x, (k,), l, _load(x, (k,), l) - value)


def matrix_at(flat, start, rows, cols, l):
    pass


@overload(matrix_at)
def _matrix_at(flat, start, rows, cols, l):
    """flat[start:] as a C-contiguous rows x cols matrix, with a lane dimension for lanes (L doubles
    per entry), and the offset past it."""
    if _one_state(l):
        return lambda flat, start, rows, cols, l: (flat[start:start + rows * cols].reshape(rows, cols),
                                                   start + rows * cols)
    n = l.count
    return lambda flat, start, rows, cols, l: (flat[start:start + rows * cols * n].reshape(rows, cols, n),
                                               start + rows * cols * n)
