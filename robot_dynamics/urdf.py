"""URDF (or xacro) -> Model: parse, validate, lump fixed joints into their parent body."""
import logging
import math
import os
import xml.etree.ElementTree as ET

import numpy as np

from .model import FREE, PRISMATIC, REVOLUTE, Frame, Model, inertia_about_origin, transform_inertia

log = logging.getLogger("robot_dynamics.urdf")

MOVING = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
UNSUPPORTED = ("floating", "planar")


class URDFError(ValueError):
    """The robot description cannot be turned into a model; the message names the problem."""


def rpy_to_matrix(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


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


def _link_inertia(link):
    """10 inertia parameters of a link in its own frame; zeros for a link without <inertial>."""
    name = link.get("name")
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros(10)
    m_el, i_el = inertial.find("mass"), inertial.find("inertia")
    mass = _floats(m_el.get("value") if m_el is not None else None, 1, f"link {name!r} mass")[0]
    if mass < 0:
        raise URDFError(f"link {name!r} has negative mass {mass}")
    keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    vals = [_floats(i_el.get(k, "0") if i_el is not None else "0", 1, f"link {name!r} inertia {k}")[0]
            for k in keys]
    ixx, iyy, izz, ixy, ixz, iyz = vals
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    _check_inertia(name, mass, inertia)
    rot, com = _origin(inertial, f"link {name!r} inertial")
    return inertia_about_origin(mass, com, rot @ inertia @ rot.T)


def _check_inertia(name, mass, inertia):
    eig = np.linalg.eigvalsh(inertia)
    if eig[0] < -1e-6 * np.abs(eig).max():
        raise URDFError(f"link {name!r} has an inertia with negative eigenvalue {eig[0]:.3g} "
                        f"(principal moments {np.round(eig, 9).tolist()})")
    if mass > 0 and (eig[0] <= 0 or eig[0] + eig[1] < eig[2] * (1 - 1e-9)):
        log.warning("link %r: inertia is singular or breaks the triangle inequality "
                    "(principal moments %s); loaded as given", name, np.round(eig, 9).tolist())


def urdf_text(source):
    """The URDF XML of a path (.urdf, or .xacro expanded) or of an XML string (returned as is)."""
    if source.lstrip().startswith("<"):
        return source
    if not os.path.isfile(source):
        raise URDFError(f"no such URDF file: {source!r}")
    if source.endswith(".xacro"):
        return _run_xacro(source)
    with open(source, encoding="utf-8") as fh:
        return fh.read()


def _read_xml(source):
    """Parse a path (.urdf or .xacro) or an XML string; return the <robot> element."""
    text = urdf_text(source)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"robot description is not valid XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"not a URDF: the root element is <{root.tag}>, expected <robot>")
    return root


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
    def __init__(self, el):
        self.name = el.get("name")
        self.kind = el.get("type")
        if not self.name or not self.kind:
            raise URDFError("a <joint> lacks its name or type attribute")
        p, c = el.find("parent"), el.find("child")
        self.parent = p.get("link") if p is not None else None
        self.child = c.get("link") if c is not None else None
        if not self.parent or not self.child:
            raise URDFError(f"joint {self.name!r} lacks a parent or child link")
        if self.kind in UNSUPPORTED:
            raise URDFError(f"joint {self.name!r} has type {self.kind!r}, which is not supported "
                            "(use floating_base=True for a free-flying root)")
        if self.kind not in MOVING and self.kind != "fixed":
            raise URDFError(f"joint {self.name!r} has unknown type {self.kind!r}")
        self.rotation, self.translation = _origin(el, f"joint {self.name!r}")
        axis = el.find("axis")
        self.axis = _floats(axis.get("xyz"), 3, f"joint {self.name!r} axis") if axis is not None \
            else np.array([1.0, 0.0, 0.0])
        norm = np.linalg.norm(self.axis)
        if self.kind in MOVING and norm < 1e-12:
            raise URDFError(f"joint {self.name!r} has a zero axis")
        self.axis = self.axis / norm if norm > 0 else self.axis
        lim = el.find("limit")
        attr = lim.attrib if lim is not None else {}
        number = lambda tag, key, default: _number(tag.get(key, default), f"joint {self.name!r} {key}")
        # URDF: lower/upper default to 0 inside <limit>; a continuous joint or a missing <limit> is unbounded
        unbounded = self.kind == "continuous" or lim is None
        self.lower = -math.inf if unbounded else number(attr, "lower", "0")
        self.upper = math.inf if unbounded else number(attr, "upper", "0")
        self.velocity, self.effort = number(attr, "velocity", "inf"), number(attr, "effort", "inf")
        if self.lower > self.upper:
            raise URDFError(f"joint {self.name!r} has lower limit {self.lower} above upper limit {self.upper}")
        mimic = el.find("mimic")
        self.mimic = None if mimic is None else (
            mimic.get("joint"), number(mimic.attrib, "multiplier", "1"), number(mimic.attrib, "offset", "0"))


def load_urdf(source, floating_base=False, root=None, tip=None, gravity=None):
    """Build a Model from a URDF path, a .xacro path or a URDF XML string.

    floating_base: give the root link a free-flyer joint (q: x y z qx qy qz qw, v: linear,
    angular in the base frame). root: take the subtree below this link. tip: keep only the
    chain root -> tip (and links welded to it).
    """
    robot = _read_xml(str(source))
    links = {}
    for el in robot.findall("link"):
        name = el.get("name")
        if not name:
            raise URDFError("a <link> has no name")
        if name in links:
            raise URDFError(f"link {name!r} is defined twice")
        links[name] = el
    if not links:
        raise URDFError(f"robot {robot.get('name')!r} has no links")
    joints, child_of = {}, {}
    for el in robot.findall("joint"):
        j = _Joint(el)
        if j.name in joints:
            raise URDFError(f"joint {j.name!r} is defined twice")
        for end in (j.parent, j.child):
            if end not in links:
                raise URDFError(f"joint {j.name!r} refers to unknown link {end!r}")
        if j.child in child_of:
            raise URDFError(f"link {j.child!r} is the child of two joints: "
                            f"{child_of[j.child].name!r} and {j.name!r}")
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
    for j in joints.values():
        if j.mimic and j.mimic[0] not in joints:
            raise URDFError(f"joint {j.name!r} mimics unknown joint {j.mimic[0]!r}")
    model = _build(robot.get("name", ""), root, links, children, joints, floating_base, keep, gravity)
    if whole_tree and len(model.frames) < len(links) + len(joints):
        lost = sorted(set(links) - set(model.frames))
        raise URDFError(f"links {lost} are not connected to root {root!r}: the joints form a cycle")
    return model


def _build(name, root, links, children, joints, floating_base, keep, gravity):
    bodies = []     # dicts: name, parent, joint (None for the free flyer), R, p, inertia
    frames = {}
    seen = set()

    def visit(link, body, rotation, translation):
        """Walk the tree depth-first; link sits at (rotation, translation) in body's frame."""
        if link in seen:
            raise URDFError(f"the joints form a cycle through link {link!r}")
        seen.add(link)
        frames[link] = Frame(link, body, rotation, translation)
        inertia = _link_inertia(links[link])      # checked even where the world carries it
        if body >= 0:
            bodies[body]["inertia"] += transform_inertia(inertia, rotation, translation)
        for j in children[link]:
            if keep is not None and j.child not in keep and j.kind != "fixed":
                continue
            r, p = rotation @ j.rotation, rotation @ j.translation + translation
            if j.kind == "fixed":
                frames[j.name] = Frame(j.name, body, r, p)
                visit(j.child, body, r, p)
            else:
                bodies.append(dict(name=j.child, parent=body, joint=j, R=r, p=p, inertia=np.zeros(10)))
                frames[j.name] = Frame(j.name, len(bodies) - 1, np.eye(3), np.zeros(3))
                visit(j.child, len(bodies) - 1, np.eye(3), np.zeros(3))

    if floating_base:
        bodies.append(dict(name=root, parent=-1, joint=None, R=np.eye(3), p=np.zeros(3), inertia=np.zeros(10)))
        visit(root, 0, np.eye(3), np.zeros(3))
    else:
        visit(root, -1, np.eye(3), np.zeros(3))
    if not bodies:
        raise URDFError(f"the robot below link {root!r} has no moving joint")
    return _model_from_bodies(name, bodies, frames, joints, floating_base, gravity)


def _model_from_bodies(name, bodies, frames, joints, floating_base, gravity):
    nb = len(bodies)
    leaders = [b["joint"].name for b in bodies if b["joint"] is not None and not b["joint"].mimic]
    user_v = {n: i + (6 if floating_base else 0) for i, n in enumerate(leaders)}
    joint_type, idx_q, idx_v = np.zeros(nb, int), np.zeros(nb, int), np.zeros(nb, int)
    axis = np.zeros((nb, 3))
    q_src, q_scale, q_off, v_src, v_scale, v_mimic = [], [], [], [], [], []
    for i, b in enumerate(bodies):
        j = b["joint"]
        idx_q[i], idx_v[i] = len(q_src), len(v_src)
        if j is None:
            joint_type[i] = FREE
            q_src += range(7)
            q_scale += [1.0] * 7
            q_off += [0.0] * 7
            v_src += range(6)
            v_scale += [1.0] * 6
            v_mimic += [False] * 6
            continue
        joint_type[i], axis[i] = MOVING[j.kind], j.axis
        src, scale, off = j.name, 1.0, 0.0
        if j.mimic:
            src, scale, off = j.mimic
            if src not in user_v:
                raise URDFError(f"joint {j.name!r} mimics {src!r}, which is not an actuated "
                                "joint of this model (fixed, outside the chain, or itself a mimic)")
        k = user_v[src]
        q_src.append(k + (1 if floating_base else 0))
        q_scale.append(scale)
        q_off.append(off)
        v_src.append(k)
        v_scale.append(scale)
        v_mimic.append(bool(j.mimic))
    lead = [joints[n] for n in leaders]
    off = 6 if floating_base else 0
    return Model(
        name=name,
        body_names=[b["name"] for b in bodies],
        parent=np.array([b["parent"] for b in bodies]),
        joint_type=joint_type, joint_axis=axis,
        tree_rotation=np.array([b["R"] for b in bodies]),
        tree_translation=np.array([b["p"] for b in bodies]),
        inertia=np.array([b["inertia"] for b in bodies]),
        body_joint_names=[b["joint"].name if b["joint"] else "root_joint" for b in bodies],
        idx_q=idx_q, idx_v=idx_v,
        joint_names=leaders,
        lower_limits=np.array([j.lower for j in lead]), upper_limits=np.array([j.upper for j in lead]),
        velocity_limits=np.array([j.velocity for j in lead]), effort_limits=np.array([j.effort for j in lead]),
        q_source=np.array(q_src, int), q_scale=np.array(q_scale), q_offset=np.array(q_off),
        v_source=np.array(v_src, int), v_scale=np.array(v_scale), v_is_mimic=np.array(v_mimic, bool),
        frames=frames, floating_base=floating_base,
        nq=off + (1 if floating_base else 0) + len(leaders), nv=off + len(leaders),
        _gravity=np.array([0.0, 0.0, -9.81]) if gravity is None else np.asarray(gravity, float),
    )
