"""Checks of the generated robot_dynamics_interfaces Python types: our fields, in order, and the
compiled type support (rosidl's own behaviour is rosidl's to test).

Needs ROS 2 (rclpy) and the interface package built (``make`` builds it into the workspace
overlay ./install with colcon); skipped otherwise. No DDS traffic.
"""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PKG_DIR = Path(__file__).resolve().parents[2] / 'robot_dynamics_interfaces'

pytest.importorskip('rclpy', reason='ROS 2 (rclpy) not installed')
_NOT_BUILT = 'robot_dynamics_interfaces not built: run make (or colcon build) and source install/setup.bash'
_pkg = pytest.importorskip('robot_dynamics_interfaces', reason=_NOT_BUILT)
if getattr(_pkg, '__file__', None) is None:
    # Only the source folder ./robot_dynamics_interfaces (seen as a namespace package
    # when the repo root is on sys.path) was found, not the generated package.
    pytest.skip(_NOT_BUILT, allow_module_level=True)
msg = pytest.importorskip('robot_dynamics_interfaces.msg', reason=_NOT_BUILT)
srv = pytest.importorskip('robot_dynamics_interfaces.srv', reason=_NOT_BUILT)

STR_SEQ = 'sequence<string>'
F64_SEQ = 'sequence<double>'
WRENCHES = 'sequence<robot_dynamics_interfaces/LinkWrench>'

# type name -> ordered {field: rosidl type}
EXPECTED = {
    'LinkWrench': {
        'link': 'string',
        'reference': 'string',
        'wrench': 'geometry_msgs/Wrench',
    },
    'InverseDynamics.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'accelerations': F64_SEQ,
        'external_wrenches': WRENCHES,
        'base_pose': 'geometry_msgs/Pose',
        'base_twist': 'geometry_msgs/Twist',
        'base_acceleration': 'geometry_msgs/Accel',
    },
    'InverseDynamics.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'efforts': F64_SEQ,
        'base_wrench': 'geometry_msgs/Wrench',
    },
    'ForwardDynamics.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'efforts': F64_SEQ,
        'external_wrenches': WRENCHES,
        'base_pose': 'geometry_msgs/Pose',
        'base_twist': 'geometry_msgs/Twist',
        'base_wrench': 'geometry_msgs/Wrench',
    },
    'ForwardDynamics.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'accelerations': F64_SEQ,
        'base_acceleration': 'geometry_msgs/Accel',
    },
    'HybridDynamics.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'acceleration_known': 'sequence<boolean>',
        'accelerations': F64_SEQ,
        'efforts': F64_SEQ,
        'base_pose': 'geometry_msgs/Pose',
        'base_twist': 'geometry_msgs/Twist',
    },
    'HybridDynamics.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'accelerations': F64_SEQ,
        'efforts': F64_SEQ,
    },
    'WrenchToJointTorques.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'frame': 'string',
        'reference': 'string',
        'wrench': 'geometry_msgs/Wrench',
        'base_pose': 'geometry_msgs/Pose',
    },
    'WrenchToJointTorques.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'efforts': F64_SEQ,
        'jacobian': F64_SEQ,
        'jacobian_rows': 'uint32',
        'jacobian_cols': 'uint32',
    },
    'IdentifyPayload.Request': {
        'duration': 'double',
        'method': 'string',
        'link': 'string',
        'apply': 'boolean',
        'point_mass': 'boolean',
    },
    'IdentifyPayload.Response': {
        'success': 'boolean',
        'message': 'string',
        'link': 'string',
        'method': 'string',
        'samples': 'uint32',
        'mass': 'double',
        'com': 'double[3]',
        'inertia': 'double[6]',
        'mass_identified': 'boolean',
        'com_identified': 'boolean',
        'inertia_identified': 'boolean',
        'physical': 'boolean',
        'residual': 'double',
        'condition_number': 'double',
        'mass_std': 'double',
        'com_std': 'double[3]',
        'inertia_std': 'double[6]',
        'applied': 'boolean',
    },
    'Contact': {
        'header': 'std_msgs/Header',
        'contact': 'boolean',
        'joint_names': STR_SEQ,
    },
    'ConstrainedForwardDynamics.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'efforts': F64_SEQ,
        'base_pose': 'geometry_msgs/Pose',
        'base_twist': 'geometry_msgs/Twist',
        'contact_frames': STR_SEQ,
        'contact_kinds': STR_SEQ,
        'loop_frames_a': STR_SEQ,
        'loop_frames_b': STR_SEQ,
        'loop_kinds': STR_SEQ,
        'baumgarte_kp': 'double',
        'baumgarte_kd': 'double',
    },
    'ConstrainedForwardDynamics.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'accelerations': F64_SEQ,
        'base_acceleration': 'geometry_msgs/Accel',
        'constraint_wrenches': WRENCHES,
    },
    'ContactForces': {
        'header': 'std_msgs/Header',
        'wrenches': WRENCHES,
    },
    'CentroidalState': {
        'header': 'std_msgs/Header',
        'com': 'geometry_msgs/Point',
        'com_velocity': 'geometry_msgs/Vector3',
        'linear_momentum': 'geometry_msgs/Vector3',
        'angular_momentum': 'geometry_msgs/Vector3',
        'base_twist_measured': 'boolean',
    },
    'InverseKinematics.Request': {
        'frame': 'string',
        'target': 'geometry_msgs/PoseStamped',
        'position_only': 'boolean',
        'weights': F64_SEQ,
        'joint_names': STR_SEQ,
        'seed_positions': F64_SEQ,
        'seed_base_pose': 'geometry_msgs/Pose',
        'tolerance': 'double',
        'max_iterations': 'uint32',
        'restarts': 'uint32',
    },
    'InverseKinematics.Response': {
        'success': 'boolean',
        'message': 'string',
        'converged': 'boolean',
        'error': 'double',
        'iterations': 'uint32',
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'base_pose': 'geometry_msgs/Pose',
    },
    'ConstrainedInverseDynamics.Request': {
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'accelerations': F64_SEQ,
        'base_pose': 'geometry_msgs/Pose',
        'base_twist': 'geometry_msgs/Twist',
        'base_acceleration': 'geometry_msgs/Accel',
        'actuated_joints': STR_SEQ,
        'passive_efforts': F64_SEQ,
        'contact_frames': STR_SEQ,
        'contact_kinds': STR_SEQ,
        'loop_frames_a': STR_SEQ,
        'loop_frames_b': STR_SEQ,
        'loop_kinds': STR_SEQ,
        'objective': 'string',
        'least_squares': 'boolean',
    },
    'ConstrainedInverseDynamics.Response': {
        'success': 'boolean',
        'message': 'string',
        'joint_names': STR_SEQ,
        'positions': F64_SEQ,
        'velocities': F64_SEQ,
        'accelerations': F64_SEQ,
        'efforts': F64_SEQ,
        'constraint_wrenches': WRENCHES,
    },
    # trajectories
    'TimeParameterize.Request': {'waypoints': 'trajectory_msgs/JointTrajectory', 'velocity_scaling': 'double',
                                 'acceleration_scaling': 'double', 'effort_scaling': 'double',
                                 'velocity_limits': F64_SEQ, 'acceleration_limits': F64_SEQ,
                                 'effort_limits': F64_SEQ, 'gridpoints': 'uint32'},
    'TimeParameterize.Response': {'success': 'boolean', 'message': 'string',
                                  'trajectory': 'trajectory_msgs/JointTrajectory', 'duration': 'double',
                                  'active_limits': STR_SEQ},
    'ExcitationTrajectory.Request': {'duration': 'double', 'harmonics': 'uint32', 'limit_scaling': 'double',
                                     'time_budget': 'double', 'rate': 'double', 'lead_in': 'double',
                                     'seed': 'uint32'},
    'ExcitationTrajectory.Response': {'success': 'boolean', 'message': 'string',
                                      'trajectory': 'trajectory_msgs/JointTrajectory', 'condition_number': 'double',
                                      'random_condition_number': 'double', 'evaluations': 'uint32'},
    'IdentifyDynamics.Request': {'window': 'double', 'bag': 'string', 'topic': 'string', 'apply': 'boolean'},
    'IdentifyDynamics.Response': {'success': 'boolean', 'message': 'string', 'joint_names': STR_SEQ,
                                  'residual': F64_SEQ, 'viscous': F64_SEQ, 'coulomb': F64_SEQ, 'offset': F64_SEQ,
                                  'armature': F64_SEQ, 'condition_number': 'double', 'physical': 'boolean',
                                  'samples': 'uint32', 'duration': 'double', 'urdf': 'string', 'applied': 'boolean'},
    'CheckTrajectory.Request': {'trajectory': 'trajectory_msgs/JointTrajectory', 'effort_limits': F64_SEQ,
                                'velocity_limits': F64_SEQ, 'acceleration_limits': F64_SEQ,
                                'sample_period': 'double'},
    'CheckTrajectory.Response': {'success': 'boolean', 'message': 'string',
                                 'trajectory': 'trajectory_msgs/JointTrajectory', 'peak_ratio': F64_SEQ,
                                 'peak_time': F64_SEQ, 'feasible': 'boolean', 'first_violation_time': 'double',
                                 'first_violation_joint': 'string', 'first_violation_limit': 'string',
                                 'velocity_peak_ratio': F64_SEQ, 'acceleration_peak_ratio': F64_SEQ},
}


def _resolve(name):
    if '.' not in name:
        return getattr(msg, name)
    service, part = name.split('.')
    return getattr(getattr(srv, service), part)


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_fields_and_types(name):
    cls = _resolve(name)
    assert cls.get_fields_and_field_types() == EXPECTED[name]
    # field order matters for readers of the .srv/.msg files and for positional use
    assert list(cls.get_fields_and_field_types()) == list(EXPECTED[name])


def test_services_have_type_support_and_names():
    for name in ('InverseDynamics', 'ForwardDynamics', 'HybridDynamics', 'WrenchToJointTorques', 'IdentifyPayload',
                 'ConstrainedForwardDynamics', 'ConstrainedInverseDynamics', 'InverseKinematics',
                 'TimeParameterize', 'CheckTrajectory', 'ExcitationTrajectory', 'IdentifyDynamics'):
        service = getattr(srv, name)
        assert service.Request.__name__ == f'{name}_Request'
        assert service.Response.__name__ == f'{name}_Response'
        # loads the compiled C type support (the libraries installed into <prefix>/lib)
        for cls in (service, service.Request, service.Response):
            type(cls).__import_type_support__()
            assert cls._TYPE_SUPPORT is not None
    for cls in (msg.LinkWrench, msg.Contact, msg.ContactForces, msg.CentroidalState):
        type(cls).__import_type_support__()
        assert cls._TYPE_SUPPORT is not None


def has_rclcpp(prefixes):
    return any(os.path.exists(os.path.join(prefix, 'share', 'ament_index', 'resource_index', 'packages', 'rclcpp'))
               for prefix in prefixes if prefix)


def test_cxx_type_support_is_built_where_rclcpp_can_use_it(tmp_path):
    """cmake/cxx_type_support.cmake: C and Python type support always, C++ where rclcpp is installed
    (a ROS installation: what rosidl_default_generators builds); a PyPI underlay has no rclcpp.
    One cmake configure (~7 CPU-s, no build): the rclcpp check runs there, on a prefix that has it."""
    prefixes = os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)
    lib = next(Path(prefix) / 'lib' for prefix in prefixes if prefix and os.path.exists(
        os.path.join(prefix, 'share', 'ament_index', 'resource_index', 'packages', 'robot_dynamics_interfaces')))
    assert (lib / 'librobot_dynamics_interfaces__rosidl_typesupport_fastrtps_c.so').exists(), sorted(os.listdir(lib))
    built_cxx = (lib / 'librobot_dynamics_interfaces__rosidl_typesupport_cpp.so').exists()
    assert built_cxx == has_rclcpp(prefixes)
    if shutil.which('cmake') is None:
        pytest.skip('no cmake')
    ros = tmp_path / 'ros'     # a prefix whose ament index has rclcpp, as a ROS installation's
    (ros / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (ros / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'rclcpp').touch()
    env = {**os.environ, 'AMENT_PREFIX_PATH': os.pathsep.join([str(ros)] + prefixes)}
    configure = subprocess.run(['cmake', '-S', str(PKG_DIR), '-B', str(tmp_path / 'build'), '-DBUILD_TESTING=OFF',
                                f'-DPython3_EXECUTABLE={sys.executable}'], env=env, capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout[-2000:] + configure.stderr[-2000:]
    assert 'type support only' not in configure.stdout
    targets = subprocess.run(['cmake', '--build', str(tmp_path / 'build'), '--target', 'help'], capture_output=True,
                             text=True, check=True).stdout
    for typesupport in ('typesupport_c', 'typesupport_fastrtps_c', 'typesupport_introspection_c', 'generator_py',
                        'typesupport_cpp', 'typesupport_fastrtps_cpp', 'typesupport_introspection_cpp'):
        assert f'robot_dynamics_interfaces__rosidl_{typesupport}' in targets, typesupport


def test_inverse_kinematics_defaults_are_the_librarys():
    """The request's defaults (in the .srv) are rd.inverse_kinematics' own."""
    import inspect

    from robot_dynamics import dynamics as rd
    defaults = inspect.signature(rd.inverse_kinematics).parameters
    request = srv.InverseKinematics.Request()
    for field in ('tolerance', 'max_iterations', 'restarts'):
        assert getattr(request, field) == defaults[field].default, field


def test_package_manifest():
    root = ET.parse(PKG_DIR / 'package.xml').getroot()
    assert root.get('format') == '3'
    assert root.findtext('name') == 'robot_dynamics_interfaces'
    assert root.findtext('license') == 'Apache-2.0'
    assert root.findtext('export/build_type') == 'ament_cmake'
    assert root.findtext('member_of_group') == 'rosidl_interface_packages'
    email = root.find('maintainer').get('email')
    assert '@' in email and '.' in email.split('@')[1]
