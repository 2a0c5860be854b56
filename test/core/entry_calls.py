"""
What the tests of the public calls share (``test_entries.py``, ``test_entries_out.py``).

A call from its row's inputs, a clean state, and the models and shapes of ``out=``.
"""
import inspect

import numpy as np

import rbd_ros
from helpers import get_robot, robot_path
from rbd_ros.algorithms import entries


def call(name, model, values, fext=None, **options):
    """Call the public ``name`` with its row's inputs from ``values``, and ``options``."""
    row = entries.ENTRIES[name]
    function = getattr(rbd_ros, name)
    args = [values[x] for x in row.inputs if x != "fext"]
    if name in ("compute_all", "inverse_and_forward_dynamics"):
        q, v, a, tau = args
        kwargs = {"a": a, "tau": tau} if fext is None else {"a": a, "tau": tau, "fext": fext}
        return function(model, q, v, **kwargs, **options)
    if name == "frame_jacobian":       # the link is not an array: the row's prepare step
        return function(model, *args, model.body_names[-1], **options)
    if "link" in inspect.signature(function).parameters:      # the frame calls (issue 36)
        states = [x for x in row.inputs if x != "direction"]
        after = [values["direction"]] if "direction" in row.inputs else []
        return function(model, *(values[x] for x in states), model.body_names[-1], *after,
                        **options)
    if fext is not None:
        return function(model, *args, fext, **options)
    return function(model, *args, **options)


def flat(result):
    if isinstance(result, tuple):
        return np.concatenate([np.ravel(r) for r in result])
    return np.ravel(result)


def clean_state(model, seed=3):
    rng = np.random.default_rng(seed)
    return {"q": model.random_configuration(rng), "v": rng.normal(size=model.nv),
            "a": rng.normal(size=model.nv), "tau": rng.normal(size=model.nv),
            "dv": rng.normal(size=model.nv), "direction": rng.normal(size=3)}


# out= on every call: panda's mimic fingers take the coupled route, talos is floating
OUT_ROBOTS = ("arm7", "panda", "talos")


def out_model(robot_name):
    if robot_name == "panda":
        model = rbd_ros.load_model(robot_path("panda"))     # mimic="coupled", the default
        assert model.coupling is not None
        return model
    return get_robot(robot_name).model


def out_shapes(name, model):
    """Return the shapes of the arrays ``out=`` gives to the call ``name`` (from its row)."""
    # operational_space_inertia's shape depends on translational (False: the call's default)
    # and center_of_mass's on velocity (v given: ``call`` passes the state's)
    sizes = {"nv": model.nv, "nq": model.nq, "nb": model.nbodies, "translational": False,
             "velocity": True}
    shapes = [eval(shape, {}, sizes) for shape in
              entries.caller_outputs(entries.ENTRIES[name]).values()]
    return tuple(shape if isinstance(shape, tuple) else (shape,) for shape in shapes)


def out_argument(arrays):
    """Return what ``out=`` takes: the array of a call with one result, else the tuple."""
    return arrays[0] if len(arrays) == 1 else tuple(arrays)
