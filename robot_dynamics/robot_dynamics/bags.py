"""Joint states from a rosbag2 recording (a folder with metadata.yaml and MCAP or sqlite3 storage,
as `ros2 bag record` writes it), read without a ROS installation by the rosbags package (PyPI),
imported on first use: e.g. the samples of robot_dynamics.identify_dynamics; and written, the same
way (`write_joint_states`: samples recorded elsewhere, e.g. a simulation, as a bag the tools read).
"""
import os

import numpy as np


def read_joint_states(bag, topic="/joint_states", joint_names=None, progress=None):
    """(t, names, q, v, effort) of the sensor_msgs/JointState messages on `topic` of the rosbag2
    folder `bag`: t (N,) [s], each message's header stamp (the recording time where every stamp
    is zero), in time order; names: the joints of the columns, joint_names (e.g. a model's) or
    else those of the first message; q, v, effort (N, joints), effort taken as the measured joint
    torque (force for a prismatic joint). Joints are matched by name in every message; a message
    naming none of them is skipped (another group of joints on the same topic). progress: called
    with the fraction of the messages read, every few thousand.

    ValueError naming what is wrong: not a rosbag2 folder, no such topic (the bag's topics
    listed) or no message on it, not JointState, joints that the messages do not name, a
    message naming only some of them, or without velocity or effort."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.typesys import Stores, get_typestore
    from pathlib import Path
    path = Path(bag)
    if not os.path.isdir(path) or not os.path.isfile(path / "metadata.yaml"):
        raise ValueError(f"{str(bag)!r} is not a rosbag2 folder (a folder with metadata.yaml)")
    try:
        with AnyReader([path], default_typestore=get_typestore(Stores.LATEST)) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                topics = sorted({c.topic for c in reader.connections})
                raise ValueError(f"the bag {str(bag)!r} has no topic {topic!r} (its topics: "
                                 f"{', '.join(topics) or 'none'})")
            kinds = {c.msgtype for c in connections}
            if kinds != {"sensor_msgs/msg/JointState"}:
                raise ValueError(f"{topic!r} in {str(bag)!r} carries {', '.join(sorted(kinds))}, not "
                                 "sensor_msgs/msg/JointState")
            total = sum(c.msgcount for c in connections)
            rows, index = [], {}
            for k, (conn, stamp, raw) in enumerate(reader.messages(connections=connections)):
                msg = reader.deserialize(raw, conn.msgtype)
                if joint_names is None:
                    joint_names = list(msg.name)
                order = _order(index, tuple(msg.name), joint_names, topic, k)
                if order is None:
                    continue
                for field in ("velocity", "effort"):
                    if len(getattr(msg, field)) != len(msg.name):
                        raise ValueError(f"message {k} on {topic!r} has {len(getattr(msg, field))} {field} values for "
                                         f"{len(msg.name)} joints: identification needs every joint's {field}")
                if len(msg.position) != len(msg.name):
                    raise ValueError(f"message {k} on {topic!r} has {len(msg.position)} positions for "
                                     f"{len(msg.name)} joints")
                rows.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, 1e-9 * stamp,
                             msg.position[order], msg.velocity[order], msg.effort[order]))
                if progress is not None and k % 4096 == 4095:
                    progress(min((k + 1) / max(total, 1), 1.0))
    except AnyReaderError as exc:
        raise ValueError(f"cannot read the bag {str(bag)!r}: {exc}") from None
    if not rows:
        seen = sorted({n for names in index for n in names})
        raise ValueError(f"no JointState message on {topic!r} in {str(bag)!r}" + (
            f" names any of the joints {list(joint_names)}: they name {seen}" if index else ""))
    stamps, recorded = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    t = recorded if not np.any(stamps) else stamps
    order = np.argsort(t, kind="stable")
    q, v, effort = (np.array([r[i] for r in rows], float)[order] for i in (2, 3, 4))
    if progress is not None:
        progress(1.0)
    return t[order], list(joint_names), q, v, effort


def _order(index, names, wanted, topic, k):
    """The columns of a message's arrays in `wanted` order (cached per name list), or None if it
    names none of them; ValueError if it names only some."""
    if names not in index:
        where = {n: i for i, n in enumerate(names)}
        missing = [n for n in wanted if n not in where]
        if len(missing) == len(wanted):
            index[names] = None
        elif missing:
            raise ValueError(f"message {k} on {topic!r} names joints {list(names)} but not {missing}")
        else:
            index[names] = np.array([where[n] for n in wanted])
    return index[names]


def write_joint_states(bag, t, names, q, v, effort, topic="/joint_states", storage="sqlite3"):
    """Write samples as sensor_msgs/JointState messages on `topic` into a new rosbag2 folder `bag`
    (storage "sqlite3" or "mcap"): t (N,) [s] each message's header stamp and recording time, names
    the joints, q, v, effort (N, joints). read_joint_states reads them back exactly. ValueError for
    mismatched shapes, non-increasing times, an unknown storage or a folder that exists."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    plugins = {"sqlite3": StoragePlugin.SQLITE3, "mcap": StoragePlugin.MCAP}
    if storage not in plugins:
        raise ValueError(f"storage takes one of {', '.join(plugins)}, got {storage!r}")
    t = np.asarray(t, float)
    q, v, effort = (np.asarray(x, float) for x in (q, v, effort))
    if t.ndim != 1 or any(x.shape != (len(t), len(names)) for x in (q, v, effort)):
        raise ValueError(f"q, v and effort must be ({len(t)}, {len(names)}) for {len(t)} times and joints {list(names)}")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0) or (len(t) and t[0] < 0):
        raise ValueError("t must be finite, non-negative, increasing times [s]")
    if os.path.exists(bag):
        raise ValueError(f"{str(bag)!r} exists: a bag is written into a new folder")
    store = get_typestore(Stores.LATEST)
    JointState, Header, Time = (store.types[f"{kind}"] for kind in (
        "sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    from pathlib import Path
    with Writer(Path(bag), version=9, storage_plugin=plugins[storage]) as writer:
        connection = writer.add_connection(topic, JointState.__msgtype__, typestore=store)
        for k, tk in enumerate(t):
            ns = int(round(tk * 1e9))
            msg = JointState(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                             name=list(names), position=q[k], velocity=v[k], effort=effort[k])
            writer.write(connection, ns, store.serialize_cdr(msg, JointState.__msgtype__))
