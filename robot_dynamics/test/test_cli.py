"""The robot-dynamics command line, run in-process and once as `python -m robot_dynamics.cli`."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.cli import main
from robot_dynamics.resources import bundled_urdf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIMIC = os.path.join(REPO, "test", "data", "mimic_continuous_fixed.urdf")


@pytest.fixture(scope="module")
def puma():
    return load_urdf(bundled_urdf("puma560"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def table(out):
    """{name: [numbers...]} from lines 'name  x  y'."""
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and re.fullmatch(r"-?\d+\.\d+", parts[1]):
            rows[parts[0]] = [float(x) for x in parts[1:]]
    return rows


def test_info_bundled(capsys, puma):
    code, out, err = run(capsys, "info", "puma560")
    assert code == 0 and err == ""
    assert "robot: puma560" in out
    for name in puma.joint_names:
        assert re.search(rf"^\s+{name}\s+revolute", out, re.M)
    for body in puma.body_names:
        assert f"- {body} <- " in out
    total = float(re.search(r"total mass: (\S+) kg", out).group(1))
    assert total == pytest.approx(puma.total_mass, rel=1e-6)
    assert f"nq = {puma.nq}, nv = {puma.nv}" in out
    assert f"frames = {len(puma.frame_names)}" in out


def test_info_continuous_mimic_floating(capsys):
    code, out, _ = run(capsys, "info", MIMIC, "--floating-base")
    assert code == 0
    assert re.search(r"spin_joint\s+continuous\s+-inf\s+inf", out)
    assert "finger_right <- finger_right_joint [prismatic, mimic" in out
    assert "root_joint [floating]" in out
    model = load_urdf(MIMIC, floating_base=True)
    assert f"nq = {model.nq}, nv = {model.nv}" in out
    total = float(re.search(r"total mass: (\S+) kg", out).group(1))
    assert total == pytest.approx(model.total_mass, rel=1e-6)


def test_info_tip(capsys):
    code, out, _ = run(capsys, "info", MIMIC, "--tip", "finger_left")
    assert code == 0
    assert "pan_joint" in out and "finger_left_joint" in out
    assert "slide_joint" not in out and "finger_right_joint" not in out


def test_torques_match_library(capsys, puma):
    q = np.array([0.1, -0.7, 1.2, 0.3, -0.4, 0.5])
    v = np.array([0.5, -0.2, 0.3, 1.0, 0.0, -1.0])
    a = np.array([1.0, 2.0, -1.0, 0.5, 0.0, 3.0])
    code, out, err = run(capsys, "torques", "puma560", "--q", ",".join(map(str, q)),
                         "--v", *map(str, v), "--a", " ".join(map(str, a)))
    assert code == 0 and err == ""
    rows = table(out)
    assert list(rows) == puma.joint_names
    tau, g = np.array(list(rows.values())).T
    np.testing.assert_allclose(tau, rd.inverse_dynamics(puma, q, v, a), atol=1e-6)
    np.testing.assert_allclose(g, rd.gravity_torques(puma, q), atol=1e-6)


def test_torques_gravity_option(capsys, puma):
    q = np.array([0.0, -0.5, 0.8, 0.0, 0.3, 0.0])
    code, out, _ = run(capsys, "torques", "puma560", "--q", *map(str, q), "--gravity", "0", "0", "0")
    assert code == 0
    np.testing.assert_allclose(np.array(list(table(out).values())), 0.0, atol=1e-9)


def test_wrong_q_count(capsys):
    code, out, err = run(capsys, "torques", "puma560", "--q", "0,0.1")
    assert code == 2 and out == ""
    assert err.startswith("robot-dynamics: error:")
    assert "6 numbers" in err and "joint1" in err and "joint6" in err and "got 2" in err
    assert "Traceback" not in err


def test_missing_file(capsys, tmp_path):
    missing = str(tmp_path / "nope.urdf")
    code, _, err = run(capsys, "info", missing)
    assert code == 2
    assert err.startswith("robot-dynamics: error:") and "no such URDF file" in err and "nope.urdf" in err


def test_demo(capsys):
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "puma560" in out and "M(q)" in out and "J^T F" in out and "tool0" in out
    errors = [float(x) for x in re.findall(r"max error (\S+)", out)]
    assert len(errors) == 3 and max(errors) < 1e-8


def test_module_subprocess(puma):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "info", "puma560"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "robot: puma560" in proc.stdout
    assert all(name in proc.stdout for name in puma.joint_names)
