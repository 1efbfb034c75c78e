"""The ament_python package `robot_dynamics`, as colcon builds it: the Python package, the node's
executables in lib/robot_dynamics, the launch and config files and the bundled URDFs in
share/robot_dynamics.

This folder holds only the ROS packaging; the sources are the repository's (robot_dynamics/,
launch/, config/, urdf/), reached through the symbolic links beside this file. The repository root
is not a colcon package (it is the plain Python project of pyproject.toml), so that colcon, which
does not look inside a package, finds both this package and robot_dynamics_interfaces/.
"""
from glob import glob

from setuptools import find_packages, setup

package_name = "robot_dynamics"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=[package_name, f"{package_name}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", sorted(glob("launch/*.launch.py"))),
        (f"share/{package_name}/config", sorted(glob("config/*.yaml"))),
        (f"share/{package_name}/urdf", sorted(glob("urdf/*.urdf"))),
        # the executables (ros2 run robot_dynamics ...): scripts, so that the node catches a signal
        # from its first line on (see scripts/dynamics_node)
        (f"lib/{package_name}", sorted(glob("scripts/*"))),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="robot_dynamics maintainers",
    maintainer_email="maintainers@robot-dynamics.dev",
    description="Rigid-body dynamics of URDF robots (RNEA, CRBA, ABA, hybrid dynamics, Jacobians) "
                "compiled with numba, served by a ROS 2 node.",
    license="Apache-2.0",
)
