"""robot_dynamics: rigid-body dynamics of URDF robots (RNEA, CRBA, ABA, hybrid and constrained
dynamics, Jacobians) compiled with numba, and a ROS 2 node that serves them.

    from robot_dynamics import load_urdf
    from robot_dynamics import dynamics as rd

The names below are loaded on first use: importing the package costs nothing (the executables
record a Ctrl-C before numpy loads, see executables.py).
"""
import importlib

__all__ = ["Model", "URDFError", "load_urdf", "dynamics", "__version__"]
_FROM = {"Model": "model", "URDFError": "urdf", "load_urdf": "urdf"}


def __getattr__(name):
    if name in _FROM:
        return getattr(importlib.import_module(f".{_FROM[name]}", __name__), name)
    if name == "dynamics":
        return importlib.import_module(".dynamics", __name__)
    if name == "__version__":
        from .resources import version
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
