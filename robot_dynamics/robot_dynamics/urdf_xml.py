"""The URDF's XML as urdfdom reads it (TinyXML: no namespace processing, whatever the XML declaration
says; a NUL ends the text; bytes that are not UTF-8 are no error): the document with the source line
of every element, numbers, origins, a link's inertia and a joint's element checked one by one, each
error naming the link or joint and its line. urdf.py builds the model from them.
"""
import math
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from .model import FREE, PLANAR, PRISMATIC, REVOLUTE, inertia_about_origin
from .resources import MODELS, urdf_file
from .urdf_dynamics import joint_dynamics

MOVING = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC,
          "planar": PLANAR, "floating": FREE}
#: an inertia's principal moment counts as negative below -(REL * largest + ABS) [kg m^2]
INERTIA_TOL_REL, INERTIA_TOL_ABS = 1e-6, 1e-12
DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


class URDFError(ValueError):
    """The robot description cannot be turned into a model; the message names the problem."""


def rpy_to_matrix(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


class Document:
    """The parsed <robot> element and the source line of every element (for messages)."""

    def __init__(self, text):
        text = text.split("\x00", 1)[0]      # TinyXML reads a C string: a NUL ends the text
        text = DECLARATION.sub(lambda m: "\n" * m.group(0).count("\n"), text.lstrip("\ufeff \t\r\n"), count=1)
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


def read_floats(text, n, what):
    try:
        vals = [float(x) for x in text.split()]
    except (AttributeError, ValueError):
        vals = []
    if len(vals) != n or not all(math.isfinite(x) for x in vals):
        raise URDFError(f"{what}: expected {n} finite numbers, got {text!r}")
    return np.array(vals)


def read_number(text, what):
    """One number; +-inf allowed (an unlimited velocity or effort), NaN not."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        raise URDFError(f"{what}: expected a number, got {text!r}")
    return value


def read_origin(elem, what):
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = read_floats(o.get("xyz", "0 0 0"), 3, f"{what} origin xyz")
    rpy = read_floats(o.get("rpy", "0 0 0"), 3, f"{what} origin rpy")
    return rpy_to_matrix(rpy), xyz


def link_inertia(doc, link, warnings):
    """10 inertia parameters of a link in its own frame; zeros for a link without <inertial>."""
    name = doc.where(link, f"link {link.get('name')!r}")
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros(10)
    m_el, i_el = inertial.find("mass"), inertial.find("inertia")
    mass = read_floats(m_el.get("value") if m_el is not None else None, 1, f"{name} mass")[0]
    if mass < 0:
        raise URDFError(f"{name} has negative mass {mass}")
    keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    ixx, iyy, izz, ixy, ixz, iyz = [
        read_floats(i_el.get(k, "0") if i_el is not None else "0", 1, f"{name} inertia {k}")[0] for k in keys]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    problem = inertia_problem(mass, inertia)
    if problem:
        warnings.append(f"{name}: {problem}")
    rot, com = read_origin(inertial, f"{name} inertial")
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
        return run_xacro(path)
    with open(path, "rb") as fh:     # TinyXML reads bytes: a stray Latin-1 byte in a comment is no error
        return fh.read().decode("utf-8", errors="replace")


def run_xacro(path):
    try:
        import xacro
    except ImportError:
        raise URDFError("reading .xacro files needs the 'xacro' package (pip install xacro)") from None
    try:
        return xacro.process_file(path).toxml()
    except Exception as exc:  # xacro raises its own error types for bad input
        raise URDFError(f"xacro failed on {path!r}: {exc}") from None


class JointElement:
    """A <joint> element checked: kind, parent and child, origin, unit axis, limits, mimic, dynamics."""

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
        self.rotation, self.translation = read_origin(el, what)
        axis = el.find("axis")
        self.axis = read_floats(axis.get("xyz"), 3, f"{what} axis") if axis is not None \
            else np.array([1.0, 0.0, 0.0])
        norm = np.linalg.norm(self.axis)
        if self.kind in MOVING and self.kind != "floating" and norm < 1e-12:
            raise URDFError(f"{what} has a zero axis")
        self.axis = self.axis / norm if norm > 0 else self.axis
        lim = el.find("limit")
        attr = lim.attrib if lim is not None else {}
        attribute = lambda tag, key, default: read_number(tag.get(key, default), f"{what} {key}")  # noqa: E731
        # URDF: lower/upper default to 0 inside <limit>; a continuous joint or a missing <limit> is unbounded
        unbounded = self.kind in ("continuous", "planar", "floating") or lim is None
        self.lower = -math.inf if unbounded else attribute(attr, "lower", "0")
        self.upper = math.inf if unbounded else attribute(attr, "upper", "0")
        self.velocity, self.effort = attribute(attr, "velocity", "inf"), attribute(attr, "effort", "inf")
        if self.lower > self.upper:
            warnings.append(f"{what} has lower limit {self.lower} above upper limit {self.upper}; "
                            "taken as unbounded")
            self.lower, self.upper = -math.inf, math.inf
        mimic = el.find("mimic")
        self.mimic = None if mimic is None else (
            mimic.get("joint"), attribute(mimic.attrib, "multiplier", "1"), attribute(mimic.attrib, "offset", "0"))
        self.what, self.dynamics = what, joint_dynamics(el, what, warnings, URDFError)
