"""Benchmark the ROS 2 node: joint_states -> gravity_torques latency and drops, service round trips,
and the momentum observer's cost.

    source install/setup.bash; python bench/bench_node.py [--duration 10] [--calls 1000]
    source install/setup.bash; python bench/bench_node.py --soak 600     # only the soak: panda at 1 kHz for 600 s
    source install/setup.bash; python bench/bench_node.py --observer 3   # only the observer comparison, repeated 3 times
    source install/setup.bash; python bench/bench_node.py --startup 3    # only start-up: warm and cold numba cache
    source install/setup.bash; python bench/bench_node.py --five-bar 5   # only the five-bar callback, in-process
    source install/setup.bash; python bench/bench_node.py --trajectory 5 # only: a trajectory vs a one-point reference
    source install/setup.bash; python bench/bench_node.py --callback 7   # only the callback in-process, panda and talos
    source install/setup.bash; python bench/bench_node.py --fuzz 20      # only: joint_states under the largest requests
    source install/setup.bash; python bench/bench_node.py --goals 3      # only: joint_states while goals are retimed
    source install/setup.bash; python bench/bench_node.py --identify 2   # only: latency without and during ~/identify_dynamics
    source install/setup.bash; python bench/bench_node.py --identify-callback 3   # the same, in-process

The observer comparison (also at the end of the default run, once): panda at 1 kHz with joint_states
that carry efforts, the echo floor on the same messages, the node with `observer.enabled: false`
(latency on ~/gravity_torques) and with the observer on (contact thresholds, the wrench at
panda_link8, all three outputs subscribed; latency on ~/external_torques, published after the
gravity torques in the same callback). The node callback is the node's own /diagnostics figure.

Processes: this bench (one rclpy node holding the joint_states publisher, the output subscriber
and the service client, on one thread) and, in a separate process over real DDS, either
`python -m robot_dynamics.ros` or, as the floor, a bare rclpy echo node (this file run with
--echo) that republishes each JointState (stamp, names, positions as efforts) on receipt and
answers InverseDynamics with an empty response.

Every joint_states message carries its send time (time.perf_counter_ns, CLOCK_MONOTONIC) as
header.stamp; the node copies the stamp into gravity_torques, so the bench matches each output
to its input by stamp and takes latency = receive time - stamp on the same clock.  Messages go
out at the target rate (absolute schedule); between sends the bench waits for outputs.  One
warm-up second precedes the measured window, which is not counted.  Dropped = sent in the
window - received.  Service round trip: sequential calls after 50 warm-up calls.

The bench keeps its own CPU use low (2 cores; it should measure the node, not itself): it
publishes pre-serialized messages (stamp patched in the CDR bytes), takes outputs raw (stamp
read from the CDR bytes) and waits in a bare rcl wait set (as rclpy.wait_for_message does)
rather than an rclpy executor, which rebuilds its wait set in Python on every spin (~0.1 ms).
The wire traffic is the same as with message objects; the node and the echo are plain rclpy.

Start-up (--startup): the node (panda) started as a user starts it, with numba's cache as installed
(warm) and with an empty one (NUMBA_CACHE_DIR, cold: every kernel compiled); from the start of the
process, when its "ready" line comes (a node without one: -), when ~/forward_dynamics is discovered
and answers its first request (sent at once), then the first answer of each other service.

Goals (--goals): the PUMA with 3 kg at 1 kHz, windows without and with ~/follow_joint_trajectory goals
in a loop (a child sends the MoveIt demo's 100-point plan again as soon as each ends, execution.retime
always: every goal retimed by TOPP-RA at 991 gridpoints and its efforts computed on the node's worker,
then forwarded to a controller child that succeeds at once), alternating, REPEATS of each.

The fuzz (--fuzz SECONDS): the node (PUMA 560) under a 1 kHz joint_states stream, quiet and then for
SECONDS while a second process (this file with --fuzz-client) keeps the heavy-request queue full with
the largest requests the services allow (~/time_parameterize with 10000 gridpoints, ~/check_trajectory
with 200000 samples, ~/inverse_kinematics of an unreachable target with 1000 restarts) and sends
bursts of 10 concurrent ~/inverse_dynamics requests with 10000-character joint names and 1e300
positions (refused) and valid ones: the gravity path's p99 and drops in both windows, the requests
answered and refused, the node's resident memory before, right after and 3 s after the fuzz.

The five-bar (also at the end of the default run): the joint_states callback called in-process on a
closed chain (the loop, the passive joints assembled) against the plain node on the same URDF.

DDS is isolated: a random ROS_DOMAIN_ID (or $BENCH_ROS_DOMAIN_ID), localhost discovery only,
and a unique namespace.  Every child runs in its own process group and is killed on exit.
"""
import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy: OpenBLAS threads fight numba's
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"

import argparse
import array
import atexit
import gc
import platform
import random
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np

# a random domain of our own (never a developer's ROS_DOMAIN_ID); children inherit it
os.environ.setdefault("BENCH_ROS_DOMAIN_ID", str(random.randint(1, 100)))
os.environ["ROS_DOMAIN_ID"] = os.environ["BENCH_ROS_DOMAIN_ID"]

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402
from robot_dynamics_interfaces import srv  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from robot_dynamics_interfaces.msg import Contact  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix/share/example-robot-data/robots")
PANDA = f"{ROBOTS}/panda_description/urdf/panda.urdf"
TALOS = f"{ROBOTS}/talos_data/robots/talos_reduced.urdf"
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robot_dynamics")
sys.path.insert(0, PACKAGE)     # bench the tree this file is in (the node child runs with cwd=PACKAGE too)
OUTPUT_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
SERVICE_WARMUP = 50
DRAIN_S = 1.0           # wait for late outputs after the last send
BUSY_OTHER_CPU = 20     # % of one core used by other processes above which a window is flagged

CHILDREN = []           # Popen objects, each the leader of its own process group
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid="self", children=True):
    """CPU seconds (user + system, all threads) used so far by a process and, unless children=False, its
    children alive (the node's heavy-request process)."""
    total = 0.0
    for p in [pid] + (child_pids(pid) if children and pid != "self" else []):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:     # ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def child_pids(pid):
    """The pids of a process's children (each thread's /proc children list)."""
    pids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                pids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return pids


def machine_busy_seconds():
    """CPU seconds used so far by everything on the machine (all cores, not idle or iowait)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / TICK


def cpu_snapshot(pid):
    return time.perf_counter(), cpu_seconds(), cpu_seconds(pid), machine_busy_seconds()


def cpu_percent(a, b):
    """% of one core used in [a, b] by the bench, the child and everything else."""
    wall = b[0] - a[0]
    bench, child, total = ((b[i] - a[i]) / wall * 100 for i in (1, 2, 3))
    return dict(bench_cpu=bench, child_cpu=child, other_cpu=max(total - bench - child, 0.0))


# --- child processes ------------------------------------------------------------------------------
def start(cmd, tag, env=None):
    log = tempfile.NamedTemporaryFile("w+", prefix=f"bench_node_{tag}_", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, cwd=PACKAGE, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, **(env or {})})
    proc.log_path = log.name
    log.close()
    CHILDREN.append(proc)
    return proc


def stop(proc):
    if proc.poll() is None:
        for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
    try:        # stragglers of the group (the leader is gone)
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc in CHILDREN:
        CHILDREN.remove(proc)
    try:
        os.unlink(proc.log_path)
    except OSError:
        pass


def stop_all():
    for proc in list(CHILDREN):
        stop(proc)


def log_tail(proc, n=30):
    try:
        with open(proc.log_path) as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# --- the bench's own rclpy node ---------------------------------------------------------------------
class Bench:
    def __init__(self, ns):
        self.ns = ns
        self.node = rclpy.create_node("bench_node", namespace=ns)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.pub = self.node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        self.sub = None
        self.received = {}      # stamp ns -> receive ns
        self.diagnostics = []   # (receive s, {key: value}) of the node's /diagnostics
        self.diag_sub = self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.wait_set = _rclpy.WaitSet(2, 0, 0, 0, 0, 0, self.node.context.handle)

    def wait_and_take(self, timeout_ns):
        """Wait up to timeout_ns for the output or /diagnostics, then take and handle all they hold."""
        ws, subs = self.wait_set, (self.sub, self.diag_sub)
        ws.clear_entities()
        for sub in subs:
            ws.add_subscription(sub.handle)
        ws.wait(timeout_ns)
        ready = ws.get_ready_entities("subscription")
        for sub in subs:
            if sub.handle.pointer in ready:
                while (taken := sub.handle.take_message(sub.msg_type, sub.raw)) is not None:
                    sub.callback(taken[0])

    def _on_diagnostics(self, msg):
        for status in msg.status:
            if status.name == "robot_dynamics: dynamics":
                self.diagnostics.append((time.perf_counter(), {kv.key: kv.value for kv in status.values}))

    def listen(self, topic, also=()):
        """Time the outputs on `topic`; `also`: (type, topic) subscribed too, never taken (so that the
        node publishes them)."""
        if self.sub is not None:
            self.node.destroy_subscription(self.sub)
        for extra in getattr(self, "extra", []):
            self.node.destroy_subscription(extra)
        self.received = {}
        self.sub = self.node.create_subscription(JointState, topic, self._on_output, OUTPUT_QOS, raw=True)
        self.extra = [self.node.create_subscription(kind, name, lambda _: None, 10, raw=True) for kind, name in also]

    def _on_output(self, data):
        """Raw CDR: 4-byte encapsulation header, then header.stamp (int32 sec, uint32 nanosec)."""
        t = time.perf_counter_ns()
        sec, nanosec = struct.unpack_from("<iI" if data[1] == 1 else ">iI", data, 4)
        self.received[sec * 1_000_000_000 + nanosec] = t

    def spin_for(self, seconds):
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            self.executor.spin_once(timeout_sec=left)

    def connect(self, proc, msg, timeout=90.0):
        """Wait for both directions to match, then until an output comes back for an input."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args} exited with {proc.returncode}:\n{log_tail(proc)}")
            if self.pub.get_subscription_count() and self.sub.get_publisher_count():
                self.received.clear()
                self.send(msg)
                self.spin_for(0.05)
                if self.received:
                    return
            else:
                self.spin_for(0.05)
        raise RuntimeError(f"no output from {proc.args} within {timeout} s:\n{log_tail(proc)}")

    def send(self, buf):
        """Publish a pre-serialized JointState (see serialized()) stamped with the time now."""
        t = time.perf_counter_ns()
        struct.pack_into("<iI", buf, 4, *divmod(t, 1_000_000_000))
        self.pub.publish(bytes(buf))
        return t

    def stream(self, msgs, rate, duration, warmup=1.0, pid=None):
        """Publish at `rate` Hz for warmup + duration s; stats of the measured window.
        pid: the node's process, for CPU use over the window."""
        period = round(1e9 / rate)
        self.received.clear()
        cpu = None
        sent = []               # stamps of the measured window
        late_max = 0
        start = time.perf_counter_ns()
        measure_from = start + round(warmup * 1e9)
        stop_at = measure_from + round(duration * 1e9)
        due, k = start, 0
        gc.disable()
        try:
            while due < stop_at:
                now = time.perf_counter_ns()
                if now < due:
                    self.wait_and_take(due - now)
                    continue
                t = self.send(msgs[k % len(msgs)])
                k += 1
                if due >= measure_from:
                    if cpu is None:
                        cpu = cpu_snapshot(pid)
                    sent.append(t)
                    late_max = max(late_max, t - due)
                due += period
                if t - due > 2 * period:        # the bench itself stalled: skip slots rather than burst
                    due = t + period
            window = (sent[-1] - sent[0]) * 1e-9 if len(sent) > 1 else float("nan")
            cpu = cpu_percent(cpu, cpu_snapshot(pid))
            t_from, t_to = sent[0] * 1e-9 + 0.5, sent[-1] * 1e-9 + 0.5    # diagnostics cover the past second
            drain_end = time.perf_counter_ns() + round(DRAIN_S * 1e9)
            while (left := drain_end - time.perf_counter_ns()) > 0:
                self.wait_and_take(left)
        finally:
            gc.enable()
        got = [self.received[s] - s for s in sent if s in self.received]
        lat = np.array(got) * 1e-6 if got else np.array([np.nan])
        diag = [d for t, d in self.diagnostics if t_from <= t <= t_to]
        cb_mean = np.mean([float(d["compute latency mean [us]"]) for d in diag]) if diag else float("nan")
        cb_max = max((float(d["compute latency max [us]"]) for d in diag), default=float("nan"))
        return dict(rate=rate, sent=len(sent), received=len(got), dropped=len(sent) - len(got),
                    cb_mean_us=cb_mean, cb_max_us=cb_max, **cpu,
                    send_rate=(len(sent) - 1) / window, late_max_ms=late_max * 1e-6,
                    p50=np.percentile(lat, 50), p99=np.percentile(lat, 99), max=lat.max())

    def calls(self, client, request, n, pid):
        if not client.wait_for_service(timeout_sec=30.0):
            raise RuntimeError(f"service {client.srv_name} not available")
        times = []
        ws = _rclpy.WaitSet(0, 0, 0, 1, 0, 0, self.node.context.handle)
        cpu = None
        for i in range(SERVICE_WARMUP + n):
            t0 = time.perf_counter_ns()
            seq, response = client.handle.send_request(request), None
            while response is None and time.perf_counter_ns() - t0 < 10e9:
                ws.clear_entities()
                ws.add_client(client.handle)
                ws.wait(round(1e9))
                if client.handle.pointer in ws.get_ready_entities("client"):
                    header, taken = client.handle.take_response(client.srv_type.Response)
                    if header is not None and header.request_id.sequence_number == seq:
                        response = taken
            t1 = time.perf_counter_ns()
            if response is None:
                raise RuntimeError(f"{client.srv_name}: no response within 10 s")
            if not response.success:
                raise RuntimeError(f"{client.srv_name}: {response.message}")
            if i >= SERVICE_WARMUP:
                times.append((t1 - t0) * 1e-6)
            elif i == SERVICE_WARMUP - 1:
                cpu = cpu_snapshot(pid)
        t = np.array(times)
        return dict(calls=n, p50=np.percentile(t, 50), p99=np.percentile(t, 99), max=t.max(),
                    **cpu_percent(cpu, cpu_snapshot(pid)))


def joint_state_messages(names, n=16, seed=0, efforts=False):
    """n serialized messages with the given names and random positions and velocities (and efforts)
    (cycled)."""
    rng = np.random.default_rng(seed)
    msgs = []
    for _ in range(n):
        m = JointState()
        m.name = list(names)
        m.position = array.array("d", rng.uniform(-1.0, 1.0, len(names)).tobytes())
        m.velocity = array.array("d", rng.uniform(-1.0, 1.0, len(names)).tobytes())
        if efforts:
            m.effort = array.array("d", rng.uniform(-5.0, 5.0, len(names)).tobytes())
        msgs.append(serialized(m))
    return msgs


def serialized(msg):
    """msg as little-endian CDR (what the bench publishes: no per-message Python conversion);
    send() patches the stamp at bytes 4..12."""
    buf = bytearray(serialize_message(msg))
    assert buf[:2] == b"\x00\x01", "expected CDR little endian"
    return buf


def id_request(names, floating):
    rng = np.random.default_rng(1)
    req = srv.InverseDynamics.Request()
    req.joint_names = list(names)
    for field in ("positions", "velocities", "accelerations"):
        setattr(req, field, array.array("d", rng.uniform(-1.0, 1.0, len(names)).tobytes()))
    if floating:
        req.base_pose.position.z = 1.0
        req.base_pose.orientation.w = 1.0
        req.base_twist.linear.x = 0.1
        req.base_acceleration.angular.z = 0.2
    return req


# --- the echo floor (run as a separate process) -------------------------------------------------------
def echo_main(ns):
    rclpy.init()
    node = rclpy.create_node("echo", namespace=ns)
    pub = node.create_publisher(JointState, "~/out", 10)

    def on_joint_states(msg):
        out = JointState()
        out.header.stamp = msg.header.stamp
        out.name = msg.name
        out.effort = msg.position
        pub.publish(out)

    def serve(request, response):
        response.success, response.message = True, "ok"
        return response

    node.create_subscription(JointState, "joint_states", on_joint_states, qos_profile_sensor_data)
    node.create_service(srv.InverseDynamics, "~/inverse_dynamics", serve)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


# --- the run -----------------------------------------------------------------------------------------
def machine_facts():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from importlib.metadata import version
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
            f"rclpy {version('ros-rclpy')}, {rclpy.get_rmw_implementation_identifier()}, "
            f"{platform.system()} {platform.release()}")


def scheduling_jitter(seconds=3.0):
    """The machine's own timing noise: a bare time.sleep(1 ms) loop, no ROS."""
    gaps, end = [], time.perf_counter() + seconds
    prev = time.perf_counter()
    while prev < end:
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - prev)
        prev = now
    gaps = np.array(gaps) * 1e3
    return (f"Scheduling jitter without ROS (time.sleep(1 ms) loop, {seconds:g} s): p99 period "
            f"{np.percentile(gaps, 99):.2f} ms, max {gaps.max():.2f} ms, {int((gaps > 2).sum())} periods > 2 ms")


def fmt_ms(x):
    return f"{x:.3f}"


def resident_mb(pid, children=False):
    """Resident memory of a process (VmRSS), MB; children=True: of its children alive instead (0 if none)."""
    total = 0.0
    for p in child_pids(pid) if children else [pid]:
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
        except OSError:
            pass
    return total


SOAK_WINDOW = 60.0      # s per row of the soak table


def soak(seconds):
    """The node (panda) under a 1 kHz joint_states stream for `seconds`: per one-minute window the
    drops, latency percentiles and the node's resident memory; memory at start and end."""
    from robot_dynamics import load_urdf
    ns = f"/soak_{os.getpid()}"
    print(f"# robot_dynamics node soak: panda at 1 kHz for {seconds:g} s\n\n{machine_facts()}")
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    rows = []
    try:
        names = load_urdf(PANDA).joint_names
        msgs = joint_state_messages(names)
        proc = start([sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}",
                      "-p", f"urdf_file:={PANDA}"], "soak")
        try:
            bench.listen("robot_dynamics/gravity_torques")
            bench.connect(proc, msgs[0])
            rss_start = resident_mb(proc.pid)
            windows = max(1, round(seconds / SOAK_WINDOW))
            for k in range(windows):
                r = bench.stream(msgs, 1000, seconds / windows, 1.0 if k == 0 else 0.0, proc.pid)
                if proc.poll() is not None:
                    raise RuntimeError(f"node exited with {proc.returncode}:\n{log_tail(proc)}")
                r["rss"] = resident_mb(proc.pid)
                rows.append(r)
                print(f"minute {k + 1}: sent {r['sent']}, dropped {r['dropped']}, p99 {fmt_ms(r['p99'])} ms, "
                      f"RSS {r['rss']:.1f} MB", flush=True)
        finally:
            stop(proc)
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| window | sent | dropped | p50 ms | p99 ms | max ms | node CPU % | other CPU % | sender late max ms "
          "| node RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, r in enumerate(rows):
        print(f"| {k + 1} | {r['sent']} | {r['dropped']} | {fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | "
              f"{fmt_ms(r['max'])} | {r['child_cpu']:.0f} | {r['other_cpu']:.0f} | {r['late_max_ms']:.1f} | "
              f"{r['rss']:.1f} |")
    sent, dropped = sum(r["sent"] for r in rows), sum(r["dropped"] for r in rows)
    print(f"\nNode resident memory: {rss_start:.1f} MB after connecting, {rows[-1]['rss']:.1f} MB at the end "
          f"({rows[-1]['rss'] - rss_start:+.1f} MB); after the first window {rows[0]['rss']:.1f} MB. "
          f"Dropped {dropped} of {sent} ({100 * dropped / max(sent, 1):.3f} %).")
    busy = [str(k + 1) for k, r in enumerate(rows) if r["other_cpu"] > BUSY_OTHER_CPU or r["send_rate"] < 990]
    if busy:
        print(f"**The machine was busy** in windows {', '.join(busy)} (other processes > {BUSY_OTHER_CPU} % of a "
              "core, or the bench's own sends fell behind).")
    return 0


def observer_comparison(bench, ns, duration, warmup, repeats):
    """Rows (label, repeat, stats) of the echo floor, the node with the observer off and on, panda at
    1 kHz on the same joint_states with efforts, `repeats` times in turn."""
    from robot_dynamics import load_urdf
    names = load_urdf(PANDA).joint_names
    msgs = joint_state_messages(names, efforts=True)
    node = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}", "-p", f"urdf_file:={PANDA}"]
    observed = ((WrenchStamped, "robot_dynamics/external_wrench"), (Contact, "robot_dynamics/contact"))
    cases = [("rclpy echo (floor), efforts", [sys.executable, os.path.abspath(__file__), "--echo", ns], "echo/out", ()),
             ("panda, observer off", node + ["-p", "observer.enabled:=false"], "robot_dynamics/gravity_torques", ()),
             ("panda, observer on", node + ["-p", "observer.contact_threshold:=[5.0]", "-p",
                                            "observer.wrench_frame:=panda_link8"],
              "robot_dynamics/external_torques", observed)]
    rows = []
    for k in range(repeats):
        for label, cmd, topic, also in cases:
            proc = start(cmd, "observer")
            try:
                bench.listen(topic, also)
                bench.connect(proc, msgs[0])
                print(f"{label} (repeat {k + 1}): streaming at 1000 Hz for {duration:g} s ...", flush=True)
                r = bench.stream(msgs, 1000, duration, warmup, proc.pid)
                if proc.poll() is not None:
                    raise RuntimeError(f"{label} exited with {proc.returncode}:\n{log_tail(proc)}")
                rows.append((label, k + 1, r))
            finally:
                stop(proc)
    return rows


def print_observer_rows(rows, duration):
    print(f"\n### The momentum observer: panda (8 joints) at 1 kHz, joint_states with efforts ({duration:g} s "
          "measured per row)\n")
    print("| node | repeat | sent | dropped | p50 ms | p99 ms | max ms | p50 / p99 over the floor ms "
          "| node callback mean / max us | CPU % node / bench / other |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    floors = {k: r for label, k, r in rows if label.startswith("rclpy echo")}
    for label, k, r in rows:
        floor = floors[k]
        over = "-" if r is floor else f"{r['p50'] - floor['p50']:+.3f} / {r['p99'] - floor['p99']:+.3f}"
        print(f"| {label} | {k} | {r['sent']} | {r['dropped']} | {fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | "
              f"{fmt_ms(r['max'])} | {over} | "
              + ("-" if np.isnan(r["cb_mean_us"]) else f"{r['cb_mean_us']:.0f} / {r['cb_max_us']:.0f}")
              + f" | {r['child_cpu']:.0f} / {r['bench_cpu']:.0f} / {r['other_cpu']:.0f} |")
    means = {label: np.mean([r["cb_mean_us"] for lab, _, r in rows if lab == label])
             for label in ("panda, observer off", "panda, observer on")}
    print(f"\nNode callback mean over the repeats: observer off {means['panda, observer off']:.1f} us, on "
          f"{means['panda, observer on']:.1f} us ({means['panda, observer on'] - means['panda, observer off']:+.1f} us: "
          "the observer's update, the contact check, the wrench and three more publishes).")
    busy = [f"{label} #{k}" for label, k, r in rows if r["other_cpu"] > BUSY_OTHER_CPU or r["send_rate"] < 990]
    if busy:
        print(f"**The machine was busy** (other processes > {BUSY_OTHER_CPU} % of a core, or the bench's sends fell "
              f"behind) during: {', '.join(busy)}.")


def observer_only(duration, warmup, repeats):
    ns = f"/bench_{os.getpid()}"
    print(f"# robot_dynamics node: the momentum observer's cost\n\n{machine_facts()}")
    print(scheduling_jitter())
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    try:
        rows = observer_comparison(bench, ns, duration, warmup, repeats)
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print_observer_rows(rows, duration)
    return 0


def ask(bench, client, request, timeout):
    """Send one request on a raw client and wait for its answer: seconds taken, or None."""
    ws = _rclpy.WaitSet(0, 0, 0, 1, 0, 0, bench.node.context.handle)
    t0 = time.perf_counter()
    seq = client.handle.send_request(request)
    while time.perf_counter() - t0 < timeout:
        ws.clear_entities()
        ws.add_client(client.handle)
        ws.wait(round(0.1e9))
        if client.handle.pointer in ws.get_ready_entities("client"):
            header, response = client.handle.take_response(client.srv_type.Response)
            if header is not None and header.request_id.sequence_number == seq:
                if not response.success:
                    raise RuntimeError(f"{client.srv_name}: {response.message}")
                return time.perf_counter() - t0
    return None


def startup_run(bench, ns, cache, k):
    """One start of the node on panda: seconds from the process start to its ready line, to
    ~/forward_dynamics discovered and answered, and each other service's first answer."""
    from robot_dynamics import load_urdf
    model = load_urdf(PANDA)
    names, zeros = model.joint_names, [0.0] * len(model.joint_names)
    name = f"start{k}_{cache}"
    requests = [("forward_dynamics", srv.ForwardDynamics, srv.ForwardDynamics.Request(positions=zeros)),
                ("inverse_dynamics", srv.InverseDynamics, srv.InverseDynamics.Request(positions=zeros)),
                ("hybrid_dynamics", srv.HybridDynamics, srv.HybridDynamics.Request(
                    positions=zeros, acceleration_known=[True] * len(names))),
                ("wrench_to_joint_torques", srv.WrenchToJointTorques, srv.WrenchToJointTorques.Request(
                    positions=zeros, frame="panda_link8")),
                ("constrained_forward_dynamics", srv.ConstrainedForwardDynamics, srv.ConstrainedForwardDynamics.Request(
                    positions=zeros, contact_frames=["panda_link8"], contact_kinds=["point"]))]
    clients = [(label, bench.node.create_client(kind, f"{ns}/{name}/{label}"), request)
               for label, kind, request in requests]
    folder = tempfile.mkdtemp(prefix="bench_node_numba_") if cache == "cold" else None
    env = {"NUMBA_CACHE_DIR": folder} if folder else {}
    t0 = time.perf_counter()
    proc = start([sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}", "-r",
                  f"__node:={name}", "-p", f"urdf_file:={PANDA}"], f"startup_{cache}", env)
    out = dict(cache=cache, ready=None, discovered=None, first=None)
    try:
        label, client, request = clients[0]
        while out["discovered"] is None and time.perf_counter() - t0 < 600:
            if proc.poll() is not None:
                raise RuntimeError(f"the node exited with {proc.returncode}:\n{log_tail(proc)}")
            if client.service_is_ready():
                out["discovered"] = time.perf_counter() - t0
            else:
                time.sleep(0.01)
        took = None
        while took is None and time.perf_counter() - t0 < 600:     # a request right after discovery can be lost
            took = ask(bench, client, request, 5.0)
        out["first"] = time.perf_counter() - t0
        with open(proc.log_path) as f:
            ready = [line for line in f if "ready: every answer" in line]
        if ready:      # its ROS time stamp (wall clock) against this process's wall clock at the start
            out["ready"] = float(ready[0].split("[")[2].split("]")[0]) - (time.time() - (time.perf_counter() - t0))
        for label, client, request in clients[1:]:
            while not client.service_is_ready():
                time.sleep(0.01)
            out[label] = ask(bench, client, request, 600.0)
    finally:
        stop(proc)
        for _, client, _ in clients:
            bench.node.destroy_client(client)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    return out


def startup(repeats):
    ns = f"/bench_{os.getpid()}"
    print(f"# robot_dynamics node: start-up, warm and cold numba cache\n\n{machine_facts()}")
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    rows = []
    try:
        for k in range(repeats):
            for cache in ("warm", "cold"):
                print(f"start {k + 1}, {cache} cache ...", flush=True)
                rows.append(startup_run(bench, ns, cache, k))
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    others = ["inverse_dynamics", "hybrid_dynamics", "wrench_to_joint_torques", "constrained_forward_dynamics"]
    print("| numba cache | ready line s | forward_dynamics discovered s | its first answer s | ready -> first answer s "
          "| first answer ms: " + " / ".join(others) + " |")
    print("|---|---:|---:|---:|---:|---:|")
    fmt = lambda x, f="{:.2f}": "-" if x is None else f.format(x)  # noqa: E731
    for r in rows:
        print(f"| {r['cache']} | {fmt(r['ready'])} | {fmt(r['discovered'])} | {fmt(r['first'])} | "
              f"{fmt(None if r['ready'] is None else r['first'] - r['ready'])} | "
              + " / ".join(fmt(None if r[o] is None else 1e3 * r[o], "{:.1f}") for o in others) + " |")
    return 0


FIVE_BAR_LOOP = "end_effector right_distal_tip 6d"
FIVE_BAR_MOTORS = ["left_base_joint", "right_base_joint"]


def five_bar_callback(messages=20000, repeats=5):
    """The joint_states callback called in-process (no DDS: the joint_states part's on_joint_states, the
    publishes included) on the bundled five-bar, `repeats` alternating rounds of `messages` messages
    each, on 16 closed configurations cycled (velocities on the loop): the plain node (every joint in
    joint_states, g(q)), the node with the loop and joint_states carrying every joint (constrained
    gravity) and with the motors only (the three passive joints assembled, then constrained gravity).
    Returns {case: median us per message}. rclpy must be initialised."""
    from rclpy.parameter import Parameter
    from robot_dynamics import dynamics as rd
    from robot_dynamics import load_urdf
    from robot_dynamics.resources import bundled_urdf
    from robot_dynamics.ros.node import DynamicsNode
    urdf = bundled_urdf("five_bar")
    model = load_urdf(urdf)
    spec = (tuple(FIVE_BAR_LOOP.split()),)
    motors = [model.joint_index[n] for n in FIVE_BAR_MOTORS]
    rng = np.random.default_rng(0)
    states = []
    for _ in range(16):
        q = np.zeros(model.nq)
        q[motors] = rng.uniform(-0.3, 0.3, 2)
        q = rd.assemble(model, q, spec, fixed=FIVE_BAR_MOTORS)
        J = rd.constraint_jacobian(model, q, 0, (), spec)[0]
        v = rng.uniform(-1.0, 1.0, model.nv)
        states.append((q, v - np.linalg.pinv(J) @ (J @ v)))

    def msgs(names):
        index = [model.joint_index[n] for n in names]
        return [JointState(name=list(names), position=q[index].tolist(), velocity=v[index].tolist()) for q, v in states]

    loop = [Parameter("loops", value=[FIVE_BAR_LOOP])]
    cases = {"plain (5 joints, g(q))": ([], model.joint_names),
             "loop, 5 joints in joint_states": (loop + [Parameter("actuated_joints", value=FIVE_BAR_MOTORS)],
                                                model.joint_names),
             "loop, motors only (3 assembled)": (loop, FIVE_BAR_MOTORS)}
    nodes = {}
    try:
        for label, (params, names) in cases.items():
            node = DynamicsNode(parameter_overrides=[Parameter("urdf_file", value=urdf)] + params)
            nodes[label] = (node, msgs(names))
        times = callback_rounds(nodes, repeats, messages)
    finally:
        for node, _ in nodes.values():
            node.destroy_node()
    return {label: float(np.median(t)) for label, t in times.items()}


def print_five_bar_callback(medians, messages, repeats):
    print(f"\n### Closed chain: the five-bar's joint_states callback in-process ({messages} messages, median of "
          f"{repeats} alternating rounds)\n")
    print("| node | us per message | over the plain node us |")
    print("|---|---:|---:|")
    plain = next(iter(medians.values()))
    for label, us in medians.items():
        print(f"| {label} | {us:.1f} | {us - plain:+.1f} |")
    worst = max(medians.values()) - plain
    print(f"\n- five-bar callback within 100 us of the plain one: {worst:+.1f} us: "
          f"{'met' if worst <= 100 else 'NOT met'}")


def callback_rounds(nodes, repeats, messages=20000, warmup=0):
    """The joint_states callback called in-process (no DDS: the joint_states part's on_joint_states, the
    publishes included), `messages` messages a round from a pool of 16 cycled, the nodes alternating
    round by round; `warmup` rounds first, not counted. nodes: {label: (DynamicsNode, [JointState])}.
    Returns {label: [us per message, one per round]}; RuntimeError unless every message was answered."""
    calls = {label: (next(p for p in node.parts if hasattr(p, "on_joint_states")).on_joint_states, pool)
             for label, (node, pool) in nodes.items()}
    times = {label: [] for label in nodes}
    for _ in range(warmup + repeats):
        for label, (callback, pool) in calls.items():
            stamp, t0 = 0, time.perf_counter()
            for k in range(messages):
                msg = pool[k % len(pool)]
                stamp += 1000
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
                callback(msg)
            times[label].append((time.perf_counter() - t0) / messages * 1e6)
    for label, (node, _) in nodes.items():      # every message answered (diagnostics has not reset the counters)
        stats = node.stats
        if stats["rejected"] or stats["computed"] != stats["messages"]:
            raise RuntimeError(f"{label}: {stats['rejected']} messages rejected, {stats['computed']} of "
                               f"{stats['messages']} answered: {node.last_error}")
    return {label: t[warmup:] for label, t in times.items()}


def random_states(names, rng, n=16, efforts=False):
    """n JointState messages of random positions and velocities (and efforts) for `names`."""
    return [JointState(name=list(names), position=rng.uniform(-1, 1, len(names)).tolist(),
                       velocity=rng.uniform(-1, 1, len(names)).tolist(),
                       effort=rng.uniform(-5, 5, len(names)).tolist() if efforts else []) for _ in range(n)]


def callback_timing(repeats, messages=20000):
    """--callback: the node's joint_states callback in-process (callback_rounds: one warm-up round, then
    `repeats` rounds alternating the robots), panda and talos + free flyer; panda with efforts in the
    messages (the observer runs) with the identification buffer off and on (its default, 60 s), and with
    friction.compensate_gravity full (rd.friction_torques per message); the median and the spread of the
    rounds (the noise) per case."""
    import logging
    from rclpy.parameter import Parameter
    from robot_dynamics import load_urdf
    from robot_dynamics.ros.node import DynamicsNode
    logging.disable(logging.WARNING)        # the URDF loader's inertia warnings for talos
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    rng, nodes = np.random.default_rng(0), {}
    try:
        for label, urdf, floating, extra, efforts in (
                ("panda", PANDA, False, {}, False), ("talos_reduced + free flyer", TALOS, True, {}, False),
                ("panda, efforts, identification buffer off", PANDA, False, {"identification.buffer_seconds": 0.0},
                 True),
                ("panda, efforts, identification buffer 60 s", PANDA, False, {}, True),
                ("panda, friction.compensate_gravity full", PANDA, False, {"friction.compensate_gravity": "full"},
                 False)):
            node = DynamicsNode(parameter_overrides=[Parameter("urdf_file", value=urdf),
                                                     Parameter("floating_base", value=floating)] +
                                [Parameter(name, value=value) for name, value in extra.items()])
            nodes[label] = (node, random_states(load_urdf(urdf, floating_base=floating).joint_names, rng,
                                                efforts=efforts))
        rounds = callback_rounds(nodes, repeats, messages, warmup=1)
    finally:
        for node, _ in nodes.values():
            node.destroy_node()
        rclpy.try_shutdown()
    print(f"\n### joint_states callback in-process ({messages} messages a round, {repeats} rounds alternating "
          "the robots, load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + ")\n")
    print("| node | median us per message | min - max of the rounds |")
    print("|---|---:|---:|")
    for label, t in rounds.items():
        print(f"| {label} | {np.median(t):.2f} | {min(t):.2f} - {max(t):.2f} |")
    return 0


def trajectory_reference(repeats, messages=2000):
    """The joint_states callback (in-process, the node's own on_joint_states: lock, state, gravity, feedforward,
    publish) with a 100-point quintic trajectory on ~/reference against a one-point reference, panda,
    evaluated at the measured state with feedback gains; alternating blocks, median of the repeats."""
    import statistics
    from rclpy.parameter import Parameter
    from robot_dynamics import load_urdf
    from robot_dynamics.ros.node import DynamicsNode
    from robot_dynamics.ros.trajectories.part import ReferenceFeedforward
    from robot_dynamics.ros.joint_states.part import JointStatesInput
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    model = load_urdf(PANDA)
    names, n = list(model.joint_names), len(model.joint_names)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = DynamicsNode(parameter_overrides=[
        Parameter("urdf_file", value=PANDA), Parameter("feedforward.kp", value=[16.0]),
        Parameter("feedforward.kd", value=[8.0]), Parameter("feedforward.evaluate_at", value="measured")])
    try:
        callback, reference = node.part(JointStatesInput).on_joint_states, node.part(ReferenceFeedforward).on_reference
        rng = np.random.default_rng(0)

        def trajectory(points):
            msg = JointTrajectory(joint_names=names)
            msg.header.stamp.sec = 1
            for k in range(points):
                p = JointTrajectoryPoint(positions=rng.uniform(-1, 1, n).tolist(),
                                         velocities=rng.uniform(-1, 1, n).tolist(),
                                         accelerations=rng.uniform(-1, 1, n).tolist())
                p.time_from_start.sec, p.time_from_start.nanosec = divmod(k * 20_000_000, 10**9)
                msg.points.append(p)
            return msg
        states = []
        for k in range(messages):       # stamps across the trajectory (2 s from 1 s on), every interval
            msg = JointState(name=names, position=rng.uniform(-1, 1, n).tolist(),
                             velocity=rng.uniform(-1, 1, n).tolist())
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(10**9 + k * 1_000_000, 10**9)
            states.append(msg)
        cases = [("one point", trajectory(1)), ("100-point quintic", trajectory(100))]

        def block(msg):
            reference(msg)
            callback(states[0])         # the first message after the reference changed, not timed
            t0 = time.perf_counter()
            for state in states[1:]:
                callback(state)
            return (time.perf_counter() - t0) / (len(states) - 1)
        for _, msg in cases:
            block(msg)                  # warm-up
        times = {label: [] for label, _ in cases}
        for _ in range(repeats):
            for label, msg in cases:
                times[label].append(block(msg))
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    ratio = statistics.median(a / b for a, b in zip(times["100-point quintic"], times["one point"]))
    print(f"\n### joint_states callback with a trajectory reference (panda, in-process, feedback at the measured "
          f"state, {messages - 1} messages x {repeats} alternating repeats)\n")
    for label, _ in cases:
        print(f"- {label}: median {1e6 * statistics.median(times[label]):.1f} us per message")
    print(f"- ratio trajectory / one point: {ratio:.3f} (target <= 1.10: {'met' if ratio <= 1.10 else 'NOT met'})")
    return 0


PUMA = os.path.join(PACKAGE, "urdf", "puma560.urdf")


def controller_main(ns):
    """A controller's FollowJointTrajectory action that succeeds at once (--goals' forwarding target)."""
    from control_msgs.action import FollowJointTrajectory     # noqa: PLC0415
    from rclpy.action import ActionServer                     # noqa: PLC0415
    rclpy.init()
    node = rclpy.create_node("arm_controller_bench", namespace=ns)

    def execute(handle):
        handle.succeed()
        return FollowJointTrajectory.Result()
    ActionServer(node, FollowJointTrajectory, "arm_controller/follow_joint_trajectory", execute)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


def goals_main(ns):
    """Send the MoveIt demo's goal to the node again and again; each round trip printed (s)."""
    from control_msgs.action import FollowJointTrajectory     # noqa: PLC0415
    from rclpy.action import ActionClient                     # noqa: PLC0415
    from robot_dynamics import dynamics as rd                 # noqa: PLC0415
    from robot_dynamics.demo.moveit_demo import moveit_goal   # noqa: PLC0415
    from robot_dynamics.demo.timing_demo import GRIDPOINTS, LIGHT, WAYPOINTS, arm, uniform_timing   # noqa: PLC0415
    light = arm(LIGHT)
    t, q, v, _ = uniform_timing(rd.path_through_waypoints(WAYPOINTS, GRIDPOINTS), light)
    goal = moveit_goal(light.joint_names, t, q, v)
    rclpy.init()
    node = rclpy.create_node("goals_bench", namespace=ns)
    client = ActionClient(node, FollowJointTrajectory, "robot_dynamics/follow_joint_trajectory")
    client.wait_for_server()
    try:
        while True:
            t0 = time.perf_counter()
            sent = client.send_goal_async(goal)
            rclpy.spin_until_future_complete(node, sent)
            result = sent.result().get_result_async()
            rclpy.spin_until_future_complete(node, result)
            print(f"{time.perf_counter() - t0:.4f} {result.result().status} {result.result().result.error_code}",
                  flush=True)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


def goals(repeats, duration, warmup):
    """joint_states -> gravity_torques of the PUMA + 3 kg at 1 kHz, windows without and with goals being
    retimed and forwarded, alternating; the goals' round trips."""
    from robot_dynamics import load_urdf    # noqa: PLC0415
    ns = f"/bench_{os.getpid()}"
    print(f"# robot_dynamics node: joint_states while ~/follow_joint_trajectory goals are retimed\n\n{machine_facts()}")
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    rows, trips = [], []
    try:
        names = load_urdf(PUMA).joint_names
        msgs = joint_state_messages(names)
        proc = start([sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}",
                      "-p", f"urdf_file:={PUMA}", "-p", "payload.link:=tool0", "-p", "payload.mass:=3.0",
                      "-p", f"execution.controller_action:={ns}/arm_controller/follow_joint_trajectory",
                      "-p", "execution.retime:=always"], "goals")
        controller = start([sys.executable, os.path.abspath(__file__), "--controller", ns], "controller")
        try:
            bench.listen("robot_dynamics/gravity_torques")
            bench.connect(proc, msgs[0])
            for k in range(repeats):
                rows.append(("quiet", bench.stream(msgs, 1000, duration, warmup, proc.pid)))
                sender = start([sys.executable, os.path.abspath(__file__), "--send-goals", ns], f"goals{k}")
                deadline = time.perf_counter() + 60.0
                while not open(sender.log_path).read().strip() and time.perf_counter() < deadline:
                    bench.spin_for(0.1)
                rows.append(("goals", bench.stream(msgs, 1000, duration, warmup, proc.pid)))
                with open(sender.log_path) as f:
                    lines = [line.split() for line in f.read().splitlines() if line[:1].isdigit()]
                stop(sender)
                trips += [(float(a), int(b), int(c)) for a, b, c in lines]
                if proc.poll() is not None:
                    raise RuntimeError(f"node exited with {proc.returncode}:\n{log_tail(proc)}")
        finally:
            stop(proc)
            stop(controller)
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print_windows(rows)
    for label in ("quiet", "goals"):
        p99 = [r["p99"] for k, r in rows if k == label]
        print(f"{label}: p99 median {fmt_ms(float(np.median(p99)))} ms over {len(p99)} windows")
    if trips:
        t = np.array([x[0] for x in trips])
        ok = sum(1 for x in trips if x[1] == 4 and x[2] == 0)
        print(f"goals: {len(trips)} ended ({ok} SUCCEEDED), round trip (retimed, forwarded, answered) median "
              f"{1e3 * np.median(t):.0f} ms, max {1e3 * t.max():.0f} ms")
    busy = [label for label, r in rows if r["other_cpu"] > BUSY_OTHER_CPU or r["send_rate"] < 990]
    if busy:
        print(f"**The machine was busy** in {len(busy)} windows ({', '.join(busy)}): other processes > "
              f"{BUSY_OTHER_CPU} % of a core, or the bench's own sends fell behind.")
    return 0


def goals_callback(repeats, seconds=3.0):
    """--goals-callback: the joint_states callback in-process (the PUMA + 3 kg, called every 1 ms from a
    thread, each call timed from its due time: the GIL's wait included), in windows without and with the
    node's worker preparing the MoveIt demo's goal in a loop (execution.retime always: TOPP-RA at 991
    gridpoints, the efforts), alternating; p50 / p99 / max per window."""
    import threading      # noqa: PLC0415
    from rclpy.parameter import Parameter     # noqa: PLC0415
    from robot_dynamics import dynamics as rd, load_urdf      # noqa: PLC0415
    from robot_dynamics.demo.moveit_demo import moveit_goal   # noqa: PLC0415
    from robot_dynamics.demo.timing_demo import GRIDPOINTS, LIGHT, WAYPOINTS, arm, uniform_timing   # noqa: PLC0415
    from robot_dynamics.ros.follow_joint_trajectory import prepared     # noqa: PLC0415
    from robot_dynamics.ros.node import DynamicsNode     # noqa: PLC0415
    t, q, v, _ = uniform_timing(rd.path_through_waypoints(WAYPOINTS, GRIDPOINTS), arm(LIGHT))
    goal = moveit_goal(load_urdf(PUMA).joint_names, t, q, v)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = DynamicsNode(parameter_overrides=[Parameter(n, value=x) for n, x in (
        ("urdf_file", PUMA), ("payload.link", "tool0"), ("payload.mass", 3.0), ("execution.retime", "always"))])
    callback = next(p for p in node.parts if hasattr(p, "on_joint_states")).on_joint_states
    pool = random_states(load_urdf(PUMA).joint_names, np.random.default_rng(0))
    rows, prepared_count = [], [0]
    try:
        for k in range(2 * repeats):
            busy = k % 2 == 1
            stop_work = threading.Event()

            def work():
                while not stop_work.is_set():
                    node.work.submit("bench", prepared, node.config, goal, 0, q[0], np.zeros(6)).result()
                    prepared_count[0] += 1
            worker = threading.Thread(target=work) if busy else None
            if worker:
                worker.start()
            lat, due, n = [], time.perf_counter(), round(seconds * 1000)
            for i in range(n):
                due += 1e-3
                time.sleep(max(0.0, due - time.perf_counter()))
                msg = pool[i % len(pool)]
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod((k * n + i) * 1_000_000, 10**9)
                callback(msg)
                done_at = time.perf_counter()
                lat.append((done_at - due) * 1e3)
                if done_at - due > 2e-3:        # a stall (the machine's or the GIL's): skip slots, no burst
                    due = done_at
            stop_work.set()
            if worker:
                worker.join()
            lat = np.array(lat)
            rows.append(("goals prepared" if busy else "quiet", np.percentile(lat, 50), np.percentile(lat, 99), lat.max()))
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    print(f"\n### joint_states callback in-process, due every 1 ms, {seconds:g} s windows (load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f"; {prepared_count[0]} goals prepared)\n")
    print("| window | p50 ms (from due) | p99 ms | max ms |")
    print("|---|---:|---:|---:|")
    for label, p50, p99, mx in rows:
        print(f"| {label} | {p50:.3f} | {p99:.3f} | {mx:.3f} |")
    for label in ("quiet", "goals prepared"):
        print(f"{label}: p99 median {np.median([r[2] for r in rows if r[0] == label]):.3f} ms")
    return 0


def identification_latency(duration, warmup, repeats, fill=30.0):
    """joint_states -> ~/gravity_torques latency at 1 kHz (panda, messages with efforts, every message a
    distinct state) with no identification running, and with ~/identify_dynamics called back to back on
    the buffered window (`fill` s of samples, buffered before the first stream) for the whole measured
    stream, `repeats` times in turn; and the identifications' own times."""
    import threading
    from robot_dynamics import load_urdf
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    ns = f"/bench_{os.getpid()}"
    bench = Bench(ns)
    names = load_urdf(PANDA).joint_names
    msgs = joint_state_messages(names, n=4096, efforts=True)
    cmd = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}", "-p", f"urdf_file:={PANDA}",
           "-p", f"identification.buffer_seconds:={fill:g}"]
    proc = start(cmd, "identify")
    rows, times = [], []
    try:
        bench.listen("robot_dynamics/gravity_torques")
        bench.connect(proc, msgs[0])
        print(f"filling the buffer: {fill:g} s at 1000 Hz ...", flush=True)
        bench.stream(msgs, 1000, fill, 0.0, proc.pid)
        for k in range(repeats):
            for case in ("no identification", "identifying back to back"):
                stop_event, caller = threading.Event(), None
                if case != "no identification":
                    caller = threading.Thread(target=_identify_loop, args=(ns, stop_event, times), daemon=True)
                    caller.start()
                    time.sleep(0.5)
                print(f"{case} (repeat {k + 1}): streaming at 1000 Hz for {duration:g} s ...", flush=True)
                r = bench.stream(msgs, 1000, duration, warmup, proc.pid)
                stop_event.set()
                if caller is not None:
                    caller.join(60.0)
                if proc.poll() is not None:
                    raise RuntimeError(f"node exited with {proc.returncode}:\n{log_tail(proc)}")
                rows.append((case, k + 1, r))
    finally:
        stop(proc)
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print(f"\n### joint_states -> ~/gravity_torques during ~/identify_dynamics: panda at 1 kHz, efforts, "
          f"{duration:g} s windows ({fill:g} s buffered; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.2f})\n")
    print("| case | repeat | sent | dropped | p50 ms | p99 ms | max ms | node callback mean / max us |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for case, k, r in rows:
        print(f"| {case} | {k} | {r['sent']} | {r['dropped']} | {fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | "
              f"{fmt_ms(r['max'])} | {r['cb_mean_us']:.1f} / {r['cb_max_us']:.0f} |")
    ok = [t for t, success, _ in times if success]
    failed = [message for _, success, message in times if not success]
    print(f"\nidentifications: {len(ok)} answered with success, median {np.median(ok) if ok else float('nan'):.2f} s "
          f"each (call to answer)" + (f"; {len(failed)} refused, e.g. {failed[0][:200]}" if failed else ""))
    return 0


def identification_callback(repeats, messages=20000, fill=30000):
    """--identify-callback: the node's joint_states callback in-process (panda, efforts, the buffer on), each
    call timed, while nothing else runs and while the node's heavy-request process identifies the buffered
    window back to back (the service's own work, DynamicsIdentification._identify, submitted to node.work),
    `repeats` rounds of each in turn: what an identification costs the joint_states path beside it (the
    GIL), without DDS."""
    import logging
    import threading
    from rclpy.parameter import Parameter
    from robot_dynamics import load_urdf
    from robot_dynamics.ros.identification.part import DynamicsIdentification
    from robot_dynamics.ros.node import DynamicsNode
    logging.disable(logging.WARNING)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = DynamicsNode(parameter_overrides=[Parameter("urdf_file", value=PANDA),
                                             Parameter("identification.buffer_seconds", value=fill / 1000.0)])
    pool = random_states(load_urdf(PANDA).joint_names, np.random.default_rng(0), 4096, efforts=True)
    callback = node.part(type(node.parts[0])).on_joint_states
    part = node.part(DynamicsIdentification)
    stamp, rows, done = [0], [], []

    def run(count):
        times = np.empty(count)
        for k in range(count):
            msg = pool[stamp[0] % len(pool)]
            stamp[0] += 1
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp[0] * 1_000_000, 10**9)
            t0 = time.perf_counter_ns()
            callback(msg)
            times[k] = time.perf_counter_ns() - t0
        return times * 1e-3

    def identify_loop(stop_event):
        while not stop_event.is_set():
            with node.lock:
                config, snapshot = node.config, part.buffer.take()
            t0 = time.perf_counter()
            est = node.work.submit("bench", part._identify, config, "", "", part.buffer, snapshot, 0.0, "").result()[0]
            done.append((time.perf_counter() - t0, est.samples))
    try:
        run(fill)
        for k in range(repeats):
            for case in ("no identification", "identifying back to back"):
                stop_event = threading.Event()
                caller = threading.Thread(target=identify_loop, args=(stop_event,), daemon=True) \
                    if case != "no identification" else None
                if caller:
                    caller.start()
                    time.sleep(0.2)
                t = run(messages)
                stop_event.set()
                if caller:
                    caller.join(60.0)
                rows.append((case, k + 1, t))
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    print(f"\n### joint_states callback in-process during identification: panda, efforts, {messages} messages a "
          f"round ({fill} buffered; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()) + ")\n")
    print("| case | round | p50 us | p99 us | p99.9 us | max us |")
    print("|---|---:|---:|---:|---:|---:|")
    for case, k, t in rows:
        print(f"| {case} | {k} | {np.percentile(t, 50):.1f} | {np.percentile(t, 99):.1f} | "
              f"{np.percentile(t, 99.9):.1f} | {t.max():.0f} |")
    print(f"\nidentifications: {len(done)}, median {np.median([d for d, _ in done]):.2f} s each on "
          f"{int(np.median([n for _, n in done]))} samples")
    return 0


def _identify_loop(ns, stop_event, times):
    """~/identify_dynamics (the whole buffer) called again as soon as it answers, until stop_event."""
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("bench_identify", namespace=ns, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    client = node.create_client(srv.IdentifyDynamics, "robot_dynamics/identify_dynamics")
    try:
        client.wait_for_service(timeout_sec=30.0)
        while not stop_event.is_set():
            t0 = time.perf_counter()
            future = client.call_async(srv.IdentifyDynamics.Request())
            executor.spin_until_future_complete(future, timeout_sec=120.0)
            if future.done():
                response = future.result()
                times.append((time.perf_counter() - t0, response.success, response.message))
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)



# --- the fuzz -------------------------------------------------------------------------------------
FUZZ_BURST = 10         # concurrent ~/inverse_dynamics requests per burst


def fuzz_requests(model):
    """The largest requests each heavy service allows, and the inverse dynamics ones (valid and refused)."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    names = list(model.joint_names)
    rng = np.random.default_rng(5)
    W = rng.uniform(-1.0, 1.0, (50, len(names)))
    waypoints = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=w.tolist()) for w in W])
    timing = srv.TimeParameterize.Request(waypoints=waypoints, gridpoints=int(os.environ.get("FUZZ_GRID", "10000")))
    timed = JointTrajectory(joint_names=names)
    for k, w in enumerate(W):
        point = JointTrajectoryPoint(positions=w.tolist(), velocities=[0.0] * len(names))
        point.time_from_start.sec = k
        timed.points.append(point)
    check = srv.CheckTrajectory.Request(trajectory=timed, sample_period=len(W) / 199_000)
    ik = srv.InverseKinematics.Request(frame=model.frame_names[-1], position_only=True, restarts=1000,
                                       max_iterations=100)
    ik.target.pose.position.x = 100.0
    good = srv.InverseDynamics.Request(joint_names=names, positions=W[0].tolist())
    huge = srv.InverseDynamics.Request(joint_names=names, positions=[1e300] * len(names))
    long_names = srv.InverseDynamics.Request(joint_names=["x" * 10000] * len(names), positions=[0.0] * len(names))
    return [("time_parameterize", srv.TimeParameterize, timing), ("check_trajectory", srv.CheckTrajectory, check),
            ("inverse_kinematics", srv.InverseKinematics, ik)], [good, huge, long_names]


def fuzz_client(ns, seconds):
    """The fuzzer (a process of its own): heavy requests kept at three in flight (the queue holds two: the
    third is refused), bursts of inverse dynamics; prints a JSON line of what was answered."""
    import json
    from robot_dynamics import load_urdf
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("fuzzer", namespace=ns)
    heavy, light = fuzz_requests(load_urdf("puma560"))
    clients = {name: node.create_client(kind, f"robot_dynamics/{name}") for name, kind, _ in heavy}
    dynamics = node.create_client(srv.InverseDynamics, "robot_dynamics/inverse_dynamics")
    for client in [*clients.values(), dynamics]:
        client.wait_for_service(timeout_sec=30.0)
    counts = {"heavy answered": 0, "heavy busy": 0, "heavy refused otherwise": 0, "dynamics answered": 0,
              "dynamics refused": 0, "dynamics unanswered within 3 s": 0}
    inflight, k, end = [], 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        while len(inflight) < 3:
            name, _, request = heavy[k % len(heavy)]
            inflight.append(clients[name].call_async(request))
            k += 1
        burst = [dynamics.call_async(light[j % len(light)]) for j in range(FUZZ_BURST)]
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 3.0 and not all(f.done() for f in burst):
            rclpy.spin_once(node, timeout_sec=0.01)
        for f in burst:
            if not f.done():
                counts["dynamics unanswered within 3 s"] += 1
                dynamics.remove_pending_request(f)
            else:
                counts["dynamics answered" if f.result().success else "dynamics refused"] += 1
        for f in [f for f in inflight if f.done()]:
            message = f.result().message
            counts["heavy busy" if "busy" in message else "heavy answered" if f.result().success or
                   "converge" in message or "iteration" in message or "stalled" in message
                   else "heavy refused otherwise"] += 1
            inflight.remove(f)
    print(json.dumps(counts), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


def print_windows(rows):
    """The load at the end and a table row per (label, stream result) window (--goals, --fuzz)."""
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| window | sent | dropped | p50 ms | p99 ms | max ms | node CPU % | other CPU % | sender late max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in rows:
        print(f"| {label} | {r['sent']} | {r['dropped']} | {fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | "
              f"{fmt_ms(r['max'])} | {r['child_cpu']:.0f} | {r['other_cpu']:.0f} | {r['late_max_ms']:.1f} |")


def fuzz(seconds):
    """The node (PUMA 560) at 1 kHz, quiet and under the fuzz: p99, drops, memory."""
    import json
    from robot_dynamics import load_urdf
    ns = f"/fuzz_{os.getpid()}"
    print(f"# robot_dynamics node under the largest allowed requests\n\n{machine_facts()}")
    print(scheduling_jitter())
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    rows = []
    try:
        names = load_urdf("puma560").joint_names
        msgs = joint_state_messages(names)
        proc = start([sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}",
                      "-p", "urdf_file:=puma560"], "fuzz")
        try:
            bench.listen("robot_dynamics/gravity_torques")
            bench.connect(proc, msgs[0])
            rss = [resident_mb(proc.pid)]
            heavy = [resident_mb(proc.pid, children=True)]
            rows.append(("quiet", bench.stream(msgs, 1000, seconds, 1.0, proc.pid)))
            rss.append(resident_mb(proc.pid))
            fuzzer = start([sys.executable, os.path.abspath(__file__), "--fuzz-client", ns, "--fuzz", str(seconds + 4)],
                           "fuzzer")
            try:
                rows.append(("fuzz", bench.stream(msgs, 1000, seconds, 3.0, proc.pid)))
                fuzzer.wait(60)
                with open(fuzzer.log_path) as f:
                    counts = json.loads([line for line in f if line.startswith("{")][-1])
            finally:
                stop(fuzzer)
            rss.append(resident_mb(proc.pid))
            bench.spin_for(3.0)
            rss.append(resident_mb(proc.pid))
            heavy.append(resident_mb(proc.pid, children=True))
            rows.append(("quiet again", bench.stream(msgs, 1000, seconds, 1.0, proc.pid)))
        finally:
            stop(proc)
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()
    print_windows(rows)
    quiet, loaded = rows[0][1], rows[1][1]
    print(f"\np99 under the fuzz {loaded['p99'] - quiet['p99']:+.3f} ms over the quiet p99 (target: within 1 ms); "
          f"dropped {loaded['dropped']} of {loaded['sent']} (target: 0).")
    print("Requests during the fuzz: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + ".")
    print(f"Node resident memory: {rss[0]:.1f} MB at the start, {rss[1]:.1f} MB after the quiet window, "
          f"{rss[2]:.1f} MB right after the fuzz, {rss[3]:.1f} MB 3 s later ({100 * (rss[3] / rss[1] - 1):+.1f} % of "
          "the start; target: within 10 %).")
    print(f"Its heavy-request process (a child, counted in the node's CPU above): {heavy[0]:.1f} MB at the start, "
          f"{heavy[1]:.1f} MB 3 s after the fuzz.")
    busy = [label for label, r in rows if r["other_cpu"] > BUSY_OTHER_CPU + (100 if label == "fuzz" else 0)
            or r["send_rate"] < 990]
    if busy:
        print(f"**The machine was busy** in: {', '.join(busy)} (other processes beyond the fuzzer > "
              f"{BUSY_OTHER_CPU} % of a core, or the bench's own sends fell behind).")
    return 0

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=10.0, help="measured seconds per stream (default 10)")
    ap.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each stream")
    ap.add_argument("--calls", type=int, default=1000, help="sequential service calls per robot")
    ap.add_argument("--rates", default="1000,750,500,333,250,100",
                    help="rates tried for talos, highest first, until one has no drops")
    ap.add_argument("--soak", type=float, metavar="SECONDS",
                    help="instead: stream to the node (panda) at 1 kHz for SECONDS, in one-minute windows")
    ap.add_argument("--observer", type=int, metavar="REPEATS",
                    help="instead: only the observer comparison (floor, observer off, on), REPEATS times")
    ap.add_argument("--startup", type=int, metavar="REPEATS",
                    help="instead: start-up times with a warm and a cold numba cache, REPEATS times")
    ap.add_argument("--five-bar", type=int, metavar="REPEATS",
                    help="only the five-bar's in-process callback (closed chain vs plain), that many rounds")
    ap.add_argument("--callback", type=int, metavar="REPEATS",
                    help="only: the joint_states callback in-process, panda and talos + free flyer, that many rounds")
    ap.add_argument("--trajectory", type=int, metavar="REPEATS",
                    help="instead: the joint_states callback with a trajectory vs a one-point reference, in-process")
    ap.add_argument("--goals", type=int, metavar="REPEATS",
                    help="instead: joint_states windows without and with ~/follow_joint_trajectory goals, REPEATS each")
    ap.add_argument("--goals-callback", type=int, metavar="REPEATS",
                    help="instead: the joint_states callback in-process without and with goals prepared, REPEATS each")
    ap.add_argument("--identify", type=int, metavar="REPEATS",
                    help="instead: latency at 1 kHz without and during ~/identify_dynamics, REPEATS times in turn")
    ap.add_argument("--identify-callback", type=int, metavar="REPEATS",
                    help="instead: the callback in-process without and during identification, REPEATS rounds each")
    ap.add_argument("--fuzz", type=float, metavar="SECONDS",
                    help="instead: the joint_states path quiet and under the largest allowed requests, SECONDS each")
    ap.add_argument("--fuzz-client", metavar="NS", help=argparse.SUPPRESS)
    ap.add_argument("--echo", metavar="NS", help=argparse.SUPPRESS)
    ap.add_argument("--controller", metavar="NS", help=argparse.SUPPRESS)
    ap.add_argument("--send-goals", metavar="NS", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.echo:
        return echo_main(args.echo)
    if args.fuzz_client:
        return fuzz_client(args.fuzz_client, args.fuzz)
    if args.fuzz:
        return fuzz(args.fuzz)
    if args.controller:
        return controller_main(args.controller)
    if args.send_goals:
        return goals_main(args.send_goals)
    if args.goals:
        return goals(args.goals, args.duration, args.warmup)
    if args.goals_callback:
        return goals_callback(args.goals_callback)
    if args.startup:
        return startup(args.startup)
    if args.soak:
        return soak(args.soak)
    if args.trajectory:
        return trajectory_reference(args.trajectory)
    if args.callback:
        return callback_timing(args.callback)
    if args.identify:
        return identification_latency(args.duration, args.warmup, args.identify)
    if args.identify_callback:
        return identification_callback(args.identify_callback)
    if args.observer:
        return observer_only(args.duration, args.warmup, args.observer)
    if args.five_bar:
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        try:
            print_five_bar_callback(five_bar_callback(repeats=args.five_bar), 20000, args.five_bar)
        finally:
            rclpy.try_shutdown()
        return 0

    from robot_dynamics import load_urdf
    import logging
    logging.disable(logging.WARNING)        # the URDF loader's inertia warnings for talos
    ns = f"/bench_{os.getpid()}"
    rates = [int(r) for r in args.rates.split(",")]
    cases = [  # label, urdf, floating base
        ("panda", PANDA, False),
        ("talos_reduced + free flyer", TALOS, True),
    ]
    print(f"# robot_dynamics node benchmark\n\n{machine_facts()}")
    print(scheduling_jitter())
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, namespace {ns}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n", flush=True)

    # Ctrl-C / SIGTERM: plain Python exceptions, so the finally blocks stop the children
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    bench = Bench(ns)
    streams, services, talos_rates, observer_rows = [], [], [], []
    try:
        # floor: bare rclpy echo, panda-sized message
        proc = start([sys.executable, os.path.abspath(__file__), "--echo", ns], "echo")
        try:
            names = load_urdf(PANDA).joint_names
            msgs = joint_state_messages(names)
            bench.listen("echo/out")
            bench.connect(proc, msgs[0])
            print(f"echo floor: streaming at 1000 Hz for {args.duration} s ...", flush=True)
            r = bench.stream(msgs, 1000, args.duration, args.warmup, proc.pid)
            streams.append(("rclpy echo (floor)", len(names), r))
            client = bench.node.create_client(srv.InverseDynamics, "echo/inverse_dynamics")
            services.append(("rclpy echo (floor)", bench.calls(client, id_request(names, False), args.calls, proc.pid)))
            bench.node.destroy_client(client)
        finally:
            stop(proc)

        for label, urdf, floating in cases:
            names = load_urdf(urdf, floating_base=floating).joint_names
            msgs = joint_state_messages(names)
            cmd = [sys.executable, "-m", "robot_dynamics.ros", "--ros-args", "-r", f"__ns:={ns}",
                   "-p", f"urdf_file:={urdf}"] + (["-p", "floating_base:=true"] if floating else [])
            proc = start(cmd, label.split()[0])
            try:
                bench.listen("robot_dynamics/gravity_torques")
                bench.connect(proc, msgs[0])
                for rate in ([1000] if not floating else rates):
                    print(f"{label}: streaming at {rate} Hz for {args.duration} s ...", flush=True)
                    r = bench.stream(msgs, rate, args.duration, args.warmup, proc.pid)
                    if proc.poll() is not None:
                        raise RuntimeError(f"node exited with {proc.returncode}:\n{log_tail(proc)}")
                    if rate == 1000:
                        streams.append((label, len(names), r))
                    if floating:
                        talos_rates.append(r)
                        if r["dropped"] == 0 and r["send_rate"] >= 0.99 * rate:
                            break
                client = bench.node.create_client(srv.InverseDynamics, "robot_dynamics/inverse_dynamics")
                services.append((label, bench.calls(client, id_request(names, floating), args.calls, proc.pid)))
                bench.node.destroy_client(client)
            finally:
                stop(proc)
        observer_rows = observer_comparison(bench, ns, args.duration, args.warmup, 1)
        five_bar = five_bar_callback()
    finally:
        bench.node.destroy_node()
        rclpy.try_shutdown()
        stop_all()

    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(f"### joint_states -> gravity_torques ({args.duration:g} s measured after {args.warmup:g} s warm-up)\n")
    print("| node | joints | target Hz | achieved send Hz | sent | dropped | p50 ms | p99 ms | max ms "
          "| node callback mean / max us | CPU % node / bench / other | sender late max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = [(label, n, r) for label, n, r in streams]
    rows += [("talos_reduced + free flyer", rows[-1][1], r) for r in talos_rates if r["rate"] != 1000]
    for label, n, r in rows:
        print(f"| {label} | {n} | {r['rate']} | {r['send_rate']:.1f} | {r['sent']} | {r['dropped']} | "
              f"{fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | {fmt_ms(r['max'])} | "
              + ("-" if np.isnan(r["cb_mean_us"]) else f"{r['cb_mean_us']:.0f} / {r['cb_max_us']:.0f}")
              + f" | {r['child_cpu']:.0f} / {r['bench_cpu']:.0f} / {r['other_cpu']:.0f} | {r['late_max_ms']:.1f} |")
    floor = streams[0][2]
    print("\nOver the floor at 1 kHz: " + "; ".join(
        f"{label} p50 {r['p50'] - floor['p50']:+.3f} ms, p99 {r['p99'] - floor['p99']:+.3f} ms, "
        f"node CPU {r['child_cpu'] - floor['child_cpu']:+.0f} %" for label, _, r in streams[1:]) + ".")
    print("Node callback: the node's own /diagnostics (on_joint_states body: gravity + publish).  CPU: % of one "
          f"core over the window; 'other' = the rest of the machine ({os.cpu_count()} cores = "
          f"{100 * os.cpu_count()} %).  Sender late: how late the bench's own worst send was (machine stalls).")
    print(f"\n### InverseDynamics service round trip ({args.calls} sequential calls)\n")
    print("| server | p50 ms | p99 ms | max ms | CPU % server / bench / other |")
    print("|---|---:|---:|---:|---:|")
    for label, r in services:
        print(f"| {label} | {fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | {fmt_ms(r['max'])} | "
              f"{r['child_cpu']:.0f} / {r['bench_cpu']:.0f} / {r['other_cpu']:.0f} |")
    busy = [f"{label} @ {r['rate']} Hz" for label, _, r in rows
            if r["other_cpu"] > BUSY_OTHER_CPU or r["send_rate"] < 0.99 * r["rate"]]
    busy += [f"{label} service" for label, r in services if r["other_cpu"] > BUSY_OTHER_CPU]
    if busy:
        print(f"\n**The machine was busy** (other processes > {BUSY_OTHER_CPU} % of a core, or the bench's own "
              f"sends fell behind: a stall) during: {', '.join(busy)}.  Repeat the run before quoting these numbers.")

    print_observer_rows(observer_rows, args.duration)
    print_five_bar_callback(five_bar, 20000, 5)
    trajectory_reference(3)

    print("\n### targets\n")
    arm = streams[1][2]
    sustained = [r["rate"] for r in talos_rates if r["dropped"] == 0 and r["send_rate"] >= 0.99 * r["rate"]]
    best = max(sustained) if sustained else None

    def met(ok):
        return "met" if ok else "NOT met"
    print(f"- arm at 1 kHz: p99 {fmt_ms(arm['p99'])} ms < 1 ms and no drops ({arm['dropped']}): "
          f"{met(arm['p99'] < 1.0 and arm['dropped'] == 0 and arm['send_rate'] >= 990)}")
    print(f"- humanoid sustains >= 500 Hz: highest rate without drops "
          f"{f'{best} Hz' if best else f'none of {rates}'}{' (highest tried)' if best == max(rates) else ''}: "
          f"{met(best is not None and best >= 500)}")
    for label, r in services[1:]:
        print(f"- {label} service p50 {fmt_ms(r['p50'])} ms < 1 ms: {met(r['p50'] < 1.0)}")
    return 0


if __name__ == "__main__":
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)   # even if started with SIGINT ignored
    try:
        sys.exit(main())
    finally:
        stop_all()
