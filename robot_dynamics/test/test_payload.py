"""robot_dynamics.payload: a payload added to a link equals the same payload written into the URDF
as a fixed child link, and every bad argument is refused by name with the model unchanged."""
import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.payload import PayloadError, add_payload
from robot_dynamics.resources import bundled_urdf

MASS, COM, INERTIA = 2.5, [0.01, -0.02, 0.08], [0.004, 0.005, 0.003, 0.0002, -0.0001, 0.0003]


def with_payload_in_urdf():
    """The PUMA with the payload welded to tool0 as a link of its own."""
    ixx, iyy, izz, ixy, ixz, iyz = INERTIA
    text = open(bundled_urdf("puma560")).read().replace("</robot>", f"""
  <link name="payload"><inertial><origin xyz="{' '.join(map(str, COM))}"/><mass value="{MASS}"/>
    <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial></link>
  <joint name="payload_joint" type="fixed"><parent link="tool0"/><child link="payload"/></joint>
</robot>""")
    return load_urdf(text)


def test_payload_equals_the_same_body_in_the_urdf():
    model, reference = load_urdf(bundled_urdf("puma560")), with_payload_in_urdf()
    add_payload(model, "tool0", MASS, COM, INERTIA)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q, v, a = rng.uniform(-2, 2, (3, 6))
        np.testing.assert_allclose(rd.inverse_dynamics(model, q, v, a), rd.inverse_dynamics(reference, q, v, a), atol=1e-12)
        np.testing.assert_allclose(rd.mass_matrix(model, q), rd.mass_matrix(reference, q), atol=1e-12)
    assert model.total_mass == pytest.approx(reference.total_mass)


@pytest.mark.parametrize("link, mass, com, inertia, argument", [
    ("tool0", -1.0, COM, INERTIA, "mass"),
    ("tool0", float("nan"), COM, INERTIA, "mass"),
    ("tool0", "heavy", COM, INERTIA, "mass"),
    ("tool0", MASS, [0.0, 0.0], INERTIA, "com"),
    ("tool0", MASS, [0.0, float("inf"), 0.0], INERTIA, "com"),
    ("tool0", MASS, COM, [1.0, 1.0, 1.0], "inertia"),
    ("tool0", MASS, COM, [-0.1, 0.01, 0.01, 0, 0, 0], "inertia"),            # negative principal moment
    ("tool0", MASS, COM, [0.01, 0.01, 0.1, 0, 0, 0], "inertia"),             # triangle inequality
    ("tool0", MASS, COM, [float("nan")] * 6, "inertia"),
    ("gripper", MASS, COM, INERTIA, "link"),
    ("base_link", MASS, COM, INERTIA, "link"),        # fixed to the world
])
def test_bad_payloads_are_refused_by_name(link, mass, com, inertia, argument):
    model = load_urdf(bundled_urdf("puma560"))
    before = model.inertia.copy()
    with pytest.raises(PayloadError, match="payload") as info:
        add_payload(model, link, mass, com, inertia)
    assert info.value.argument == argument
    np.testing.assert_array_equal(model.inertia, before)
