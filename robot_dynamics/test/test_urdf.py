"""URDF parser: errors name the problem, warnings name the link, features build the right model."""
import logging
import math
import os

import numpy as np
import pytest

from robot_dynamics import URDFError, load_urdf
from robot_dynamics import dynamics as rd

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MIMIC = os.path.join(DATA, "mimic_continuous_fixed.urdf")
GOOD_INERTIA = (0.01, 0.012, 0.015, 0.0, 0.0, 0.0)


def link(name, mass=1.0, inertia=GOOD_INERTIA, com="0 0 0"):  # noqa: E302
    """A <link>; mass=None gives one without <inertial>."""
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/>'
            f'</inertial></link>')


def joint(name, parent, child, kind="revolute", axis="0 0 1", xyz="0 0 0.1", extra=""):
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>' if kind in ("revolute", "prismatic") else ""
    axis_el = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/>{axis_el}{limit}{extra}</joint>')


def robot(*parts, name="test_bot"):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def chain(n=2):
    """base -> l1 -> ... -> ln through revolute joints j1..jn."""
    links = ["base"] + [f"l{i}" for i in range(1, n + 1)]
    return [link(x) for x in links] + [joint(f"j{i}", links[i - 1], links[i]) for i in range(1, n + 1)]


def yaw(T):
    return math.atan2(T[1, 0], T[0, 0])


# --- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("xml, match", [
    ('<robot name="x"><link name="a"></robot>', "not valid XML"),
    ('<model name="x"><link name="a"/></model>', r"root element is <model>, expected <robot>"),
    (robot(link("a"), link("b")), r"exactly one root link, found \['a', 'b'\]"),
    (robot(link("a"), link("b"), joint("ab", "a", "b"), joint("ba", "b", "a")), "cycle"),
    (robot(*chain(1), link("x"), link("y"), joint("xy", "x", "y"), joint("yx", "y", "x")),
     r"links \['x', 'y'\] are not connected to root 'base'.*cycle"),
    (robot(*chain(1), link("c"), joint("jc", "ghost", "c")), r"joint 'jc' \(line 1\) refers to unknown link 'ghost'"),
    (robot(*chain(1), joint("jc", "l1", "ghost")), r"joint 'jc' \(line 1\) refers to unknown link 'ghost'"),
    (robot(*chain(1), link("c"), joint("jz", "l1", "c", axis="0 0 0")), r"joint 'jz' \(line 1\) has a zero axis"),
    (robot(link("base"), link("c", mass=-1.0), joint("j", "base", "c")), r"link 'c' \(line 1\) has negative mass"),
    (robot(link("base"), link("c", mass="nan"), joint("j", "base", "c")), r"link 'c' \(line 1\) mass: expected 1 finite"),
    (robot(link("base"), link("c", inertia=(0.1, "inf", 0.1, 0, 0, 0)), joint("j", "base", "c")),
     r"link 'c' \(line 1\) inertia iyy: expected 1 finite"),
    (robot(*chain(1), link("c"), joint("js", "l1", "c", kind="spherical")), r"joint 'js' \(line 1\) has unknown type 'spherical'"),
    (robot(*chain(1), link("l1")), r"link 'l1' \(line 1\) is defined twice"),
    (robot(*chain(1), link("c"), joint("j1", "l1", "c")), r"joint 'j1' \(line 1\) is defined twice"),
    (robot(*chain(2), link("c"), joint("jm", "l2", "c", extra='<mimic joint="jn"/>'), link("d"),
           joint("jn", "l2", "d", extra='<mimic joint="jm"/>')), "mimic joints form a cycle"),
])
def test_errors(xml, match):
    with pytest.raises(URDFError, match=match):
        load_urdf(xml)


def test_missing_file(tmp_path):
    with pytest.raises(URDFError, match="no such URDF file.*absent.urdf"):
        load_urdf(str(tmp_path / "absent.urdf"))


def test_file_that_is_not_xml(tmp_path):
    path = tmp_path / "garbage.urdf"
    path.write_text("this is not xml <")
    with pytest.raises(URDFError, match="not valid XML"):
        load_urdf(str(path))


@pytest.mark.parametrize("extra, attr", [
    ('<limit lower="-1" upper="1" effort="10" velocity="fast"/>', "velocity"),
    ('<mimic joint="j1" multiplier="two"/>', "multiplier"),
])
def test_non_numeric_joint_attribute(extra, attr):
    xml = robot(*chain(1), link("c"), joint("j2", "l1", "c", kind="continuous", extra=extra))
    with pytest.raises(URDFError, match=f"joint 'j2'.*{attr}"):
        load_urdf(xml)


def test_tip_not_below_root():
    xml = robot(*chain(2), link("side"), joint("js", "base", "side"))
    with pytest.raises(URDFError, match="tip link 'side' is not below root link 'l1'"):
        load_urdf(xml, root="l1", tip="side")


def test_urdferror_is_valueerror():
    assert issubclass(URDFError, ValueError)


# --- warnings -------------------------------------------------------------------------------
@pytest.mark.parametrize("mass, inertia, problem", [
    (1.0, (-0.5, 0.01, 0.01, 0.0, 0.0, 0.0), "negative principal moment -0.5"),
    (1e-6, (1e-6, 1e-6, 1e-6, 1.5e-6, 0.0, 0.0), "negative principal moment -5e-07"),   # tiago's antenna
    (1.0, (0.01, 0.01, 0.1, 0.0, 0.0, 0.0), "triangle inequality"),                  # Ixx + Iyy < Izz
    (0.0, (0.01, 0.01, 0.01, 0.0, 0.0, 0.0), "zero mass with a non-zero inertia"),
])
def test_suspicious_inertia_loads_with_a_warning_and_strict_refuses(mass, inertia, problem, caplog, capsys):
    xml = robot(link("base"), link("odd_link", mass=mass, inertia=inertia), joint("j", "base", "odd_link"))
    with caplog.at_level(logging.WARNING, logger="robot_dynamics.urdf"):
        model = load_urdf(xml)
    assert model.body_names == ["odd_link"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "robot_dynamics.urdf"]
    assert len(warnings) == 1 and "link 'odd_link' (line 1)" in warnings[0] and problem in warnings[0]
    assert model.warnings == [warnings[0].replace("; loaded as given", "")]
    assert capsys.readouterr().out == ""
    with pytest.raises(URDFError, match=f"strict loading refused.*odd_link.*{problem}"):
        load_urdf(xml, strict=True)


def test_rounding_noise_in_a_zero_inertia_is_not_negative(caplog):
    """iCub: ixz = 1.35525e-20 and every other entry 0 (eigenvalue -1.36e-20): a zero inertia."""
    xml = robot(link("base"), link("c", mass=0.5, inertia=(0.0, 0.0, 0.0, 0.0, 1.35525e-20, 0.0)), joint("j", "base", "c"))
    with caplog.at_level(logging.WARNING, logger="robot_dynamics.urdf"):
        model = load_urdf(xml, strict=True)
    assert not caplog.records and model.warnings == []


def test_valid_inertia_does_not_warn(caplog):
    with caplog.at_level(logging.WARNING, logger="robot_dynamics.urdf"):
        model = load_urdf(robot(*chain(2)), strict=True)
    assert not caplog.records and model.warnings == []


def test_lower_limit_above_upper_means_unbounded(caplog):
    """Bullet's way of writing 'no limit': limits do not change dynamics; warned, unbounded."""
    xml = robot(link("base"), link("c"), '<joint name="j" type="revolute"><parent link="base"/><child link="c"/>'
                '<axis xyz="0 0 1"/><limit lower="1" upper="-1" effort="1" velocity="1"/></joint>')
    with caplog.at_level(logging.WARNING, logger="robot_dynamics.urdf"):
        model = load_urdf(xml)
    assert model.lower_limits[0] == -math.inf and model.upper_limits[0] == math.inf
    assert "joint 'j' (line 1) has lower limit 1.0 above upper limit -1.0" in model.warnings[0]
    with pytest.raises(URDFError, match="lower limit 1.0 above upper"):
        load_urdf(xml, strict=True)


def test_mimic_of_a_joint_the_model_lacks_is_an_independent_joint():
    """urdfdom and Pinocchio load it; the mimic is ignored, with a warning."""
    xml = robot(*chain(1), link("c"), joint("jm", "l1", "c", extra='<mimic joint="nobody" multiplier="2"/>'))
    model = load_urdf(xml)
    assert model.joint_names == ["j1", "jm"] and not model.has_mimic
    assert "joint 'jm' (line 1) mimics joint 'nobody', which does not exist" in model.warnings[0]
    cut = load_urdf(robot(*chain(2), link("c"), joint("jm", "l1", "c", extra='<mimic joint="j2"/>')), tip="c")
    assert cut.joint_names == ["j1", "jm"] and "which this model does not move" in cut.warnings[0]


def test_a_chain_of_mimics_follows_the_first_leader():
    xml = robot(*chain(1), link("c"), link("d"),
                joint("jm", "l1", "c", xyz="0 0 0", extra='<mimic joint="j1" multiplier="2" offset="0.1"/>'),
                joint("jn", "c", "d", xyz="0 0 0", extra='<mimic joint="jm" multiplier="-3" offset="0.2"/>'))
    model = load_urdf(xml)
    assert model.joint_names == ["j1"] and model.nv == 1
    q = np.array([0.25])
    total = yaw(rd.frame_placement(model, q, "d"))      # j1 + jm + jn about parallel axes
    jm = 2 * 0.25 + 0.1
    assert total == pytest.approx(0.25 + jm + (-3 * jm + 0.2), abs=1e-12)


# --- what urdfdom's parser accepts -----------------------------------------------------------------
@pytest.mark.parametrize("text", [
    '\n  \t<?xml version="1.0"?>\n' + robot(*chain(2)),                # whitespace before the declaration
    '<?xml version="0.0"?>' + robot(*chain(2)),                          # minitaur's declaration
    '\ufeff<?xml version="1.0" encoding="UTF-8"?>' + robot(*chain(2)),   # a byte-order mark
    robot(*chain(2)) + "\n\x00",                                          # a C string's end
    robot(*chain(1), link("l2"), '<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>'
          '<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit drake:acceleration="2.5" lower="-1" upper="1" '
          'effort="10" velocity="2"/></joint><drake:collision_filter_group name="g"><drake:member link="l1"/>'
          '</drake:collision_filter_group>'),                              # undeclared namespace prefixes
])
def test_xml_that_urdfdom_accepts(text):
    model = load_urdf(text)
    reference = load_urdf(robot(*chain(2)))
    assert model.joint_names == reference.joint_names == ["j1", "j2"]
    np.testing.assert_array_equal(model.inertia, reference.inertia)
    np.testing.assert_allclose(model.tree_translation, reference.tree_translation)


def test_a_file_that_is_not_utf8_loads(tmp_path):
    path = tmp_path / "latin1.urdf"
    path.write_bytes(("<!-- r\xe9glage -->" + robot(*chain(2))).encode("latin-1"))
    assert load_urdf(str(path)).joint_names == ["j1", "j2"]


def test_xml_error_names_the_line():
    with pytest.raises(URDFError, match="not valid XML: mismatched tag at line 3"):
        load_urdf('<robot name="x">\n<link name="a">\n</robot>')


# --- names -------------------------------------------------------------------------------------------
def test_a_link_and_a_joint_may_share_a_name():
    """unitree z1, anymal_c, so100, minitaur: <link name="gripper"> and <joint name="gripper">. A
    link's name names the link's frame; the joint's frame is `joint:<name>`; nothing is overwritten."""
    xml = robot(link("base"), link("upper"), link("gripper"), link("motor", mass=0.5),
                joint("upper", "base", "upper", xyz="0 0 0.1"),        # the joint names another link
                joint("gripper", "upper", "gripper", xyz="0.3 0 0"),   # and its own child
                joint("motor", "upper", "motor", kind="fixed", axis=None, xyz="0 0.06 0"))
    for root in (None, "base"):
        model = load_urdf(xml, root=root)
        q = np.array([0.4, -0.3])
        place = lambda f: rd.frame_placement(model, q, f)  # noqa: E731
        np.testing.assert_allclose(place("upper")[:3, 3], [0, 0, 0.1], atol=1e-12)
        np.testing.assert_allclose(place("joint:upper"), place("upper"), atol=1e-12)   # a joint's frame is its child's
        np.testing.assert_allclose(place("motor")[:3, 3], place("upper")[:3, :3] @ [0, 0.06, 0] + [0, 0, 0.1], atol=1e-12)
        np.testing.assert_allclose(place("joint:motor"), place("motor"), atol=1e-12)
        assert {"base", "upper", "gripper", "motor", "joint:upper", "joint:gripper", "joint:motor"} <= set(model.frame_names)
        assert model.joint_names == ["upper", "gripper"]


def test_frame_names_of_joints_without_collisions_stay_plain():
    model = load_urdf(robot(*chain(2)))
    assert model.frame_names == ["base", "l1", "l2", "j1", "j2"]
    assert model.frame("joint:j2") is model.frame("j2")
    with pytest.raises(KeyError, match="unknown frame 'joint:nope'"):
        model.frame("joint:nope")


def test_a_robot_without_moving_joints_loads_empty():
    """hector's quadrotor_base, iris_simple: one rigid body. Fixed: nothing moves (empty results,
    with a warning); on a free flyer: a rigid body's dynamics."""
    xml = robot(link("body", mass=2.0), link("prop", mass=0.5), joint("weld", "body", "prop", kind="fixed", axis=None))
    model = load_urdf(xml)
    assert model.nq == model.nv == 0 and "no moving joint" in model.warnings[0]
    assert rd.gravity_torques(model, np.zeros(0)).shape == (0,) and rd.mass_matrix(model, np.zeros(0)).shape == (0, 0)
    free = load_urdf(xml, floating_base=True)
    q = rd.neutral(free)
    M = rd.mass_matrix(free, q)
    np.testing.assert_allclose(np.diag(M)[:3], 2.5)
    np.testing.assert_allclose(rd.forward_dynamics(free, q, np.zeros(6), np.zeros(6)), [0, 0, -9.81, 0, 0, 0], atol=1e-12)


# --- features -------------------------------------------------------------------------------
def test_continuous_joint():
    model = load_urdf(robot(link("base"), link("wheel"), joint("spin", "base", "wheel", kind="continuous")))
    assert model.joint_names == ["spin"] and model.nq == 1 and model.nv == 1
    assert model.lower_limits[0] == -math.inf and model.upper_limits[0] == math.inf
    assert model.velocity_limits[0] == math.inf and model.effort_limits[0] == math.inf


def test_fixed_joints_are_lumped():
    xml = robot(link("base", mass=5.0), link("arm", mass=2.0), link("weight", mass=3.0), link("tip", mass=None),
                joint("j1", "base", "arm"),
                joint("weld", "arm", "weight", kind="fixed", axis=None, xyz="0.2 0 0"),
                joint("tool", "weight", "tip", kind="fixed", axis=None, xyz="0.1 0 0"))
    model = load_urdf(xml)
    assert model.body_names == ["arm"] and model.joint_names == ["j1"]
    assert {"weight", "weld", "tip", "tool"} <= set(model.frame_names)
    assert model.total_mass == pytest.approx(2.0 + 3.0)      # base is welded to the world
    np.testing.assert_allclose(model.inertia[0, 1:4], [3.0 * 0.2, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(rd.frame_placement(model, np.zeros(1), "tip")[:3, 3], [0.3, 0.0, 0.1], atol=1e-12)
    floating = load_urdf(xml, floating_base=True)
    assert floating.total_mass == pytest.approx(5.0 + 2.0 + 3.0)


def test_link_without_inertial_is_massless():
    model = load_urdf(robot(link("base"), link("ghost", mass=None), link("c"),
                            joint("j1", "base", "ghost"), joint("j2", "ghost", "c")))
    np.testing.assert_array_equal(model.inertia[model.body_names.index("ghost")], np.zeros(10))
    assert model.total_mass == pytest.approx(1.0)


def test_mimic_follower():
    xml = robot(link("base"), link("leader"), link("follower"),
                joint("j1", "base", "leader", xyz="0 0 0"),
                joint("j2", "base", "follower", xyz="0 0 0",
                      extra='<mimic joint="j1" multiplier="2.0" offset="0.3"/>'))
    model = load_urdf(xml)
    assert model.joint_names == ["j1"] and model.nq == 1 and model.nv == 1 and model.has_mimic
    for q in (0.0, 0.4):
        qv = np.array([q])
        assert yaw(rd.frame_placement(model, qv, "leader")) == pytest.approx(q, abs=1e-12)
        assert yaw(rd.frame_placement(model, qv, "follower")) == pytest.approx(2.0 * q + 0.3, abs=1e-12)


def test_mimic_file_loads():
    model = load_urdf(MIMIC)
    assert "finger_right_joint" not in model.joint_names and "finger_right" in model.body_names
    assert model.has_mimic and model.nv == len(model.joint_names) == 6


@pytest.mark.parametrize("axis, unit", [("0 0 2", [0, 0, 1]), ("1 1 0", [2 ** -0.5, 2 ** -0.5, 0]),
                                        ("0.3 0.5 0.8", np.array([0.3, 0.5, 0.8]) / math.sqrt(0.98))])
def test_axis_normalised(axis, unit):
    model = load_urdf(robot(link("base"), link("c"), joint("j", "base", "c", axis=axis)))
    np.testing.assert_allclose(model.joint_axis[0], unit, atol=1e-12)
    R = rd.frame_placement(model, np.array([0.7]), "c")[:3, :3]     # rotation by 0.7 rad exactly
    assert math.acos((np.trace(R) - 1) / 2) == pytest.approx(0.7, abs=1e-12)


def test_floating_base_sizes():
    n = 3
    model = load_urdf(robot(*chain(n)), floating_base=True)
    assert model.nq == 7 + n and model.nv == 6 + n and model.floating_base
    assert model.joint_type[0] == 2 and model.body_names[0] == "base"
    assert model.joint_names == ["j1", "j2", "j3"] and model.joint_offset == (7, 6)
    assert model.root_joint.name == "root_joint" and model.root_joint.kind == "floating"


def test_floating_base_is_a_floating_root_joint():
    """load_urdf(floating_base=True) and a URDF `floating` joint from a world link build the same model."""
    flying = robot(link("world", mass=None), '<joint name="root_joint" type="floating"><parent link="world"/>'
                   '<child link="base"/></joint>', *chain(2))
    a, b = load_urdf(flying), load_urdf(robot(*chain(2)), floating_base=True)
    assert a.joints == b.joints and a.nq == b.nq == 9
    np.testing.assert_array_equal(a.packed, b.packed)


def test_planar_joint_moves_in_the_plane_normal_to_its_axis():
    """URDF planar: translation in the plane normal to `axis`, rotation about it; q = [x y theta]
    along the joint frame's in-plane axes (x, y for axis z)."""
    axis = np.array([1.0, 2.0, 2.0]) / 3
    model = load_urdf(robot(link("base"), link("c"), joint("p", "base", "c", kind="planar", axis="1 2 2", xyz="0.1 0.2 0.3")))
    assert model.joints[0].kind == "planar" and (model.nq, model.nv) == (3, 3) and model.joint_names == []
    H0 = rd.frame_placement(model, rd.neutral(model), "c")
    for x, y, th in np.random.default_rng(2).uniform(-2, 2, (10, 3)):
        H = rd.frame_placement(model, np.array([x, y, th]), "c")
        d = H[:3, 3] - H0[:3, 3]
        assert abs(d @ axis) < 1e-12 and np.linalg.norm(d) == pytest.approx(math.hypot(x, y), abs=1e-12)
        R = H0[:3, :3].T @ H[:3, :3]
        np.testing.assert_allclose(R @ axis, axis, atol=1e-12)
        assert math.acos(np.clip((np.trace(R) - 1) / 2, -1, 1)) == pytest.approx(abs(math.remainder(th, 2 * math.pi)), abs=1e-9)
    z = load_urdf(robot(link("base"), link("c"), joint("p", "base", "c", kind="planar", xyz="0.1 0.2 0.3")))
    np.testing.assert_allclose(rd.frame_placement(z, np.array([0.5, -0.2, 0.3]), "c")[:3, 3], [0.6, 0.0, 0.3], atol=1e-12)


def test_root_takes_subtree_and_tip_takes_chain():
    xml = robot(*chain(3), link("side"), joint("js", "l1", "side"))
    sub = load_urdf(xml, root="l1")
    assert sub.joint_names == ["j2", "j3", "js"] and sub.frame_names[0] == "l1"
    only = load_urdf(xml, tip="l3")
    assert only.joint_names == ["j1", "j2", "j3"] and "side" not in only.frame_names
    both = load_urdf(xml, root="l1", tip="side")
    assert both.joint_names == ["js"]


def test_gravity():
    model = load_urdf(robot(*chain(2)), gravity=[0.0, 0.0, -1.62])
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -1.62])
    q = np.array([0.3, -0.2])
    g_moon = rd.gravity_torques(model, q)
    model.gravity = [0.0, 0.0, -3.24]
    np.testing.assert_allclose(rd.gravity_torques(model, q), 2 * g_moon, atol=1e-12)
    for bad in ([0.0, -9.81], [0.0, 0.0, np.nan], [[0.0, 0.0, 1.0, 2.0]]):
        with pytest.raises(ValueError, match="gravity must be 3 finite numbers"):
            model.gravity = bad
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -3.24])


XACRO = """<?xml version="1.0"?>
<robot name="test_bot" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="len" value="0.1"/>
  <xacro:macro name="body" params="name">
    <link name="${name}"><inertial><origin xyz="0 0 0"/><mass value="1.0"/>
      <inertia ixx="0.01" iyy="0.012" izz="0.015" ixy="0.0" ixz="0.0" iyz="0.0"/></inertial></link>
  </xacro:macro>
  <xacro:macro name="hinge" params="name parent child">
    <joint name="${name}" type="revolute"><parent link="${parent}"/><child link="${child}"/>
      <origin xyz="0 0 ${len}"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
  </xacro:macro>
  <xacro:body name="base"/><xacro:body name="l1"/><xacro:body name="l2"/>
  <xacro:hinge name="j1" parent="base" child="l1"/>
  <xacro:hinge name="j2" parent="l1" child="l2"/>
</robot>
"""


def test_xacro_matches_urdf(tmp_path):
    pytest.importorskip("xacro")
    path = tmp_path / "bot.urdf.xacro"
    path.write_text(XACRO)
    from_xacro, plain = load_urdf(str(path)), load_urdf(robot(*chain(2)))
    assert from_xacro.name == plain.name and from_xacro.joint_names == plain.joint_names
    assert from_xacro.frame_names == plain.frame_names
    for attr in ("inertia", "tree_translation", "tree_rotation", "joint_axis", "lower_limits", "effort_limits"):
        np.testing.assert_allclose(getattr(from_xacro, attr), getattr(plain, attr), atol=1e-15)
    q = np.array([0.2, -0.5])
    np.testing.assert_allclose(rd.mass_matrix(from_xacro, q), rd.mass_matrix(plain, q), atol=1e-14)


def test_transmission_and_ros2_control_ignored(capsys):
    model = load_urdf(MIMIC)
    assert model.joint_names == ["slide_joint", "spin_joint", "tilt_joint", "elbow_joint",
                                 "pan_joint", "finger_left_joint"]
    assert "slide_transmission" not in model.frame_names and "MimicTestSystem" not in model.frame_names
    assert capsys.readouterr().out == ""


def test_xml_string_equals_file(tmp_path):
    xml = robot(*chain(2))
    path = tmp_path / "bot.urdf"
    path.write_text(xml)
    a, b = load_urdf(xml), load_urdf(str(path))
    assert a.frame_names == b.frame_names
    np.testing.assert_array_equal(a.inertia, b.inertia)
