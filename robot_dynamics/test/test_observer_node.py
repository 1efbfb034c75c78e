"""The node's momentum observer and ~/identify_payload over real DDS: node and test client in separate
processes (test/rosnode.py), outputs compared with the library run in the test on the same messages.

joint_states go to the node reliably (its qos_overrides) and in small batches, each batch's outputs
awaited before the next (the node's publishers keep 10 messages), so that every message is answered
and compared; negative checks come after a later message's answer came back (answers are in order)."""
import copy
import itertools
import math
import os
import time

import numpy as np
import pytest
import scripted
from rosnode import (MS, PAYLOAD, RELIABLE, NodeProcess, Outputs, Stream, connect, effort_state, identify,
                     send_all, stamp_ns)

from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.observer import MomentumObserver  # noqa: E402
from robot_dynamics.payload import add_payload  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.srv import IdentifyPayload, InverseDynamics  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA = bundled_urdf("puma560")
PUSH = np.array([0.0, 15.0, -10.0, 0.0, 0.0, 0.0])     # on tool0, world axes, from PUSH_AT
PUSH_AT = 0.15      # s into the sequence
GAIN, THRESHOLD = 40.0, 1.5


@pytest.fixture(scope="module")
def model():
    return load_urdf(PUMA)


_names = itertools.count()


def observer_node(*params):
    """The node with joint_states reliable and deep (every message taken, none dropped)."""
    name = f"obs{os.getpid()}_{next(_names)}"
    prefix = f"qos_overrides./{name}/joint_states_in.subscription"     # NodeProcess's remap of joint_states
    node = NodeProcess(f"urdf_file:={PUMA}", f"{prefix}.reliability:=reliable", f"{prefix}.depth:=1000", *params,
                       name=name)
    assert node.joint_states == f"/{name}/joint_states_in"
    return node


def motion(model, t, payload=None, push=True):
    """scripted.motion with a payload, and minus the torque of PUSH on tool0 from PUSH_AT on: q, v, tau."""
    def pushed(t, q):
        return rd.wrench_to_joint_torques(model, q, "tool0", PUSH) if t >= PUSH_AT else 0.0
    return scripted.motion(model, t, payload, pushed if push else None)


def finite(messages):
    for m in messages:
        values = (list(m.effort) if hasattr(m, "effort") else
                  [m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x, m.wrench.torque.y,
                   m.wrench.torque.z] if hasattr(m, "wrench") else [])
        assert all(math.isfinite(x) for x in values)


# --- the observer's topics -----------------------------------------------------------------------------
def test_observer_topics_equal_the_library_on_the_same_messages(client, model):
    node = observer_node(f"observer.gain:=[{GAIN}]", f"observer.contact_threshold:=[{THRESHOLD}]",
                         "observer.wrench_frame:=tool0")
    try:
        outputs = Outputs(client, node)
        connect(client, node, outputs, model, 1 * 10**9)
        start = 10 * 10**9              # 9 s after the warm-up: more than observer.max_interval, a restart
        n = 300
        samples = [motion(model, k * 1e-3) for k in range(n)]
        stamps = [start + k * MS for k in range(n)]
        send_all(client, node, outputs, [(s, effort_state(model.joint_names, *x, s)) for s, x in zip(stamps, samples)])

        library = MomentumObserver(model, GAIN)
        library.reset(*samples[0][:2])
        by_stamp = [{stamp_ns(m): m for m in messages} for messages in outputs.observer()]
        first_flag = None
        for k, stamp in enumerate(stamps):
            r = np.zeros(6) if k == 0 else library.update(*samples[k], 1e-3)
            torques, wrench, contact = (messages[stamp] for messages in by_stamp)
            assert list(torques.name) == model.joint_names
            np.testing.assert_allclose(torques.effort, r, rtol=0, atol=1e-9)
            F = library.wrench("tool0", "local")
            w = wrench.wrench
            assert wrench.header.frame_id == "tool0"
            np.testing.assert_allclose([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z], F,
                                       rtol=0, atol=1e-8)
            over = np.abs(r) > THRESHOLD
            assert contact.contact == bool(over.any())
            assert list(contact.joint_names) == [model.joint_names[j] for j in np.flatnonzero(over)]
            if contact.contact and first_flag is None:
                first_flag = k
        assert first_flag is not None and 0 <= first_flag - PUSH_AT * 1e3 <= 20, first_flag
        assert not any(by_stamp[2][s].contact for s in stamps[:int(PUSH_AT * 1e3)])
        assert "restarted" in node.output()       # the jump after the warm-up, said once
        for messages in outputs.observer():
            finite(messages)
    finally:
        assert node.stop() == 0, node.output()


def test_without_efforts_nothing_is_published_and_the_node_says_so_once(client, model):
    node = observer_node("observer.contact_threshold:=[1.0]", "observer.wrench_frame:=tool0")
    try:
        outputs = Outputs(client, node)
        connect(client, node, outputs, model, 1 * 10**9, topics=[outputs.gravity])
        start = 5 * 10**9
        messages = []
        for k in range(40):
            q, v, _ = motion(model, k * 1e-3, push=False)
            messages.append((start + k * MS, effort_state(model.joint_names, q, v, [], start + k * MS)))
        send_all(client, node, outputs, messages, topics=[outputs.gravity])
        # then one message with efforts: its answers come after any answer to the ones before
        later = start + 100 * MS
        q, v, tau = motion(model, 0.1, push=False)
        send_all(client, node, outputs, [(later, effort_state(model.joint_names, q, v, tau, later))])
        for topic in outputs.observer():        # (the warm-up's messages had efforts)
            assert [stamp_ns(m) for m in topic if stamp_ns(m) >= start] == [later], [stamp_ns(m) for m in topic]
        assert node.output().count("joint_states carries no efforts") == 1, node.output()
    finally:
        assert node.stop() == 0, node.output()


def test_bad_efforts_are_refused_by_name_and_nothing_non_finite_is_published(client, model):
    node = observer_node("observer.contact_threshold:=[1.0]", "observer.wrench_frame:=tool0")
    try:
        outputs = Outputs(client, node)
        connect(client, node, outputs, model, 1 * 10**9)
        start = 5 * 10**9
        q, v, tau = motion(model, 0.0, push=False)
        send_all(client, node, outputs, [(start, effort_state(model.joint_names, q, v, tau, start))])
        nan = tau.copy()
        nan[2] = np.nan
        bad = [(start + 1 * MS, effort_state(model.joint_names, q, v, nan, start + 1 * MS)),       # NaN effort
               (start + 2 * MS, effort_state(model.joint_names, q, v, tau[:3], start + 2 * MS)),   # wrong length
               (start + 3 * MS, effort_state(model.joint_names, q, v, np.full(6, 1e300), start + 3 * MS))]  # overflow
        words = ("joint_states efforts contain NaN or inf (joint 'joint3')", "3 efforts for 6 names",
                 "external torques not computed")
        # sent again until the warnings and the NaN state's gravity answer came (a burst's answer can be lost)
        client.wait_for(lambda: all(w in node.output() for w in words)
                        and any(stamp_ns(m) == start + 1 * MS for m in outputs.gravity), every=0.5,
                        action=lambda: [client.publish(JointState, node.joint_states, m, RELIABLE) for _, m in bad],
                        what=f"the node's warnings {words} and the gravity answer to the NaN effort")
        later = start + 10 * MS
        send_all(client, node, outputs, [(later, effort_state(model.joint_names, q, v, tau, later))])
        for topic in outputs.observer():
            assert not [m for m in topic if start < stamp_ns(m) < later]
            finite(topic)
        gravity = {stamp_ns(m) for m in outputs.gravity}
        assert start + 1 * MS in gravity and start + 2 * MS not in gravity     # a NaN effort: only the observer skips
    finally:
        assert node.stop() == 0, node.output()


# --- ~/identify_payload ------------------------------------------------------------------------------
def test_identify_payload_recovers_a_payload_and_applies_it_to_the_parameters(client, model):
    node = observer_node()
    try:
        stream = Stream(client, node, model, 2 * 10**9)
        r = identify(client, node, stream, duration=1.5, link="tool0", apply=True)
        assert r.success and r.applied, r.message
        assert (r.link, r.method) == ("tool0", "momentum") and r.samples >= 1500
        assert abs(r.mass - 1.5) < 1e-3 and np.allclose(r.com, PAYLOAD[2], atol=1e-4)
        assert r.mass_identified and r.com_identified and r.inertia_identified and r.physical
        assert np.allclose(r.inertia, [0.003, 0.004, 0.002, 0.0002, 0.0, 0.0], atol=2e-4)
        assert 0 < r.mass_std < 1e-3 and r.condition_number > 1 and r.residual >= 0
        mass, com, inertia, link = client.get_parameters(node.name, "payload.mass", "payload.com", "payload.inertia",
                                                         "payload.link")
        assert (mass, list(com), list(inertia), link) == (r.mass, list(r.com), list(r.inertia), "tool0")
        loaded = copy.deepcopy(model)
        add_payload(loaded, "tool0", r.mass, r.com, r.inertia)
        q = np.array([0.2, -0.5, 0.8, 0.1, 0.6, -0.3])
        response = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", InverseDynamics.Request(positions=list(q)))
        assert response.success and np.allclose(response.efforts, rd.gravity_torques(loaded, q), atol=1e-9)
        # identified again with the payload configured: against the model without it, the same payload
        again = identify(client, node, Stream(client, node, model, 20 * 10**9), duration=0.5)
        assert again.success and not again.applied and abs(again.mass - 1.5) < 1e-3, again.message
    finally:
        assert node.stop() == 0, node.output()


def test_identify_payload_refuses_what_cannot_be_identified_with_the_reason(client, model):
    node = observer_node()
    try:
        for fields, words in ((dict(duration=0.0, link="tool0"), "duration takes"),
                              (dict(duration=1.0, link="camera"), "unknown frame 'camera'"),
                              (dict(duration=1.0), "name the link"),
                              (dict(duration=1.0, link="tool0", method="dynamic"), "method takes")):
            r = identify(client, node, None, **fields)
            assert not r.success and words in r.message and not r.applied, (fields, r.message)
        # moving all the time: no still pose for the static method
        r = identify(client, node, Stream(client, node, model, 2 * 10**9), duration=0.5, link="tool0",
                     method="static")
        assert not r.success and "no still pose" in r.message, r.message
        # no payload on the arm, noisy efforts: nothing significant to apply
        r = identify(client, node, Stream(client, node, model, 10 * 10**9, payload=None, noise=0.5), duration=0.5,
                     link="tool0", apply=True)
        assert not r.success and not r.applied and "no payload found" in r.message, r.message
        assert client.get_parameters(node.name, "payload.mass") == [0.0]
        # joint_states without velocities: nothing recorded, said after the stall time
        r = identify(client, node, Stream(client, node, model, 20 * 10**9, velocities=False), duration=0.5,
                     link="tool0")
        assert not r.success and "no joint_states with the positions, velocities and efforts" in r.message, r.message
        assert "no velocities" in r.message
    finally:
        assert node.stop() == 0, node.output()


def test_one_identification_at_a_time_the_node_serves_meanwhile_and_stops_cleanly(client, model):
    node = observer_node()
    try:
        service = client.node.create_client(IdentifyPayload, f"{node.ns}/identify_payload")
        assert service.wait_for_service(timeout_sec=20.0)
        first = service.call_async(IdentifyPayload.Request(duration=30.0, link="tool0"))
        stream = Stream(client, node, model, 2 * 10**9)
        client.wait_for(lambda: "identify_payload: recording 30 s" in node.output(), action=stream.send,
                        every=0.01, what="the recording to run")
        second = client.call(IdentifyPayload, f"{node.ns}/identify_payload",
                             IdentifyPayload.Request(duration=1.0, link="tool0"))
        assert not second.success and "one at a time" in second.message
        q = np.full(6, 0.3)
        r = client.call(InverseDynamics, f"{node.ns}/inverse_dynamics", InverseDynamics.Request(positions=list(q)))
        assert r.success        # served while the recording runs
        result = client.set_parameters(node.name, observer__gain=[20.0])     # a change stops the recording
        assert result.successful, result.reason
        client.wait_for(first.done, action=stream.send, every=0.01, what="the first call's answer")
        assert not first.result().success and "configuration changed" in first.result().message
        third = service.call_async(IdentifyPayload.Request(duration=30.0, link="tool0"))
        client.wait_for(lambda: stream.k > 400, action=stream.send, every=0.01, what="the stream")
        t0 = time.monotonic()
        assert node.stop() == 0, node.output()      # Ctrl-C while recording
        assert time.monotonic() - t0 < 5.0 and "Traceback" not in node.output()
        assert not third.done() or not third.result().success
    finally:
        node.stop()
