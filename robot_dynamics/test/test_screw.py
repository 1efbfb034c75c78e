"""rd.screw_axes: the product of exponentials (Lynch and Park, Modern Robotics, ch. 4) equals
frame_placement, and the space Jacobian built from the screws (eq. 5.11) equals frame_jacobian, on
panda, ur5 and the PUMA at random configurations, from the neutral and from a random reference."""
import numpy as np
import pytest

from oracle import URDFS, rel_err
from robot_dynamics import dynamics as rd
from robot_dynamics import lie, load_urdf

ARMS = [("panda", "panda_hand"), ("panda", "panda_rightfinger"), ("ur5", "tool0"), ("puma560", "tool0"),
        ("mimic", None)]


@pytest.mark.parametrize("name,frame", ARMS)
def test_product_of_exponentials_is_frame_placement(name, frame):
    model = load_urdf(URDFS[name])
    frame = frame or model.frame_names[-1]
    rng = np.random.default_rng(0)
    Q = rd.random_configuration(model, rng, 100)
    T = rd.frame_placement(model, Q, frame)
    for q_ref in (None, rd.random_configuration(model, rng)):
        axes = rd.screw_axes(model, frame, q_ref)
        assert rel_err(axes.M, rd.frame_placement(model, axes.q_ref, frame)) == 0
        assert rel_err(axes.placement(Q), T) < 1e-13
        assert rel_err(axes.placement(Q, "body"), T) < 1e-13
        assert rel_err(axes.B, lie.Ad(lie.inverse(axes.M)) @ axes.S) == 0
        assert rel_err(axes.B, rd.frame_jacobian(model, axes.q_ref, frame, "local")) < 1e-14
        for q in Q[:10]:
            assert rel_err(axes.space_jacobian(q), rd.frame_jacobian(model, q, frame, "world")) < 1e-13


def test_screw_axes_are_the_textbook_ones_on_the_two_link_arm():
    """Revolute joints about -y through (0, 0, 0) and (1, 0, 0): S = [-w x r; w]; the tip at (2, 0, 0)."""
    model = load_urdf(URDFS["puma560"].replace("puma560", "planar_2link"))
    axes = rd.screw_axes(model, "tip")
    w = np.array([0.0, -1.0, 0.0])
    assert rel_err(axes.S[:, 0], np.r_[np.zeros(3), w]) < 1e-15
    assert rel_err(axes.S[:, 1], np.r_[-np.cross(w, [1.0, 0, 0]), w]) < 1e-15
    assert rel_err(axes.M[:3, 3], [2.0, 0, 0]) < 1e-15
    assert axes.chain == (0, 1)


def test_multi_coordinate_and_coupled_joints_are_refused_by_name():
    biped = load_urdf(URDFS["biped"], floating_base=True)
    with pytest.raises(ValueError, match=r"joint 'root_joint' \(floating\).*one-coordinate joints only"):
        rd.screw_axes(biped, biped.frame_names[-1])
    planar = load_urdf(URDFS["planar_base_arm"])
    with pytest.raises(ValueError, match=r"\(planar\)"):
        rd.screw_axes(planar, planar.frame_names[-1])
    with pytest.raises(KeyError, match="unknown frame"):
        rd.screw_axes(planar, "nowhere")
    arm = load_urdf(URDFS["puma560"])
    with pytest.raises(ValueError, match="q_ref must be 6 finite numbers"):
        rd.screw_axes(arm, "tool0", [0.0] * 5)


def test_a_coordinate_moving_two_joints_of_the_chain_is_refused():
    """A mimic joint following a joint of the same chain: the coordinate's Jacobian column is the sum
    of two screws, whose exponential is not the product of theirs."""
    urdf = """<robot name="m"><link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"
      ixy="0" ixz="0" iyz="0"/></inertial></link><link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1"
      izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="2"/></joint></robot>"""
    model = load_urdf(urdf)
    with pytest.raises(ValueError, match="joints 'j1' and 'j2'.*moved by one coordinate"):
        rd.screw_axes(model, "c")
    assert rd.screw_axes(model, "b").chain == (0,)
