"""The facade (robot_dynamics/dynamics.py, `rd`): every public function and class of the modules it
imports from (calling's helpers aside; a module's __all__ where it has one) is there, as the module's own object (no wrapper in between), and its docstring's table
names each of those modules. What each function computes: the module's own test file."""
import ast
import importlib
import inspect

import pytest

from robot_dynamics import dynamics as rd

SOURCES = [node.module for node in ast.parse(inspect.getsource(rd)).body
           if isinstance(node, ast.ImportFrom) and node.level == 1]


def public(module):
    """The module's public functions and classes: its __all__ where it declares one (helpers shared with
    sibling modules stay out of it), else every name without a leading underscore defined there."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return {name: obj for name, obj in vars(module).items() if name in names
            and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__}


@pytest.mark.parametrize("source", [s for s in SOURCES if s != "calling"])
def test_every_public_name_of_an_api_module_is_the_facades(source):
    module = importlib.import_module(f"robot_dynamics.{source}")
    names = public(module)
    assert names, source
    for name, obj in names.items():
        assert getattr(rd, name, None) is obj, f"rd.{name} is not {source}.{name}"


def test_the_facades_docstring_names_each_module():
    table = {line.split()[0] for line in rd.__doc__.splitlines() if line.startswith("    ") and line.split()}
    assert set(SOURCES) <= table, set(SOURCES) - table
