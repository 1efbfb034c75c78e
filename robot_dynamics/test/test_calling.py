"""The call path every public function shares (robot_dynamics/calling.py): inputs checked and
refused naming the argument, its expected shape and the batch row; a kernel's status turned into an
error naming the input (a quaternion off the unit sphere) or the links that make a mass matrix
singular (SingularMassMatrixError), never NaN or inf."""
import numpy as np
import pytest

from oracle import Pair
from robot_dynamics import dynamics as rd


@pytest.fixture(scope="module")
def arm():
    return Pair("puma560").model


def test_bad_input_is_named(arm):
    q, v = np.zeros(6), np.zeros(6)
    with pytest.raises(ValueError, match=r"q must have shape \(6,\)"):
        rd.inverse_dynamics(arm, np.zeros(5), v, v)
    with pytest.raises(ValueError, match=r"v must have shape \(3, 6\)"):
        rd.inverse_dynamics(arm, np.zeros((3, 6)), v, v)
    with pytest.raises(ValueError, match="a contains NaN or inf"):
        rd.inverse_dynamics(arm, q, v, np.array([0, 0, np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"q contains NaN or inf \(batch row 1\)"):
        rd.mass_matrix(arm, np.array([np.zeros(6), np.full(6, np.inf)]))
    with pytest.raises(KeyError, match="unknown frame 'nowhere'"):
        rd.frame_jacobian(arm, q, "nowhere")
    with pytest.raises(ValueError, match="reference must be one of"):
        rd.frame_jacobian(arm, q, "tool0", "sideways")
    with pytest.raises(ValueError, match="acceleration_known must be a boolean mask of shape"):
        rd.hybrid_dynamics(arm, q, v, np.ones(5, bool), v, v)
    with pytest.raises(ValueError, match="external wrench on 'tool0' must have shape"):
        rd.inverse_dynamics(arm, q, v, v, {"tool0": np.ones(3)})
    with pytest.raises(KeyError, match="unknown frame 'hand'"):
        rd.inverse_dynamics(arm, q, v, v, {"hand": np.ones(6)})
    with pytest.raises(ValueError, match="external_wrenches contains NaN"):
        rd.inverse_dynamics(arm, q, v, v, {"tool0": np.full(6, np.nan)})
    with pytest.raises(ValueError, match=r"v contains a value beyond 1e\+50 in magnitude"):
        rd.inverse_dynamics(arm, q, np.full(6, 1e200), v)        # finite, but v^2 would overflow
    with pytest.raises(ValueError, match=r"q contains a value beyond 1e\+50 in magnitude \(batch row 1\)"):
        rd.mass_matrix(arm, np.array([np.zeros(6), np.full(6, -1e60)]))
    np.testing.assert_allclose(rd.inverse_dynamics(arm, q, v, v), rd.gravity_torques(arm, q))   # still fine


def test_free_flyer_quaternion_must_be_unit():
    m = Pair("biped", True).model
    q = np.zeros(m.nq)
    q[6] = 2.0
    with pytest.raises(ValueError, match="quaternion .* must have unit norm; got norm 2"):
        rd.gravity_torques(m, q)


# --- a mass matrix that is not positive definite: an error naming the suspect links, never NaN or inf ---
def _robot(*parts):
    return '<robot name="r"><link name="base"/>' + "".join(parts) + "</robot>"


def _link(name, mass, inertia="0 0 0", com="0 0 0"):
    ixx, iyy, izz = inertia.split()
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/><inertia ixx="{ixx}" '
            f'iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _joint(name, parent, child, kind="revolute", extra="", xyz="0 0 0"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>{extra}</joint>')


ARM = _link("upper", 1.0, "0.01 0.01 0.01", "0.3 0 0") + _joint("shoulder", "base", "upper")


@pytest.mark.parametrize("xml, links, warned", [
    # a point mass on the axis of its joint: nothing resists the turn (D = 0)
    (_robot(ARM, _link("rotor", 0.5), _joint("spin", "upper", "rotor")), "rotor", False),
    # romeo's body: a negative principal moment about the axis (D < 0)
    (_robot(ARM, _link("bad", 1.0, "0.1 0.1 -1.0", "0.8 0 0"), _joint("spin", "upper", "bad", xyz="1 0 0")), "bad", True),
    # the same, coupled through a mimic joint: the reduced system's Cholesky fails
    (_robot(ARM, _link("rotor", 0.5), _joint("spin", "upper", "rotor"), _link("twin", 0.2),
            _joint("twin_joint", "upper", "twin", extra='<mimic joint="spin" multiplier="2"/>')), "rotor, twin", False),
    # a massless floating link: its six coordinates have no inertia at all
    (_robot(ARM, '<link name="ghost"/><joint name="loose" type="floating"><parent link="upper"/>'
            '<child link="ghost"/></joint>'), "ghost", False),
])
def test_singular_mass_matrix_is_an_error_naming_the_links(xml, links, warned):
    from robot_dynamics.dynamics import SingularMassMatrixError
    m = __import__("robot_dynamics").load_urdf(xml)
    assert bool(m.warnings) == warned
    q, v, tau = rd.neutral(m), np.zeros(m.nv), np.ones(m.nv)
    with pytest.raises(SingularMassMatrixError, match=f"not positive definite.*Suspect links .*: {links}"
                       + (".*the loader warned: link 'bad'" if warned else "")):
        rd.forward_dynamics(m, q, v, tau)
    with pytest.raises(SingularMassMatrixError, match=r"\(batch row 0\)"):
        rd.forward_dynamics(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(tau, (2, 1)), threads=1)
    for method in ("unit_vector", "mass_matrix"):   # the Cholesky solve of M names the same links
        with pytest.raises(SingularMassMatrixError, match=f"not positive definite.*Suspect links .*: {links}"):
            rd.forward_dynamics(m, q, v, tau, method=method)
        with pytest.raises(SingularMassMatrixError, match=r"\(batch row 0\)"):
            rd.forward_dynamics(m, np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(tau, (2, 1)), method=method)
    # with every coordinate of the singular joint known, hybrid dynamics is well posed
    known = np.ones(m.nv, bool)
    known[m.joint_offset[1] + m.joint_index["shoulder"]] = False
    qdd, t = rd.hybrid_dynamics(m, q, v, known, np.zeros(m.nv), tau)
    assert np.all(np.isfinite(qdd)) and np.all(np.isfinite(t))


def test_read_only_inputs_run_the_code_compiled_for_writeable_ones(arm):
    """calling.vector copies a read-only array: numba types it apart from a writeable one and would
    compile each kernel again for it (~10 s of CPU at the first such call); here read-only batches
    and the unit-vector forward dynamics (whose unit accelerations were a read-only view for one
    state), after the same calls on writeable arrays."""
    from robot_dynamics import calling
    from robot_dynamics.kernels import rnea
    q = np.linspace(-1, 1, 6)
    Q = np.tile(q, (6, 1))
    expected = rd.inverse_dynamics(arm, Q, Q, Q, threads=1), rd.inverse_dynamics(arm, q, q, q)
    compiled = len(rnea.rnea.signatures), len(calling._BOUND)
    ro, ro1 = Q.copy(), q.copy()
    ro.flags.writeable = ro1.flags.writeable = False
    np.testing.assert_array_equal(rd.inverse_dynamics(arm, ro, ro, ro, threads=1), expected[0])
    np.testing.assert_array_equal(rd.inverse_dynamics(arm, ro1, ro1, ro1, {"tool0": np.ones(6)}),
                                  rd.inverse_dynamics(arm, q, q, q, {"tool0": np.ones(6)}))
    np.testing.assert_allclose(rd.forward_dynamics(arm, q, q, q, method="unit_vector"),
                               rd.forward_dynamics(arm, q, q, q), rtol=1e-9, atol=1e-9)
    assert (len(rnea.rnea.signatures), len(calling._BOUND)) == compiled
