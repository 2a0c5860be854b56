"""
Read a URDF document safely: what the dynamics needs, nothing else.

Real robot descriptions carry visual, collision, material, transmission and gazebo content
that strict URDF parsers refuse (a ``<texture>`` without ``filename``, ROS 1 transmissions,
a ``<geometry>`` with two shapes) although the dynamics never reads it. So the document is
parsed here with the standard library's expat, refusing DTDs and entity declarations (the
defusedxml rules: no entity expansion, no external entities), checked (unique, non-empty
names; finite numbers) and read into plain objects: the robot's name, each link's name and
inertial, each joint's name, type, parent, child, origin, axis, limit and mimic. The objects
carry urdf-parser-py's attribute names and defaults (``robot.links[i].inertial.inertia.ixx``,
``joint.mimic.multiplier``...), the library this module replaces: iterative, ~5× faster on
large documents, and everything else in the document is ignored.
"""
import math
import os
import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace
from xml.parsers import expat

from ..formats.text_files import read_bytes


class URDFError(ValueError):
    """
    The robot description cannot be turned into a model; the message says why.

    Raised by :func:`rbd_ros.load_model` for a text that is neither a file nor XML, a root
    element other than ``<robot>``, a xacro file not yet expanded, a joint that refers to a
    missing link, a loop or several roots, a negative mass or an inertia that is not
    positive semi-definite, ... A subclass of ValueError.
    """


INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


_SPACE = re.compile(r"\s*")
_DECLARED_ENCODING = re.compile(rb"""<\?xml\b[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)""")


def excerpt(value, limit=40):
    """Return ``value`` quoted and escaped, cut to about ``limit`` characters."""
    text = repr(str(value))
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def read_source(urdf, max_bytes=None):
    """
    Return (text, source) of a URDF given as XML text, bytes, a file path or a parsed robot.

    A string whose first non-blank character (after a byte-order mark) is ``<`` is XML;
    any other string or path-like is a file name, read only when it is a regular file of
    at most ``max_bytes`` (``text_files.read_bytes``: a FIFO or a device is refused). A
    parsed robot is any object with a ``to_xml_string()`` method, such as urdf-parser-py's
    ``urdf_parser_py.urdf.Robot`` (``URDF.from_xml_string``), which is not imported here: its
    XML is read like any other document (:func:`robot_xml`).
    """
    if not isinstance(urdf, (str, bytes, os.PathLike)):
        if callable(getattr(urdf, "to_xml_string", None)):
            return robot_xml(urdf), f"<{type(urdf).__name__} {excerpt(_robot_name(urdf))}>"
        raise URDFError(f"expected a URDF path, XML string or urdf_parser_py Robot, got "
                        f"{type(urdf).__name__}")
    if isinstance(urdf, bytes):
        return decode(urdf, "<bytes>"), "<bytes>"
    if isinstance(urdf, str) and urdf.lstrip().lstrip("\ufeff").lstrip().startswith("<"):
        return urdf, "<string>"
    path = os.fspath(urdf)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not os.path.exists(path):
        raise URDFError(f"{excerpt(path, 200)} is neither URDF XML nor an existing file")
    try:
        data = read_bytes(path, (1 << 62) if max_bytes is None else max_bytes)
    except ValueError as exc:
        raise URDFError(f"URDF file {excerpt(path, 200)}: {exc}") from None
    return decode(data, path), path


def robot_xml(robot):
    """
    Return the XML text of a parsed robot (urdf-parser-py's ``Robot.to_xml_string()``).

    Through its XML rather than its attributes, so that such a robot passes the same checks
    and gives the same numbers as its document (urdf-parser-py writes each float with
    ``str``, which reads back exactly). Whatever the method raises or returns instead of
    text is a URDFError.
    """
    try:
        text = robot.to_xml_string()
    except Exception as exc:          # a third party's object: any failure is the input's
        raise URDFError(f"the {type(robot).__name__} could not be written as URDF XML: "
                        f"{type(exc).__name__}: {excerpt(exc, 120)}") from None
    if isinstance(text, bytes):
        text = decode(text, "<robot>")
    if not isinstance(text, str):
        raise URDFError(f"{type(robot).__name__}.to_xml_string() returned a "
                        f"{type(text).__name__}, not XML text")
    return text


def _robot_name(robot):
    name = getattr(robot, "name", None)
    return name if isinstance(name, str) else "robot"


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


def without_declaration(text):
    """
    Return the text without its byte-order mark and XML declaration.

    Editors and generators put blank lines or comments before the declaration, which expat
    refuses; the declaration says nothing a decoded text needs. A plain scan, not a regular
    expression: comments would make one backtrack exponentially.
    """
    text = text.lstrip("\ufeff")
    at = 0
    while True:
        at = _SPACE.match(text, at).end()
        if not text.startswith("<!--", at):
            break
        end = text.find("-->", at + 4)
        if end < 0:
            return text                      # an unclosed comment: expat will say so
        at = end + 3
    if text.startswith("<?xml", at) and text[at + 5:at + 6] in ("", "?", " ", "\t", "\r", "\n"):
        end = text.find("?>", at)
        if end >= 0:
            return text[:at] + text[end + 2:]
    return text


def parse_xml(text, source):
    """
    Return the ``<robot>`` element of a URDF text, parsed without DTDs or entities.

    Refused with URDFError: malformed XML, a DOCTYPE, entity declarations or references to
    undefined entities, a root element that is not ``<robot>``.
    """
    text = without_declaration(text)
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
    refuse_xacro(root, source)
    return root


XACRO_DECLARATIONS = ("property", "arg")      # expand to nothing by themselves


def refuse_xacro(root, source):
    """
    Refuse (URDFError) a xacro file: a document xacro has yet to expand into a URDF.

    Its ``<xacro:...>`` elements (macros, includes, calls, conditionals; the prefix bound to
    the xacro namespace, whatever its name) or ``${...}`` and ``$(...)`` substitutions in
    attributes where xacro is declared: read as a URDF it would lose whatever they define (a
    zero-joint model). Tolerated, as leftovers that expand to nothing: the ``xmlns:xacro``
    declaration (xacro keeps it in the URDFs it writes) and ``<xacro:property>`` and
    ``<xacro:arg>`` declarations in a document that has links and no substitution.
    """
    prefixes = {"xacro"}
    for element in root.iter():
        prefixes.update(key[6:] for key, value in element.attrib.items()
                        if key.startswith("xmlns:") and "xacro" in value)
    tags = [e.tag for e in root.iter() if ":" in e.tag and e.tag.partition(":")[0] in prefixes]
    declared = bool(tags) or len(prefixes) > 1 or "xmlns:xacro" in root.attrib
    found = next((f"<{excerpt(t).strip(chr(39))}> elements" for t in tags
                  if t.partition(":")[2] not in XACRO_DECLARATIONS), None)
    if not found and declared and any("${" in v or "$(" in v for e in root.iter()
                                      for v in e.attrib.values()):
        found = "${...} substitutions"
    if not found and tags and root.find("link") is None:
        found = f"<{excerpt(tags[0]).strip(chr(39))}> and no <link>"
    if found:
        name = os.path.basename(source) if not source.startswith("<") else "robot.urdf.xacro"
        stem = name[:-len(".xacro")] if name.endswith(".xacro") else name
        stem = stem if stem.endswith(".urdf") else stem + ".urdf"
        raise URDFError(f"URDF ({source}) is a xacro file ({found}), not yet a URDF: expand "
                        f"it first, `xacro {name} > {stem}` (or `ros2 run xacro xacro {name} "
                        f"-o {stem}`), and load {stem}")


def read_robot(root, source):
    """
    Return the robot of a checked ``<robot>`` element (:func:`check_document`).

    ``robot.name``, ``robot.links`` (``name``, ``inertial``: ``mass``, ``origin``,
    ``inertia`` or None) and ``robot.joints`` (``name``, ``type``, ``parent``, ``child``,
    ``origin``, ``axis``, ``limit``, ``mimic``, each None where absent), in document order.
    """
    links = [SimpleNamespace(name=e.get("name"), inertial=_inertial(e, source))
             for e in root.findall("link")]
    joints = [_joint(e, source) for e in root.findall("joint")]
    # the name is only a label: a robot without one (ur3.urdf) is no less a robot
    return SimpleNamespace(name=root.get("name") or "robot", links=links, joints=joints)


def _inertial(link, source):
    element = link.find("inertial")
    if element is None:
        return None
    what = f"link {excerpt(link.get('name'))} ({source})"
    mass = element.find("mass")
    if mass is None or mass.get("value") is None:
        raise URDFError(f"{what}: its <inertial> has no <mass value=...>")
    inertia = element.find("inertia")
    if inertia is not None:
        missing = [k for k in INERTIA_KEYS if inertia.get(k) is None]
        if missing:
            raise URDFError(f"{what}: its <inertia> has no {', '.join(missing)}")
        inertia = SimpleNamespace(**{k: float(inertia.get(k)) for k in INERTIA_KEYS})
    return SimpleNamespace(mass=float(mass.get("value")), inertia=inertia,
                           origin=_origin(element))


def _joint(element, source):
    what = f"joint {excerpt(element.get('name'))} ({source})"
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        ends[end] = None if tag is None else tag.get("link")
        if ends[end] is None:
            raise URDFError(f"{what} has no <{end} link=...>")
    kind = element.get("type")
    if kind is None:
        raise URDFError(f"{what} has no type")
    axis = element.find("axis")
    return SimpleNamespace(
        name=element.get("name"), type=kind, origin=_origin(element), **ends,
        axis=None if axis is None or axis.get("xyz") is None else _floats(axis.get("xyz")),
        limit=_limit(element.find("limit")), mimic=_mimic(element.find("mimic"), what))


def _origin(element):
    """Return the ``<origin>`` of an element as (xyz, rpy) lists, or None."""
    origin = element.find("origin")
    if origin is None:
        return None
    return SimpleNamespace(xyz=_floats(origin.get("xyz", "0 0 0")),
                           rpy=_floats(origin.get("rpy", "0 0 0")))


def _limit(element):
    # urdfdom's defaults: lower and upper 0; no effort or velocity means none (inf)
    if element is None:
        return None
    return SimpleNamespace(lower=float(element.get("lower", 0.0)),
                           upper=float(element.get("upper", 0.0)),
                           effort=_optional(element.get("effort")),
                           velocity=_optional(element.get("velocity")))


def _mimic(element, what):
    if element is None:
        return None
    if not element.get("joint"):
        raise URDFError(f"{what}: its <mimic> names no joint")
    return SimpleNamespace(joint=element.get("joint"),
                           multiplier=_optional(element.get("multiplier")),
                           offset=_optional(element.get("offset")))


def _floats(text):
    return [float(word) for word in text.split()]


def _optional(text):
    return None if text is None else float(text)


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
            _check_numbers(inertial.find("origin"), ("xyz", "rpy"), 3, link, source)
            _check_numbers(inertial.find("mass"), ("value",), 1, link, source)
            _check_numbers(inertial.find("inertia"), INERTIA_KEYS, 1, link, source)
    for joint in root.findall("joint"):
        _check_numbers(joint.find("origin"), ("xyz", "rpy"), 3, joint, source)
        _check_numbers(joint.find("axis"), ("xyz",), 3, joint, source)
        _check_numbers(joint.find("mimic"), ("multiplier", "offset"), 1, joint, source)
        _check_numbers(joint.find("limit"), ("lower", "upper", "effort", "velocity"), 1, joint,
                       source, infinite=True)


def _check_numbers(element, attributes, count, owner, source, infinite=False):
    """Check that each present attribute of ``element`` (in link or joint ``owner``) is numbers."""
    if element is None:
        return
    for attribute in attributes:
        text = element.get(attribute)
        if text is None:
            continue
        try:
            values = [float(word) for word in text.split()]
        except ValueError:
            values = None
        if values is not None and len(values) == count and all(map(math.isfinite, values)):
            continue                                  # the common case, and a fast one
        where = (f"{owner.tag} {excerpt(owner.get('name'))} ({source}): "
                 f"<{element.tag} {attribute}={excerpt(text)}>")
        if values is None or len(values) != count:
            raise URDFError(f"{where} is not {_numbers(count)}")
        bad = next(v for v in values if not math.isfinite(v))
        if math.isnan(bad) or not infinite:
            raise URDFError(f"{where} holds {'NaN' if math.isnan(bad) else bad}: "
                            f"{'NaN is' if infinite else 'NaN and inf are'} not allowed here")


def _numbers(count):
    return "a number" if count == 1 else f"{count} numbers"
