"""The five-bar parallel robot as the five-bar demo simulates it (no ROS): urdf/five_bar.urdf in MuJoCo
with the loop closed by a weld equality constraint, its motors, its hold pose and the circle its end
point follows.

The URDF is a kinematic tree cut at the end effector: the frames end_effector and right_distal_tip
coincide when the loop is closed (loops = [("end_effector", "right_distal_tip", "6d")], three
independent rows in the plane). MuJoCo closes it with an equality constraint welding the two bodies
at their relative pose at q = 0 (closed). MuJoCo's constraints are soft: the weld acts like a stiff
spring-damper (solref: time constant, damping ratio) whose impedance solimp d in (0, 1) says how much
of the constraint force is applied; the residual acceleration along the constraint is of order
(1 - d), so a stiff setting (d = 0.9999, 5 ms) is used and our rigid constrained dynamics is the
limit d -> 1 (test_demo_five_bar.py measures it).
"""
import mujoco
import numpy as np

from .. import dynamics as rd
from ..resources import bundled_urdf
from ..urdf import urdf_text
from .mujoco_model import add_motors, spec_without_geometry

URDF = bundled_urdf("five_bar")
LOOPS = (("end_effector", "right_distal_tip", "6d"),)
MOTORS = ["left_base_joint", "right_base_joint"]
PASSIVE = ["left_elbow_joint", "right_elbow_joint", "end_joint"]
END_POINT = "end_point"         # MuJoCo site at the end effector's origin (the fifth joint's axis)
SOLREF = (0.005, 1.0)           # weld: time constant [s] (>= 2 physics steps), damping ratio
SOLIMP = (0.9999, 0.9999, 0.001, 0.5, 2.0)   # weld impedance: d = 0.9999 at any violation
HOLD_POSE = np.array([0.3, -0.2])            # rad, the motors (from q = 0: proximal links at 137 and 49 deg)
BASE = (np.array([-0.1, 0.0]), np.array([0.1, 0.0]))   # motor axes A1, A2 in the plane (x, z) [m]
PROXIMAL, DISTAL = 0.25, 0.30                          # link lengths [m]
ZERO_ANGLES = (2.0 * np.pi / 3.0, np.pi / 3.0)         # proximal links' angles from +x at q = 0
CIRCLE_CENTRE = np.array([0.0, 0.38])       # m, (x, z)
CIRCLE_RADIUS = 0.05                        # m
CIRCLE_TIME = 2.0                           # s: one turn, quintic time scaling (rest at both ends)
SETTLE_TIME = 0.5                           # s at the circle's start point after the turn
BANDWIDTH = 30.0                            # rad/s: PD gains from the motors' reduced inertia


def mujoco_five_bar(timestep=1e-3, solref=SOLREF, solimp=SOLIMP, urdf=URDF):
    """The five-bar in MuJoCo: inertias from the URDF, motors on MOTORS (no damping, friction or
    armature), the loop welded (end_effector to right_distal_tip at their pose at q = 0, where the
    URDF's loop is closed), the site END_POINT on the end effector. Joint limits are the URDF's."""
    spec = spec_without_geometry(urdf_text(urdf), timestep)
    spec.compiler.fusestatic = False        # right_distal_tip stays a body: the weld's second frame
    add_motors(spec, MOTORS, 0.0, 0.0, 0.0)
    frame_a, frame_b, _ = LOOPS[0]
    spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY, name1=frame_a, name2=frame_b,
                      solref=list(solref), solimp=list(solimp))
    spec.body(frame_a).add_site(name=END_POINT, pos=[0.0, 0.0, 0.0])
    return spec.compile()


def joint_addresses(mj_model, names):
    """qpos (= dof, revolute joints) addresses of the joints `names` in a MuJoCo model."""
    return np.array([mj_model.jnt_qposadr[mj_model.joint(name).id] for name in names])


def set_configuration(mj_model, data, names, q, v=None):
    """Put the joints `names` at q (velocities v, default 0) and run mj_forward."""
    addresses = joint_addresses(mj_model, names)
    data.qpos[addresses] = q
    data.qvel[:] = 0.0
    if v is not None:
        data.qvel[addresses] = v
    mujoco.mj_forward(mj_model, data)


def closed(model, motors):
    """The configuration (model order) on the loop with the motors at `motors` (rd.assemble)."""
    guess = rd.neutral(model)
    fixed = np.zeros(model.nq, bool)
    for name, angle in zip(MOTORS, motors):
        j = model.joint_by_name[name]
        guess[j.idx_q], fixed[j.idx_q] = angle, True
    return rd.assemble(model, guess, LOOPS, fixed=fixed)


def end_point(motors):
    """The end point (x, z) [m] for the motor angles: the elbows B_i = A_i + L1 (cos, sin)(angle_i),
    P the intersection of the circles of radius L2 about B1 and B2 above the line B1 B2 (the URDF's
    assembly mode)."""
    b1, b2 = (a + PROXIMAL * np.array([np.cos(z + m), np.sin(z + m)]) for a, z, m in zip(BASE, ZERO_ANGLES, motors))
    half = 0.5 * (b2 - b1)
    height = np.sqrt(DISTAL**2 - half @ half)
    normal = np.array([-half[1], half[0]]) / np.linalg.norm(half)
    return b1 + half + height * normal


def motor_angles(point):
    """The motor angles that put the end point at `point` (x, z), elbows out (the URDF's assembly
    mode): each elbow is where the circles of radius L1 about A_i and L2 about P cross, on the outer
    side. ValueError for a point out of reach."""
    angles = []
    for side, (a, zero) in enumerate(zip(BASE, ZERO_ANGLES)):
        d = np.asarray(point, float) - a
        r = np.linalg.norm(d)
        if not abs(PROXIMAL - DISTAL) < r < PROXIMAL + DISTAL:
            raise ValueError(f"end point {point} out of reach of motor {MOTORS[side]}")
        # law of cosines at A_i: the angle between A_i P and A_i B_i
        cosine = (PROXIMAL**2 + r**2 - DISTAL**2) / (2 * PROXIMAL * r)
        turn = np.arccos(cosine) * (1.0 if side == 0 else -1.0)     # left elbow turns out to the left
        angles.append(np.arctan2(d[1], d[0]) + turn - zero)
    return np.array(angles)


def circle_point(t):
    """The end point's desired position (x, z) at time t: one turn of the circle from its rightmost
    point, the angle 2 pi s(t / CIRCLE_TIME) with the quintic s = 10 r^3 - 15 r^4 + 6 r^5 (rest at both
    ends; Lynch and Park, Modern Robotics, section 9.2), then at rest."""
    r = min(max(t / CIRCLE_TIME, 0.0), 1.0)
    angle = 2.0 * np.pi * r**3 * (10 - 15 * r + 6 * r**2)
    return CIRCLE_CENTRE + CIRCLE_RADIUS * np.array([np.cos(angle), np.sin(angle)])


DIFFERENCE_STEP = 1e-3      # s: central differences of the motor angles along the circle


def circle_motors(t):
    """Desired motor angles, velocities and accelerations at time t along the circle: motor_angles of
    circle_point, differentiated by central differences (step DIFFERENCE_STEP: error ~1e-7 relative
    for this smooth path, far below the tracking errors compared)."""
    h = DIFFERENCE_STEP
    before, now, after = (motor_angles(circle_point(t + dt)) for dt in (-h, 0.0, h))
    return now, (after - before) / (2 * h), (after - 2 * now + before) / h**2


def reduced_inertia(model, q):
    """The motors' inertia matrix on the loop at q: S^T M S, S the velocities of every joint per unit
    motor velocity (J S = 0, the motors' rows of S the identity)."""
    J = rd.constraint_jacobian(model, q, 0, (), LOOPS)[0]
    motors = np.array([model.joint_by_name[name].idx_v for name in MOTORS])
    passive = np.setdiff1d(np.arange(model.nv), motors)
    S = np.zeros((model.nv, len(motors)))
    S[motors] = np.eye(len(motors))
    S[passive] = np.linalg.lstsq(J[:, passive], -J[:, motors], rcond=None)[0]
    return S.T @ rd.mass_matrix(model, q) @ S


def pd_gains(model, motors=HOLD_POSE, bandwidth=BANDWIDTH):
    """Kp = I_ii w^2, Kd = 2 I_ii w on each motor, I the reduced inertia at `motors` (critically damped)."""
    inertia = np.diag(reduced_inertia(model, closed(model, motors)))
    return inertia * bandwidth**2, 2.0 * inertia * bandwidth
