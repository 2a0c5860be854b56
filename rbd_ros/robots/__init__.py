"""URDFs bundled with the package (our own models, used by the demo and the tests)."""
import os

DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT = "rbd_arm7"


def names():
    """Names of the bundled robots."""
    return sorted(f[:-5] for f in os.listdir(DIR) if f.endswith(".urdf"))


def path(name=DEFAULT):
    """Return the path of the URDF of the bundled robot ``name``, e.g. "rbd_quadruped"."""
    candidate = os.path.join(DIR, name + ".urdf")
    if not os.path.isfile(candidate):
        raise ValueError(f"no bundled robot {name!r}; bundled robots: {', '.join(names())}")
    return candidate
