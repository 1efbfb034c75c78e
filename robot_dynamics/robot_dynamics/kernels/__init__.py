"""Compiled rigid-body algorithms over Model.packed (see ..layout), one module per algorithm:

    kinematics  placements, motion subspaces S and inertias of every body, about one reference point
    rnea        inverse dynamics (recursive Newton-Euler, in joint frames: named passes)
    crba        the mass matrix (composite-rigid-body algorithm)
    aba         forward and hybrid dynamics (articulated-body algorithm: three named passes)
    hybrid      the reduced dense system that `aba` solves instead for models with mimic joints
    jacobian    frame placements and Jacobians
    coriolis    the Coriolis matrix
    regressor   the joint torque regressor Y(q, v, a), tau = Y theta (inertial parameters)
    momentum    p = M v and beta = g - C^T v in one pass
    observer    the generalized-momentum observer of external torques, sampled
    rnea_derivatives  d tau / dq, d tau / dv and M (Carpentier and Mansard 2018)
    ltdl        M = L^T D L keeping the branch-induced sparsity, and solves with it
    aba_derivatives   d qdd / dq, d qdd / dv and M^-1
    psd         least-norm solutions of positive semi-definite systems (pivoted Cholesky)
    cholesky    the dense Cholesky factorization the others use
    constraints contacts and loop closures as rows: their Jacobians, drifts and position errors
    constrained constrained forward dynamics (Kim eqs. 67-69), J and Jdot v alone
    constrained_inverse  constrained inverse dynamics with passive coordinates (Kim eqs. 56-66)
    constrained_hybrid   constrained hybrid dynamics (Kim eqs. 70-80)
    assembly    loop closure at the position level (Newton steps on the loop-closure error)
    reachability  TOPP-RA's passes (controllable sets, greedy profile) over the path's constraints
    interpolation joint_trajectory_controller's spline segments (linear, cubic, quintic), sampled
    ik          inverse kinematics: Newton-Raphson on the SE(3) log error, damped least squares
    simulate    forward dynamics integrated on the joints' Lie groups (Runge-Kutta-Munthe-Kaas, Euler)
    configuration  q (+) dt v on the joints' groups and the rate of a displacement's exponential coordinates
    placements  placements and inertias about the reference point, leaner than kinematics (vectorized trigonometry)
    centroidal  centre of mass, its Jacobian, centroidal momentum and its matrix, kinetic and potential energy
    frame_motion  a frame's velocity, spatial and classical acceleration
    entries     the single-state fast paths' C entry points (numba cfuncs, called by _entry.c's Entry)

beside what they share: spatial (tuple algebra), lie (exp, log and their Jacobians on SO(3), SE(3),
SE(2)), trig (sine and cosine), columns (the workspace tables, laid out by ..layout.layout), common
(status codes, the model's columns, input checks, scratch rows, batch chunks), jit (the numba
decorators), cache (the guard that keeps numba's cache from going stale), batch (the one batch
driver), and for batches across SIMD lanes: lanes (LaneVec, L doubles in one register), access (the
accessors that read one state or L lanes) and blocks (lane-last blocks: gather, scatter, scratch).

Each algorithm is one per-state function over a workspace W (a row of scratch per body, its
columns named in the algorithm's module; `workspace(model)` there makes it) that is also the
single-state entry point, and, for batches across lanes, a lane step `<name>_lanes` (the same
passes on L states). Its module declares it to the batch drivers (`batch.Algorithm`: the entry
point, the role of each argument, the lane step), which run it over the rows of a batch on one
thread (`batch.rows`, `batch.in_lanes`) or over threads (`batch.batch`: a chunk of states per
thread, each with a copy of the workspace, on Python threads: the one-thread drivers release the GIL).

Kernels take and return the user's coordinates: a joint reads its q and v through the model's
source/scale columns (mimic joints follow their leader) and adds its torque, times its scale, to
its source's (tau = G^T tau_full, M = G^T M_full G).
"""
from . import (aba, aba_derivatives, access, assembly, batch, blocks, cache, centroidal, cholesky, columns, common,
               configuration, constrained, constrained_hybrid, constrained_inverse, constraints, coriolis, crba, entries,
               frame_motion, hybrid, ik, interpolation, jacobian, jit, kinematics, lanes, lie, ltdl, momentum, observer,
               placements, psd, reachability, regressor, rnea, rnea_derivatives, simulate, spatial, trig)
from .blocks import lane_scratch  # noqa: F401
from .lanes import Lanes  # noqa: F401
from .common import (BAD_QUATERNION, EXT_COLS, F_BODY, F_POS, F_REF, F_ROT, F_WRENCH, FRAME_COLS,  # noqa: F401
                     LOCAL, LOCAL_WORLD_ALIGNED, NONFINITE, OK, OVERFLOW, SINGULAR, STATUS_BODY, WORLD)

MODULES = (aba, aba_derivatives, access, assembly, batch, blocks, centroidal, cholesky, columns, common, configuration,
           constrained, constrained_hybrid, constrained_inverse, constraints, coriolis, crba, entries, frame_motion, hybrid, ik,
           interpolation, jacobian, jit, kinematics, lanes, lie, ltdl, momentum, observer, placements, psd,
           reachability, regressor, rnea, rnea_derivatives, simulate, spatial, trig)
cache.guard(MODULES)
