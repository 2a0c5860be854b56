"""
Read a URDF document safely and keep what the dynamics needs.

Real robot descriptions carry visual, collision, material, transmission and gazebo content
that urdf-parser-py is strict about (a ``<texture>`` without ``filename``, ROS 1
transmissions, a ``<geometry>`` with two shapes) although the dynamics never reads it. So the
document is parsed here with the standard library's expat, refusing DTDs and entity
declarations (the defusedxml rules: no entity expansion, no external entities), checked
(unique, non-empty names; finite numbers), and reduced to the links' inertials and the
joints before urdf-parser-py sees it.
"""
import math
import os
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat


class URDFError(ValueError):
    """The robot description cannot be turned into a model; the message says why."""


# what urdf-parser-py gets of each joint: all that the dynamics reads (limits for the model's
# bounds, mimic for coupling), nothing it could be strict about for no gain
JOINT_ELEMENTS = ("origin", "parent", "child", "axis", "limit", "mimic")
INERTIAL_ELEMENTS = ("origin", "mass", "inertia")

# A document's XML declaration, possibly after a byte-order mark, white space or comments
# (editors and generators put them there; expat refuses a declaration that is not first).
_PROLOGUE = re.compile(r"\A(\s*(?:<!--.*?-->\s*)*)<\?xml\b[^>]*\?>", re.S)
_DECLARED_ENCODING = re.compile(rb"""<\?xml\b[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)""")


def excerpt(value, limit=40):
    """Return ``value`` quoted and escaped, cut to about ``limit`` characters."""
    text = repr(str(value))
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def read_source(urdf):
    """
    Return (text, source) of a URDF given as XML text, bytes or a file path.

    A string whose first non-blank character (after a byte-order mark) is ``<`` is XML;
    any other string or path-like is a file name.
    """
    if not isinstance(urdf, (str, bytes, os.PathLike)):
        raise URDFError(f"expected a URDF path or XML string, got {type(urdf).__name__}")
    if isinstance(urdf, bytes):
        return decode(urdf, "<bytes>"), "<bytes>"
    if isinstance(urdf, str) and urdf.lstrip("\ufeff \t\r\n").startswith("<"):
        return urdf, "<string>"
    path = os.fspath(urdf)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.isfile(path):
        raise URDFError(f"{excerpt(path, 200)} is neither URDF XML nor an existing file")
    with open(path, "rb") as f:
        return decode(f.read(), path), path


def decode(data, source):
    """Decode a document: UTF-8 (with or without a BOM), UTF-16 with a BOM, or as declared."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    declared = _DECLARED_ENCODING.search(data[:200])
    if declared:
        try:
            return data.decode(declared.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            pass
    # only names and numbers matter, which are ASCII: a stray byte in a comment is harmless
    return data.decode("utf-8", errors="replace")


class _Refused(Exception):
    """Raised from inside expat's callbacks for a construct that is refused."""


def _refuse(what):
    def handler(*args):
        raise _Refused(what)
    return handler


def parse_xml(text, source):
    """
    Return the ``<robot>`` element of a URDF text, parsed without DTDs or entities.

    Refused with URDFError: malformed XML, a DOCTYPE, entity declarations or references to
    undefined entities, a root element that is not ``<robot>``.
    """
    text = _PROLOGUE.sub(r"\1", text.lstrip("\ufeff"), count=1)
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse("a DOCTYPE (DTDs and entities are refused)")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.ExternalEntityRefHandler = _refuse("an external entity")
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
        root = builder.close()
    except _Refused as exc:
        raise URDFError(f"malformed URDF ({source}): it contains {exc}") from None
    except (expat.ExpatError, UnicodeError, AssertionError) as exc:   # no root: assert
        raise URDFError(f"malformed URDF ({source}): {str(exc)[:200]}") from None
    if root.tag != "robot":
        raise URDFError(f"malformed URDF ({source}): the root element is "
                        f"<{excerpt(root.tag).strip(chr(39))}>, not <robot>")
    return root


def dynamics_document(root):
    """
    Return the URDF text of ``root`` reduced to what the dynamics reads.

    The robot's name; each link's name and ``<inertial>``; each joint's attributes and its
    :data:`JOINT_ELEMENTS`. Everything else (visual, collision, material, transmission,
    gazebo, sensors, unknown tags) is left out.
    """
    # the name is only a label: a robot without one (ur3.urdf) is no less a robot
    robot = ET.Element("robot", {"name": root.get("name") or "robot"})
    for element in root:
        if element.tag == "link":
            link = ET.SubElement(robot, "link", {"name": element.get("name", "")})
            for inertial in element.findall("inertial"):
                _copy(inertial, ET.SubElement(link, "inertial"), INERTIAL_ELEMENTS)
        elif element.tag == "joint":
            _copy(element, ET.SubElement(robot, "joint", dict(element.attrib)), JOINT_ELEMENTS)
    return ET.tostring(robot, encoding="unicode")


def _copy(source, target, tags):
    """Copy the ``tags`` children of ``source`` into ``target``, attributes only."""
    # shallow: their content is never read, and a deep nest there could exhaust recursion
    for child in source:
        if child.tag in tags:
            ET.SubElement(target, child.tag, dict(child.attrib))


def check_document(root, source):
    """
    Refuse what would make the model ambiguous or not finite, naming the element.

    Links and joints need non-empty names, unique among links and among joints; every
    origin, axis, mass and inertia value must be finite numbers, and so must mimic
    multipliers and offsets; joint limits may be infinite but not NaN.
    """
    for kind in ("link", "joint"):
        seen = set()
        for element in root.findall(kind):
            name = element.get("name")
            if name is None or not name.strip():
                raise URDFError(f"a <{kind}> ({source}) has an empty or missing name")
            if name in seen:
                raise URDFError(f"{kind} name {excerpt(name)} ({source}) is used twice: "
                                f"{kind} names must be unique")
            seen.add(name)
    for link in root.findall("link"):
        for inertial in link.findall("inertial"):
            what = f"link {excerpt(link.get('name'))} ({source})"
            _check_origin(inertial, what)
            _check_numbers(inertial.find("mass"), ("value",), 1, what)
            _check_numbers(inertial.find("inertia"), ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                           1, what)
    for joint in root.findall("joint"):
        what = f"joint {excerpt(joint.get('name'))} ({source})"
        _check_origin(joint, what)
        _check_numbers(joint.find("axis"), ("xyz",), 3, what)
        _check_numbers(joint.find("mimic"), ("multiplier", "offset"), 1, what)
        _check_numbers(joint.find("limit"), ("lower", "upper", "effort", "velocity"), 1, what,
                       infinite=True)


def _check_origin(element, what):
    _check_numbers(element.find("origin"), ("xyz", "rpy"), 3, what)


def _check_numbers(element, attributes, count, what, infinite=False):
    """Check that each present attribute of ``element`` holds ``count`` finite numbers."""
    if element is None:
        return
    for attribute in attributes:
        text = element.get(attribute)
        if text is None:
            continue
        where = f"{what}: <{element.tag} {attribute}={excerpt(text)}>"
        try:
            values = [float(word) for word in text.split()]
        except ValueError:
            raise URDFError(f"{where} is not {_numbers(count)}") from None
        if len(values) != count:
            raise URDFError(f"{where} is not {_numbers(count)}")
        bad = [v for v in values if math.isnan(v) or (math.isinf(v) and not infinite)]
        if bad:
            raise URDFError(f"{where} holds {'NaN' if math.isnan(bad[0]) else bad[0]}: "
                            f"{'NaN is' if infinite else 'NaN and inf are'} not allowed here")


def _numbers(count):
    return "a number" if count == 1 else f"{count} numbers"
