"""Several states per instruction: a numba type for L doubles in one SIMD register, so that a
kernel written once for one state also runs L states at a time.

A kernel reads its scratch and inputs through `at`, `put`, `at1`, `put1` and `add1` with a lane
argument `l`: None for one state (plain `W[i, c]`, `q[k]`: the code compiles exactly as scalar
code), or a `Lanes(L)` marker for a block of L states laid out lane-last (`W[i, c, 0:L]`,
`q[k, 0:L]`), where the same accessors load and store an `L x double` vector (a `LaneVec`,
LLVM's `<L x double>`: one zmm register for L = 8 with AVX-512, two ymm with AVX2). Arithmetic,
comparisons and `abs` on LaneVec are LLVM's vector instructions with the kernels' `contract`
flag (fused multiply-adds), a number meeting a LaneVec is broadcast, and numba unifies a number
with a LaneVec (a tuple of floats assigned where a tuple of LaneVec was is cast), so the spatial
algebra on tuples (spatial.py) serves both unchanged.

A comparison of LaneVecs is a `LaneMask`, which has no truth value: a branch that would differ
between states does not compile. Per-state conditions are `all_lanes(mask)` (True for a bool:
one state), and a lane kernel that meets a failing lane reports it and the batch driver runs that
block's states again one at a time, which gives each its exact status (calling.raise_status).
"""
import operator

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.typeconv import Conversion
from numba.extending import (NativeValue, intrinsic, lower_builtin, lower_cast, models, overload, register_model,
                             type_callable, typeof_impl, unbox)


CONTRACT = ("contract",)        # as jit.fast's fastmath: a * b + c may fuse


class LaneVec(types.Type):
    """L doubles, one per state, in one register (LLVM <L x double>)."""

    def __init__(self, count):
        self.count = count
        super().__init__(name=f"LaneVec({count})")

    def unify(self, typingctx, other):
        if isinstance(other, (types.Float, types.Integer)) or other == self:
            return self
        return None

    def can_convert_from(self, typingctx, other):
        return Conversion.safe if isinstance(other, (types.Float, types.Integer)) else None


class LaneMask(types.Type):
    """L booleans, a comparison of LaneVecs (LLVM <L x i1>): no truth value, see all_lanes."""

    def __init__(self, count):
        self.count = count
        super().__init__(name=f"LaneMask({count})")

    def unify(self, typingctx, other):
        if isinstance(other, types.Boolean) or other == self:
            return self
        return None

    def can_convert_from(self, typingctx, other):
        return Conversion.safe if isinstance(other, types.Boolean) else None


class LanesType(types.Type):
    """The type of a Lanes marker: its count is known when the kernel compiles."""

    def __init__(self, count):
        self.count = count
        super().__init__(name=f"Lanes({count})")


class Lanes:
    """The lane argument of a kernel run over `count` states at once (lane-last scratch). Each
    count compiles (and caches) its own machine code; the count is chosen at run time."""

    def __init__(self, count):
        self.count = count

    def __repr__(self):
        return f"Lanes({self.count})"


@typeof_impl.register(Lanes)
def _typeof_lanes(val, c):
    return LanesType(val.count)


@register_model(LaneVec)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(ir.DoubleType(), fe_type.count))


@register_model(LaneMask)
class _MaskModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(ir.IntType(1), fe_type.count))


@register_model(LanesType)
class _LanesModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(8))


@unbox(LanesType)
def _unbox_lanes(typ, obj, c):
    return NativeValue(ir.Constant(ir.IntType(8), 0))


def _splat(builder, value, count):
    vec = ir.VectorType(value.type, count)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))


@lower_cast(types.Float, LaneVec)
@lower_cast(types.Integer, LaneVec)
def _number_to_vec(context, builder, fromty, toty, val):
    return _splat(builder, context.cast(builder, val, fromty, types.float64), toty.count)


@lower_cast(types.Boolean, LaneMask)
def _bool_to_mask(context, builder, fromty, toty, val):
    return _splat(builder, context.cast(builder, val, fromty, types.boolean), toty.count)


def _vec_of(a, b):
    """The LaneVec type of a binary operation on a and b, or None."""
    vec = a if isinstance(a, LaneVec) else b
    other = b if vec is a else a
    if isinstance(vec, LaneVec) and (other == vec or isinstance(other, (types.Float, types.Integer))):
        return vec
    return None


def _binary(op, result_of, lower_with):
    """Typing and lowering of op on (LaneVec | number) pairs: result_of(vec type) is its type,
    lower_with(builder, a, b) its instruction on the two operands as vectors."""
    @type_callable(op)
    def typing(context):
        def typer(a, b):
            vec = _vec_of(a, b)
            return None if vec is None else result_of(vec)
        return typer

    def impl(context, builder, sig, args):
        vec = _vec_of(*sig.args)
        a, b = (context.cast(builder, x, t, vec) for x, t in zip(args, sig.args))
        return lower_with(builder, a, b)
    for pair in ((LaneVec, LaneVec), (types.Number, LaneVec), (LaneVec, types.Number)):
        lower_builtin(op, *pair)(impl)


for _ops, _inst in (((operator.add, operator.iadd), "fadd"), ((operator.sub, operator.isub), "fsub"),
                    ((operator.mul, operator.imul), "fmul"), ((operator.truediv, operator.itruediv), "fdiv")):
    for _op in _ops:
        _binary(_op, lambda vec: vec, lambda builder, a, b, inst=_inst: getattr(builder, inst)(a, b, flags=CONTRACT))
for _op, _cmp in ((operator.lt, "<"), (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="),
                  (operator.eq, "==")):
    _binary(_op, lambda vec: LaneMask(vec.count), lambda builder, a, b, cmp=_cmp: builder.fcmp_ordered(cmp, a, b))
_binary(operator.ne, lambda vec: LaneMask(vec.count), lambda builder, a, b: builder.fcmp_unordered("!=", a, b))


def _mask_of(a, b):
    mask = a if isinstance(a, LaneMask) else b
    other = b if mask is a else a
    return mask if isinstance(mask, LaneMask) and (other == mask or isinstance(other, types.Boolean)) else None


for _ops, _inst in (((operator.and_, operator.iand), "and_"), ((operator.or_, operator.ior), "or_")):
    for _op in _ops:
        @type_callable(_op)
        def _mask_typing(context):
            return lambda a, b: _mask_of(a, b)

        def _mask_impl(context, builder, sig, args, inst=_inst):
            mask = _mask_of(*sig.args)
            a, b = (context.cast(builder, x, t, mask) for x, t in zip(args, sig.args))
            return getattr(builder, inst)(a, b)
        for _pair in ((LaneMask, LaneMask), (types.Boolean, LaneMask), (LaneMask, types.Boolean)):
            lower_builtin(_op, *_pair)(_mask_impl)


def _unary(op, typ, lower_with):
    @type_callable(op)
    def typing(context):
        return lambda a: (typ(a) if isinstance(a, (LaneVec, LaneMask)) else None)

    for t in (LaneVec, LaneMask):
        lower_builtin(op, t)(lambda context, builder, sig, args: lower_with(builder, args[0], sig))


_unary(operator.neg, lambda a: a if isinstance(a, LaneVec) else None,
       lambda builder, x, sig: builder.fneg(x, flags=CONTRACT))
_unary(operator.not_, lambda a: a if isinstance(a, LaneMask) else None, lambda builder, x, sig: builder.not_(x))
_unary(operator.invert, lambda a: a if isinstance(a, LaneMask) else None, lambda builder, x, sig: builder.not_(x))


def _intrinsic_call(builder, name, args):
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(args[0].type, [a.type for a in args]), name)
    return builder.call(fn, args)


_unary(abs, lambda a: a if isinstance(a, LaneVec) else None,
       lambda builder, x, sig: _intrinsic_call(builder, f"llvm.fabs.v{sig.args[0].count}f64", [x]))


# --- functions that are plain NumPy for one state and vector instructions for lanes -------------
def _one_state(l):
    return isinstance(l, (types.NoneType, types.Omitted))


def _llvm_unary(name):
    """The LLVM intrinsic llvm.<name> on a LaneVec."""
    @intrinsic
    def call(typingctx, x):
        def codegen(context, builder, sig, args):
            return _intrinsic_call(builder, f"llvm.{name}.v{sig.args[0].count}f64", args)
        return x(x), codegen
    return call


_vsqrt, _vfloor = _llvm_unary("sqrt"), _llvm_unary("floor")


def sqrt(x):
    pass


@overload(sqrt)
def _sqrt(x):
    if isinstance(x, LaneVec):
        return lambda x: _vsqrt(x)
    return lambda x: np.sqrt(x)


def floor(x):
    pass


@overload(floor)
def _floor(x):
    if isinstance(x, LaneVec):
        return lambda x: _vfloor(x)
    return lambda x: np.floor(x)


@intrinsic
def _all_set(typingctx, mask):
    def codegen(context, builder, sig, args):
        n = sig.args[0].count
        return builder.icmp_unsigned("==", builder.bitcast(args[0], ir.IntType(n)), ir.Constant(ir.IntType(n), -1))
    return types.boolean(mask), codegen


def all_lanes(ok):
    pass


@overload(all_lanes)
def _all_lanes(ok):
    """True where every lane is (a bool: the one state is)."""
    if isinstance(ok, LaneMask):
        return lambda ok: _all_set(ok)
    return lambda ok: ok


@intrinsic
def _any_set(typingctx, mask):
    def codegen(context, builder, sig, args):
        n = sig.args[0].count
        return builder.icmp_unsigned("!=", builder.bitcast(args[0], ir.IntType(n)), ir.Constant(ir.IntType(n), 0))
    return types.boolean(mask), codegen


def any_lane(x):
    pass


@overload(any_lane)
def _any_lane(x):
    """True where some lane is (a bool: the one state is)."""
    if isinstance(x, LaneMask):
        return lambda x: _any_set(x)
    return lambda x: x


@intrinsic
def _select(typingctx, mask, a, b):
    vec = _vec_of(a, b) or (a if isinstance(a, LaneVec) else None)
    sig = vec(mask, a, b)

    def codegen(context, builder, sig, args):
        x, y = (context.cast(builder, v, t, sig.return_type) for v, t in zip(args[1:], sig.args[1:]))
        m = context.cast(builder, args[0], sig.args[0], LaneMask(sig.return_type.count))
        return builder.select(m, x, y)
    return sig, codegen


def select(mask, a, b):
    pass


@overload(select)
def _select_overload(mask, a, b):
    """a where mask, else b, lane by lane (for one state: a if mask else b)."""
    if isinstance(mask, LaneMask) or isinstance(a, LaneVec) or isinstance(b, LaneVec):
        return lambda mask, a, b: _select(mask, a, b)
    return lambda mask, a, b: a if mask else b


@intrinsic
def _get_lane(typingctx, x, j):
    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], context.cast(builder, args[1], sig.args[1], types.int32))
    return types.float64(x, j), codegen


@intrinsic
def _set_lane(typingctx, x, j, value):
    def codegen(context, builder, sig, args):
        return builder.insert_element(args[0], context.cast(builder, args[2], sig.args[2], types.float64),
                                      context.cast(builder, args[1], sig.args[1], types.int32))
    return x(x, j, value), codegen


def libm_sin_cos(x):
    pass


@overload(libm_sin_cos)
def _libm_sin_cos(x):
    """libm's (sin x, cos x), lane by lane for a LaneVec."""
    if isinstance(x, LaneVec):
        def lanewise(x):
            s = c = x
            for j in range(x_count(x)):
                s = _set_lane(s, j, np.sin(_get_lane(x, j)))
                c = _set_lane(c, j, np.cos(_get_lane(x, j)))
            return s, c
        return lanewise
    return lambda x: (np.sin(x), np.cos(x))


def x_count(x):
    pass


@overload(x_count)
def _x_count(x):
    n = x.count
    return lambda x: n


def lanes_count(l):
    pass


@overload(lanes_count)
def _lanes_count(l):
    """L for a Lanes marker, 1 for one state (None): a constant where the kernel compiles."""
    n = 1 if _one_state(l) else l.count
    return lambda l: n
