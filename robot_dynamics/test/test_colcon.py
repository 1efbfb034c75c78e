"""The ROS way: a colcon workspace with this repository in src/ finds both packages
(robot_dynamics_interfaces, ament_cmake; robot_dynamics, ament_python) and builds robot_dynamics with
the documented commands, against the venv's ROS 2 wheels (the venv as underlay: .venv/setup.bash,
written by `make`); `colcon test` runs the package's tests; the installed node answers a service
correctly and stops cleanly; the ament index finds the package, its launch files and its executables.

The workspace gets a copy of the repository's files as git sees them (tracked, and new files not
ignored), as a clone would; it is built in a temporary folder and deleted. The interface package
comes from the checkout's own colcon build (`make` runs `colcon build` on both packages): the
workspace skips it and takes the checkout's install of it as an underlay, since building its type
support again costs ~60 s of CPU (C and Python: no rclcpp in the underlay; with C++ ~120 s). The install's compile step (setup.py
runs `python -m robot_dynamics.warm` on the installed copy) and `colcon test` run on kernels whose
cache the checkout's warm cache seeds (the same sources: numba keys its cache by content, not path),
so they load what `make` compiled instead of compiling every kernel again."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from rosnode import Client, rclpy

from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics_interfaces.srv import InverseDynamics  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNDERLAY = os.path.join(sys.prefix, "setup.bash")
#: the checkout's colcon install of the interface package (`make`), the workspace's second underlay
INTERFACES = os.path.join(REPO, "install", "robot_dynamics_interfaces", "share", "robot_dynamics_interfaces",
                          "package.bash")


def copy_repository(destination):
    """The files of this checkout as a clone has them (symbolic links kept as links)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        source = os.path.join(REPO, name)
        if not os.path.lexists(source):     # deleted in the work tree, not yet in git
            continue
        target = os.path.join(destination, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def seed_kernel_cache(package):
    """The checkout's compiled kernels copied beside the kernels of the copy of the package at
    `package`: numba keys its cache by the sources' content, not their path, and the cache guard's
    stamp (kernels/cache.py) comes along, so identical sources load them instead of compiling
    (~5 min of CPU each for the install's compile step and `colcon test`), and changed ones are
    dropped and compiled."""
    cache = os.path.join(REPO, "robot_dynamics", "robot_dynamics", "kernels", "__pycache__")
    target = os.path.join(package, "kernels", "__pycache__")
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(cache) if os.path.isdir(cache) else ():
        if name.endswith((".nbi", ".nbc")) or name == "robot_dynamics.kernels.sources":
            shutil.copy2(os.path.join(cache, name), target)


def clean_environment():
    """This process's environment without any ROS prefix (`make test` runs in the checkout's overlay), and
    without TEST_CPU_LOG (`colcon test`'s tests are this test's CPU)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("AMENT", "COLCON", "PYTHONPATH", "CMAKE_PREFIX", "VIRTUAL_ENV", "TEST_CPU_LOG"))}


def in_workspace(ws, command, timeout):
    """Run a shell command with the underlays (the venv, the checkout's interface package) and the
    workspace's install/setup.bash sourced; on a timeout its whole process group is killed (colcon's
    build and the install's compile with it)."""
    script = (f'source "{UNDERLAY}" && source "{INTERFACES}" && cd "{ws}" && '
              f'{{ [ ! -f install/setup.bash ] || source install/setup.bash; }} && {command}')
    process = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=clean_environment(), start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def workspace():
    assert os.path.exists(UNDERLAY), f"{UNDERLAY} missing: `make` writes it"
    assert os.path.exists(INTERFACES), f"{INTERFACES} missing: `make` builds it"
    ws = tempfile.mkdtemp(prefix="robot_dynamics_ws_")
    try:
        copy_repository(os.path.join(ws, "src", "robot_dynamics"))
        seed_kernel_cache(os.path.join(ws, "src", "robot_dynamics", "robot_dynamics", "robot_dynamics"))
        python = f"python{sys.version_info.major}.{sys.version_info.minor}"
        seed_kernel_cache(os.path.join(ws, "install", "robot_dynamics", "lib", python, "site-packages", "robot_dynamics"))
        listed = in_workspace(ws, "colcon list --names-only", timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert sorted(listed.stdout.split()) == ["robot_dynamics", "robot_dynamics_interfaces"], listed.stdout
        built = in_workspace(ws, "colcon build --packages-skip robot_dynamics_interfaces "
                                 "--event-handlers console_cohesion+", timeout=900)
        assert built.returncode == 0, built.stdout[-5000:] + built.stderr[-5000:]
        yield ws
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def test_the_ament_index_finds_the_installed_package(workspace):
    probe = in_workspace(workspace, f"""{sys.executable} -c '
import os, robot_dynamics, robot_dynamics_interfaces
from ament_index_python.packages import get_package_prefix, get_package_share_directory
print(robot_dynamics.__file__)
print(robot_dynamics_interfaces.__file__)
print(get_package_prefix("robot_dynamics"))
share = get_package_share_directory("robot_dynamics")
print(" ".join(sorted(os.listdir(os.path.join(share, "launch")))))
print(" ".join(sorted(f for f in os.listdir(os.path.join(get_package_prefix("robot_dynamics"), "lib", "robot_dynamics"))
                      if os.access(os.path.join(get_package_prefix("robot_dynamics"), "lib", "robot_dynamics", f), os.X_OK))))
'""", timeout=120)
    assert probe.returncode == 0, probe.stderr
    module, interfaces, prefix, launch_files, executables = probe.stdout.splitlines()
    install = os.path.join(workspace, "install")
    assert module.startswith(install), module
    assert interfaces.startswith(os.path.join(REPO, "install", "robot_dynamics_interfaces")), interfaces
    assert prefix == os.path.join(install, "robot_dynamics")
    assert launch_files.split() == ["demo.launch.py", "dynamics.launch.py"]
    assert executables.split() == ["closed_loop_demo", "dynamics_node", "five_bar_demo", "legged_demo",
                                   "robot-dynamics", "sim_arm", "sim_five_bar", "sim_legged"]
    command = in_workspace(workspace, "command -v robot-dynamics && robot-dynamics info puma560", timeout=120)
    assert command.returncode == 0, command.stderr     # on PATH after sourcing the workspace
    assert command.stdout.splitlines()[0] == os.path.join(prefix, "bin", "robot-dynamics")
    assert "robot: puma560" in command.stdout


def test_colcon_test_runs_the_package_tests(workspace):
    """`colcon test` finds and runs the package's tests (here two quick library files; without
    --pytest-args it runs them all, the DDS tests too where ROS 2 is installed)."""
    ran = in_workspace(workspace, "colcon test --packages-select robot_dynamics --event-handlers console_direct+ "
                                  "--pytest-args test/test_calling.py test/test_configuration.py", timeout=900)
    assert ran.returncode == 0, ran.stdout[-5000:] + ran.stderr[-5000:]
    result = in_workspace(workspace, "colcon test-result --all --verbose", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = re.search(r"Summary: (\d+) tests, (\d+) errors, (\d+) failures, (\d+) skipped", result.stdout)
    assert summary, result.stdout
    tests, errors, failures, _ = map(int, summary.groups())
    assert tests >= 10 and errors == failures == 0, result.stdout


def test_the_installed_node_answers_and_stops_cleanly(workspace):
    name = f"colcon_node_{os.getpid()}"
    prefix = os.path.join(workspace, "install", "robot_dynamics")
    urdf = os.path.join(prefix, "share", "robot_dynamics", "urdf", "puma560.urdf")
    executable = os.path.join(prefix, "lib", "robot_dynamics", "dynamics_node")
    log = tempfile.TemporaryFile("w+")
    script = (f'source "{UNDERLAY}" && source "{INTERFACES}" && source "{workspace}/install/setup.bash" && '
              f'exec "{executable}" --ros-args -r __node:={name} -p urdf_file:={urdf}')
    node = subprocess.Popen(["bash", "-c", script], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env=clean_environment())
    rclpy.init()
    client = Client()
    try:
        model = load_urdf(urdf)
        q, v, a = np.linspace(-1, 1, 6), np.linspace(0.5, -0.5, 6), np.linspace(2, -2, 6)
        request = InverseDynamics.Request(positions=list(q), velocities=list(v), accelerations=list(a))
        response = client.call(InverseDynamics, f"/{name}/inverse_dynamics", request, timeout=120.0)
        assert response.success, response.message
        expected = rd.inverse_dynamics(model, q, v, a)
        assert np.allclose(response.efforts, expected, rtol=1e-9, atol=1e-9)
        node.send_signal(signal.SIGINT)
        assert node.wait(10) == 0
        log.seek(0)
        assert "Traceback" not in log.read()
    finally:
        client.close()
        rclpy.shutdown()
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
        log.close()
