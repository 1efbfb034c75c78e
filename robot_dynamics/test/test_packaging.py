"""The package as ROS developers expect to open it: the standard ament_python shape, one version,
`pip install ./robot_dynamics` giving the library, and a set-up in which no order of sourcing lets an
underlay's copy of the package shadow the workspace's (the venv that `make` builds registers nothing
of this repository; `make` builds the workspace overlay ./install itself)."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PACKAGE)
TOP_LEVEL = {"package.xml", "setup.py", "setup.cfg", "resource", "robot_dynamics", "launch", "config", "urdf", "test"}
EXECUTABLES = ["closed_loop_demo", "dynamics_node", "five_bar_demo", "legged_demo", "sim_arm", "sim_five_bar",
               "sim_legged"]


def tracked(*paths):
    out = subprocess.run(["git", "ls-files", "-s", "--", *paths], cwd=REPO, capture_output=True, text=True, check=True)
    return [line.split(None, 3) for line in out.stdout.splitlines()]    # mode, object, stage, path


def package_xml_version():
    with open(os.path.join(PACKAGE, "package.xml")) as f:
        return re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read()).group(1)


def test_the_package_has_the_standard_ament_python_shape_and_no_links():
    files = tracked(".")
    top = {path.split("/")[1] for _, _, _, path in files if path.startswith("robot_dynamics/")}
    assert top == TOP_LEVEL
    assert {path.split("/")[0] for _, _, _, path in files} >= {"robot_dynamics", "robot_dynamics_interfaces"}
    assert not [path for mode, _, _, path in files if mode == "120000"], "symbolic links in the repository"
    assert os.path.isfile(os.path.join(PACKAGE, "resource", "robot_dynamics"))


def test_the_version_is_written_once_in_package_xml():
    version = package_xml_version()
    setup_version = subprocess.run([sys.executable, "setup.py", "--version"], cwd=PACKAGE, capture_output=True,
                                   text=True, check=True).stdout.split()[-1]
    import robot_dynamics
    assert setup_version == robot_dynamics.__version__ == version
    for name in ("setup.py", "setup.cfg", "robot_dynamics/__init__.py"):
        with open(os.path.join(PACKAGE, name)) as f:
            assert version not in f.read(), f"{name} writes the version again"


def test_pip_install_gives_the_library_with_its_files_and_executables(tmp_path):
    """A wheel of ./robot_dynamics, installed into a fresh prefix: the Python package (kernels
    included), the bundled URDFs and launch files, the console scripts, the demo extra; and the
    installed library computes, with nothing of the checkout or the workspace on its path."""
    source = tmp_path / "robot_dynamics"      # a copy: building writes build/ and *.egg-info beside setup.py
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "test"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = [p for p in os.listdir(tmp_path) if p.endswith(".whl")]
    with zipfile.ZipFile(tmp_path / wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "robot_dynamics/kernels/rnea.py" in names and "robot_dynamics/ros/node.py" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith("test/")]
    data = f"robot_dynamics-{package_xml_version()}.data/data/"
    assert data + "share/robot_dynamics/urdf/puma560.urdf" in names
    assert data + "share/robot_dynamics/launch/dynamics.launch.py" in names
    assert f"Version: {package_xml_version()}" in metadata and "Provides-Extra: demo" in metadata
    assert re.search(r"Requires-Dist: mujoco.*extra == .demo.", metadata)
    for name in EXECUTABLES:
        assert re.search(rf"^{name} = robot_dynamics\.executables:{name}$", entry_points, re.M), name

    prefix = tmp_path / "prefix"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    with open(os.path.join(site, "underlay.pth"), "w") as f:      # numpy, numba from the underlay
        f.write(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--prefix", str(prefix),
                    str(tmp_path / wheel)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AMENT", "COLCON", "PYTHON", "ROS"))}
    probe = subprocess.run([str(prefix / "bin" / "python"), "-c", """
import robot_dynamics, numpy as np
from robot_dynamics import dynamics as rd, load_urdf
from robot_dynamics.resources import bundled_urdf
model = load_urdf(bundled_urdf("puma560"))
print(robot_dynamics.__file__)
print(bundled_urdf("puma560"))
print(robot_dynamics.__version__)
print(rd.gravity_torques(model, np.zeros(6)).shape)
"""], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr
    module, urdf, version, shape = probe.stdout.split()
    assert module.startswith(site) and urdf.startswith(str(prefix / "share" / "robot_dynamics"))
    assert version == package_xml_version() and shape == "(6,)"
    for name in EXECUTABLES:
        assert os.access(prefix / "bin" / name, os.X_OK), name


@pytest.mark.ros
@pytest.mark.parametrize("order", ["underlay, overlay", "overlay, underlay", "overlay alone"])
def test_no_order_of_sourcing_lets_the_underlay_shadow_the_workspace(order):
    """`make`'s venv is an underlay like /opt/ros/<distro>: nothing of this repository is installed or
    registered in it, so the workspace overlay's packages are found whichever is sourced last (a
    user sourcing .venv/setup.bash after install/setup.bash once ran the checkout instead)."""
    from ament_index_python.packages import get_package_prefix
    underlay = sys.prefix
    overlay = os.path.dirname(get_package_prefix("robot_dynamics"))       # the overlay `make test` runs in
    index = os.path.join(underlay, "share", "ament_index", "resource_index", "packages")
    assert not [p for p in os.listdir(index) if p.startswith("robot_dynamics")], \
        "the underlay registers a package of this repository"
    assert not [p for p in os.listdir(sysconfig.get_path("purelib")) if p.startswith(("robot_dynamics", "robot-dynamics"))]
    sources = {"underlay": f'source "{underlay}/setup.bash"', "overlay": f'source "{overlay}/setup.bash"'}
    script = " && ".join(sources[name] for name in order.replace(" alone", "").split(", ")) + """ && python -c '
import robot_dynamics, robot_dynamics_interfaces
from ament_index_python.packages import get_package_prefix
print(get_package_prefix("robot_dynamics"), get_package_prefix("robot_dynamics_interfaces"))
print(robot_dynamics.__file__, robot_dynamics_interfaces.__file__)'"""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AMENT", "COLCON", "PYTHONPATH", "CMAKE_PREFIX", "VIRTUAL_ENV"))}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    out = subprocess.run(["bash", "-c", script], env=env, cwd="/", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    build = os.path.join(os.path.dirname(overlay), "build")     # --symlink-install: the Python package is there
    for path in out.stdout.split():
        assert path.startswith((overlay + os.sep, build + os.sep)), (order, path)


@pytest.mark.ros
def test_the_command_is_on_path_in_a_sourced_workspace():
    """`source install/setup.bash` puts `robot-dynamics` on PATH (a copy of its console script in the
    package's bin, which colcon's hooks add to PATH; the one in lib/robot_dynamics stays for `ros2
    run robot_dynamics robot-dynamics`), and it runs with nothing else on PATH but the system's."""
    from ament_index_python.packages import get_package_prefix
    prefix = get_package_prefix("robot_dynamics")      # the overlay `make test` runs in (--symlink-install)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AMENT", "COLCON", "PYTHONPATH", "CMAKE_PREFIX", "VIRTUAL_ENV"))}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    script = (f'source "{sys.prefix}/setup.bash" && source "{os.path.dirname(prefix)}/setup.bash" && '
              'command -v robot-dynamics && robot-dynamics info puma560')
    out = subprocess.run(["bash", "-c", script], env=env, cwd="/", capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == os.path.join(prefix, "bin", "robot-dynamics")
    assert "robot: puma560" in out.stdout
    assert os.access(os.path.join(prefix, "lib", "robot_dynamics", "robot-dynamics"), os.X_OK)
