"""
Joint friction and rotor inertia: per-joint torques linear in their parameters.

On a real robot the torque a joint needs is more than the rigid-body one (RNEA):

    τ_j = RNEA_j(q, v, a) + Ia_j a_j + Fv_j v_j + Fc_j s(v_j) + τ0_j

with Ia the rotor inertia reflected through the gear (armature), Fv the viscous and Fc the
Coulomb friction, τ0 a constant offset (sensor bias, an unmodelled spring), and
s(v) = tanh(v / ε) a smooth sign. ε (``EPSILON``, 0.01 rad/s or m/s) is the velocity
below which friction is not yet saturated: tanh reaches 0.76 at ``|v| = ε`` and 0.995 at 3ε. A
true sign makes the regressor discontinuous at v = 0, where a noisy velocity then flips the
whole of Fc from sample to sample; 0.01 rad/s is below the speeds of an excited trajectory
and above typical velocity noise.

Each term is linear in its parameter, so it adds columns to the joint torque regressor
(linear parametrization seed, ``linear-parametrization-regressors.txt`` l. 233-250:
"Q = Y(q, ν, ν̇) θ"): column ``k·nv + j`` of :func:`regressor` carries kind ``k`` of joint ``j``
and is zero on every other joint's row. The identified values are stored in a JSON
parameter file (:class:`JointParameters`, ``rbd_replay --model-params``) and, for damping and
friction, in the URDF's ``<dynamics damping friction>``.
"""
import json
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from ..formats.text_files import read_text

EPSILON = 0.01
KINDS = ("armature", "viscous", "coulomb", "offset")
NONNEGATIVE = ("armature", "viscous", "coulomb")   # physical: no energy from friction or rotor
FORMAT = "rbd_ros joint parameters 1"
STD_KEYS = {f"{k}_std" for k in KINDS}   # an identification's standard deviations
MAX_FILE_BYTES = 1 << 20     # a parameter file is a few kB: a larger one is refused unread


def kinds(friction=False, armature=False):
    """
    Return the joint parameter kinds an identification fits, in ``KINDS`` order.

    Parameters
    ----------
    friction : bool, optional
        Include "viscous", "coulomb" and "offset".
    armature : bool, optional
        Include "armature".

    Returns
    -------
    tuple of str
        The kinds asked for (empty: the rigid body alone).

    """
    wanted = ({"armature"} if armature else set()) | (
        {"viscous", "coulomb", "offset"} if friction else set())
    return tuple(k for k in KINDS if k in wanted)


def signals(kind, v, a, eps=EPSILON):
    """
    Return the per-joint signal that multiplies the parameter ``kind`` in the torque.

    Parameters
    ----------
    kind : str
        One of ``KINDS``: "armature" (a), "viscous" (v), "coulomb" (tanh(v/ε)), "offset" (1).
    v : ndarray, shape (N, nv)
        Velocities (rad/s).
    a : ndarray, shape (N, nv)
        Accelerations (rad/s²).
    eps : float, optional
        ε of the smooth sign, rad/s.

    Returns
    -------
    ndarray, shape (N, nv)
        The signal.

    """
    if kind == "armature":
        return a
    if kind == "viscous":
        return v
    if kind == "coulomb":
        return np.tanh(v / eps)
    return np.ones_like(v)


def regressor(kinds_, v, a, eps=EPSILON):
    """
    Return the extra regressor columns of N samples stacked: (N·nv, len(kinds)·nv).

    Rows in the order of ``rbd_ros.joint_torque_regressor_batch`` (sample-major).

    Parameters
    ----------
    kinds_ : sequence of str
        The kinds of ``KINDS`` fitted (:func:`kinds`).
    v : ndarray, shape (N, nv)
        Velocities.
    a : ndarray, shape (N, nv)
        Accelerations.
    eps : float, optional
        ε of the smooth sign, rad/s.

    Returns
    -------
    ndarray, shape (N·nv, k·nv)
        For k kinds: column ``i·nv + j`` carries kind ``i`` of joint ``j``, zero on other
        joints' rows.

    """
    n, nv = v.shape
    out = np.zeros((n, nv, len(kinds_) * nv))
    diag = np.arange(nv)
    for k, kind in enumerate(kinds_):
        out[:, diag, k * nv + diag] = signals(kind, v, a, eps)
    return out.reshape(n * nv, len(kinds_) * nv)


@dataclass
class JointParameters:
    """
    Per-joint armature, viscous, Coulomb friction and offset (zero when not given).

    :meth:`torques` is the extra torque they add to RNEA (module docstring).

    Parameters
    ----------
    joints : tuple of str
        Joint names, in the model's order.
    values : dict, optional
        {kind: array of shape (njoints,)}: armature (kg·m²), viscous (N·m·s/rad), coulomb
        (N·m), offset (N·m); a kind left out is zero.
    epsilon : float, optional
        ε of the smooth sign tanh(v/ε), rad/s (default 0.01).

    """

    joints: tuple
    values: dict = field(default_factory=dict)
    epsilon: float = EPSILON

    def vector(self, kinds_):
        """
        Return the parameters of some kinds stacked, kind-major, as :func:`regressor` orders.

        Parameters
        ----------
        kinds_ : sequence of str
            Kinds of ``KINDS``.

        Returns
        -------
        ndarray, shape (k·njoints,)
            The values of the k kinds (zeros for a kind not given).

        """
        nv = len(self.joints)
        return np.concatenate([np.asarray(self.values.get(k, np.zeros(nv)), np.float64)
                               for k in kinds_]) if kinds_ else np.zeros(0)

    @classmethod
    def from_vector(cls, joints, kinds_, x, epsilon=EPSILON):
        """
        Return the JointParameters of a stacked vector (the inverse of :meth:`vector`).

        Parameters
        ----------
        joints : sequence of str
            Joint names.
        kinds_ : sequence of str
            The kinds stacked in ``x``.
        x : array_like, shape (k·njoints,)
            The values of the k kinds, kind-major.
        epsilon : float, optional
            ε of the smooth sign, rad/s.

        Returns
        -------
        JointParameters

        """
        nv = len(joints)
        return cls(tuple(joints), {k: np.array(x[i * nv:(i + 1) * nv], np.float64)
                                   for i, k in enumerate(kinds_)}, float(epsilon))

    def torques(self, v, a):
        """
        Return the torques the joint parameters add: Ia a + Fv v + Fc tanh(v/ε) + τ0.

        Parameters
        ----------
        v : array_like, shape (N, njoints)
            Velocities (rad/s).
        a : array_like, shape (N, njoints)
            Accelerations (rad/s²).

        Returns
        -------
        ndarray, shape (N, njoints)
            N·m.

        """
        out = np.zeros(np.shape(v))
        for kind, x in self.values.items():
            out += x * signals(kind, v, a, self.epsilon)
        return out

    def to_json(self, stds=None, not_identified=None):
        """
        Return the parameter file's text (``rbd_replay --model-params`` reads it).

        ``stds``: {kind: (nv,)} standard deviations, written as ``KIND_std`` next to each
        value (null where undefined: a value the data do not determine);
        ``not_identified``: the list of {"quantity", "reason"} of an identification's
        uncertainty. Both are for the reader: :meth:`from_json` ignores them.

        Parameters
        ----------
        stds : dict, optional
            {kind: array of shape (njoints,)} standard deviations.
        not_identified : list of dict, optional
            What an identification could not determine, and why.

        Returns
        -------
        str
            The JSON text.

        """
        def entry(j):
            out = {}
            for k in KINDS:
                if k in self.values:
                    out[k] = float(self.values[k][j])
                    if stds is not None and k in stds:
                        s = float(stds[k][j])
                        out[f"{k}_std"] = s if math.isfinite(s) else None
            return out
        doc = {"format": FORMAT, "epsilon": self.epsilon,
               "model": "tau = RNEA + armature*a + viscous*v + coulomb*tanh(v/epsilon) + offset",
               "joints": {name: entry(j) for j, name in enumerate(self.joints)}}
        if not_identified is not None:
            doc["not_identified"] = list(not_identified)
        return json.dumps(doc, indent=1) + "\n"

    @classmethod
    def from_json(cls, text, joint_names):
        """
        Read a joint parameter file for a model.

        Parameters
        ----------
        text : str
            The file's JSON text (:meth:`to_json`).
        joint_names : sequence of str
            The model's joint names; the file may leave joints out (zero), not add any.

        Returns
        -------
        JointParameters

        Raises
        ------
        ValueError
            Saying what is bad: not JSON, not this format, an unknown joint, a value that is
            not finite or a negative friction or armature.

        """
        try:
            doc = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"not JSON ({str(exc)[:80]})") from None
        except RecursionError:
            raise ValueError(NESTED) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"not an rbd_ros joint parameter file (\"format\": {FORMAT!r})")
        eps, joints = doc.get("epsilon", EPSILON), doc.get("joints")
        if not _finite(eps) or eps <= 0 or not isinstance(joints, dict):
            raise ValueError("needs a positive finite \"epsilon\" and a \"joints\" object")
        unknown = sorted(set(joints) - set(joint_names))
        if unknown:
            raise ValueError(f"joints not in the model: {', '.join(map(str, unknown[:5]))}")
        values = {}
        for j, name in enumerate(joint_names):
            entry = joints.get(name, {})
            if not isinstance(entry, dict) or set(entry) - set(KINDS) - STD_KEYS:
                raise ValueError(f"joint {name!r}: an object of {', '.join(KINDS)} (and "
                                 "their _std)")
            for key in STD_KEYS & set(entry):      # the identification's, for the reader
                if entry[key] is not None and (not _finite(entry[key]) or entry[key] < 0):
                    raise ValueError(f"joint {name!r}: {key} must be null or a finite "
                                     "number >= 0")
            for kind, x in ((k, x) for k, x in entry.items() if k in KINDS):
                if not _finite(x) or (kind in NONNEGATIVE and x < 0):
                    raise ValueError(f"joint {name!r}: {kind} must be a finite number"
                                     + (" >= 0" if kind in NONNEGATIVE else ""))
                values.setdefault(kind, np.zeros(len(joint_names)))[j] = float(x)
        return cls(tuple(joint_names), values, float(eps))

    @classmethod
    def from_urdf(cls, urdf_text, joint_names):
        """
        Read the URDF's ``<dynamics damping friction>`` as viscous and Coulomb friction.

        Parameters
        ----------
        urdf_text : str or bytes
            The URDF.
        joint_names : sequence of str
            The model's joint names (other joints are ignored).

        Returns
        -------
        JointParameters

        Raises
        ------
        ValueError
            For an attribute that is not a finite number >= 0.

        """
        root = ET.fromstring(urdf_text.encode("utf-8") if isinstance(urdf_text, str)
                             else urdf_text)
        where = {name: j for j, name in enumerate(joint_names)}
        values = {"viscous": np.zeros(len(where)), "coulomb": np.zeros(len(where))}
        for joint in root.findall("joint"):
            dyn, j = joint.find("dynamics"), where.get(joint.get("name"))
            if dyn is None or j is None:
                continue
            for attr, kind in (("damping", "viscous"), ("friction", "coulomb")):
                try:
                    x = float(dyn.get(attr, 0.0))
                except ValueError:
                    raise ValueError(f"joint {joint.get('name')!r}: <dynamics {attr}> is not "
                                     "a number") from None
                if not math.isfinite(x) or x < 0:
                    raise ValueError(f"joint {joint.get('name')!r}: <dynamics {attr}> must be "
                                     "finite and >= 0")
                values[kind][j] = x
        return cls(tuple(joint_names), values, EPSILON)


# json.loads recurses per level: a file of 100,000 "[" fails inside it, with Python's message
NESTED = "not a joint parameter file: its JSON is nested too deeply to read"


def read_file(path):
    """
    Return the text of the parameter file ``path`` (``rbd_replay --model-params``, the node).

    The content is checked by :meth:`JointParameters.from_json`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        Its text.

    Raises
    ------
    ValueError
        Saying why in one short line, for a file that cannot be read, is not UTF-8 or is
        larger than ``MAX_FILE_BYTES``.

    """
    try:
        return read_text(path, MAX_FILE_BYTES)
    except ValueError as exc:
        raise ValueError(f"{exc}: not a joint parameter file" if "read it" not in str(exc)
                         else str(exc)) from None


def check_text(text):
    """
    Check a parameter file's text on its own (its joints against themselves).

    Parameters
    ----------
    text : str
        The file's text.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        As :meth:`JointParameters.from_json`.

    """
    try:
        joints = json.loads(text).get("joints")
    except (ValueError, TypeError, AttributeError):
        joints = None
    except RecursionError:
        raise ValueError(NESTED) from None
    JointParameters.from_json(text, tuple(joints) if isinstance(joints, dict) else ())


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def write_urdf_dynamics(urdf_text, params):
    """
    Return ``urdf_text`` with ``<dynamics damping friction>`` set from ``params``.

    damping = viscous, friction = Coulomb (joints of ``params`` only; other attributes of an
    existing <dynamics> are kept). Armature and offset have no URDF attribute: they are in the
    parameter file only.

    Parameters
    ----------
    urdf_text : str
        The URDF.
    params : JointParameters
        The values to write.

    Returns
    -------
    str
        The URDF with the attributes set.

    """
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf_text.encode("utf-8"), parser=parser)
    where = {name: j for j, name in enumerate(params.joints)}
    for joint in root.findall("joint"):
        j = where.get(joint.get("name"))
        if j is None or not ({"viscous", "coulomb"} & set(params.values)):
            continue
        dyn = joint.find("dynamics")
        if dyn is None:
            dyn = ET.SubElement(joint, "dynamics")
            children = list(joint)
            dyn.tail = children[-2].tail if len(children) > 1 else "\n  "
            if len(children) > 1:
                children[-2].tail = joint.text or "\n    "
        for attr, kind in (("damping", "viscous"), ("friction", "coulomb")):
            if kind in params.values:
                dyn.set(attr, repr(float(params.values[kind][j])))
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
