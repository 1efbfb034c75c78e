"""rosbag2 folders written here with `rosbags` (MCAP and sqlite3, as `ros2 bag record` writes them)
read back exactly by bags.read_joint_states: joints matched by name in every message, other
groups of joints skipped, stamps or recording times; what is missing refused by name."""
import numpy as np
import pytest

rosbags = pytest.importorskip("rosbags")
from rosbags.rosbag2 import StoragePlugin, Writer  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

from robot_dynamics.bags import read_joint_states  # noqa: E402

STORE = get_typestore(Stores.ROS2_KILTED)
JointState = STORE.types["sensor_msgs/msg/JointState"]
Header = STORE.types["std_msgs/msg/Header"]
Time = STORE.types["builtin_interfaces/msg/Time"]
Float64 = STORE.types["std_msgs/msg/Float64"]
STORAGE = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


def joint_state(stamp, names, q, v=None, effort=None):
    sec = int(stamp // 1)
    v, effort = (np.asarray(q if x is None else x, float) for x in (v, effort))
    return JointState(header=Header(stamp=Time(sec=sec, nanosec=int(round((stamp - sec) * 1e9))), frame_id=""),
                      name=list(names), position=np.asarray(q, float), velocity=v, effort=effort)


def write_bag(path, storage, messages, topic="/joint_states", recorded=None):
    """A rosbag2 folder with the JointState `messages` on `topic` (recording time: `recorded` or
    each stamp) and a Float64 on /other."""
    with Writer(path, version=9, storage_plugin=STORAGE[storage]) as writer:
        conn = writer.add_connection(topic, JointState.__msgtype__, typestore=STORE)
        other = writer.add_connection("/other", Float64.__msgtype__, typestore=STORE)
        for k, msg in enumerate(messages):
            t = recorded[k] if recorded is not None else msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            writer.write(conn, int(t), STORE.serialize_cdr(msg, JointState.__msgtype__))
        writer.write(other, 1, STORE.serialize_cdr(Float64(data=1.0), Float64.__msgtype__))
    return path


@pytest.mark.parametrize("storage", list(STORAGE))
def test_read_back_exactly(tmp_path, storage):
    rng = np.random.default_rng(0)
    names = ["j1", "j2", "j3"]
    n = 500
    t = 1.5 + np.arange(n) * 0.002
    q, v, e = (rng.normal(size=(n, 3)) for _ in range(3))
    messages = []
    for k in range(n):
        order = rng.permutation(3) if k % 7 == 3 else np.arange(3)      # some publishers reorder the joints
        messages.append(joint_state(t[k], [names[i] for i in order], q[k, order], v[k, order], e[k, order]))
        if k % 50 == 0:                                                   # another group of joints on the topic
            messages.append(joint_state(t[k], ["gripper"], [0.01], [0.0], [1.0]))
    bag = write_bag(tmp_path / "bag", storage, messages)
    fractions = []
    t_read, names_read, q_read, v_read, e_read = read_joint_states(bag, joint_names=names, progress=fractions.append)
    assert names_read == names
    np.testing.assert_array_equal(q_read, q)
    np.testing.assert_array_equal(v_read, v)
    np.testing.assert_array_equal(e_read, e)
    np.testing.assert_allclose(t_read, t, rtol=0, atol=1e-9)
    assert fractions[-1] == 1.0
    # without joint_names: those of the first message, in its order
    _, first, q_first, _, _ = read_joint_states(bag)
    assert first == names and len(q_first) == n


def test_zero_stamps_take_the_recording_time(tmp_path):
    messages = [joint_state(0.0, ["a"], [k]) for k in range(5)]
    bag = write_bag(tmp_path / "bag", "mcap", messages, recorded=[2 * 10**9 + k * 10**7 for k in range(5)])
    t, _, q, _, _ = read_joint_states(bag)
    np.testing.assert_allclose(t, 2.0 + 0.01 * np.arange(5))
    np.testing.assert_array_equal(q[:, 0], np.arange(5))


def test_what_is_missing_is_named(tmp_path):
    good = [joint_state(0.1 * k, ["a", "b"], [k, k]) for k in range(1, 4)]
    bag = write_bag(tmp_path / "bag", "sqlite3", good)
    with pytest.raises(ValueError, match="has no topic '/robot/joint_states' .*: /joint_states, /other"):
        read_joint_states(bag, "/robot/joint_states")
    with pytest.raises(ValueError, match=r"no JointState message on '/joint_states' .* names any of the joints "
                                         r"\['c'\]: they name \['a', 'b'\]"):
        read_joint_states(bag, joint_names=["c"])
    with pytest.raises(ValueError, match=r"message 0 on '/joint_states' names joints \['a', 'b'\] but not \['c'\]"):
        read_joint_states(bag, joint_names=["a", "c"])
    with pytest.raises(ValueError, match="carries std_msgs/msg/Float64, not sensor_msgs/msg/JointState"):
        read_joint_states(bag, "/other")
    no_effort = [joint_state(0.1, ["a"], [1.0], [0.0], [])]
    with pytest.raises(ValueError, match="message 0 on '/joint_states' has 0 effort values for 1 joints"):
        read_joint_states(write_bag(tmp_path / "no_effort", "mcap", no_effort))
    no_velocity = [joint_state(0.1, ["a"], [1.0], [], [2.0])]
    with pytest.raises(ValueError, match="has 0 velocity values for 1 joints"):
        read_joint_states(write_bag(tmp_path / "no_velocity", "mcap", no_velocity))
    with pytest.raises(ValueError, match="is not a rosbag2 folder"):
        read_joint_states(tmp_path / "nowhere")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "metadata.yaml").write_text("hello: 1\n")
    with pytest.raises(ValueError, match="cannot read the bag"):
        read_joint_states(tmp_path / "broken")
    empty = write_bag(tmp_path / "empty", "mcap", [])
    with pytest.raises(ValueError, match="no JointState message on '/joint_states'"):
        read_joint_states(empty)


@pytest.mark.parametrize("storage", list(STORAGE))
def test_written_samples_read_back_exactly(tmp_path, storage):
    from robot_dynamics.bags import write_joint_states
    rng = np.random.default_rng(1)
    names = ["a", "b"]
    t = np.cumsum(rng.uniform(1e-3, 2e-3, 300)) + 5.0
    q, v, effort = rng.normal(size=(3, 300, 2))
    write_joint_states(tmp_path / "bag", t, names, q, v, effort, storage=storage)
    t2, names2, q2, v2, effort2 = read_joint_states(tmp_path / "bag", joint_names=names)
    assert names2 == names and np.allclose(t2, t, rtol=0, atol=1e-9)
    assert np.array_equal(q2, q) and np.array_equal(v2, v) and np.array_equal(effort2, effort)
    with pytest.raises(ValueError, match="exists"):
        write_joint_states(tmp_path / "bag", t, names, q, v, effort)
    with pytest.raises(ValueError, match="increasing"):
        write_joint_states(tmp_path / "other", t[::-1], names, q, v, effort)
