"""`python -m robot_dynamics.ros [--ros-args ...]`: the node, as the dynamics_node executable runs it."""
import sys

from ..executables import dynamics_node

sys.exit(dynamics_node())
