"""layout.py: Model.packed's columns and every workspace's are laid out by `layout` from
(name, width) tables, never numbered by hand; the names they are unpacked into must be the
table's, or a swapped pair would silently read the wrong columns."""
import ast
import pathlib

from robot_dynamics import layout as L

PACKAGE = pathlib.Path(L.__file__).parent


def test_layout_numbers_consecutive_fields():
    assert L.layout((("A", 2), ("B", 3), ("C", 1)), 5) == (5, 7, 10, 11)
    assert L.layout(()) == (0,)


def test_packed_columns():
    """The per-body columns as the kernels were written against (before they were generated)."""
    assert (L.PARENT, L.JTYPE, L.QSRC, L.QSCALE, L.QOFF, L.VSRC, L.VSCALE) == tuple(range(7))
    assert (L.ROT, L.POS, L.AXES, L.INERTIA, L.ARMATURE, L.SUBTREE_END, L.ANGLE, L.NCOL) == \
        (7, 16, 19, 28, 38, 39, 40, 41)
    assert (L.GRAVITY, L.NQ, L.NV, L.MIMIC, L.ORIGIN_BODY, L.MULTI) == (0, 3, 4, 5, 6, 7) and L.MODEL_END <= L.NCOL


def layout_tables():
    """(file, line, target names, table names) of every `... = layout(((name, width), ...))`."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and getattr(node.value.func, "id", None) == "layout" and isinstance(node.targets[0], ast.Tuple):
                targets = [t.id for t in node.targets[0].elts]
                fields = [field.elts[0].value for field in node.value.args[0].elts]
                yield path.relative_to(PACKAGE), node.lineno, targets, fields


def test_names_are_the_tables():
    tables = list(layout_tables())
    assert len(tables) >= 12    # layout.py's two, columns.py's, and the kernels' own
    assert {str(path) for path, *_ in tables} >= {"layout.py", "kernels/columns.py", "kernels/rnea.py"}
    for path, line, targets, fields in tables:
        assert len(targets) == len(fields) + 1, (path, line)       # the end last
        prefix = targets[0][:len(targets[0]) - len(fields[0])]
        assert targets[:-1] == [prefix + f for f in fields], (path, line, targets, fields)
