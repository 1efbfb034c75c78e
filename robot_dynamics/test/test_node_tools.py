"""The rough edges a new user hit with the real ros2 tools, each as the node's behaviour over
real DDS (test/rosnode.py: node and client in separate processes):

- the first answers came only after numba compiled (13 s): every answer after the "ready" line runs
  code that was compiled or loaded before it (numba's own cache log, NUMBA_DEBUG_CACHE, says so);
- stale input: /diagnostics said OK at 0 Hz; a joint_states naming none of the model's joints was
  answered with the previous state's torques under its new stamp, and the node did not say which
  names came; a reference was answered, under its own stamp, from the last measured state;
- `ros2 param dump` did not load back (null for a list that was not set);
- an unchanged robot_description rebuilt the model each time, one ignored for urdf_file said nothing;
- `ros2 param list` waited 5 s for the joint_states helper node's parameter services.
The ros2 CLI is not here (nor in CI): the dump is made as ros2param's `dump` verb makes it (its
list_parameters and get_parameters calls, parameter_value_to_python, nested by '.', yaml.dump)."""
import os

import numpy as np
import pytest
import yaml
from rosnode import (CACHE_LOG, HEAVY_READY, RELIABLE, NodeProcess, Outputs, Stream, after_ready, connect, dump,
                     effort_state, identify, rclpy, reference, send_all, stamp_ns, write)

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.srv import ListParameters  # noqa: E402
from rclpy.parameter import parameter_dict_from_yaml_file  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from robot_dynamics import dynamics as rd  # noqa: E402
from robot_dynamics import load_urdf  # noqa: E402
from robot_dynamics.resources import bundled_urdf  # noqa: E402
from robot_dynamics_interfaces.msg import ContactForces, LinkWrench  # noqa: E402
from robot_dynamics_interfaces.srv import (CheckTrajectory, ConstrainedForwardDynamics, ForwardDynamics,  # noqa: E402
                                           HybridDynamics, InverseDynamics, TimeParameterize, WrenchToJointTorques)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros      # ROS 2 processes and DDS (pytest -m 'not ros': the library alone)

PUMA, BIPED, PLANAR = bundled_urdf("puma560"), bundled_urdf("floating_base_biped"), bundled_urdf("planar_2link")
CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "dynamics.yaml")
LATCHED = rclpy.qos.QoSProfile(depth=1, durability=rclpy.qos.DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture(scope="module")
def puma_model():
    return load_urdf(PUMA)


def close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.all(np.abs(a - b) <= tol * (1 + np.abs(b)))






def call_ok(client, kind, name, **fields):
    r = client.call(kind, name, kind.Request(**fields))
    assert r.success, (name, r.message)
    return r


# --- compiled before ready -------------------------------------------------------------------------------
def test_every_answer_after_the_ready_line_runs_code_compiled_before_it(client, puma_model):
    """Services, the joint_states outputs (gravity, feedforward with feedback, the observer's three),
    a parameter change and ~/identify_payload: numba loads or saves nothing after the ready line."""
    name = f"ready{os.getpid()}"
    prefix = f"qos_overrides./{name}/joint_states_in.subscription"
    node = NodeProcess(f"urdf_file:={PUMA}", f"{prefix}.reliability:=reliable", f"{prefix}.depth:=1000",
                       "observer.contact_threshold:=[1.0]", "observer.wrench_frame:=tool0", "feedforward.kp:=[9.0]",
                       "feedforward.kd:=[3.0]", "feedforward.evaluate_at:=measured", name=name, env=CACHE_LOG)
    try:
        names, zeros = puma_model.joint_names, [0.0] * 6
        client.wait_for(lambda: HEAVY_READY in node.output(), timeout=120.0, what="the heavy requests' ready line")
        q = [0.1, -0.4, 0.7, 0.2, 0.3, -0.5]
        r = call_ok(client, InverseDynamics, f"{node.ns}/inverse_dynamics", positions=q)     # the first answer
        assert close(r.efforts, rd.gravity_torques(puma_model, np.array(q)))
        wrench = [LinkWrench(link=link, reference=reference) for link, reference in (("tool0", "world"), ("link3", "local"))]
        call_ok(client, InverseDynamics, f"{node.ns}/inverse_dynamics", positions=q, external_wrenches=wrench)
        call_ok(client, ForwardDynamics, f"{node.ns}/forward_dynamics", positions=q, efforts=zeros)
        call_ok(client, ForwardDynamics, f"{node.ns}/forward_dynamics", positions=q, external_wrenches=wrench[:1])
        call_ok(client, HybridDynamics, f"{node.ns}/hybrid_dynamics", positions=q,
                acceleration_known=[True, False] * 3)
        for frame_reference in ("", "world", "local"):
            call_ok(client, WrenchToJointTorques, f"{node.ns}/wrench_to_joint_torques", positions=q, frame="tool0",
                    reference=frame_reference)
        # the trajectory services: a time-optimal timing, and its check along its quintic interpolation
        waypoints = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=list(map(float, w)))
                                                               for w in (zeros, q, np.array(q) * -0.5)])
        timed = call_ok(client, TimeParameterize, f"{node.ns}/time_parameterize", waypoints=waypoints,
                        acceleration_limits=[5.0] * 6, gridpoints=40).trajectory
        call_ok(client, CheckTrajectory, f"{node.ns}/check_trajectory", trajectory=timed, sample_period=0.01)
        for fields in (dict(contact_frames=["tool0"], contact_kinds=["point"]),
                       dict(contact_frames=["tool0"], contact_kinds=["6d"], baumgarte_kd=2.0),
                       dict(loop_frames_a=["tool0"], loop_frames_b=["base_link"], loop_kinds=["point"])):
            call_ok(client, ConstrainedForwardDynamics, f"{node.ns}/constrained_forward_dynamics", positions=q,
                    **fields)

        outputs = Outputs(client, node)
        feedforward = client.listen(JointState, f"{node.ns}/feedforward_torques")
        start = connect(client, node, outputs, puma_model, 10**9)
        client.publish(JointTrajectory, f"{node.ns}/reference", reference(names, q, zeros, zeros))
        def messages(first, n):
            return [(first + k * 10**6, effort_state(names, np.array(q) + 0.01 * k, [0.1] * 6, [5.0] * 6,
                                                     first + k * 10**6)) for k in range(n)]
        send_all(client, node, outputs, messages(start, 20))
        more = iter(messages(start + 20 * 10**6, 1000))      # the reference and joint_states take two threads

        def again():
            client.publish(JointTrajectory, f"{node.ns}/reference", reference(names, q, zeros, zeros))
            client.publish(JointState, node.joint_states, next(more)[1], RELIABLE)
        client.wait_for(lambda: feedforward, action=again, what="the feedforward")
        assert client.set_parameters(node.name, gravity=[0.0, 0.0, -9.0]).successful      # a new configuration
        send_all(client, node, outputs, messages(start + 10**9, 5))
        r = identify(client, node, Stream(client, node, puma_model, 30 * 10**9), duration=0.3, link="tool0")
        assert r.success or "no payload found" in r.message, r.message      # the estimate ran
        after, loaded = after_ready(node)
        assert loaded > 5, "NUMBA_DEBUG_CACHE shows no cache lines: the check below would prove nothing"
        assert "[cache]" not in after, after
    finally:
        assert node.stop() == 0, node.output()


def test_a_standing_robot_is_served_compiled_from_the_ready_line(client):
    """The contact-consistent law (gravity, contact forces, feedforward) and ~/constrained_forward_dynamics
    with the node's contacts on a floating-base biped."""
    model = load_urdf(BIPED, floating_base=True)
    node = NodeProcess(f"urdf_file:={BIPED}", "floating_base:=true", "contacts.frames:=[left_sole, right_sole]",
                       "contacts.kind:=6d", "feedforward.kp:=[4.0]", env=CACHE_LOG)
    try:
        client.wait_for(lambda: HEAVY_READY in node.output(), timeout=120.0, what="the heavy requests' ready line")
        n = len(model.joint_names)
        torques = client.listen(JointState, f"{node.ns}/gravity_torques")
        feedforward = client.listen(JointState, f"{node.ns}/feedforward_torques")
        forces = client.listen(ContactForces, f"{node.ns}/contact_forces")
        zeros = [0.0] * n
        client.wait_for(lambda: torques and feedforward and forces, action=lambda: (
            client.publish(JointTrajectory, f"{node.ns}/reference", reference(model.joint_names, zeros, zeros, zeros)),
            client.joint_state(node.joint_states, model.joint_names, [0.05] * n, (), 5)),
            what="contact-consistent gravity and feedforward")
        call_ok(client, ConstrainedForwardDynamics, f"{node.ns}/constrained_forward_dynamics", positions=zeros)
        after, loaded = after_ready(node)
        assert loaded > 5 and "[cache]" not in after, after
    finally:
        assert node.stop() == 0, node.output()


# --- stale input --------------------------------------------------------------------------------------------
def statuses(client, node, diagnostics):
    return [s for m in diagnostics for s in m.status if s.name == f"{node.name}: dynamics"]


def wait_status(client, node, diagnostics, words, action=None, timeout=20.0):
    """The first /diagnostics "dynamics" status of the node, from now on, whose message has `words`."""
    del diagnostics[:]
    return client.wait_for(lambda: next((s for s in statuses(client, node, diagnostics) if words in s.message), None),
                           action=action, every=0.1, timeout=timeout, what=f"a status saying {words!r}")


def test_stale_input_and_joint_states_naming_no_model_joint(client, puma_model):
    node = NodeProcess(f"urdf_file:={PUMA}", "joint_states_timeout:=1.0", "diagnostics_period:=0.25")
    try:
        names, q = puma_model.joint_names, np.linspace(0.1, 0.6, 6)
        diagnostics = client.listen(DiagnosticArray, "/diagnostics")
        torques = client.listen(JointState, f"{node.ns}/gravity_torques")
        gripper = ["finger_left", "finger_right"]
        # before the state is complete: the waiting status and the warning name what came
        status = wait_status(client, node, diagnostics, "joint_states came naming none of them", action=lambda:
                             client.joint_state(node.joint_states, gripper, [0.01, 0.01], (), 1))
        assert status.level == status.WARN and str(gripper) in status.message and str(names) in status.message
        assert {kv.key: kv.value for kv in status.values}["joint_states names not in the model"] == "finger_left finger_right"
        assert "joint_states came naming none of the model's joints: ['finger_left', 'finger_right']" in node.output()

        def send(stamp, joints=names):
            idx = [names.index(j) for j in joints]
            client.joint_state(node.joint_states, joints, q[idx], (), stamp)
        client.wait_for(lambda: any(stamp_ns(m) == 2 for m in torques), action=lambda: send(2), what="gravity")
        # complete: a message naming no model joint is answered with nothing (not the previous state's torques)
        client.wait_for(lambda: "names none of the model's joints (['finger_left', 'finger_right']" in node.output(),
                        action=lambda: client.joint_state(node.joint_states, gripper, [0.02, 0.02], (), 3),
                        what="the node's notice about the gripper's message")
        client.wait_for(lambda: any(stamp_ns(m) == 4 for m in torques), action=lambda: send(4), what="gravity")
        assert not [m for m in torques if stamp_ns(m) == 3], "the previous state's torques under the new stamp"
        assert close(next(m for m in torques if stamp_ns(m) == 4).effort, rd.gravity_torques(puma_model, q))

        wait_status(client, node, diagnostics, "serving", action=lambda: send(5))
        status = wait_status(client, node, diagnostics, "stale input: no joint_states for")       # they stopped
        assert status.level == status.WARN and "joint_states_timeout 1 s" in status.message
        # two drivers; the wrist's stops: its joints are stale while the arm's messages go on
        wait_status(client, node, diagnostics, "serving", action=lambda: (send(6, names[:3]), send(6, names[3:])))
        status = wait_status(client, node, diagnostics, "not heard for", action=lambda: send(7, names[:3]))
        assert status.level == status.WARN and "joints ['joint4', 'joint5', 'joint6'] not heard" in status.message
        assert {kv.key: kv.value for kv in status.values}["stale input"].startswith("joints ['joint4'")
    finally:
        assert node.stop() == 0, node.output()


def test_a_reference_is_never_answered_from_an_old_state_under_its_own_stamp(client, puma_model):
    """With feedback gains the feedforward depends on the measured state: a new reference is answered
    with the next joint_states, under its stamp. Without (evaluated at the desired state) it depends
    on the reference alone and is answered at once, under the reference's stamp."""
    node = NodeProcess(f"urdf_file:={PUMA}", "feedforward.kp:=[16.0]", "feedforward.kd:=[8.0]")
    try:
        names, q = puma_model.joint_names, np.full(6, 0.2)
        feedforward = client.listen(JointState, f"{node.ns}/feedforward_torques")
        q_d, v_d, a_d = q + 0.1, np.full(6, 0.3), np.full(6, -0.5)
        ref = reference(names, q_d, v_d, a_d, stamp_ns=7_000)
        # stamped 10 ns, before the reference starts (7 us): its first point, at rest (joint_trajectory_controller);
        # a message stamped 10 answered before the reference was taken has the gravity torques (no reference)
        expected = rd.inverse_dynamics(puma_model, q_d, 0 * v_d, 16.0 * (q_d - q))
        client.wait_for(lambda: any(stamp_ns(m) == 10 and close(m.effort, expected) for m in feedforward), action=lambda: (
            client.publish(JointTrajectory, f"{node.ns}/reference", ref),
            client.joint_state(node.joint_states, names, q, (), 10)), what="the feedforward for joint_states 10")
        client.spin_for(0.5)
        assert not [m for m in feedforward if stamp_ns(m) == 7_000], "answered from the last state under its stamp"
        assert all(close(m.effort, expected) or close(m.effort, rd.gravity_torques(puma_model, q))
                   for m in feedforward if stamp_ns(m) == 10)

        assert client.set_parameters(node.name, feedforward__kp=[0.0], feedforward__kd=[0.0]).successful
        ref = reference(names, q_d, v_d, a_d, stamp_ns=8_000)
        out = client.wait_for(lambda: next((m for m in feedforward if stamp_ns(m) == 8_000), None),
                              action=lambda: client.publish(JointTrajectory, f"{node.ns}/reference", ref),
                              what="the feedforward of the reference alone, at once")
        assert close(out.effort, rd.inverse_dynamics(puma_model, q_d, v_d, a_d))
    finally:
        assert node.stop() == 0, node.output()


# --- robot_description --------------------------------------------------------------------------------------
def test_an_unchanged_description_rebuilds_nothing_and_an_ignored_one_is_said_once(client):
    name = f"desc{os.getpid()}"
    node = NodeProcess(name=name, ros_args=["--log-level", f"{name}:=debug"])
    texts = {path: open(path).read() for path in (PUMA, PLANAR)}
    try:
        publish = lambda path: client.publish(String, node.description, String(data=texts[path]), LATCHED)  # noqa: E731
        publish(PUMA)
        client.wait_for(lambda: "model 'puma560'" in node.output(), what="the model from the topic")
        for k in range(3):      # as `ros2 topic pub` at 1 Hz would, faster; each taken (the debug line)
            publish(PUMA)
            client.wait_for(lambda: node.output().count("the same URDF again") >= k + 1, what="the republished URDF")
        publish(PLANAR)
        client.wait_for(lambda: "model 'planar_2link'" in node.output(), what="the changed description")
        publish(PUMA)
        client.wait_for(lambda: node.output().count("model 'puma560'") == 2, what="the description changed back")
        assert node.output().count("model 'puma560'") == 2 and node.output().count("model 'planar_2link'") == 1

        assert client.set_parameters(name, urdf_file=PLANAR).successful
        for k in range(3):
            publish(PUMA if k % 2 else PLANAR)
            client.wait_for(lambda: node.output().count("not used (parameter urdf_file is set)") >= k,
                            what="the description taken")
            client.wait_for(lambda: "is not used: parameter urdf_file is set and wins" in node.output(),
                            what="why the description is ignored")
        output = node.output()
        assert output.count("is not used: parameter urdf_file is set and wins") == 1, output
    finally:
        assert node.stop() == 0, node.output()


# --- ros2 param dump / list ---------------------------------------------------------------------------------
def test_a_parameter_dump_loads_back(client, puma_model):
    """A node started from the documented parameter file (its empty lists arrive not set), dumped, and
    a node started from the dump: the same parameters, serving. The dump of a list that was not set
    (null, as dumps of older versions wrote it) starts too, and `ros2 param load` of it sets the lists
    empty (a null arrives as the string 'null' from a parameter file, as 'None' from ros2 param load)."""
    name = f"dump{os.getpid()}"
    first = NodeProcess(f"urdf_file:={PUMA}", "gravity:=[0.0, 0.0, -9.5]", name=name, ros_args=["--params-file", CONFIG])
    try:
        call_ok(client, InverseDynamics, f"{first.ns}/inverse_dynamics", positions=[0.0] * 6)
        text = dump(client, name)
        before = yaml.safe_load(text)[f"/{name}"]["ros__parameters"]
    finally:
        assert first.stop() == 0, first.output()
    assert before["joints"] == [] and before["contacts"]["frames"] == [] and before["armature"] == [], text
    nulls = text.replace(" joints: []", " joints: null").replace("armature: []", "armature: null").replace(
        "frames: []", "frames: null")
    assert nulls.count("null") == 3
    for written in (text, nulls):
        second = NodeProcess(name=name, ros_args=["--params-file", write(written)])
        try:
            q = np.full(6, 0.3)
            r = call_ok(client, InverseDynamics, f"{second.ns}/inverse_dynamics", positions=list(q))
            expected = load_urdf(PUMA)
            expected.gravity = [0.0, 0.0, -9.5]
            assert close(r.efforts, rd.gravity_torques(expected, q))
            assert yaml.safe_load(dump(client, name)) == yaml.safe_load(text)      # the same parameters again
            assert client.set_parameters(name, joints=["joint2", "joint1"]).successful
            # `ros2 param load` of the dump with nulls, as its verb does it (the file keyed /**: Kilted's
            # ros2param parses a file keyed by node name without a target, and rclpy then finds nothing)
            wildcard = write(nulls.replace(f"/{name}:", "/**:"))
            loader = AsyncParameterClient(client.node, name)
            assert loader.wait_for_services(timeout_sec=20.0)
            future = loader.load_parameter_file(wildcard, use_wildcard=True)
            rclpy.spin_until_future_complete(client.node, future, timeout_sec=20.0)
            results = dict(zip(parameter_dict_from_yaml_file(wildcard, True), future.result().results))
            for parameter in ("joints", "armature", "contacts.frames"):
                assert results[parameter].successful, (parameter, results[parameter].reason)
            assert client.get_parameters(name, "joints", "armature", "contacts.frames") == [[], [], []]
        finally:
            assert second.stop() == 0, second.output()
        assert "Traceback" not in second.output()


def test_the_joint_states_helper_node_answers_parameter_requests_without_services_of_its_own(client):
    node = NodeProcess(f"urdf_file:={PUMA}")
    try:
        helper = f"{node.name}_joint_states"
        call_ok(client, InverseDynamics, f"{node.ns}/inverse_dynamics", positions=[0.0] * 6)
        client.wait_for(lambda: helper in client.node.get_node_names(), what="the helper node")
        names = client.call(ListParameters, f"/{helper}/list_parameters", ListParameters.Request()).result.names
        assert "use_sim_time" in names
        assert client.get_parameters(helper, "use_sim_time") == [False]
        assert "use_sim_time" in yaml.safe_load(dump(client, helper))[f"/{helper}"]["ros__parameters"]
        # the services are the main node's: the helper's executor still waits on its subscription alone
        assert client.node.get_service_names_and_types_by_node(helper, "/") == []
        served = dict(client.node.get_service_names_and_types_by_node(node.name, "/"))
        assert f"/{helper}/list_parameters" in served and f"/{helper}/set_parameters" in served
    finally:
        assert node.stop() == 0, node.output()
