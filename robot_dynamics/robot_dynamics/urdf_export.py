"""The user's URDF written back with a model's dynamics: every body's <inertial> and each joint's
<dynamics damping friction> and <robot_dynamics armature friction_offset coulomb_band>
(urdf_dynamics.py), the rest of the text as it was (comments kept; the XML re-serialised, as
urdfdom reads it: no namespace processing).

A body lumps links welded by fixed joints (urdf.py); its inertia change goes to its own link (the
child of its moving joint), so the other links keep theirs. Where that would leave the own link
non-physical (the identified body lighter than the links welded to it), the own link takes the
whole body and the welded links' <inertial> are removed (a comment in the link says so): the
sum, which is all the dynamics see, is the identified one either way.
"""
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from .model import inertia_about_origin
from .urdf_xml import DECLARATION, inertia_problem, read_floats, rpy_to_matrix
from .urdf_dynamics import EXTENSION


def urdf_with_dynamics(prior, model):
    """URDF text: prior.urdf (the text load_urdf read) with model's inertias, friction and
    armature; model has prior's structure (e.g. an identified copy of it). ValueError if prior was
    not loaded from a URDF."""
    if prior.urdf is None:
        raise ValueError("the model was not loaded by load_urdf (it keeps the URDF text): no URDF to write back")
    if model.body_names != prior.body_names or model.joint_names != prior.joint_names:
        raise ValueError("the two models are not of the same robot")
    root, prolog = _parse(prior.urdf)
    links = {el.get("name"): el for el in root.findall("link")}
    joints = {el.get("name"): el for el in root.findall("joint")}
    for b, names in enumerate(model.body_links):
        own = links[names[0]]
        new = _link_parameters(own) + model.inertia[b] - prior.inertia[b]
        if not _physical(new):
            new = model.inertia[b]
            for name in names[1:]:
                for el in links[name].findall("inertial"):
                    links[name].remove(el)
            if names[1:]:
                own.insert(0, ET.Comment(f" identified: the whole body, links {', '.join(names[1:])} included "))
        _put(own, _inertial(new), "inertial")
    for j, name in enumerate(model.joint_names):
        el = joints[name]
        viscous, coulomb, offset = model.friction[j]
        dyn = el.find("dynamics")
        dyn = _put(el, ET.Element("dynamics"), "dynamics") if dyn is None else dyn
        dyn.set("damping", _num(viscous))
        dyn.set("friction", _num(coulomb))
        _put(el, ET.Element(EXTENSION, {"armature": _num(model.armature[j]), "friction_offset": _num(offset),
                                        "coulomb_band": _num(model.coulomb_band[j])}), EXTENSION)
    root.insert(0, ET.Comment(" inertials, joint friction and armature identified by robot_dynamics "
                              "(identify_dynamics); <robot_dynamics> is its extension element "))
    root.text, root[0].tail = root.text or "\n", root.text or "\n"
    return '<?xml version="1.0"?>\n' + prolog + ET.tostring(root, encoding="unicode") + "\n"


def _parse(text):
    """The <robot> element as urdf.py reads it (expat without namespaces), comments kept, and the
    text before it (comments, a DOCTYPE; the XML declaration left out)."""
    text = text.split("\x00", 1)[0]
    data = DECLARATION.sub("", text.lstrip("\ufeff \t\r\n"), count=1).lstrip("\r\n").encode("utf-8")
    builder, start = ET.TreeBuilder(insert_comments=True), []
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def element(tag, attrs):
        start.append(start or parser.CurrentByteIndex)
        builder.start(tag, attrs)
    parser.StartElementHandler, parser.EndElementHandler = element, builder.end
    parser.CharacterDataHandler, parser.CommentHandler = builder.data, builder.comment
    parser.Parse(data, True)
    return builder.close(), data[:start[0]].decode("utf-8")


def _link_parameters(link):
    """A link's 10 inertia parameters (Model order) in its own frame, as urdf.py reads them."""
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros(10)
    mass = float(inertial.find("mass").get("value")) if inertial.find("mass") is not None else 0.0
    i_el = inertial.find("inertia")
    ixx, iyy, izz, ixy, ixz, iyz = (float(i_el.get(k, "0")) if i_el is not None else 0.0
                                    for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
    o = inertial.find("origin")
    R = rpy_to_matrix(read_floats(o.get("rpy", "0 0 0"), 3, "rpy")) if o is not None else np.eye(3)
    com = read_floats(o.get("xyz", "0 0 0"), 3, "xyz") if o is not None else np.zeros(3)
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return inertia_about_origin(mass, com, R @ I @ R.T)


def _about_com(p):
    """Mass, centre of mass and the 3x3 inertia about it of 10 parameters (Model order)."""
    c = p[1:4] / p[0]
    I = np.array([[p[4], p[7], p[8]], [p[7], p[5], p[9]], [p[8], p[9], p[6]]])
    return p[0], c, I - p[0] * (c @ c * np.eye(3) - np.outer(c, c))


def _physical(p):
    return p[0] > 0 and inertia_problem(*_about_com(p)[::2]) is None


def _inertial(p):
    """An <inertial> element of 10 parameters (Model order; a massless body: none)."""
    if not p[0] > 0:
        return None
    el = ET.Element("inertial")
    m, c, I = _about_com(p)
    ET.SubElement(el, "origin", {"xyz": " ".join(map(_num, c)), "rpy": "0 0 0"})
    ET.SubElement(el, "mass", {"value": _num(m)})
    ET.SubElement(el, "inertia", {k: _num(I[i, j]) for k, (i, j) in
                                  (("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)),
                                   ("iyz", (1, 2)), ("izz", (2, 2)))})
    return el


def _put(parent, el, tag):
    """el in place of parent's first <tag> (removed if el is None), or appended, indented as
    its siblings; returns el."""
    children, old = list(parent), parent.find(tag)
    inner = parent.text if parent.text and not parent.text.strip() else "\n"     # a sibling's indentation
    if old is not None:
        i = children.index(old)
        parent.remove(old)
        if el is None:
            if 0 < i == len(children) - 1:
                children[i - 1].tail = old.tail
            return None
        el.tail = old.tail
        parent.insert(i, el)
    elif el is not None:
        if children:
            el.tail, children[-1].tail = children[-1].tail, inner
        else:
            parent.text, el.tail = "\n", "\n"
        parent.append(el)
    if el is not None and len(el):
        el.text = inner + "  "
        for child in el:
            child.tail = inner + "  "
        el[-1].tail = inner
    return el


def _num(x):
    return repr(float(x))

