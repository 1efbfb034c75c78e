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
        (f"share/{package_name}/launch", glob("launch/*.py")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/urdf", glob("urdf/*.urdf")),
    ],
    install_requires=["numpy", "numba", "xacro"],
    extras_require={"demo": ["mujoco", "matplotlib"]},     # sim_arm and closed_loop_demo
    zip_safe=True,
    maintainer="robot_dynamics maintainers",
    maintainer_email="maintainers@robot-dynamics.dev",
    description="Rigid-body dynamics of URDF robots (RNEA, CRBA, ABA, hybrid dynamics, Jacobians) "
                "compiled with numba, served by a ROS 2 node.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "robot-dynamics = robot_dynamics.cli:main",
            "dynamics_node = robot_dynamics.node:main",
            "sim_arm = robot_dynamics.sim_arm:main",
            "closed_loop_demo = robot_dynamics.closed_loop_demo:main",
        ],
    },
)
