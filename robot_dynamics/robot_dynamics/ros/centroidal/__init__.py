"""~/centroidal (CentroidalState) for models with a floating or planar root: the centre of mass, its
velocity and the centroidal momentum of each joint_states message (rd.centroidal_state), the base's
velocity from ~/base_twist, to subscribers only (part.py: CentroidalOutput). No parameters of its own."""

PARAMETERS = {}


def parts():
    from .part import CentroidalOutput
    return (CentroidalOutput,)
