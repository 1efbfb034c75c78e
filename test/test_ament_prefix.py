"""`make` makes the venv an ament prefix of the package (as colcon --symlink-install would): ros2 run
and ros2 launch find the executables and the launch files there, and those files are links to this
checkout (edits need no reinstall). The three descriptions of the package agree."""
import pytest

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)
import os
import re
import sys
import tomllib
import xml.etree.ElementTree as ET

from ament_index_python.packages import get_package_prefix, get_package_share_directory

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROS_PACKAGE = os.path.join(REPO, "ros", "robot_dynamics")


def test_the_venv_is_an_ament_prefix_of_the_package(monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", sys.prefix)
    assert get_package_prefix("robot_dynamics") == sys.prefix
    share = get_package_share_directory("robot_dynamics")
    for folder, names in (("launch", ["demo.launch.py", "dynamics.launch.py"]), ("config", ["dynamics.yaml"]),
                          ("urdf", sorted(os.listdir(os.path.join(REPO, "urdf"))))):
        assert sorted(os.listdir(os.path.join(share, folder))) == names
        for name in names:      # links into this checkout
            assert os.path.realpath(os.path.join(share, folder, name)) == os.path.join(REPO, folder, name)
    lib = os.path.join(sys.prefix, "lib", "robot_dynamics")
    assert sorted(os.listdir(lib)) == sorted(os.listdir(os.path.join(ROS_PACKAGE, "scripts")))
    for name in os.listdir(lib):
        path = os.path.join(lib, name)
        assert os.access(path, os.X_OK)
        with open(path) as f:
            assert f.readline().strip() == f"#!{sys.prefix}/bin/python"


def test_versions_agree():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        pyproject = tomllib.load(f)["project"]["version"]
    package_xml = ET.parse(os.path.join(ROS_PACKAGE, "package.xml")).getroot().findtext("version")
    with open(os.path.join(ROS_PACKAGE, "setup.py")) as f:
        setup_py = re.search(r'version="([^"]+)"', f.read()).group(1)
    import robot_dynamics
    assert pyproject == package_xml == setup_py == robot_dynamics.__version__
