"""
The corpus robots as the tests load them (``corpus.py``: where their files come from).

Which corpus robots default options refuse, and a word of the reason; the options that load
the others; their Pinocchio side (``oracle.Robot``); and a mimic-coupled corpus model beside
its independent twin. Shared by ``test_corpus`` and the core tests that run over the whole
corpus (``test_coriolis``, ``test_frame_jacobian``, ``test_contact``).
"""
import functools
import warnings

import rbd_ros
from corpus import CORPUS, has_movable_mimic, read
from oracle import Robot

# What default options refuse, and a word of the reason (facts about the files):
REFUSED = {
    # link 'body': principal moments -0.021, 0.052, 0.099 kg m² (M can be indefinite)
    "erd/romeo/romeo_laas_small": "positive semi-definite",
    # the hands' links are all massless (LHand, RHand and the fingers that mimic them)
    "erd/romeo/romeo": "allow_massless",
    # an empty <robot> (xacro output without its macros); Pinocchio refuses it too
    "erd/ur/ur3": "no <link>",
    # its fingers mimic 'index_q1' etc., joints the file does not have (the xacro's prefix
    # 'Left_' is missing): nothing to couple them to (Pinocchio's mimic model refuses it
    # too); mimic="independent" loads it as Pinocchio's default model does
    "erd/alex/alex_psyonic_hands": "not a joint of the URDF",
    # link4: 0.081 kg exactly on j4's axis, zero inertia: j4 moves nothing
    "rtb/al5d_robot": "allow_massless",
    # kinematics only: no <inertial> at all (M = 0)
    "rtb/irb140": "allow_massless",
    "rtb/irb140QT": "allow_massless",
    "rtb/lbr_iiwa_14_r820": "allow_massless",
    "rtb/puma560_robot": "allow_massless",
}
MASSLESS = tuple(name for name, why in REFUSED.items() if why == "allow_massless")
BROKEN_MIMIC = tuple(name for name, why in REFUSED.items() if "not a joint" in why)
LOADED = tuple(name for name in CORPUS if name not in REFUSED)

# allow_massless where the user must ask for M singular
OPTIONS = {name: {"allow_massless": True} for name in MASSLESS}
# mimic="independent": the model Pinocchio builds by default, to compare with it
PIN_DEFAULT = {"mimic": "independent"}


@functools.lru_cache(maxsize=None)
def pinocchio_robot(name, floating):
    """Return the oracle.Robot of a corpus robot (Pinocchio loads every one of them)."""
    return Robot(name, CORPUS[name], floating, **{**OPTIONS.get(name, {}), **PIN_DEFAULT})


def coupled_model(floating):
    """Return (coupled, independent) models of the corpus's first loadable mimic robot."""
    for name in CORPUS:
        if has_movable_mimic(read(name)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                try:
                    m = rbd_ros.load_model(CORPUS[name], floating_base=floating)
                    ind = rbd_ros.load_model(CORPUS[name], floating_base=floating,
                                             mimic="independent")
                except rbd_ros.URDFError:
                    continue
            if m.coupling is not None and list(ind.joint_names) == list(
                    m.coupling.joint_names):
                return m, ind
    raise AssertionError("no corpus robot with movable mimic joints loads coupled")


def movable_pinocchio_robots(floating):
    """Yield (name, oracle.Robot) of every corpus robot both load that has a degree of freedom."""
    for name in LOADED + MASSLESS + BROKEN_MIMIC:
        robot = pinocchio_robot(name, floating)
        if robot.model.nv:
            yield name, robot
