"""Files shipped with the package: the bundled URDF models, and the version (package.xml's)."""
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {
    "puma560": "puma560.urdf",                 # the default arm
    "planar_2link": "planar_2link.urdf",
    "floating_base_biped": "floating_base_biped.urdf",
    "five_bar": "five_bar.urdf",               # a parallel robot: a tree closed by a loop
}
DEFAULT_MODEL = "puma560"


def _ament_share():
    """share/robot_dynamics of the ROS 2 package (a colcon install), or None."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return get_package_share_directory("robot_dynamics")
    except Exception:       # not installed, no ament_index_python, no AMENT_PREFIX_PATH
        return None


def _package_roots():
    """Where the ROS package's files (package.xml, urdf/, launch/, config/) are, best first: the
    package folder around this Python package in a checkout (or a --symlink-install build), the
    package's share folder in the ament index (a colcon install), <prefix>/share/robot_dynamics
    (a pip install)."""
    yield os.path.dirname(_HERE)
    share = _ament_share()
    if share:
        yield share
    yield os.path.join(sys.prefix, "share", "robot_dynamics")


def urdf_dir():
    """The bundled urdf/ folder."""
    for root in _package_roots():
        path = os.path.join(root, "urdf")
        if os.path.isdir(path):
            return path
    raise FileNotFoundError("the bundled urdf/ folder is missing from this installation")


def bundled_urdf(name=DEFAULT_MODEL):
    """Path of a bundled model by short name (see MODELS)."""
    if name not in MODELS:
        raise KeyError(f"no bundled model {name!r}; choose one of {', '.join(MODELS)}")
    return os.path.join(urdf_dir(), MODELS[name])


def urdf_file(source):
    """The file a URDF argument names: `source` if it is a file, else the bundled model it names by
    short name (MODELS), else None."""
    if os.path.isfile(source):
        return source
    return bundled_urdf(source) if source in MODELS else None


def version():
    """The package's version: package.xml's, the one place it is written (setup.py reads it too)."""
    for root in _package_roots():
        try:
            with open(os.path.join(root, "package.xml")) as f:
                return re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read()).group(1)
        except (OSError, AttributeError):
            continue
    from importlib.metadata import version as installed_version     # a wheel without its share/ files
    return installed_version("robot_dynamics")
