"""robot_dynamics: rigid-body dynamics of URDF robots (RNEA, CRBA, ABA, hybrid dynamics,
Jacobians) compiled with numba, and a ROS 2 node that serves them."""
from .model import Model
from .urdf import URDFError, load_urdf

__all__ = ["Model", "URDFError", "load_urdf", "dynamics"]
__version__ = "0.1.0"

