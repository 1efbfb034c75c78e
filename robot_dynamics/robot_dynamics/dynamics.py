"""Public dynamics API, the facade (`from robot_dynamics import dynamics as rd`): NumPy in, NumPy
out, one state (1-D arrays) or a batch (2-D, a row per state). Conventions follow Pinocchio:
q = [x y z qx qy qz qw] + joints for a floating base, v = [linear; angular] in the base frame +
joints (multi-coordinate joints first: see Model); Jacobian rows and wrenches are
[linear/force; angular/torque].

Each function lives in the module of its subject and is re-exported here:
    rigid_body      inverse_dynamics, gravity_torques, bias_forces, mass_matrix, coriolis_matrix,
                    forward_dynamics, hybrid_dynamics, frame_placement, frame_jacobian,
                    wrench_to_joint_torques
    configuration   neutral, integrate, difference, random_configuration, root_coordinates, ...
    regressor       joint_torque_regressor, inertial_parameters, base_parameters
    identification  identify_payload, identify_payload_from_momentum, PayloadEstimate
    dynamic_identification  identify_dynamics (DynamicsEstimate): inertias, friction, armature
    friction        friction_torques
    excitation      excitation_trajectory (ExcitationTrajectory)
    observer        MomentumObserver, generalized_momentum, external_torques, estimate_wrench
    derivatives     inverse_dynamics_derivatives, forward_dynamics_derivatives, hybrid_dynamics_derivatives
    constrained     constrained_forward_dynamics, constraint_jacobian, ConstraintError
    constrained_inverse  constrained_inverse_dynamics, contact_inverse_dynamics
    constrained_hybrid   constrained_hybrid_dynamics
    assembly        assemble (loop closure at the position level)
    trajectory      time_scaling, sample_trajectory, Trajectory, time_parameterize, TimedPath,
                    path_through_waypoints, check_trajectory (time_scaling, time_optimal)
    screw           screw_axes (ScrewAxes: M, S, B; the product of exponentials)
    inverse_kinematics  inverse_kinematics (IKResult), manipulability (Manipulability)
    cartesian       se3_interpolate (screw or decoupled straight lines in SE(3)), cartesian_path
    simulation      simulate (Simulation), spring_damper_floor
    centroidal      center_of_mass, center_of_mass_jacobian, centroidal_momentum,
                    centroidal_momentum_matrix, centroidal_state, kinetic_energy, potential_energy
    frame_motion    frame_velocity, frame_acceleration
    data            Data: the buffers the algorithms write for one model (every function takes data=;
                    None: the calling thread's own)
    calling         what they share: input checks, batches and threads, SingularMassMatrixError
The Lie-group operations (exp, log, Ad, ad, their duals, quaternions) are `robot_dynamics.lie`.
"""
from .assembly import assemble  # noqa: F401
from .cartesian import cartesian_path, se3_interpolate  # noqa: F401
from .calling import PARALLEL_MIN_BATCH, SingularMassMatrixError, default_threads  # noqa: F401
from .centroidal import (center_of_mass, center_of_mass_jacobian, centroidal_momentum,  # noqa: F401
                         centroidal_momentum_matrix, centroidal_state, kinetic_energy, potential_energy)
from .configuration import (difference, integrate, neutral, random_configuration,  # noqa: F401
                            root_coordinates, root_twist, root_twist_coordinates)
from .constrained import ConstraintError, constrained_forward_dynamics, constraint_jacobian  # noqa: F401
from .constrained_hybrid import constrained_hybrid_dynamics  # noqa: F401
from .constrained_inverse import constrained_inverse_dynamics, contact_inverse_dynamics  # noqa: F401
from .data import Data  # noqa: F401
from .derivatives import forward_dynamics_derivatives, hybrid_dynamics_derivatives, inverse_dynamics_derivatives  # noqa: F401
from .dynamic_identification import DynamicsEstimate, identify_dynamics  # noqa: F401
from .excitation import ExcitationTrajectory, excitation_trajectory  # noqa: F401
from .frame_motion import frame_acceleration, frame_velocity  # noqa: F401
from .friction import friction_torques  # noqa: F401
from .identification import PayloadEstimate, identify_payload, identify_payload_from_momentum  # noqa: F401
from .inverse_kinematics import IKResult, Manipulability, inverse_kinematics, manipulability  # noqa: F401
from .observer import MomentumObserver, estimate_wrench, external_torques, generalized_momentum  # noqa: F401
from .regressor import (PARAMETERS, BaseParameters, base_parameters, inertial_parameter_names,  # noqa: F401
                        inertial_parameters, joint_torque_regressor)
from .rigid_body import (KERNELS, bias_forces, coriolis_matrix, forward_dynamics, frame_jacobian,  # noqa: F401
                         frame_placement, gravity_torques, hybrid_dynamics, inverse_dynamics, load_fast_paths,
                         mass_matrix, wrench_to_joint_torques)
from .screw import ScrewAxes, screw_axes  # noqa: F401
from .simulation import Simulation, simulate, spring_damper_floor  # noqa: F401
from .trajectory import (TimedPath, TimeScaling, Trajectory, TrajectoryCheck, check_trajectory,  # noqa: F401
                         minimum_duration, path_through_waypoints, sample_trajectory, time_parameterize, time_scaling)
