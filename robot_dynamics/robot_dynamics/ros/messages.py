"""Messages <-> model arrays: joint names to coordinates, the root's pose and twist, wrenches. Plain
Python on the messages' fields (no rclpy): tested without DDS."""
import array
import math
from collections import Counter

import numpy as np

from .. import dynamics as rd
from ..model import REFERENCES


#: the largest magnitude of a number in a request (rad, m, rad/s, N m, ...): beyond it the request is
#: refused naming its field (the library's own limit, 1e50, would name the library's argument instead)
MAGNITUDE = 1e9
#: characters of a request's string quoted back in an error (the rest is counted, not echoed)
QUOTE = 64


def quoted(text):
    """repr of a request's string, at most QUOTE characters of it."""
    text = str(text)
    if len(text) <= QUOTE:
        return repr(text)
    return f"{text[:QUOTE]!r}... ({len(text)} characters)"


def quoted_list(names, most=8):
    """A list of a request's strings for an error: the first `most`, each quoted()."""
    names = list(names)
    shown = ", ".join(quoted(n) for n in names[:most])
    return f"[{shown}{f', ... ({len(names)} in all)' if len(names) > most else ''}]"


def at_most(count, limit, field):
    """ValueError naming the field if a request's list or number exceeds its limit."""
    if count > limit:
        raise ValueError(f"{field} has {count} entries: at most {limit}")


def bounded(x, field, names=None):
    """x (an array) with no NaN or inf and nothing beyond MAGNITUDE; else ValueError naming the field
    (and the joint, `names` given per column)."""
    x = np.asarray(x, dtype=float)
    bad = np.flatnonzero(~(np.abs(x) <= MAGNITUDE).reshape(-1))
    if len(bad):
        joint = names[bad[0] % len(names)] if names is not None and len(names) else None
        raise ValueError(f"{field} contains {magnitude_problem(x.reshape(-1)[bad[0]], joint)}")
    return x


def magnitude_problem(value, joint=None, limit=MAGNITUDE):
    """What is wrong with a number beyond `limit` or not finite, for '<field> contains ...'."""
    where = f" (joint {joint!r})" if joint is not None else ""
    if not np.isfinite(value):
        return f"NaN or inf{where}"
    return f"{value:g}{where}: too large (at most {limit:g} in magnitude)"


def frame_of(model, name, field):
    """model.frame(name) for a request's field; the error quotes the name at most QUOTE characters long."""
    try:
        return model.frame(name)
    except KeyError:
        raise ValueError(f"{field}: unknown frame {quoted(name)}; the model has frames "
                         f"{', '.join(model.frame_names)}") from None


def duplicates(names):
    """The names that come more than once, sorted (linear in the names)."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def error_text(exc):
    """An exception's message (a KeyError's without the quotes repr adds)."""
    return exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)


def finite(values, what):
    """values as a float array: finite and within MAGNITUDE, else ValueError naming `what`."""
    return bounded(np.array(values, dtype=float), what)


def twist(msg):
    """Twist / Accel / Wrench message -> [linear; angular] (or [force; torque])."""
    a, b = (msg.linear, msg.angular) if hasattr(msg, "linear") else (msg.force, msg.torque)
    return [a.x, a.y, a.z, b.x, b.y, b.z]


def set_twist(msg, x):
    a, b = (msg.linear, msg.angular) if hasattr(msg, "linear") else (msg.force, msg.torque)
    a.x, a.y, a.z, b.x, b.y, b.z = map(float, x)


def is_default_pose(pose):
    """A Pose message left as constructed (origin, unrotated): 'not given'."""
    p, o = pose.position, pose.orientation
    return (p.x, p.y, p.z, o.x, o.y, o.z, o.w) == (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def root_link(model):
    """The link a floating or planar root joint moves: where ~/base_pose and the base twist apply."""
    return model.body_links[0][0]


def root_coordinates(model, pose, what="base_pose"):
    """A Pose of the root link in the world -> the root joint's coordinates (a floating root's
    quaternion normalised, a planar root's pose checked to lie in its plane); ValueError naming
    `what` otherwise."""
    p, o = pose.position, pose.orientation
    try:
        return rd.root_coordinates(model, [p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
    except ValueError as exc:      # "position ..." / "orientation ...": named as the message's fields
        text = str(exc)
        raise ValueError(f"{what}.{text}" if text.startswith(("position", "orientation")) else f"{what}: {text}") from None


def check_names(names, model, what, complete=True, optional=None):
    """Duplicate, unknown and (if complete) missing joint names, each named in the error; optional: a
    mask over the model's joints that may be missing (a closed chain's loop joints)."""
    unknown = [n for n in names if n not in model.joint_index]
    if unknown:
        raise ValueError(f"{what}: unknown joints {quoted_list(unknown)}; the model's joints are {model.joint_names}")
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: duplicate joint names {duplicates(names)}")
    missing = [n for k, n in enumerate(model.joint_names)
               if n not in names and (optional is None or not optional[k])] if complete else []
    if missing:
        raise ValueError(f"{what}: missing joints {missing}")


class RequestState:
    """The arrays of one request, mapped by joint name into model coordinates. The root joint (a
    floating or planar base) takes the request's base fields; an unset base_pose leaves it at its
    neutral configuration."""

    def __init__(self, model, joint_names, optional=None):
        self.model = model
        self.names = list(joint_names) or list(model.joint_names)
        check_names(self.names, model, "joint_names", optional=optional)
        qo, vo = model.joint_offset
        idx = np.array([model.joint_index[n] for n in self.names], dtype=np.intp)
        self.iq, self.iv = qo + idx, vo + idx
        self.root = model.root_joint

    def joint_array(self, values, field, optional=True):
        x = np.asarray(values, dtype=float)
        if optional and len(x) == 0:
            return np.zeros(len(self.names))
        if len(x) != len(self.names):
            raise ValueError(f"{field} has {len(x)} values for {len(self.names)} joints")
        return bounded(x, field, self.names)

    def q(self, positions, pose=None):
        q = rd.neutral(self.model)
        q[self.iq] = self.joint_array(positions, "positions", optional=False)
        if self.root is not None and pose is not None and not is_default_pose(pose):
            q[:self.root.nq] = root_coordinates(self.model, pose)
        return q

    def v(self, values, field, base=None):
        v = np.zeros(self.model.nv)
        v[self.iv] = self.joint_array(values, field)
        if self.root is not None and base is not None:
            try:
                v[:self.root.nv] = rd.root_twist_coordinates(self.model, finite(twist(base), f"base {field}"))
            except ValueError as exc:
                raise ValueError(f"base {field}: {exc}") from None
        return v

    def out(self, x):
        """Model-order vector -> array.array in request order."""
        return array.array("d", x[self.iv].tobytes())

    def set_base(self, msg, x):
        """The root joint's part of model-order vector x into a Twist / Accel / Wrench message."""
        if self.root is not None:
            set_twist(msg, rd.root_twist(self.model, x[:self.root.nv]))


def external_wrenches(model, link_wrenches):
    """LinkWrench[] -> {frame: (wrench, reference)}, every link and reference checked."""
    out = {}
    at_most(len(link_wrenches), len(model.frame_names), "external_wrenches")
    for lw in link_wrenches:
        frame_of(model, lw.link, "external_wrenches")
        reference = lw.reference or "local_world_aligned"
        if reference not in REFERENCES:
            raise ValueError(f"external wrench on {lw.link!r}: reference must be one of "
                             f"{', '.join(REFERENCES)}, got {quoted(lw.reference)}")
        if lw.link in out:
            raise ValueError(f"external_wrenches names link {lw.link!r} twice; give one wrench per link")
        out[lw.link] = (finite(twist(lw.wrench), f"external wrench on {lw.link!r}"), reference)
    return out


#: numeric fields of the services' responses: all must be finite for success=true
RESPONSE_ARRAYS = ("efforts", "accelerations", "jacobian")
RESPONSE_TWISTS = ("base_wrench", "base_acceleration")


def check_response_finite(response):
    """ValueError if a number of the response is NaN or inf (a finite request can overflow)."""
    for field in RESPONSE_ARRAYS:
        if hasattr(response, field) and not math.isfinite(sum(getattr(response, field))):
            raise ValueError(f"the {field} computed are not finite (the request's values are too large)")
    for field in RESPONSE_TWISTS:
        if hasattr(response, field) and not math.isfinite(sum(twist(getattr(response, field)))):
            raise ValueError(f"the {field} computed is not finite (the request's values are too large)")
