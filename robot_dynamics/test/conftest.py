"""What every test module shares: the test robots, the `pair` fixture (our model and Pinocchio's for
one robot, oracle.Pair), DDS isolation for the ROS tests, and the `client` fixture that talks to
node processes (rosnode.py holds the node helpers).

- `ROBOTS`: the one list of test robots, (name in oracle.URDFS, on a free flyer); a test taking
  `pair` runs once per robot. A module runs a subset with `pytestmark = pytest.mark.robots(<ids>)`
  (ids as `robot_id` writes them: "talos-freeflyer").
- random states: `pair.states(n, seed)` (oracle.Pair.states: q within the limits, v, a, and with
  tau=True a random torque).
- DDS: each pytest process (each xdist worker) gets its own ROS_DOMAIN_ID, LOCALHOST discovery.
"""
import os
import random
import sys
import zlib

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# the nodes' heavy-request process at the tests' own priority: the suite keeps both cores busy, and a
# heavy request at a lower one waits for it (at SCHED_IDLE, an IK request waited past rosnode's re-send,
# 6.7 s, in a fresh-clone run); its priority is bench_node.py's to measure (--identify, --fuzz), and
# test_ros_work checks the default
os.environ.setdefault("ROBOT_DYNAMICS_HEAVY_NICE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: the test robots: fixed, free flyer, mimic, planar and floating joints (root and mid-tree)
ROBOTS = [("panda", False), ("ur5", False), ("talos", False), ("talos", True), ("mimic", False), ("mimic", True),
          ("puma560", False), ("biped", True), ("planar_base_arm", False), ("floating_object_arm", False)]
#: ROS_DOMAIN_IDs valid with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (each takes its own UDP ports)
DOMAINS = range(1, 102)


def robot_id(robot):
    return robot[0] + ("-freeflyer" if robot[1] else "")


def domain_id():
    """A random domain for a plain run; under xdist the run's random base plus the worker's index, so
    that the workers of one run never share a domain (their nodes and clients stay apart)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return random.SystemRandom().choice(DOMAINS)
    base = zlib.crc32(os.environ["PYTEST_XDIST_TESTRUNUID"].encode())     # random per run, the same in every worker
    return DOMAINS[(base + int(worker.removeprefix("gw"))) % len(DOMAINS)]


# DDS isolation for every ROS test of this process (and the processes they start)
os.environ["ROS_DOMAIN_ID"] = str(domain_id())
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"


#: left out of `make test-quick` (marked `slow` here, in one place): checks of the whole package (every
#: module imported alone, pip install, the cache guard's recompiles), of every robot installed here, and
#: the lane code's batches of 10000 and its second lane width (compiled on first use)
SLOW = {"test_robot_sweep.py": "*", "test_packaging.py": "*", "test_cache_guard.py": "*",
        "test_imports.py": {"test_every_module_imports_alone"},
        "test_lanes.py": {"test_batches_of_10000_equal_single_calls", "test_both_lane_widths_give_the_same_results"}}


def pytest_collection_modifyitems(items):
    """The `slow` marks; under xdist the slow tests first (the scheduler below hands out the ROS
    modules, then single tests in this order: the long ones first, so that both processes end
    together)."""
    for item in items:
        slow = SLOW.get(item.path.name, ())
        if slow == "*" or item.originalname in slow:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)     # stable: the same order in each


def ros_module(path):
    """Whether a test module has tests marked `ros` (it starts node processes or builds a workspace
    in module-scoped fixtures): read from its source, as the xdist controller collects no tests."""
    with open(path) as f:
        return "pytest.mark.ros" in f.read()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under `--dist loadgroup` (make test): a ROS module's tests stay together in one process (its
    fixtures start node processes once; on two processes they started twice, test_colcon built its
    workspace twice), while a library module's spread over the processes one test at a time
    (test_lanes alone is a quarter of the library's CPU). xdist's own loadgroup groups by a suffix it
    writes into each test's node id, which pytest 9 no longer reads back (pytest-xdist issue 1386):
    the groups were silently lost. Modules are the larger units and go first (xdist's loadscope
    order: most tests first), single tests last (the slow ones first), so that the two processes end
    together."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling    # noqa: PLC0415 (xdist is there when this runs)
    rootpath, ros = config.rootpath, {}

    class ModuleOrTest(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            module = nodeid.split("::", 1)[0]
            if module not in ros:
                ros[module] = ros_module(rootpath / module)
            return module if ros[module] else nodeid
    return ModuleOrTest(config, log)


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # two processes may compile one kernel at once (what the warm-up left, e.g. the second lane
        # width): numba's cache saves are made atomic across them, as warm.py's processes' are
        from robot_dynamics import kernels    # noqa: PLC0415 (the library, in the test processes only)
        from robot_dynamics.warm import lock_numba_cache    # noqa: PLC0415
        cache = os.path.join(os.path.dirname(kernels.__file__), "__pycache__")
        os.makedirs(cache, exist_ok=True)
        lock_numba_cache(cache)
    config.addinivalue_line("markers", "robots(*ids): the test robots (conftest.ROBOTS, by id) a module's `pair` takes")
    config.addinivalue_line("markers", "slow: checks of the whole package or of every robot installed here, left "
                                       "out of `make test-quick` (`make test` runs them)")


def pytest_generate_tests(metafunc):
    """`pair` over ROBOTS, or over the ids of the module's `robots` marker (a module that defines a
    `pair` fixture of its own keeps it)."""
    if "pair" not in metafunc.fixturenames or hasattr(metafunc.module, "pair"):
        return
    marker = metafunc.definition.get_closest_marker("robots")
    robots = ROBOTS
    if marker is not None:
        known = {robot_id(r): r for r in ROBOTS}
        unknown = [i for i in marker.args if i not in known]
        assert not unknown, f"robots({', '.join(unknown)}): not in conftest.ROBOTS"
        robots = [known[i] for i in marker.args]
    metafunc.parametrize("pair", robots, ids=robot_id, indirect=True, scope="module")


@pytest.fixture(scope="module")
def pair(request):
    """Our model and Pinocchio's of one test robot (oracle.Pair), one per module: tests may change
    its armature or gravity if they put it back."""
    from oracle import Pair    # noqa: PLC0415 (Pinocchio is imported by the modules that use it)
    return Pair(*request.param)


# --- the URDFs Pinocchio refuses (test_robot_sweep), said at the end of the run ------------------
def refused_by_pinocchio():
    sweep = sys.modules.get("test_robot_sweep")
    return dict(getattr(sweep, "REFUSED_BY_PINOCCHIO", None) or {})


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):      # an xdist worker: hand them to the controller
        session.config.workeroutput["refused_by_pinocchio"] = refused_by_pinocchio()


_REFUSED_IN_WORKERS = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _REFUSED_IN_WORKERS.update(getattr(node, "workeroutput", {}).get("refused_by_pinocchio", {}))


def pytest_terminal_summary(terminalreporter):
    """The real URDFs that Pinocchio refuses, with what our loader says of each (test_robot_sweep)."""
    refused = {**refused_by_pinocchio(), **_REFUSED_IN_WORKERS}
    if refused:
        terminalreporter.section("URDFs that Pinocchio refuses")
        for path, what in sorted(refused.items()):   # example-robot-data's, then pybullet_data/...
            terminalreporter.write_line(f"{path}: {what}")


# --- CPU time per test (TEST_CPU_LOG=<file>): what the machine's load does not change, unlike durations -----
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    log = os.environ.get("TEST_CPU_LOG")
    if not log:
        yield
        return
    import resource    # noqa: PLC0415
    import time        # noqa: PLC0415

    def cpu():
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    start, wall = cpu(), time.monotonic()
    yield
    with open(log, "a") as f:
        f.write(f"{cpu() - start:.3f}\t{time.monotonic() - wall:.3f}\t{item.nodeid}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed ROS test's report carries the last lines of each node process it could have talked to
    (those running, and those started during the test): their output files go with the test process,
    so without this a failure in CI says nothing of what the node said."""
    outcome = yield
    report = outcome.get_result()
    rosnode = sys.modules.get("rosnode")
    if call.when == "setup":
        item.stash[_NODES_BEFORE] = len(rosnode.RUNNING) if rosnode else 0
    if not report.failed or rosnode is None:
        return
    before = item.stash.get(_NODES_BEFORE, 0)
    for k, node in enumerate(rosnode.RUNNING):
        if k >= before or node.proc.poll() is None:
            try:
                lines = node.output().splitlines()[-40:]
            except OSError:
                continue
            state = "running" if node.proc.poll() is None else f"exited {node.proc.returncode}"
            report.sections.append((f"node {node.name} ({state}), last {len(lines)} lines", "\n".join(lines)))


_NODES_BEFORE = pytest.StashKey[int]()


@pytest.fixture(scope="module")
def client():
    """A test client node over DDS (rosnode.Client) for a module's ROS tests; at the end every
    node process the module started is stopped (rosnode.stop_all)."""
    from rosnode import Client, rclpy, stop_all    # noqa: PLC0415 (the library tests run without ROS)
    rclpy.init()
    c = Client()
    yield c
    c.close()
    stop_all()
    rclpy.shutdown()
