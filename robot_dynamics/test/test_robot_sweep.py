"""Every real URDF installed here against Pinocchio: example-robot-data's robots and pybullet's
(pybullet_data), each fixed and on a free flyer, at 5 random states within limits: RNEA, CRBA,
ABA (where M is regular), the Coriolis matrix, the placement of every frame and its Jacobian in
the three references. Every file Pinocchio loads must load here and agree to 1e-9 relative; the
files Pinocchio refuses are listed at the end of the run with our message. What a file can get
wrong is the model it builds (a joint's kind, axis or placement, an inertia, a frame), which every
state shows; the algorithms' agreement over many states is test_against_pinocchio.py's (100 per
test robot)."""
import glob
import importlib.util
import logging
import os

import numpy as np
import pytest

from oracle import ROBOTS, Pair, pin, rel_err
from robot_dynamics import URDFError, load_urdf
from robot_dynamics import dynamics as rd

N_STATES, TOL = 5, 1e-9
REFERENCES = ("world", "local", "local_world_aligned")


def _files():
    files = [(os.path.relpath(f, ROBOTS), f) for f in glob.glob(os.path.join(ROBOTS, "**", "*.urdf"), recursive=True)]
    spec = importlib.util.find_spec("pybullet_data")
    if spec is not None:
        data = os.path.dirname(spec.origin)
        files += [("pybullet_data/" + os.path.relpath(f, data), f)
                  for f in glob.glob(os.path.join(data, "**", "*.urdf"), recursive=True)
                  if os.sep + "random_urdfs" + os.sep not in f]     # a thousand single-link objects
    return sorted(files)


FILES = _files()
NAMES = {path: name for name, path in FILES}
#: files Pinocchio refuses -> what our loader says of them (printed by conftest's summary)
REFUSED_BY_PINOCCHIO = {}


def pinocchio_loads(path):
    try:
        pin.buildModelFromUrdf(path)
        return True
    except (ValueError, RuntimeError):
        return False


@pytest.mark.parametrize("path", [f for _, f in FILES], ids=[name for name, _ in FILES])
def test_real_robot_agrees_with_pinocchio(path):
    logging.disable(logging.WARNING)      # real files warn about their inertias; checked elsewhere
    try:
        if not pinocchio_loads(path):
            try:
                model = load_urdf(path)
                REFUSED_BY_PINOCCHIO[NAMES[path]] = f"loaded here ({model.nv} coordinates)"
            except URDFError as exc:
                REFUSED_BY_PINOCCHIO[NAMES[path]] = f"refused: {exc}"
            return
        for floating_base in (False, True):
            check(Pair(None, floating_base, path=path), np.random.default_rng(abs(hash(path)) % 2**32))
    finally:
        logging.disable(logging.NOTSET)


def check(P, rng):
    m = P.model
    for _ in range(N_STATES):
        q, v, a = P.random_state(rng)
        pq, pv = P.pin_q(q), P.pin_v(v)
        if m.nv:
            assert rel_err(rd.inverse_dynamics(m, q, v, a), P.ours_v(pin.rnea(P.pin, P.data, pq, pv, P.pin_v(a)))) < TOL
            M = P.ours_matrix(pin.crba(P.pin, P.data, pq), upper_only=True)
            assert rel_err(rd.mass_matrix(m, q), M) < TOL
            assert rel_err(rd.coriolis_matrix(m, q, v),
                           P.ours_matrix(pin.computeCoriolisMatrix(P.pin, P.data, pq, pv))) < TOL
            cond = np.linalg.cond(M)
            if cond < 1e12:     # both solvers lose cond * eps: compare at that scale where M is poorly conditioned
                tau = rng.uniform(-5, 5, m.nv)
                assert rel_err(rd.forward_dynamics(m, q, v, tau), P.forward_dynamics(q, v, tau)) < TOL * max(1.0, cond / 1e6)
        pin.framesForwardKinematics(P.pin, P.data, pq)
        if P.pin.nv:        # every joint's Jacobian once, then each frame's is a lookup (Pinocchio 4.1 crashes on nv = 0)
            pin.computeJointJacobians(P.pin, P.data, pq)
        for frame in m.frame_names:
            fid = P.frame_id(frame)
            assert rel_err(rd.frame_placement(m, q, frame), P.data.oMf[fid].homogeneous) < TOL, frame
            for reference in REFERENCES:
                J = pin.getFrameJacobian(P.pin, P.data, fid, getattr(pin.ReferenceFrame, reference.upper())) if P.pin.nv \
                    else np.zeros((6, 0))
                assert rel_err(rd.frame_jacobian(m, q, frame, reference), P.ours_jacobian(J)) < TOL, (frame, reference)


def test_the_sweep_found_the_robots():
    """The oracle's data is where we look for it (so that the sweep cannot pass empty)."""
    names = [name for name, _ in FILES]
    assert sum(n.startswith("pybullet_data/") for n in names) > 50 and len(names) > 120, len(names)
    assert any("minitaur" in n for n in names) and any("z1_description" in n for n in names)
