"""The ament_python package `robot_dynamics`: the library and the node's Python package, the
executables (console scripts in lib/robot_dynamics, as `ros2 run` looks for them; the library's
command `robot-dynamics` also in bin, which a sourced workspace puts on PATH), and the launch
files, parameter file and bundled URDFs in share/robot_dynamics.

colcon builds it (`colcon build`, with `--symlink-install` for development); `pip install
./robot_dynamics` gives the same Python package (`[demo]` adds MuJoCo and matplotlib for the demo
executables). The version is package.xml's, the one place it is written.
"""
import os
import re
import shutil
import subprocess
import sys
from glob import glob

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.develop import develop
from setuptools.command.install import install

package_name = "robot_dynamics"
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "package.xml")) as f:
    version = re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read()).group(1)



class InstallAndCompile(install):
    """`install`, then compile the installed kernels into numba's cache beside them (python -m
    robot_dynamics.warm, ~2.5 min on 2 cores), so that the node's first start and first answers do
    not wait for the compiler. Only for an install into a prefix (colcon build, setup.py install):
    not when a wheel is built (install then writes a staging folder, and the cache is per source
    path). ROBOT_DYNAMICS_NO_COMPILE=1 skips it; a failure only warns (the kernels then compile on
    first use)."""

    def run(self):
        super().run()
        if self.root is None:
            link_command_to_bin(self.install_scripts)
        if self.root is not None or os.environ.get("ROBOT_DYNAMICS_NO_COMPILE") == "1":
            return
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [self.install_lib,
                                                                        os.environ.get("PYTHONPATH")])))
        print("robot_dynamics: compiling the kernels into numba's cache (ROBOT_DYNAMICS_NO_COMPILE=1 skips it)")
        urdf = os.path.join(self.install_data, "share", package_name, "urdf", "puma560.urdf")
        done = subprocess.run([sys.executable, "-m", "robot_dynamics.warm", "--quiet", "--urdf", urdf], env=env,
                              cwd="/")
        if done.returncode:
            print("robot_dynamics: WARNING: the kernels were not compiled at install; they compile on first use")


def link_command_to_bin(scripts_dir):
    """Put `robot-dynamics`, the library's command, in <prefix>/bin as well (a copy of its console
    script): colcon's setup.bash puts a package's bin on PATH, not lib/<package>, where `ros2 run`
    finds the executables (setup.cfg installs them there). Only for scripts installed into
    <prefix>/lib/robot_dynamics (colcon build, with or without --symlink-install): a wheel puts its
    console scripts on PATH itself."""
    script = os.path.join(scripts_dir, "robot-dynamics")
    lib = os.path.dirname(os.path.abspath(scripts_dir))
    if os.path.basename(scripts_dir.rstrip(os.sep)) != package_name or os.path.basename(lib) != "lib" \
            or not os.path.isfile(script):
        return
    bin_dir = os.path.join(os.path.dirname(lib), "bin")
    os.makedirs(bin_dir, exist_ok=True)
    shutil.copy2(script, os.path.join(bin_dir, "robot-dynamics"))


class BuildExtWithNumpy(build_ext):
    """build_ext with numpy's headers: the C extension robot_dynamics.kernels._entry (the single-state fast
    paths' call into their compiled kernels) uses numpy's C API. It is optional: without numpy here (pip's
    isolated build environment: `pip install --no-build-isolation` builds it) or a C compiler, the build
    says so and goes on, and the library does the same in Python (kernels/entries.py, Checked)."""

    def finalize_options(self):
        super().finalize_options()
        try:
            import numpy
        except ImportError:
            print("robot_dynamics: numpy is not importable where this builds: the C extension kernels._entry is "
                  "left out (single calls ~1 us slower; pip install --no-build-isolation builds it)")
            self.extensions = []
            return
        self.include_dirs.append(numpy.get_include())


class DevelopAndLink(develop):
    """`develop` (colcon build --symlink-install), then robot-dynamics in <prefix>/bin."""

    def run(self):
        super().run()
        if not self.uninstall:
            link_command_to_bin(self.script_dir)


setup(
    cmdclass={"install": InstallAndCompile, "develop": DevelopAndLink, "build_ext": BuildExtWithNumpy},
    name=package_name,
    version=version,
    packages=find_packages(include=[package_name, f"{package_name}.*"]),
    ext_modules=[Extension(f"{package_name}.kernels._entry", [f"{package_name}/kernels/_entry.c"],
                           extra_compile_args=["-O2"], optional=True)],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", sorted(glob("launch/*.launch.py"))),
        (f"share/{package_name}/config", sorted(glob("config/*.yaml"))),
        (f"share/{package_name}/urdf", sorted(glob("urdf/*.urdf"))),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy", "numba", "xacro", "PyYAML", "scipy", "clarabel", "rosbags"],
    extras_require={"demo": ["mujoco", "matplotlib"]},
    tests_require=["pytest"],
    zip_safe=False,
    entry_points={
        "console_scripts": [
            # the node and the demo programs (ros2 run robot_dynamics <name>); each records a Ctrl-C
            # from its first line on (robot_dynamics/executables.py)
            "dynamics_node = robot_dynamics.executables:dynamics_node",
            "sim_arm = robot_dynamics.executables:sim_arm",
            "closed_loop_demo = robot_dynamics.executables:closed_loop_demo",
            "sim_legged = robot_dynamics.executables:sim_legged",
            "legged_demo = robot_dynamics.executables:legged_demo",
            "sim_five_bar = robot_dynamics.executables:sim_five_bar",
            "five_bar_demo = robot_dynamics.executables:five_bar_demo",
            # the library's command line: robot-dynamics info/torques/demo
            "robot-dynamics = robot_dynamics.cli:main",
        ],
    },
    maintainer="robot_dynamics maintainers",
    maintainer_email="maintainers@robot-dynamics.dev",
    description="Rigid-body dynamics of URDF robots (RNEA, CRBA, ABA, hybrid and constrained dynamics, "
                "Jacobians) compiled with numba, served by a ROS 2 node.",
    license="Apache-2.0",
)
