"""
How large a robot description may be: its size, its links, its degrees of freedom.

A description comes from outside (any DDS peer can publish one on the node's topic; a bag,
a file): a 10,000-link one loaded, then took the node's memory to gigabytes (the derivative
kernels are nv² per state) and its time with it. Every path that builds a model from a
description (``rbd_ros.load_model``, so the node, ``rbd_replay`` and the planner child
alike) checks these limits first and refuses above them with the number
(:class:`DescriptionTooLarge`): the size before parsing, the links and movable joints
before any body is built.

The defaults leave a wide margin over the largest real robots of the test corpus
(example-robot-data's tiago_dual: 130 links, 101 movable joints, 211 kB; iCub: 214 links,
168 kB); the node's parameters ``max_description_bytes``, ``max_description_links`` and
``max_description_dofs`` set them.
"""
from typing import NamedTuple

from ..model.joints import BY_URDF_TYPE, base_sizes
from .urdf_reader import URDFError

# the URDF joint types that move, with the degrees of freedom each adds (the joint kinds')
MOVABLE = {name: kind.nv for name, kind in BY_URDF_TYPE.items()}


class DescriptionLimits(NamedTuple):
    """
    The largest robot description that is loaded; above any of them it is refused.

    Pass one to :func:`rbd_ros.load_model` (``limits=``); the node's parameters
    ``max_description_bytes``, ``max_description_links`` and ``max_description_dofs`` make
    its own.

    Parameters
    ----------
    max_bytes : int, optional
        The most bytes of the description's text (UTF-8), default 4 MiB.
    max_links : int, optional
        The most ``<link>`` elements, default 1000.
    max_dofs : int, optional
        The most degrees of freedom (nv: movable joints, mimic ones included, plus 6 for a
        floating base), default 500.

    """

    max_bytes: int = 4 << 20          # 4 MiB: 20x the largest corpus file
    max_links: int = 1000             # 4.7x iCub's 214
    max_dofs: int = 500               # nv: 4.7x tiago_dual's 101 (+6 for a floating base)

    def check(self):
        """
        Return these limits once checked.

        Returns
        -------
        DescriptionLimits
            ``self``.

        Raises
        ------
        ValueError
            For a limit that is not a positive integer (a bool is not one).

        """
        for name, value in zip(self._fields, self):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"description limit {name} must be a positive integer, "
                                 f"got {value!r}")
        return self


DEFAULT_LIMITS = DescriptionLimits()


class DescriptionTooLarge(URDFError):
    """
    The description is above one of its limits; the message says which, with the numbers.

    Raised by :func:`rbd_ros.load_model` (so the node, ``rbd_replay`` and the planner) before
    parsing (size) or before building any body (links, degrees of freedom); a
    :class:`URDFError`, hence a ValueError. See :class:`DescriptionLimits`.
    """


def text_size(text):
    """Return the UTF-8 size in bytes of ``text`` (str or bytes), without copying a small one."""
    if isinstance(text, (bytes, bytearray)):
        return len(text)
    n = len(text)
    return n if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def check_size(text, limits, source):
    """Refuse (DescriptionTooLarge) a description text larger than ``limits.max_bytes``."""
    if len(text) > limits.max_bytes or text_size(text) > limits.max_bytes:
        raise DescriptionTooLarge(
            f"robot description too large ({source}): {text_size(text)} bytes, the limit is "
            f"{limits.max_bytes} (max_description_bytes)")


def check_counts(root, limits, source, floating_base=False):
    """
    Refuse (DescriptionTooLarge) a parsed robot above ``limits.max_links`` or ``max_dofs``.

    ``root``: the ``<robot>`` element (``urdf_reader.parse_xml``), counted before it is
    checked or read; the degrees of freedom counted are its movable joints' (mimic ones
    included: each is a body of the tree) plus 6 for a floating base.
    """
    links = len(root.findall("link"))
    if links > limits.max_links:
        raise DescriptionTooLarge(
            f"robot description too large ({source}): {links} links, the limit is "
            f"{limits.max_links} (max_description_links)")
    dofs = sum(MOVABLE.get(j.get("type"), 0) for j in root.iterfind("joint")) \
        + base_sizes(floating_base)[1]
    if dofs > limits.max_dofs:
        raise DescriptionTooLarge(
            f"robot description too large ({source}): {dofs} degrees of freedom, the limit "
            f"is {limits.max_dofs} (max_description_dofs)")
