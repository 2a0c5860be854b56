"""
Identify the robot's inertial parameters from a replay (``rbd_replay --identify``).

``rbd_replay --identify``: the robot's inertial parameters identified from the replayed
samples, written back into the URDF, and the report's section about it.

The samples are the replay's answered messages with a known effort: the measured q and v,
the Savitzky-Golay acceleration and the measured effort, reduced to their least-squares
statistics and fitted by ``identification_uncertainty.fit``, as a fleet's are:
``least-squares`` fits the identifiable combinations (the result need not be a physical
body), ``consistent`` fits physically consistent bodies (the least-squares combinations
themselves where some body realizes them, with a prior toward the URDF on the rest). Where
the data determine none of the quantities, no ``identified.urdf`` is written
(``identification_uncertainty.unsupported``).

:func:`write_identified_urdf` puts θ into the URDF: each movable body's identified inertia
goes on the body's own link (``model.body_names[i]``; θ is expressed in that link's frame),
as mass, centre of mass (origin xyz, rpy zero) and the centroidal inertia tensor; the
links merged into the body through fixed joints get a zero <inertial> and a comment, since
their mass is now part of the body's. Links welded to the world (fixed base) are kept.
"""
import xml.etree.ElementTree as ET

import numpy as np

from ..identification import statistics as identification_stats
from ..identification import uncertainty as identification_uncertainty

METHODS = identification_stats.METHODS
DEFAULT_PRIOR_WEIGHT = {"least-squares": 0.0, "consistent": 1e-4}


def _num(x):
    return repr(float(x))


def _inertial_element(mass, com, rot, indent):
    """
    Make an <inertial> element with origin (rpy zero), mass and inertia.

    <inertial> with origin (rpy zero), mass and inertia; ``indent`` is the whitespace
    before the element (children one level deeper).
    """
    inner = indent + "  "
    el = ET.Element("inertial")
    el.text = inner
    ET.SubElement(el, "origin", xyz=" ".join(_num(c) for c in com), rpy="0 0 0").tail = inner
    ET.SubElement(el, "mass", value=_num(mass)).tail = inner
    ET.SubElement(el, "inertia", ixx=_num(rot[0, 0]), ixy=_num(rot[0, 1]), ixz=_num(rot[0, 2]),
                  iyy=_num(rot[1, 1]), iyz=_num(rot[1, 2]), izz=_num(rot[2, 2])).tail = indent
    return el


def _replace_inertial(link, make, comment):
    """
    Replace the link's <inertial> (or add one as its first child).

    Replace the link's <inertial> (or add one as its first child) by ``make(indent)``,
    preceded by the XML comment ``comment``.
    """
    old = link.find("inertial")
    children = list(link)
    index = children.index(old) if old is not None else 0
    before = link.text if index == 0 else children[index - 1].tail
    if before is None or before.strip():
        before = "\n    "
    if index == 0:
        link.text = before
    else:
        children[index - 1].tail = before
    if old is not None:
        tail = old.tail
        link.remove(old)
    else:
        tail = before if children else before[:-2] if before.endswith("  ") else before
    new = make(before)
    new.tail = tail
    link.insert(index, new)
    note = ET.Comment(f" {comment} ")
    note.tail = before
    link.insert(index, note)


def link_bodies(root, model):
    """
    Map the links of the movable bodies of ``model`` to their body index.

    {link name: body index} for the links that belong to a movable body of ``model``
    (its own link or one welded to it through fixed joints); links welded to the world
    are left out.
    """
    joints = root.findall("joint")
    parent_joint = {j.find("child").get("link"): j for j in joints}
    children = {}
    for j in joints:
        children.setdefault(j.find("parent").get("link"), []).append(j)
    names = [link.get("name") for link in root.findall("link")]
    roots = [n for n in names if n not in parent_joint]
    if len(roots) != 1:
        raise ValueError(f"the URDF must have one root link, found {roots}")
    index = {name: i for i, name in enumerate(model.body_names)}
    out = {}
    stack = [(roots[0], index.get(roots[0]) if model.floating_base else None)]
    while stack:
        link, body = stack.pop()
        if body is not None:
            out[link] = body
        for j in children.get(link, ()):
            child = j.find("child").get("link")
            if j.get("type") == "fixed":
                stack.append((child, body))
            else:
                if child not in index:
                    raise ValueError(f"link {child!r} is not a body of the model")
                stack.append((child, index[child]))
    return out


def write_identified_urdf(urdf_xml, model, theta):
    """
    Return the URDF text ``urdf_xml`` with the identified inertias θ.

    The URDF text ``urdf_xml`` with the inertias θ (nbodies, 10, in the order of the
    linear parametrization seed, "Linearly Parametrized Dynamics and Inertia
    Representations": m, m·c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz, about each body's joint frame =
    its own link's frame) of ``model``'s bodies; every
    other element, attribute and comment is kept.
    """
    theta = np.asarray(theta, np.float64).reshape(model.nbodies, 10)
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf_xml.encode("utf-8") if isinstance(urdf_xml, str) else urdf_xml,
                         parser=parser)
    owner = link_bodies(root, model)
    # c = h / m also for a negative mass (a least-squares θ need not be a body); only a
    # zero mass with a first moment has no URDF form (its h is dropped)
    mass = theta[:, 0]
    com = np.where(mass[:, None] != 0, theta[:, 1:4] / np.where(mass != 0, mass, 1)[:, None], 0)
    rot_o = theta[:, [4, 5, 7, 5, 6, 8, 7, 8, 9]].reshape(-1, 3, 3)   # about the link origin
    centroidal = rot_o - mass[:, None, None] * (
        np.einsum("bi,bi->b", com, com)[:, None, None] * np.eye(3)
        - com[:, :, None] * com[:, None, :])
    for link in root.findall("link"):
        name = link.get("name")
        if name not in owner:
            continue
        body = owner[name]
        if name == model.body_names[body]:
            _replace_inertial(
                link, lambda indent: _inertial_element(mass[body], com[body], centroidal[body],
                                                       indent),
                "inertia identified by rbd_replay identification (centre of mass and centroidal "
                "inertia in this link's frame)")
        else:
            _replace_inertial(
                link, lambda indent: _inertial_element(0.0, np.zeros(3), np.zeros((3, 3)),
                                                       indent),
                f"zeroed by rbd_replay identification: this link is welded to "
                f"{model.body_names[body]!r} through fixed joints, and its mass is part of the "
                f"inertia identified there")
    text = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0"?>\n' + text + "\n"


def identify(model, t, method="consistent", prior_weight=None,
             max_relative_std=identification_uncertainty.DEFAULT_MAX_RELATIVE_STD):
    """
    Run the identification on the replay's ticks ``t`` (messages with a known effort).

    Returns (result, rows): the IdentificationResult (``extra["uncertainty"]``: its
    analysis) and the tick indices used.
    """
    if model.floating_base:
        raise ValueError("--identify needs a fixed base (the base wrench is not measured)")
    if method not in METHODS:
        raise ValueError(f"unknown identification method {method!r}; choose from "
                         f"{', '.join(METHODS)}")
    w = DEFAULT_PRIOR_WEIGHT[method] if prior_weight is None else float(prior_weight)
    rows = np.flatnonzero(t.effort_known)
    if len(rows) == 0:
        raise ValueError("--identify: no answered message carries a complete effort")
    stats = identification_stats.statistics(model, t.q[rows], t.v[rows], t.a[rows],
                                            t.effort[rows])
    res = identification_uncertainty.fit(model, stats, method, (), w, max_relative_std)
    res.extra["prior_weight"] = w
    return res, rows


def section(model, t, result, rows, method, urdf_path=None):
    """
    Return the report's ``identification`` entry.

    The report's ``identification`` entry: per joint and overall RMS torque error
    (predicted - measured effort) over the identification samples, before (the URDF) and
    after (the identified inertias), and the uncertainty of every identified number
    (``result.extra["uncertainty"]``: each body's mass, centre of mass and inertia with its
    std, and the list of what the data do not determine).
    """
    from ..batch import rnea_batch

    q, v, a, e = t.q[rows], t.v[rows], t.a[rows], t.effort[rows]
    before = rnea_batch(model, q, v, a) - e
    after = rnea_batch(result.model, q, v, a) - e

    def rms(x, axis=None):
        return np.sqrt(np.mean(x ** 2, axis=axis))

    rb, ra = rms(before, 0), rms(after, 0)
    return {
        "method": method, "prior_weight": float(result.extra.get("prior_weight", np.nan)),
        "samples": int(len(rows)), "parameters": int(10 * model.nbodies),
        "identifiable": int(result.rank), "consistent": bool(result.consistent),
        "reason": result.reason,
        "rms_before": float(rms(before)), "rms_after": float(rms(after)),
        "joints": [{"name": n, "rms_before": float(x), "rms_after": float(y)}
                   for n, x, y in zip(model.joint_names, rb, ra)],
        "urdf": urdf_path,
        "uncertainty": identification_uncertainty.section(result.extra["uncertainty"]),
    }


def text(sec):
    """Return the report.txt lines of the section."""
    lines = [f"identification ({sec['method']}, prior weight {sec['prior_weight']:g}) on "
             f"{sec['samples']} samples: {sec['identifiable']} identifiable combinations of "
             f"{sec['parameters']} parameters; "
             + ("physically consistent" if sec["consistent"]
                else f"NOT physically consistent ({sec['reason']})")]
    width = max([len(j["name"]) for j in sec["joints"]] + [7])
    lines.append(f"{'joint':<{width}} {'rms before':>11} {'rms after':>11}")
    for j in sec["joints"]:
        lines.append(f"{j['name']:<{width}} {j['rms_before']:>11.4g} {j['rms_after']:>11.4g}")
    lines.append(f"{'overall':<{width}} {sec['rms_before']:>11.4g} {sec['rms_after']:>11.4g}")
    if sec.get("uncertainty"):
        lines += identification_uncertainty.text_lines(sec["uncertainty"], indent="")
    if sec.get("urdf"):
        lines.append(f"identified URDF: {sec['urdf']}")
    return lines


def run(model, t, urdf_text, method="consistent", prior_weight=None, report_dir=None,
        max_relative_std=identification_uncertainty.DEFAULT_MAX_RELATIVE_STD):
    """
    Identify, write ``identified.urdf`` and return the report section.

    Identify, write ``identified.urdf`` into ``report_dir`` (when given) and return the
    report section. A ValueError, and nothing written, where the data determine none of
    the quantities.
    """
    import os

    result, rows = identify(model, t, method, prior_weight, max_relative_std)
    why = identification_uncertainty.unsupported(result.extra["uncertainty"])
    if why:
        raise ValueError(f"--identify on {len(rows)} samples: {why}")
    path = None
    if report_dir:
        os.makedirs(report_dir, exist_ok=True)
        path = os.path.join(report_dir, "identified.urdf")
        with open(path, "w") as f:
            f.write(write_identified_urdf(urdf_text, model, result.theta))
    sec = section(model, t, result, rows, method, path)
    sec["result"] = result
    return sec
