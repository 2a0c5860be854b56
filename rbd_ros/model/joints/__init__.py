"""
The joint kinds: one module each (its record and its kernel pieces), found here.

Everything that depends on a joint's kind reads this registry: the model (nq, nv, which
kinds only the root may be), the loader (the URDF types read), the size limits (the degrees
of freedom a URDF type adds), the specialized generator (the 1-dof kinds it writes out) and
the kernels' one dispatch over kinds (``rbd_ros.algorithms.joints``). doc/contributing.md
says how to add a kind.

The registry is this package's modules that define a ``KIND``, found by listing the package
(as a plugin folder): a new kind is its module and nothing here; its ``CODE`` is the next
integer (they must run 0, 1, ... without a gap: the kernels index arrays by code). The
kinds other modules mean by name keep constants below (``REVOLUTE``, ...); the others,
planar included, are found by name (``BY_NAME``) or URDF type.
"""
import importlib
import os

import numpy as np

from . import free_flyer, prismatic, revolute
from .kind import JointKind


def _kind_modules():
    """
    Return the modules of this package that define a joint kind, in the order of their codes.

    Its ``.py`` files only (a stray ``.pyc`` is not a kind). ImportError, naming the modules,
    where codes repeat or leave a gap (the kernels index arrays by code) or a ``KIND`` is not
    a ``JointKind``. ``rbd_ros.algorithms.joints`` also checks that these are the kinds its
    generated dispatch was written for.
    """
    folder = __path__[0]
    names = sorted(f[:-3] for f in os.listdir(folder)   # not "planar.orig.py", ".#planar.py"
                   if f.endswith(".py") and f[:-3].isidentifier() and f != "__init__.py")
    found = []
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        if not hasattr(module, "KIND"):
            continue                        # a module of shared pieces (axis_joint, ...)
        if not isinstance(module.KIND, JointKind) or module.KIND.code != module.CODE:
            raise ImportError(f"{module.__name__}: KIND must be a JointKind whose code is "
                              f"the module's CODE")
        found.append(module)
    found.sort(key=lambda module: module.CODE)
    codes = [module.CODE for module in found]
    if codes != list(range(len(found))):
        listed = ", ".join(f"{m.__name__.rpartition('.')[2]} {m.CODE}" for m in found)
        raise ImportError(f"joint kinds' codes must run 0, 1, ... without a gap or a repeat; "
                          f"found {listed}")
    return tuple(found)


# in the order of their codes: KINDS[code] is that kind's record
MODULES = _kind_modules()
KINDS = tuple(module.KIND for module in MODULES)
# the kinds other modules name (the floating base, the 1-dof joints); any other kind is found
# by its name (BY_NAME) or URDF type, so that its module is all a new kind adds
REVOLUTE, PRISMATIC, FREE_FLYER = revolute.CODE, prismatic.CODE, free_flyer.CODE
BY_NAME = {kind.name: kind for kind in KINDS}
BY_URDF_TYPE = {name: kind for kind in KINDS for name in kind.urdf_types}

# per code, as arrays the kernels index (numba freezes module-level arrays as constants)
NQ = np.array([kind.nq for kind in KINDS], np.int64)
NV = np.array([kind.nv for kind in KINDS], np.int64)
ROOT_ONLY = np.array([kind.root_only for kind in KINDS], np.bool_)
AXIS_ROTATES = np.array([kind.axis_motion == "rotate" for kind in KINDS], np.bool_)
UNIT_START = np.array([(kind.unit_part or (0, 0))[0] for kind in KINDS], np.int64)
UNIT_COUNT = np.array([(kind.unit_part or (0, 0))[1] for kind in KINDS], np.int64)
POSITION_LEFT_OUT = np.array([kind.position_left_out for kind in KINDS], np.bool_)


def base_sizes(floating_base):
    """Return (nq_base, nv_base): the entries of q and v before the joints' (``Model``)."""
    return (free_flyer.KIND.nq, free_flyer.KIND.nv) if floating_base else (0, 0)


_twice = sorted({t for kind in KINDS for t in kind.urdf_types
                 if sum(t in other.urdf_types for other in KINDS) > 1})
if _twice:
    raise ImportError(f"URDF joint types read by two kinds: {', '.join(_twice)} ("
                      + ", ".join(kind.name for kind in KINDS if set(kind.urdf_types) & set(_twice))
                      + ")")

__all__ = ["AXIS_ROTATES", "BY_NAME", "BY_URDF_TYPE", "FREE_FLYER", "JointKind", "KINDS",
           "MODULES", "NQ", "NV", "POSITION_LEFT_OUT", "PRISMATIC", "REVOLUTE", "ROOT_ONLY",
           "UNIT_COUNT", "UNIT_START", "base_sizes"]
