"""Heavy requests in a process of their own (no rclpy): `Worker`, a child of the node that runs the
requests submitted with process=True (work.py: identification's fits, the excitation search, the IK
search's restarts), so that their Python never takes the interpreter lock the joint_states thread
needs: the child has its own.

    worker = Worker("heavy", shared=(Model, Config))   # the child starts at the first call
    result = worker.call(label, fn, args)              # fn(*args) in the child; this thread waits
    worker.stop()                                      # the child ends (killed if it does not at once)

What crosses: fn by reference (a module-level function), its arguments and its result pickled
(protocol 5). Objects of the `shared` types (the model, the configuration) are sent once and then named
by a key (pickle's persistent ids; the child keeps the last KEPT), so a request costs its own fields.
Joint trajectories are pickled as columns and rebuilt point by point in Python (`copyreg`): unpickled
by pickle's C loop, a 10000-point answer held the node's interpreter lock ~175 ms at a stretch; rebuilt
in Python the joint_states thread takes the lock in between (sys.setswitchinterval, ros/work.py), and
in a third of the time.

The child (`python -m robot_dynamics.ros.worker`, the node's interpreter and sys.path; the node's first one
is forked from it before rclpy loads, with the library already imported: prefork.py) runs at the
niceness HEAVY_NICE (environment variable ROBOT_DYNAMICS_HEAVY_NICE, default 10: the kernel's
scheduler gives the node's threads the cores first), its batches
on every core but one (ROBOT_DYNAMICS_THREADS, unless set), ignores SIGINT (a terminal's Ctrl-C goes
to the node, which stops it), and ends with its parent (PR_SET_PDEATHSIG) or when its stdin closes. If
it dies (killed, out of memory), the request running fails naming the exit code and the next call
starts a new one."""
import array
import copyreg
import ctypes
import ctypes.util
import io
import itertools
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections import OrderedDict

from .work import malloc_trim

PROTOCOL = 5
#: shared objects (models, configurations) the child keeps, the most recently used
KEPT = 8
#: the child's niceness unless ROBOT_DYNAMICS_HEAVY_NICE says otherwise (0-19). Not the lowest: at 19
#: (or SCHED_IDLE) a machine kept busy by other work (a simulator, a test suite) starved the requests
#: (an IK request waited > 7 s); at 10 one gets ~1/10 of a core against each busy one
HEAVY_NICE = 10
_LENGTH = struct.Struct("<Q")


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc() if sys.platform.startswith("linux") else None


def niceness():
    """The child's niceness: ROBOT_DYNAMICS_HEAVY_NICE (an integer 0-19), else HEAVY_NICE."""
    text = os.environ.get("ROBOT_DYNAMICS_HEAVY_NICE", "")
    if not text:
        return HEAVY_NICE
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 19:
        raise ValueError(f"ROBOT_DYNAMICS_HEAVY_NICE must be an integer 0 to 19, got {text!r}")
    return value


def batch_threads():
    """The child's batch threads unless ROBOT_DYNAMICS_THREADS says: every core but one (one stays for
    the joint_states path)."""
    return str(max(1, (os.cpu_count() or 1) - 1))


# --- trajectories, pickled as columns ------------------------------------------------------------------
#: a JointTrajectoryPoint's sequence fields, its slots
_FIELDS = ("_positions", "_velocities", "_accelerations", "_effort")


def _reduce_trajectory(msg):
    """A JointTrajectory as its header, joint names and columns: each field of every point in one bytes
    object with the points' lengths, the times in one array."""
    points = msg.points
    fields = []
    for name in _FIELDS:
        arrays = [getattr(p, name) for p in points]
        fields.append((array.array("q", map(len, arrays)), b"".join(arrays)))
    times = array.array("q", [x for p in points for x in (p.time_from_start.sec, p.time_from_start.nanosec)])
    return _trajectory, (msg.header, msg.joint_names, fields, times)


def _trajectory(header, joint_names, fields, times):
    """The JointTrajectory _reduce_trajectory took apart, its points' slots filled directly: the generated
    constructor and setters (type checks, four new arrays and a Duration a point) took ~30 us a point, most
    of the node's time on a 10000-point answer. A Python loop, so the interpreter lock changes hands
    between points (one C call of pickle's held it ~175 ms for that answer)."""
    msg = _TRAJECTORY(header=header, joint_names=joint_names)
    columns = []
    for lengths, data in fields:
        column, start = [], 0
        for n in lengths:
            values = array.array("d")
            values.frombytes(data[start:start + 8 * n])
            column.append(values)
            start += 8 * n
        columns.append(column)
    new, check, point_type, duration_type = object.__new__, _CHECK, _POINT, _DURATION
    points = []
    for k, (positions, velocities, accelerations, effort) in enumerate(zip(*columns)):
        p, d = new(point_type), new(duration_type)
        d._sec, d._nanosec, d._check_fields = times[2 * k], times[2 * k + 1], check
        p._positions, p._velocities, p._accelerations, p._effort = positions, velocities, accelerations, effort
        p._time_from_start, p._check_fields = d, check
        points.append(p)
    msg.points = points
    return msg


_TRAJECTORY = _POINT = _DURATION = _CHECK = None


def register_reducers():
    """Joint trajectories pickled by `_reduce_trajectory`/`_trajectory` in this process; a no-op
    without trajectory_msgs."""
    global _TRAJECTORY, _POINT, _DURATION, _CHECK
    try:
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    except ImportError:
        return
    _TRAJECTORY, _POINT, _DURATION = JointTrajectory, JointTrajectoryPoint, Duration
    _CHECK = JointTrajectoryPoint()._check_fields
    copyreg.pickle(JointTrajectory, _reduce_trajectory)


# --- messages: pickles and their out-of-band buffers, each a length and its bytes ----------------------
def _send(stream, parts, buffers=()):
    """One message: `parts` (pickles) and `buffers` (protocol 5's out-of-band buffers: an array's memory
    written as it is, no copy into the pickle; the pipe's writes release the interpreter lock)."""
    stream.write(_LENGTH.pack(len(parts)) + _LENGTH.pack(len(buffers)))
    for part in (*parts, *buffers):
        view = memoryview(part).cast("B")
        stream.write(_LENGTH.pack(view.nbytes))
        stream.write(view)
    stream.flush()


def _exactly(stream, size):
    """size bytes from the stream (a bytearray: the arrays made on it are writable), or None at its end."""
    data, got = bytearray(size), 0
    view = memoryview(data)
    while got < size:
        n = stream.readinto(view[got:])
        if not n:
            return None
        got += n
    return data


def _receive(stream):
    """(parts, buffers) of the next message, or None at the end of the stream."""
    head = _exactly(stream, 2 * _LENGTH.size)
    if head is None:
        return None
    n_parts, n_buffers = _LENGTH.unpack_from(head), _LENGTH.unpack_from(head, _LENGTH.size)
    items = []
    for _ in range(n_parts[0] + n_buffers[0]):
        size = _exactly(stream, _LENGTH.size)
        item = None if size is None else _exactly(stream, _LENGTH.unpack(size)[0])
        if item is None:
            return None
        items.append(item)
    return items[:n_parts[0]], items[n_parts[0]:]


def _dumps(obj, persistent_id=None):
    """(pickle, out-of-band buffers) of obj."""
    data, buffers = io.BytesIO(), []
    pickler = pickle.Pickler(data, PROTOCOL, buffer_callback=buffers.append)
    if persistent_id is not None:
        pickler.persistent_id = persistent_id
    pickler.dump(obj)
    return data.getbuffer(), [b.raw() for b in buffers]


def _loads(data, cache, buffers=()):
    unpickler = pickle.Unpickler(io.BytesIO(data), buffers=buffers)
    unpickler.persistent_load = cache.__getitem__
    return unpickler.load()


def _sendable(exc):
    """exc if it survives pickling (its type rebuilt from its args), else a RuntimeError with its text."""
    try:
        back = pickle.loads(pickle.dumps(exc, PROTOCOL))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:
        pass
    return RuntimeError(f"{type(exc).__name__}: {exc}")


# --- the parent's side ---------------------------------------------------------------------------------------
class WorkerDied(RuntimeError):
    """The child ended while a request ran (killed, out of memory); the next call starts a new one."""


class Worker:
    """The child process, started at the first call; one call at a time (HeavyWork's thread)."""

    def __init__(self, name="heavy", shared=(), first=None):
        self.name, self.shared = name, frozenset(shared)
        self._proc = first      # a child already started (prefork.py), else None: started at the first call
        self._lock = threading.Lock()
        self._keys = OrderedDict()      # id(obj) -> (key, obj) the child holds, oldest first
        self._count = itertools.count(1)
        self._forget = []               # keys the child is to drop with the next call
        self._pending = self._defs = self._defining = None
        register_reducers()

    @property
    def pid(self):
        proc = self._proc
        return None if proc is None else proc.pid

    def call(self, label, fn, args):
        """fn(*args) in the child: its result, or its exception raised here (WorkerDied if the child
        ended meanwhile). This thread waits, without the interpreter lock, until the answer comes."""
        with self._lock:
            proc = self._start()
            self._pending, self._defs = {}, []
            try:
                payload, buffers = _dumps((fn, args), self._persistent_id)
                header = pickle.dumps((self._defs, self._forget), PROTOCOL)
                pending = self._pending
            finally:
                self._pending = self._defs = None
            try:
                _send(proc.stdin, (header, payload), buffers)
            except OSError:
                reply = None
            else:
                self._forget = []
                self._keys.update(pending)
                while len(self._keys) > KEPT:
                    self._forget.append(self._keys.popitem(last=False)[1][0])
                reply = _receive(proc.stdout)
            if reply is None:
                code = self._ended(proc)
                raise WorkerDied(f"{label}: the worker process ended while it ran ({code}); the next request "
                                 f"starts a new one")
            ok, value, alive = pickle.loads(reply[0][0], buffers=reply[1])
            if not alive:       # the child could not take the shared objects and has ended
                self._ended(proc)
        if ok:
            return value
        raise value

    def stop(self, timeout=2.0):
        """End the child: its stdin closed, killed if it has not ended within `timeout` s (a request
        running cannot be interrupted otherwise)."""
        proc = self._proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with self._lock:
            if self._proc is proc:
                self._ended(proc)

    def _start(self):
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:
            self._ended(proc)
        import robot_dynamics
        root = os.path.dirname(os.path.dirname(os.path.abspath(robot_dynamics.__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["ROBOT_DYNAMICS_HEAVY_NICE"] = str(niceness())     # checked here: a bad value fails the call
        env.setdefault("ROBOT_DYNAMICS_THREADS", batch_threads())
        self._proc = subprocess.Popen([sys.executable, "-m", "robot_dynamics.ros.worker", self.name],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        return self._proc

    def _ended(self, proc):
        """What the child's end was (its exit code or signal); what it held is forgotten."""
        try:
            proc.stdin.close()
        except OSError:
            pass
        code = proc.wait()
        proc.stdout.close()
        self._proc = None
        self._keys.clear()
        self._forget = []
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def _persistent_id(self, obj):
        if type(obj) not in self.shared or obj is self._defining:
            return None
        entry = self._keys.get(id(obj)) or self._pending.get(id(obj))
        if entry is not None and entry[1] is obj:
            if id(obj) in self._keys:
                self._keys.move_to_end(id(obj))
            return entry[0]
        key = next(self._count)
        outer, self._defining = self._defining, obj
        try:                # nested shared objects (the configuration's model) are defined first
            data = io.BytesIO()
            pickler = pickle.Pickler(data, PROTOCOL)
            pickler.persistent_id = self._persistent_id
            pickler.dump(obj)
        finally:
            self._defining = outer
        self._defs.append((key, data.getvalue()))
        self._pending[id(obj)] = (key, obj)
        return key


# --- the child ------------------------------------------------------------------------------------------------
def _die_with_parent():
    if _LIBC is not None:
        _LIBC.prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG


def main(argv=None, inp=None, out=None):
    """The child's loop: a call per message on stdin (the definitions, then fn and args, and their
    buffers), its answer (ok, result or exception, alive) on the stdout it was started with (or on
    the streams `inp` and `out`: a child forked by `prefork`)."""
    parent = os.getppid()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent:
        return 0
    os.nice(niceness())
    register_reducers()
    inp = sys.stdin.buffer if inp is None else inp
    out = os.fdopen(os.dup(1), "wb") if out is None else out
    os.dup2(2, 1)               # print() and numba's warnings go to stderr, not into the answers
    cache = {}
    while True:
        message = _receive(inp)
        if message is None:
            return 0
        (header, payload), buffers = message
        alive = True
        try:
            defs, forget = pickle.loads(header)
            for key in forget:
                cache.pop(key, None)
            try:
                for key, data in defs:
                    cache[key] = _loads(data, cache)
            except BaseException:
                alive = False
                raise
            fn, args = _loads(payload, cache, buffers)
            del message, buffers
            answer = (True, fn(*args), True)
            del fn, args
        except BaseException as exc:    # noqa: B036 (sent to the caller, never lost)
            answer = (False, _sendable(exc), alive)
        try:
            data = _dumps(answer)
        except Exception as exc:
            data = _dumps((False, RuntimeError(f"the answer could not be sent back: {exc}"), alive))
        del answer
        _send(out, (data[0],), data[1])
        del data
        malloc_trim(0)
        if not alive:
            return 1


if __name__ == "__main__":     # the module's own functions (not __main__'s) pickle the points by name
    from robot_dynamics.ros.worker import main as child_main
    sys.exit(child_main())
