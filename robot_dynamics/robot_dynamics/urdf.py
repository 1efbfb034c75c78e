"""URDF (or xacro) -> Model: parse, validate, lump fixed joints into their parent body.

Accepts what urdfdom (and so RViz, robot_state_publisher and Pinocchio) accepts: XML is read
as urdfdom's TinyXML reads it (no namespace processing, whatever the XML declaration says).
Refused, with a message naming the link or joint and its line: what is meaningless (unknown
links, cycles, a zero axis, negative or non-finite mass, non-numbers). Warned about, and
refused with strict=True: what is suspect but loads (non-physical inertias, lower limit
above upper, a mimic of a joint the model does not have).
"""
import logging
import math
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from .model import (FREE, PLANAR, PRISMATIC, REVOLUTE, Frame, Joint, Model, inertia_about_origin,
                    transform_inertia)
from .resources import MODELS, urdf_file
from .urdf_dynamics import joint_dynamics, set_joint_dynamics

log = logging.getLogger("robot_dynamics.urdf")

MOVING = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
          "planar": PLANAR, "floating": FREE}
MULTI = ("planar", "floating")
NQ = {"planar": 3, "floating": 7}
NV = {"planar": 3, "floating": 6}
#: an inertia's principal moment counts as negative below -(REL * largest + ABS) [kg m^2]
INERTIA_TOL_REL, INERTIA_TOL_ABS = 1e-6, 1e-12
_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


class URDFError(ValueError):
    """The robot description cannot be turned into a model; the message names the problem."""


def rpy_to_matrix(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


class _Document:
    """The parsed <robot> element and the source line of every element (for messages)."""

    def __init__(self, text):
        text = text.split("\x00", 1)[0]      # TinyXML reads a C string: a NUL ends the text
        text = _DECLARATION.sub(lambda m: "\n" * m.group(0).count("\n"), text.lstrip("\ufeff \t\r\n"), count=1)
        builder, self.lines = ET.TreeBuilder(), {}
        parser = expat.ParserCreate()   # no namespace separator: `drake:acceleration` is a plain name
        parser.buffer_text = True

        def start(tag, attrs):
            self.lines[builder.start(tag, attrs)] = parser.CurrentLineNumber
        parser.StartElementHandler = start
        parser.EndElementHandler = builder.end
        parser.CharacterDataHandler = builder.data
        try:
            parser.Parse(text.encode("utf-8"), True)
        except expat.ExpatError as exc:
            raise URDFError(f"robot description is not valid XML: {expat.ErrorString(exc.code)} "
                            f"at line {exc.lineno}, column {exc.offset}") from None
        self.root = builder.close()
        if self.root.tag != "robot":
            raise URDFError(f"not a URDF: the root element is <{self.root.tag}>, expected <robot>")

    def where(self, el, what):
        """`what`, followed by the element's line."""
        line = self.lines.get(el)
        return f"{what} (line {line})" if line else what


def _floats(text, n, what):
    try:
        vals = [float(x) for x in text.split()]
    except (AttributeError, ValueError):
        vals = []
    if len(vals) != n or not all(math.isfinite(x) for x in vals):
        raise URDFError(f"{what}: expected {n} finite numbers, got {text!r}")
    return np.array(vals)


def _number(text, what):
    """One number; +-inf allowed (an unlimited velocity or effort), NaN not."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        raise URDFError(f"{what}: expected a number, got {text!r}")
    return value


def _origin(elem, what):
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(o.get("xyz", "0 0 0"), 3, f"{what} origin xyz")
    rpy = _floats(o.get("rpy", "0 0 0"), 3, f"{what} origin rpy")
    return rpy_to_matrix(rpy), xyz


def _link_inertia(doc, link, warnings):
    """10 inertia parameters of a link in its own frame; zeros for a link without <inertial>."""
    name = doc.where(link, f"link {link.get('name')!r}")
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros(10)
    m_el, i_el = inertial.find("mass"), inertial.find("inertia")
    mass = _floats(m_el.get("value") if m_el is not None else None, 1, f"{name} mass")[0]
    if mass < 0:
        raise URDFError(f"{name} has negative mass {mass}")
    keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    ixx, iyy, izz, ixy, ixz, iyz = [_floats(i_el.get(k, "0") if i_el is not None else "0", 1, f"{name} inertia {k}")[0]
                                    for k in keys]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    problem = inertia_problem(mass, inertia)
    if problem:
        warnings.append(f"{name}: {problem}")
    rot, com = _origin(inertial, f"{name} inertial")
    return inertia_about_origin(mass, com, rot @ inertia @ rot.T)


def inertia_problem(mass, inertia):
    """What is not physical about a rotational inertia about the centre of mass, or None.
    Rounding noise is not a problem: a principal moment counts as negative only below
    -(1e-6 times the largest + 1e-12 kg m^2)."""
    eig = np.linalg.eigvalsh(inertia)
    tol = INERTIA_TOL_REL * np.abs(eig).max() + INERTIA_TOL_ABS
    moments = np.round(eig, 12).tolist()
    if eig[0] < -tol:
        return f"inertia has a negative principal moment {eig[0]:.3g} (principal moments {moments})"
    if eig[0] + eig[1] < eig[2] - tol:
        return f"inertia breaks the triangle inequality (principal moments {moments})"
    if mass == 0 and eig[2] > tol:
        return f"zero mass with a non-zero inertia (principal moments {moments})"
    return None


def urdf_text(source):
    """The URDF XML of a path (.urdf, .xacro expanded), XML text (as is) or a bundled robot's name."""
    if source.lstrip("\ufeff \t\r\n").startswith("<"):
        return source
    path = urdf_file(source)
    if path is None:
        raise URDFError(f"no such URDF file: {source!r} (nor a bundled robot: {', '.join(MODELS)})")
    if path.endswith(".xacro"):
        return _run_xacro(path)
    with open(path, "rb") as fh:     # TinyXML reads bytes: a stray Latin-1 byte in a comment is no error
        return fh.read().decode("utf-8", errors="replace")


def _run_xacro(path):
    try:
        import xacro
    except ImportError:
        raise URDFError("reading .xacro files needs the 'xacro' package (pip install xacro)") from None
    try:
        return xacro.process_file(path).toxml()
    except Exception as exc:  # xacro raises its own error types for bad input
        raise URDFError(f"xacro failed on {path!r}: {exc}") from None


class _Joint:
    def __init__(self, doc, el, warnings):
        self.name = el.get("name")
        self.kind = el.get("type")
        what = doc.where(el, f"joint {self.name!r}")
        if not self.name or not self.kind:
            raise URDFError(f"{doc.where(el, 'a <joint>')} lacks its name or type attribute")
        p, c = el.find("parent"), el.find("child")
        self.parent = p.get("link") if p is not None else None
        self.child = c.get("link") if c is not None else None
        if not self.parent or not self.child:
            raise URDFError(f"{what} lacks a parent or child link")
        if self.kind not in MOVING and self.kind != "fixed":
            raise URDFError(f"{what} has unknown type {self.kind!r}")
        self.rotation, self.translation = _origin(el, what)
        axis = el.find("axis")
        self.axis = _floats(axis.get("xyz"), 3, f"{what} axis") if axis is not None \
            else np.array([1.0, 0.0, 0.0])
        norm = np.linalg.norm(self.axis)
        if self.kind in MOVING and self.kind != "floating" and norm < 1e-12:
            raise URDFError(f"{what} has a zero axis")
        self.axis = self.axis / norm if norm > 0 else self.axis
        lim = el.find("limit")
        attr = lim.attrib if lim is not None else {}
        number = lambda tag, key, default: _number(tag.get(key, default), f"{what} {key}")  # noqa: E731
        # URDF: lower/upper default to 0 inside <limit>; a continuous joint or a missing <limit> is unbounded
        unbounded = self.kind in ("continuous", "planar", "floating") or lim is None
        self.lower = -math.inf if unbounded else number(attr, "lower", "0")
        self.upper = math.inf if unbounded else number(attr, "upper", "0")
        self.velocity, self.effort = number(attr, "velocity", "inf"), number(attr, "effort", "inf")
        if self.lower > self.upper:
            warnings.append(f"{what} has lower limit {self.lower} above upper limit {self.upper}; "
                            "taken as unbounded")
            self.lower, self.upper = -math.inf, math.inf
        mimic = el.find("mimic")
        self.mimic = None if mimic is None else (
            mimic.get("joint"), number(mimic.attrib, "multiplier", "1"), number(mimic.attrib, "offset", "0"))
        self.what, self.dynamics = what, joint_dynamics(el, what, warnings, URDFError)


def load_urdf(source, floating_base=False, root=None, tip=None, gravity=None, strict=False):
    """Build a Model from a URDF or .xacro path, URDF XML, or a bundled robot's name ("puma560").

    floating_base: give the root link a floating joint `root_joint` (q: x y z qx qy qz qw,
    v: linear, angular in the base frame), the same as a URDF `floating` joint from a world
    link. root: take the subtree below this link. tip: keep only the chain root -> tip (and
    links welded to it). strict: refuse what would only be warned about (model.warnings).
    """
    doc = _Document(text := urdf_text(str(source)))
    robot, warnings = doc.root, []
    links = {}
    for el in robot.findall("link"):
        name = el.get("name")
        if not name:
            raise URDFError(f"{doc.where(el, 'a <link>')} has no name")
        if name in links:
            raise URDFError(f"{doc.where(el, f'link {name!r}')} is defined twice")
        links[name] = el
    if not links:
        raise URDFError(f"robot {robot.get('name', '')!r} has no links")
    joints, child_of = {}, {}
    for el in robot.findall("joint"):
        j = _Joint(doc, el, warnings)
        if j.name in joints:
            raise URDFError(f"{j.what} is defined twice")
        for end in (j.parent, j.child):
            if end not in links:
                raise URDFError(f"{j.what} refers to unknown link {end!r}")
        if j.child in child_of:
            raise URDFError(f"link {j.child!r} is the child of two joints: "
                            f"{child_of[j.child].what} and {j.what}")
        joints[j.name] = child_of[j.child] = j
    children = {name: [] for name in links}
    for j in joints.values():
        children[j.parent].append(j)

    roots = [n for n in links if n not in child_of]
    whole_tree = root is None and tip is None
    if root is None:
        if len(roots) != 1:
            raise URDFError(f"the URDF must have exactly one root link, found {roots or 'none (a cycle)'}")
        root = roots[0]
    elif root not in links:
        raise URDFError(f"root link {root!r} is not in the URDF")
    keep = None
    if tip is not None:
        if tip not in links:
            raise URDFError(f"tip link {tip!r} is not in the URDF")
        keep, link = {tip}, tip
        while link != root:
            if link not in child_of:
                raise URDFError(f"tip link {tip!r} is not below root link {root!r}")
            link = child_of[link].parent
            keep.add(link)
    builder = _Builder(doc, links, children, joints, keep, warnings)
    model = builder.build(robot.get("name", ""), root, floating_base, gravity)
    if whole_tree and len(builder.seen) < len(links):
        lost = sorted(set(links) - builder.seen)
        raise URDFError(f"links {lost} are not connected to root {root!r}: the joints form a cycle")
    if strict and warnings:
        raise URDFError("strict loading refused the robot description: " + "; ".join(warnings))
    for line in warnings:
        log.warning("%s; loaded as given", line)
    model.urdf = text
    return model


class _Builder:
    """Walks the tree depth-first from the root, lumping fixed links into their body."""

    def __init__(self, doc, links, children, joints, keep, warnings):
        self.doc, self.links, self.children, self.joints, self.keep = doc, links, children, joints, keep
        self.warnings = warnings
        self.bodies = []     # dicts: name, parent, joint (a _Joint), R, p, inertia, links
        self.frames, self.joint_frames, self.seen = {}, {}, set()

    def visit(self, link, body, rotation, translation):
        """Add `link`, which sits at (rotation, translation) in body's frame, and its subtree."""
        if link in self.seen:
            raise URDFError(f"the joints form a cycle through link {link!r}")
        self.seen.add(link)
        self.frames[link] = Frame(link, body, rotation, translation)
        inertia = _link_inertia(self.doc, self.links[link], self.warnings)   # checked even where the world carries it
        if body >= 0:
            self.bodies[body]["inertia"] += transform_inertia(inertia, rotation, translation)
            self.bodies[body]["links"].append(link)
        for j in self.children[link]:
            if self.keep is not None and j.child not in self.keep and j.kind != "fixed":
                continue
            r, p = rotation @ j.rotation, rotation @ j.translation + translation
            if j.kind == "fixed":
                self.joint_frames[j.name] = Frame(j.name, body, r, p)
                self.visit(j.child, body, r, p)
            else:
                self.add_body(j.child, body, j, r, p)

    def add_body(self, link, parent, joint, rotation, translation):
        self.bodies.append(dict(name=link, parent=parent, joint=joint, R=rotation, p=translation,
                                inertia=np.zeros(10), links=[]))
        body = len(self.bodies) - 1
        self.joint_frames[joint.name] = Frame(joint.name, body, np.eye(3), np.zeros(3))
        self.visit(link, body, np.eye(3), np.zeros(3))

    def build(self, name, root, floating_base, gravity):
        if floating_base:
            self.add_body(root, -1, _RootJoint(), np.eye(3), np.zeros(3))
        else:
            self.visit(root, -1, np.eye(3), np.zeros(3))
        if not self.bodies:
            self.warnings.append(f"the robot below link {root!r} has no moving joint: every result is empty")
        for jname, frame in self.joint_frames.items():   # a link's name names the link's frame
            key = jname if jname not in self.frames else f"joint:{jname}"
            if key in self.frames:
                raise URDFError(f"frame name {key!r} is used by a link and by joint {jname!r}")
            self.frames[key] = frame
        self.resolve_mimics()
        return _model_from_bodies(name, self.bodies, self.frames, self.joint_frames, self.warnings, gravity)

    def resolve_mimics(self):
        """Each mimic joint follows a leader that has its own coordinate: chains of mimics are
        followed to their end; a mimic of a joint the model does not move (unknown, fixed, cut
        away by root/tip, multi-coordinate) gets a coordinate of its own, with a warning, as
        urdfdom and Pinocchio load it."""
        moving = {b["joint"].name: b["joint"] for b in self.bodies}
        for b in self.bodies:
            j = b["joint"]
            j.leader = None
            if not j.mimic:
                continue
            if j.kind in MULTI:
                self.warnings.append(f"{j.what} is {j.kind} and cannot mimic; its <mimic> is ignored")
                continue
            target, scale, offset, seen = j.mimic[0], j.mimic[1], j.mimic[2], {j.name}
            while target in moving and moving[target].mimic and target not in seen:
                seen.add(target)
                nxt = moving[target].mimic
                target, scale, offset = nxt[0], scale * nxt[1], scale * nxt[2] + offset
            if target in seen:
                raise URDFError(f"{j.what}: its mimic joints form a cycle through {sorted(seen)}")
            leader = moving.get(target)
            if leader is None or leader.kind in MULTI:
                why = "which this model does not move" if target in self.joints else "which does not exist"
                self.warnings.append(f"{j.what} mimics joint {j.mimic[0]!r}, {why}; it is loaded as an "
                                     "independent joint")
                continue
            j.leader = (target, scale, offset)


class _RootJoint:
    """The floating joint that load_urdf(floating_base=True) adds above the root link."""
    name, kind, axis, mimic, leader, what = "root_joint", "floating", np.zeros(3), None, None, "joint 'root_joint'"
    lower, upper, velocity, effort = -math.inf, math.inf, math.inf, math.inf


def _model_from_bodies(name, bodies, frames, joint_frames, warnings, gravity):
    """User coordinates: the multi-coordinate joints first, then the one-coordinate leaders,
    each depth-first; full coordinates one block per body."""
    nb = len(bodies)
    multi = [b["joint"] for b in bodies if b["joint"].kind in MULTI]
    leaders = [b["joint"] for b in bodies if b["joint"].kind not in MULTI and not b["joint"].leader]
    joints, iq, iv = [], 0, 0
    body_of = {b["joint"].name: i for i, b in enumerate(bodies)}
    for j in multi + leaders:
        nq, nv = NQ.get(j.kind, 1), NV.get(j.kind, 1)
        joints.append(Joint(j.name, j.kind, body_of[j.name], iq, nq, iv, nv))
        iq, iv = iq + nq, iv + nv
    user = {j.name: j for j in joints}
    joint_type, idx_q, idx_v = np.zeros(nb, int), np.zeros(nb, int), np.zeros(nb, int)
    axis = np.zeros((nb, 3))
    q_src, q_scale, q_off, v_src, v_scale, v_mimic = [], [], [], [], [], []
    for i, b in enumerate(bodies):
        j = b["joint"]
        idx_q[i], idx_v[i] = len(q_src), len(v_src)
        joint_type[i], axis[i] = MOVING[j.kind], j.axis
        src, scale, off = (j.leader or (j.name, 1.0, 0.0))
        lead = user[src]
        q_src += range(lead.idx_q, lead.idx_q + lead.nq)
        q_scale += [scale] * lead.nq
        q_off += [off] + [0.0] * (lead.nq - 1)
        v_src += range(lead.idx_v, lead.idx_v + lead.nv)
        v_scale += [scale] * lead.nv
        v_mimic += [j.leader is not None] * lead.nv
    model = Model(
        name=name,
        body_names=[b["name"] for b in bodies],
        parent=np.array([b["parent"] for b in bodies], dtype=int),
        joint_type=joint_type, joint_axis=axis,
        tree_rotation=np.array([b["R"] for b in bodies]).reshape(nb, 3, 3),
        tree_translation=np.array([b["p"] for b in bodies]).reshape(nb, 3),
        inertia=np.array([b["inertia"] for b in bodies]).reshape(nb, 10),
        body_joint_names=[b["joint"].name for b in bodies],
        body_joint_kinds=[b["joint"].kind for b in bodies],
        body_links=[b["links"] for b in bodies],
        idx_q=idx_q, idx_v=idx_v,
        joints=joints,
        joint_names=[j.name for j in leaders],
        lower_limits=np.array([j.lower for j in leaders]), upper_limits=np.array([j.upper for j in leaders]),
        velocity_limits=np.array([j.velocity for j in leaders]), effort_limits=np.array([j.effort for j in leaders]),
        q_source=np.array(q_src, int), q_scale=np.array(q_scale), q_offset=np.array(q_off),
        v_source=np.array(v_src, int), v_scale=np.array(v_scale), v_is_mimic=np.array(v_mimic, bool),
        frames=frames, joint_frames=joint_frames, warnings=list(warnings), nq=iq, nv=iv)
    set_joint_dynamics(model, [j.dynamics for j in leaders])
    if gravity is not None:
        model.gravity = gravity
    return model
