"""URDF (or xacro) -> Model: parse, validate, lump fixed joints into their parent body.

Accepts what urdfdom (and so RViz, robot_state_publisher and Pinocchio) accepts: XML is read
as urdfdom's TinyXML reads it (no namespace processing, whatever the XML declaration says).
Refused, with a message naming the link or joint and its line: what is meaningless (unknown
links, cycles, a zero axis, negative or non-finite mass, non-numbers). Warned about, and
refused with strict=True: what is suspect but loads (non-physical inertias, lower limit
above upper, a mimic of a joint the model does not have). The XML itself is read and each
element checked in urdf_xml.py.
"""
import logging
import math

import numpy as np

from .model import FREE, PLANAR, Frame, Joint, Model, transform_inertia
from .urdf_dynamics import set_joint_dynamics
from .urdf_xml import (MOVING, Document, JointElement, URDFError, inertia_problem, link_inertia,  # noqa: F401
                       rpy_to_matrix, urdf_text)    # URDFError, inertia_problem, rpy_to_matrix, urdf_text: here too

log = logging.getLogger("robot_dynamics.urdf")

MULTI = ("planar", "floating")
NQ = {"planar": 3, "floating": 7}
NV = {"planar": 3, "floating": 6}


def load_urdf(source, floating_base=False, root=None, tip=None, gravity=None, strict=False):
    """Build a Model from a URDF or .xacro path, URDF XML, or a bundled robot's name ("puma560").

    floating_base: give the root link a floating joint `root_joint` (q: x y z qx qy qz qw,
    v: linear, angular in the base frame), the same as a URDF `floating` joint from a world
    link. root: take the subtree below this link. tip: keep only the chain root -> tip (and
    links welded to it). strict: refuse what would only be warned about (model.warnings).
    """
    doc = Document(text := urdf_text(str(source)))
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
        j = JointElement(doc, el, warnings)
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
        self.bodies = []     # dicts: name, parent, joint (a JointElement), R, p, inertia, links
        self.frames, self.joint_frames, self.seen = {}, {}, set()

    def visit(self, link, body, rotation, translation):
        """Add `link`, which sits at (rotation, translation) in body's frame, and its subtree."""
        if link in self.seen:
            raise URDFError(f"the joints form a cycle through link {link!r}")
        self.seen.add(link)
        self.frames[link] = Frame(link, body, rotation, translation)
        inertia = link_inertia(self.doc, self.links[link], self.warnings)   # checked even where the world carries it
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
