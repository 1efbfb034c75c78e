"""layout.py: Model.packed's columns and every workspace's are laid out by `layout` from
(name, width) tables, never numbered by hand. Checked by what the columns do, not by their numbers:
every table is unpacked into its own names (a swapped pair would silently read the wrong columns),
its fields are disjoint and fit the array they index (a workspace's WIDTH, Model.packed's NCOL), and
Model.packed holds under each name what the name says, on the test robots."""
import ast
import importlib
import pathlib

import numpy as np
import pytest

from robot_dynamics import layout as L
from robot_dynamics.model import subtree_ends

PACKAGE = pathlib.Path(L.__file__).parent


def test_layout_numbers_consecutive_fields():
    assert L.layout((("A", 2), ("B", 3), ("C", 1)), 5) == (5, 7, 10, 11)
    assert L.layout(()) == (0,)


def layout_tables():
    """(module, line, target names, table names, width expressions, start expression or None) of
    every `... = layout(((name, width), ...), start)` of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and getattr(node.value.func, "id", None) == "layout" and isinstance(node.targets[0], ast.Tuple):
                module = ".".join(("robot_dynamics",) + path.relative_to(PACKAGE).with_suffix("").parts)
                targets = [t.id for t in node.targets[0].elts]
                fields = node.value.args[0].elts
                start = node.value.args[1] if len(node.value.args) > 1 else None
                yield (module, node.lineno, targets, [f.elts[0].value for f in fields],
                       [ast.unparse(f.elts[1]) for f in fields], start and ast.unparse(start))


TABLES = list(layout_tables())


def test_names_are_the_tables():
    assert len(TABLES) >= 12    # layout.py's two, columns.py's, and the kernels' own
    assert {module for module, *_ in TABLES} >= {"robot_dynamics.layout", "robot_dynamics.kernels.columns",
                                                  "robot_dynamics.kernels.rnea"}
    for module, line, targets, fields, _, _ in TABLES:
        assert len(targets) == len(fields) + 1, (module, line)       # the end last
        prefix = targets[0][:len(targets[0]) - len(fields[0])]
        assert targets[:-1] == [prefix + f for f in fields], (module, line, targets, fields)


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t[0].removeprefix('robot_dynamics.')}:{t[2][0]}")
def test_fields_are_disjoint_and_within_the_width(table):
    """Each name's column range [first, first + width) follows the previous one's: no two fields
    share a column; a workspace's columns (W_*) end within its module's WIDTH."""
    module_name, line, targets, _, widths, start = table
    module = importlib.import_module(module_name)
    namespace = vars(module)
    widths = [eval(w, namespace) for w in widths]       # noqa: S307 (the package's own constants)
    firsts = [namespace[t] for t in targets]
    assert all(w > 0 for w in widths), (module_name, line, widths)
    assert firsts[0] == (eval(start, namespace) if start else 0)      # noqa: S307
    for name, first, width, following in zip(targets, firsts, widths, firsts[1:]):
        assert following == first + width, (module_name, name)
    if targets[0].startswith("W_") and hasattr(module, "WIDTH"):
        assert firsts[-1] <= module.WIDTH, (module_name, targets[-1], module.WIDTH)


def test_the_model_row_fits_the_body_rows():
    assert L.MODEL_END <= L.NCOL
    per_body = next(t for t in TABLES if t[0] == "robot_dynamics.layout" and "PARENT" in t[2])
    assert per_body[2][-1] == "NCOL"


@pytest.mark.robots("mimic", "biped-freeflyer", "planar_base_arm", "floating_object_arm", "talos-freeflyer")
def test_packed_holds_each_field_under_its_name(pair):
    """What the kernels read under each name is the model's: parents, joint types, the q and v
    maps, rotations (orthonormal, Q e_z along the joint axis), placements, inertias (mass and the
    norms of the first moment and of the inertia kept through the turn into the joint frame),
    armature, subtree ends, the angle's index, and the model-wide row."""
    m = pair.model
    p, nb = m.packed, m.nb
    assert p.shape == (nb + 1, L.NCOL) and p.flags.c_contiguous
    np.testing.assert_array_equal(p[:nb, L.PARENT], m.parent)
    np.testing.assert_array_equal(p[:nb, L.JTYPE], m.joint_type)
    np.testing.assert_array_equal(p[:nb, L.QSRC], m.q_source[m.idx_q])
    np.testing.assert_array_equal(p[:nb, L.QSCALE], m.q_scale[m.idx_q])
    np.testing.assert_array_equal(p[:nb, L.QOFF], m.q_offset[m.idx_q])
    np.testing.assert_array_equal(p[:nb, L.VSRC], m.v_source[m.idx_v])
    np.testing.assert_array_equal(p[:nb, L.VSCALE], m.v_scale[m.idx_v])
    rot, axes = p[:nb, L.ROT:L.ROT + 9].reshape(nb, 3, 3), p[:nb, L.AXES:L.AXES + 9].reshape(nb, 3, 3)
    for R in (rot, axes):
        np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    one = np.isin(m.joint_type, (L.REVOLUTE, L.PRISMATIC))
    np.testing.assert_allclose(axes[one, :, 2], m.joint_axis[one], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(p[:nb, L.POS:L.POS + 3], axis=1), np.linalg.norm(m.tree_translation, axis=1),
                               atol=1e-12)
    inertia = p[:nb, L.INERTIA:L.INERTIA + 10]
    np.testing.assert_array_equal(inertia[:, 0], m.inertia[:, 0])
    np.testing.assert_allclose(np.linalg.norm(inertia[:, 1:4], axis=1), np.linalg.norm(m.inertia[:, 1:4], axis=1), atol=1e-12)
    np.testing.assert_allclose(inertia[:, 4:7].sum(1), m.inertia[:, 4:7].sum(1), atol=1e-12)     # the trace
    np.testing.assert_array_equal(p[:nb, L.SUBTREE_END], subtree_ends(m.parent))
    np.testing.assert_array_equal(p[:nb, L.ANGLE], p[:nb, L.QSRC] + 2 * (m.joint_type == L.PLANAR))
    assert (p[nb, L.NQ], p[nb, L.NV], p[nb, L.MIMIC]) == (m.nq, m.nv, m.has_mimic)
    origin = int(p[nb, L.ORIGIN_BODY])
    assert origin == next(b for b in range(nb) if m.joint_type[b] != L.PRISMATIC)
    assert p[nb, L.MULTI] == (np.isin(m.joint_type[1:], (L.FREE, L.PLANAR)).any() or m.joint_type[0] == L.PLANAR)
    try:      # settable physics land in their own columns and nowhere else
        before = p.copy()
        m.gravity = [1.0, -2.0, -3.0]
        m.armature = np.arange(1.0, len(m.joint_names) + 1)
        np.testing.assert_array_equal(p[nb, L.GRAVITY:L.GRAVITY + 3], [1.0, -2.0, -3.0])
        leaders = [m.joint_offset[1] + k for k in range(len(m.joint_names))]
        bodies = [b for b in range(nb) if one[b] and m.v_source[m.idx_v[b]] in leaders and not m.v_is_mimic[m.idx_v[b]]]
        np.testing.assert_array_equal(p[bodies, L.ARMATURE], m.armature[[m.v_source[m.idx_v[b]] - m.joint_offset[1]
                                                                          for b in bodies]])
        changed = np.argwhere(p != before)
        assert {(r, c) for r, c in changed} <= {(nb, c) for c in range(L.GRAVITY, L.GRAVITY + 3)} | \
            {(b, L.ARMATURE) for b in range(nb)}
    finally:
        m.gravity, m.armature = [0.0, 0.0, -9.81], 0.0
