"""URDFs bundled with the package (our own models, used by the demo and the tests)."""
import os

DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT = "rbd_arm7"


def names():
    """
    Return the names of the bundled robots.

    Returns
    -------
    list of str
        Sorted, e.g. "rbd_arm7", "rbd_quadruped"; each one a name for :func:`path`.

    """
    return sorted(f[:-5] for f in os.listdir(DIR) if f.endswith(".urdf"))


def path(name=DEFAULT):
    """
    Return the path of the URDF of a bundled robot.

    Parameters
    ----------
    name : str, optional
        One of :func:`names`, e.g. "rbd_quadruped"; default "rbd_arm7" (a 7-dof arm).

    Returns
    -------
    str
        The absolute path of its URDF file (installed with the package).

    Raises
    ------
    ValueError
        For a name that is not bundled (the message lists the bundled ones).

    """
    candidate = os.path.join(DIR, name + ".urdf")
    if not os.path.isfile(candidate):
        raise ValueError(f"no bundled robot {name!r}; bundled robots: {', '.join(names())}")
    return candidate
