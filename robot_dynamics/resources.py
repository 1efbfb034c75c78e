"""Files shipped with the package: the bundled URDF models."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {
    "puma560": "puma560.urdf",                 # the default arm
    "planar_2link": "planar_2link.urdf",
    "floating_base_biped": "floating_base_biped.urdf",
}
DEFAULT_MODEL = "puma560"


def _ament_share():
    """share/robot_dynamics of the ROS 2 package (a colcon install), or None."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return get_package_share_directory("robot_dynamics")
    except Exception:       # not installed, no ament_index_python, no AMENT_PREFIX_PATH
        return None


def urdf_dir():
    """The bundled urdf/ folder: beside the package in a source or editable checkout, in the ROS 2
    package's share folder (colcon), or under <prefix>/share/robot_dynamics once installed."""
    for where in (lambda: os.path.dirname(_HERE), _ament_share,
                  lambda: os.path.join(sys.prefix, "share", "robot_dynamics")):
        path = where() and os.path.join(where(), "urdf")
        if path and os.path.isdir(path):
            return path
    raise FileNotFoundError("the bundled urdf/ folder is missing from this installation")


def bundled_urdf(name=DEFAULT_MODEL):
    """Path of a bundled model by short name (see MODELS)."""
    if name not in MODELS:
        raise KeyError(f"no bundled model {name!r}; choose one of {', '.join(MODELS)}")
    return os.path.join(urdf_dir(), MODELS[name])
