"""What the constrained algorithms share (constrained, constrained_inverse, constrained_hybrid,
assembly): contacts and loops as kernel rows (checked, kept in the Data), coordinate masks given as
booleans or joint names, and errors that name the constraint, the joint or the input. The conventions are in constrained.py's docstring (Kim, Lie group formulation
of articulated rigid body dynamics, section 3; Featherstone, Rigid Body Dynamics Algorithms, ch. 8).
"""
import numpy as np

from . import calling as _call
from . import kernels as K
from .kernels import constraints as _c

KINDS = {"point": 3, "6d": 6}
ZERO_GAINS = np.zeros(2)


class ConstraintError(ValueError):
    """The constraints cannot hold, constrain nothing, or cannot be met by the given motion or
    actuators; the message names the constraint (or the joint)."""


def _kind(kind, what):
    if kind not in KINDS:
        raise ValueError(f"{what}: kind must be 'point' or '6d', got {kind!r}")
    return KINDS[kind]


def _target(target, n, what):
    """A contact's target: a world position (point) or a 4x4 world placement (6d) -> (R, p)."""
    x = np.asarray(target, dtype=float)
    if n == 3:
        if x.shape != (3,) or not np.all(np.isfinite(x)):
            raise ValueError(f"{what}: a point contact's target is a world position (3 finite numbers), "
                             f"got {target!r}")
        return np.eye(3), x
    R = x[:3, :3] if x.shape == (4, 4) else None
    if R is None or not np.all(np.isfinite(x)) or np.abs(R.T @ R - np.eye(3)).max() > 1e-6 \
            or np.linalg.det(R) < 0 or np.any(x[3] != (0, 0, 0, 1)):
        raise ValueError(f"{what}: a 6d contact's target is a 4x4 world placement (a rotation and a "
                         f"translation), got {target!r}")
    return R, x[:3, 3]


def rows(model, d, contacts, loops):
    """(C, labels, m): kernel rows for the constraints, a label for each and the row count, checked
    (kept in the model's Data d for constraints named by frames alone, so that repeated calls cost a
    dictionary lookup)."""
    cache = d.constraint_rows
    try:
        key = (tuple(contacts), tuple(loops))
        return cache[key]
    except TypeError:       # lists inside, or targets (arrays): not cached
        key = None
    except KeyError:
        pass
    if isinstance(contacts, (str, bytes)) or isinstance(loops, (str, bytes)):
        raise ValueError("contacts and loops are sequences of tuples, e.g. [('left_foot', '6d')]")
    out, labels = [], []
    for k, c in enumerate(contacts):
        what = f"contact {k}"
        if not isinstance(c, (tuple, list)) or len(c) not in (2, 3):
            raise ValueError(f"{what}: expected (frame, kind) or (frame, kind, target), got {c!r}")
        frame, n = c[0], _kind(c[1], what)
        row = np.zeros(_c.C_COLS)
        row[_c.C_SIZE] = n
        row[_c.C_A:_c.C_A + K.FRAME_COLS] = _call.frame_spec(model, d, frame, "local_world_aligned")
        if row[_c.C_A + K.F_BODY] < 0:
            raise ConstraintError(f"{what} on frame {frame!r}: no joint moves that frame (it is fixed to the "
                                  "world), so the contact constrains nothing")
        b = row[_c.C_B:_c.C_B + K.FRAME_COLS]
        b[K.F_BODY], b[K.F_ROT:K.F_ROT + 9] = -1, np.eye(3).reshape(9)
        if len(c) == 3:
            R, p = _target(c[2], n, what)
            b[K.F_ROT:K.F_ROT + 9], b[K.F_POS:K.F_POS + 3] = R.reshape(9), p
            row[_c.C_POSITION] = 1.0
        out.append(row)
        labels.append(f"{what} ({c[1]} on {frame!r})")
    for k, c in enumerate(loops):
        what = f"loop {k}"
        if not isinstance(c, (tuple, list)) or len(c) != 3:
            raise ValueError(f"{what}: expected (frame_a, frame_b, kind), got {c!r}")
        n = _kind(c[2], what)
        row = np.zeros(_c.C_COLS)
        row[_c.C_SIZE], row[_c.C_POSITION] = n, 1.0
        row[_c.C_A:_c.C_A + K.FRAME_COLS] = _call.frame_spec(model, d, c[0], "local_world_aligned")
        row[_c.C_B:_c.C_B + K.FRAME_COLS] = _call.frame_spec(model, d, c[1], "local_world_aligned")
        if row[_c.C_A + K.F_BODY] == row[_c.C_B + K.F_BODY]:
            raise ConstraintError(f"{what}: no joint moves frame {c[0]!r} relative to frame {c[1]!r} (they are on "
                                  "one rigid body), so the loop constrains nothing")
        out.append(row)
        labels.append(f"{what} ({c[2]} between {c[0]!r} and {c[1]!r})")
    C = np.array(out).reshape(len(out), _c.C_COLS)
    result = (C, labels, int(C[:, _c.C_SIZE].sum()))
    if key is not None:
        cache[key] = result
    return result


def gains(baumgarte):
    if baumgarte is None:
        return ZERO_GAINS
    g = np.asarray(baumgarte, dtype=float).reshape(-1)
    if g.shape != (2,) or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"baumgarte must be (kp, kd), two finite non-negative gains, got {baumgarte!r}")
    return g


def raise_inconsistent(model, status, inputs, what):
    """Kernel status -> an error: INCONSISTENT names the constraint (what(k, where)), the rest as
    calling.raise_status."""
    status = np.atleast_1d(status)
    bad = np.flatnonzero(status)
    if not len(bad):
        return
    row, code = int(bad[0]), int(status[bad[0]])
    if code % K.STATUS_BODY == _c.INCONSISTENT:
        where = f" (batch row {row})" if len(status) > 1 else ""
        raise ConstraintError(what(code // K.STATUS_BODY - 1, where))
    _call.raise_status(model, status, inputs)


def inconsistent(labels, text):
    """`raise_inconsistent` as calling.call's error, the message `text` with the constraint's label
    ({label}) and the batch row ({where})."""
    return lambda model, status, inputs: raise_inconsistent(
        model, status, inputs, lambda k, where: text.format(label=labels[k], where=where))


def zero_or(x, n, name, batch):
    """x as a state vector; the number 0 stands for zeros."""
    if np.ndim(x) == 0:
        if x != 0:
            raise ValueError(f"{name} must be an array of {n} numbers (or the number 0 for zeros), got {x!r}")
        return np.zeros((batch, n)) if batch else np.zeros(n)
    return _call.vector(x, n, name, batch)


def joint_of(model, k):
    """The joint (model.joints) whose coordinates include v index k."""
    return next(j for j in model.joints if j.idx_v <= k < j.idx_v + j.nv)


def coordinate_names(model, ks):
    """'joint' for each v index in ks (a multi-coordinate joint's with the coordinate), joined."""
    names = []
    for k in ks:
        j = joint_of(model, k)
        names.append(repr(j.name) if j.nv == 1 else f"{j.name!r}[{k - j.idx_v}]")
    return ", ".join(names)


def _joint_block(model, name, what):
    """The Joint of a name, or an error naming it (fixed and mimic joints have no coordinate)."""
    if not isinstance(name, str):
        raise ValueError(f"{what}: joint names must be strings, got {name!r}")
    joint = model.joint_by_name.get(name)
    if joint is not None:
        return joint
    if name in model.body_joint_names:
        raise ValueError(f"{what}: joint {name!r} mimics another joint: it has no coordinate of its own "
                         "(name the joint it follows)")
    if name in model.joint_frames:
        raise ValueError(f"{what}: joint {name!r} is fixed: it has no coordinate")
    raise ValueError(f"{what}: unknown joint {name!r}; the joints with coordinates are "
                     f"{', '.join(j.name for j in model.joints)}")


def coordinate_mask(model, d, x, what, over="v"):
    """A boolean mask over v (over="v") or over q (over="q", turned into one over v) from a mask or
    a sequence of joint names (a joint's name takes all its coordinates), checked; masks made from
    names are kept in the model's Data d. A mask over q must take or leave a floating or planar joint's
    coordinates together."""
    n = model.nv if over == "v" else model.nq
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{what} must be a boolean mask of {n} entries (over {over}) or a list of joint names, "
                         f"got the string {x!r}")
    names = isinstance(x, (list, tuple)) and all(isinstance(e, str) for e in x)
    if names and len(set(x)) != len(x):
        twice = next(e for k, e in enumerate(x) if e in x[:k])
        raise ValueError(f"{what} names joint {twice!r} more than once")
    if names:
        cache = d.masks
        key = ("joints", tuple(x))
        mask = cache.get(key)
        if mask is None:
            mask = np.zeros(model.nv, bool)
            for name in x:
                j = _joint_block(model, name, what)
                mask[j.idx_v:j.idx_v + j.nv] = True
            mask.flags.writeable = False
            cache[key] = mask
        return mask
    a = np.asarray(x)
    if a.dtype != bool or a.shape != (n,):
        raise ValueError(f"{what} must be a boolean mask of shape ({n},) (over {over}) or a list of joint names, "
                         f"got {a.dtype} of shape {a.shape}")
    if over == "v":
        return a
    mask = np.zeros(model.nv, bool)
    for j in model.joints:
        block = a[j.idx_q:j.idx_q + j.nq]
        if block.any() != block.all():
            raise ValueError(f"{what}: the {j.kind} joint {j.name!r} moves as a whole: its coordinates "
                             f"q[{j.idx_q}:{j.idx_q + j.nq}] must all be in the mask or none")
        mask[j.idx_v:j.idx_v + j.nv] = block.all()
    return mask


def complement(model, d, given, what, over="v"):
    """1.0 for each coordinate (over v) not in `given` (a boolean mask over `over`, or joint names:
    `coordinate_mask`), 0.0 for those in it: read only (the compiled entry points take one array
    type), kept in the model's Data d for masks and names that can be keys."""
    if type(given) is np.ndarray:
        key = (what, given.dtype.str, given.shape, given.tobytes())
    else:
        try:
            key = (what, tuple(given))
            hash(key)
        except TypeError:
            key = None
    masks = d.masks
    x = masks.get(key)
    if x is None:
        x = np.where(coordinate_mask(model, d, given, what, over), 0.0, 1.0)
        x.flags.writeable = False
        if key is not None:
            masks[key] = x
    return x


def outputs(out, shapes):
    """Fresh arrays of the shapes, or `out` checked: as many distinct C-contiguous, writeable
    float64 arrays of those shapes (a batch into reused memory skips the cost of fresh pages)."""
    if out is None:
        return tuple(_call.fresh(s) for s in shapes)
    ok = isinstance(out, (tuple, list)) and len(out) == len(shapes) and all(
        type(x) is np.ndarray and x.shape == s and x.dtype == np.float64 and x.flags.c_contiguous
        and x.flags.writeable for x, s in zip(out, shapes))
    if not ok or any(np.may_share_memory(out[i], out[j]) for i in range(len(out)) for j in range(i)):
        raise ValueError(f"out must be {len(shapes)} distinct C-contiguous, writeable float64 arrays of shapes "
                         f"{', '.join(map(str, shapes))}")
    return tuple(out)
