"""`robot-dynamics identify` on an MCAP and a sqlite3 bag of the synthetic PUMA (identification_truth:
heavier links, an unknown tool, friction, armature; 0.05 N m noise) writes a URDF whose gravity
torques are the truth's within 2 %, prints the residuals and what changed, plots; `robot-dynamics
excite` writes a JointTrajectory YAML; errors exit 2 naming the problem."""
import numpy as np
import pytest
import yaml

import identification_truth as truth_data
from robot_dynamics import dynamics as rd
from robot_dynamics import load_urdf
from robot_dynamics.cli import main

pytest.importorskip("rosbags")
from test_bags import joint_state, write_bag  # noqa: E402


@pytest.fixture(scope="module")
def recording():
    """15 s at 200 Hz of the PUMA's excitation, as a JointState stream: (messages, true model)."""
    name = "puma560"
    t = np.arange(3000) / 200.0
    q, v, _, tau = truth_data.measure(name, t, np.random.default_rng(5))
    model = truth_data.prior(name)
    return [joint_state(10.0 + t[k], model.joint_names, q[k], v[k], tau[k]) for k in range(len(t))], \
        truth_data.truth(name)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_identify_a_bag(tmp_path, capsys, recording, storage):
    messages, true = recording
    bag = write_bag(tmp_path / "bag", storage, messages)
    out, report = tmp_path / "identified.urdf", tmp_path / "report.png"
    argv = ["identify", str(bag), "--urdf", "puma560", "--out", str(out)]
    assert main(argv + (["--report", str(report)] if storage == "mcap" else [])) == 0
    printed = capsys.readouterr().out
    assert "3000 samples of 6 joints on /joint_states, 14.995 s at 200 Hz" in printed
    assert "physically consistent" in printed and "NOT physically" not in printed
    assert "parameters that changed most" in printed and f"wrote {out}" in printed
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line.startswith("joint")}
    for j, name in enumerate(true.joint_names):
        assert 0.04 < float(rows[name][2]) < 0.06                       # the residual: the noise
        assert float(rows[name][3]) == pytest.approx(true.friction[j, 0], rel=0.1)
    model = load_urdf(str(out))
    q = truth_data.held_out("puma560")[0]
    g, g_true = rd.gravity_torques(model, q), rd.gravity_torques(true, q)
    assert np.linalg.norm(g - g_true) <= 0.02 * np.linalg.norm(g_true)
    np.testing.assert_allclose(model.friction, true.friction, rtol=0.1)
    if storage == "mcap":
        assert report.stat().st_size > 10000 and report.read_bytes()[:4] == b"\x89PNG"


def test_identify_names_what_is_wrong(tmp_path, capsys, recording):
    bag = write_bag(tmp_path / "bag", "mcap", recording[0][:100])
    assert main(["identify", str(bag), "--urdf", "puma560", "--out", str(tmp_path / "x.urdf"),
                 "--topic", "/arm/joint_states"]) == 2
    assert "has no topic '/arm/joint_states'" in capsys.readouterr().err
    assert main(["identify", str(bag), "--urdf", "puma560", "--out", str(tmp_path / "x.urdf")]) == 2   # 0.5 s
    assert "robot-dynamics: error: the samples do not excite " in capsys.readouterr().err      # joint1 at rest
    assert not (tmp_path / "x.urdf").exists()


def test_excite_writes_a_joint_trajectory(tmp_path, capsys):
    out = tmp_path / "excite.yaml"
    assert main(["excite", "--urdf", "puma560", "--duration", "6", "--harmonics", "3", "--out", str(out),
                 "--time-budget", "0.2", "--rate", "10", "--lead-in", "2", "--limit-scale", "0.5"]) == 0
    printed = capsys.readouterr().out
    assert "ros2 topic pub --once /<controller>/joint_trajectory trajectory_msgs/msg/JointTrajectory" in printed
    msg = yaml.safe_load(out.read_text())
    model = truth_data.prior("puma560")
    assert msg["joint_names"] == model.joint_names and len(msg["points"]) == 61
    assert msg["points"][0]["time_from_start"] == {"sec": 2, "nanosec": 0}
    v = np.array([p["velocities"] for p in msg["points"]])
    assert np.all(np.abs(v) <= 0.5 * model.velocity_limits)
    assert main(["excite", "--urdf", "puma560", "--duration", "6", "--out", str(out), "--limit-scale", "2"]) == 2
    assert "--limit-scale must be in (0, 1]" in capsys.readouterr().err
