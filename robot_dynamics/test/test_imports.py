"""Every module of the package imports on its own, first in a process where nothing of the package is
loaded (`python -c "import robot_dynamics.constrained"` once failed with "partially initialized
module"), and the package's import graph has no cycle: `urdf` -> `model` -> `kernels` -> `calling` -> the algorithms -> the
`dynamics` facade -> `ros` and `demo`, one direction.

Modules that need what an environment may lack (rclpy, the built interfaces, MuJoCo) are imported
where it is there; `__main__` modules are not imported (importing one runs its program)."""
import ast
import importlib.util
import os
import subprocess
import sys

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robot_dynamics")
#: what a module of these subpackages may need beyond the library's own dependencies
NEEDS = {"robot_dynamics.ros": ["rclpy", "robot_dynamics_interfaces"],
         "robot_dynamics.demo": ["rclpy", "robot_dynamics_interfaces", "mujoco", "matplotlib"]}


def modules():
    """{module name: source path} of every module of the package (packages as their __init__)."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        parts = ["robot_dynamics"] + os.path.relpath(folder, PACKAGE).split(os.sep)
        parts = [p for p in parts if p != "."]
        for name in files:
            if name.endswith(".py") and name != "__main__.py":
                module = ".".join(parts + ([] if name == "__init__.py" else [name[:-3]]))
                found[module] = os.path.join(folder, name)
    return found


def available(module):
    needs = next((v for k, v in NEEDS.items() if module.startswith(k)), [])
    return all(importlib.util.find_spec(n) is not None and importlib.util.find_spec(n).origin for n in needs)


#: run in a fresh interpreter: load the third-party libraries the package imports (argv[1]), then import
#: each module (argv[2:]) in a process forked from it, so that nothing of the package is loaded before
#: it; print "name<TAB>error" for each that fails
FORK_EACH = r"""
import importlib, os, sys
for library in filter(None, sys.argv[1].split(",")):
    try:
        importlib.import_module(library)
    except Exception:
        pass
assert not [m for m in sys.modules if m.split(".")[0] == "robot_dynamics"]
for name in sys.argv[2:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            os._exit(0)
        except BaseException as exc:
            os.write(write, f"{type(exc).__name__}: {exc}".encode()[:4000])
            os._exit(1)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        error = f.read().decode(errors="replace")
    if os.waitpid(pid, 0)[1]:
        print(f"{name}\t{error or 'exited with an error'}", flush=True)
"""


def third_party_imports():
    """The top-level names of what the package's modules import from outside it."""
    names = set()
    for path in modules().values():
        with open(path) as f:
            for node in ast.walk(ast.parse(f.read())):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names.add(node.module.split(".")[0])
    return sorted(n for n in names if not n.startswith("robot_dynamics") and importlib.util.find_spec(n) is not None)


def test_every_module_imports_alone():
    """Each module imported first, in a process where no module of the package is loaded yet (forked
    from an interpreter that loaded only the third-party libraries: ~0.3 s of CPU a module instead of
    ~1 s for a new interpreter each)."""
    names = sorted(m for m in modules() if available(m))
    assert len(names) > 40
    result = subprocess.run([sys.executable, "-c", FORK_EACH, ",".join(third_party_imports())] + names,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    failed = [line.split("\t", 1) for line in result.stdout.splitlines() if "\t" in line]
    assert not failed, failed


def imports_at_load(module, path):
    """The package's modules that `module` imports when it loads (statements outside functions)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    known, found = modules(), set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in known else target)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            if isinstance(node, ast.ClassDef):
                visit(node.body)
            else:
                visit([child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)])

    visit(tree.body)
    # the parent packages load first anyway; robot_dynamics/__init__ loads nothing (lazy names)
    return {m for m in found if m in known and m != module and not module.startswith(m + ".")}


def test_the_import_graph_has_no_cycle():
    graph = {m: imports_at_load(m, path) for m, path in modules().items()}
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def strongconnect(v):       # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in graph:
        if v not in index:
            strongconnect(v)
    assert not cycles, cycles


def test_the_library_does_not_import_the_ros_layer_or_the_demo():
    graph = {m: imports_at_load(m, path) for m, path in modules().items()}
    library = [m for m in graph if not m.startswith(("robot_dynamics.ros", "robot_dynamics.demo"))]
    offending = {m: sorted(d for d in graph[m] if d.startswith(("robot_dynamics.ros", "robot_dynamics.demo")))
                 for m in library}
    assert not {m: d for m, d in offending.items() if d}, offending
    assert not {m: d for m, d in graph.items() if m.startswith("robot_dynamics.ros")
                and any(x.startswith("robot_dynamics.demo") for x in d)}


@pytest.mark.parametrize("cap", [400])
def test_no_module_of_the_package_is_longer_than(cap):
    long = {m: n for m, path in modules().items() if (n := sum(1 for _ in open(path))) > cap}
    assert not long, long


def loads_rclpy(path):
    """Whether the module at `path` imports rclpy when it loads (statements outside functions)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    found = []

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Import):
                found.extend(a.name for a in node.names if a.name.split(".")[0] == "rclpy")
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module.split(".")[0] == "rclpy":
                found.append(node.module)
            visit([child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)])
    visit(tree.body)
    return bool(found)


def test_only_the_node_its_parts_and_the_demo_import_rclpy():
    """The ROS layer's logic stays importable and testable without rclpy: of robot_dynamics.ros, only
    main, node, base, declared and each feature's `part` load rclpy, directly or through another module."""
    found = modules()
    graph = {m: imports_at_load(m, path) for m, path in found.items()}
    direct = {m for m, path in found.items() if loads_rclpy(path)}

    def loads(m, seen):
        if m in seen:
            return False
        seen.add(m)
        return m in direct or any(loads(d, seen) for d in graph[m])

    allowed = ("robot_dynamics.ros.main", "robot_dynamics.ros.node", "robot_dynamics.ros.base",
               "robot_dynamics.ros.declared")
    offending = sorted(m for m in found if loads(m, set()) and not (
        m in allowed or (m.startswith("robot_dynamics.ros.") and m.endswith(".part"))
        or m.startswith("robot_dynamics.demo")))
    assert not offending, offending
    assert {"robot_dynamics.ros.node", "robot_dynamics.ros.joint_states.part"} <= direct     # the scan sees them
