"""
``bench_node.py --outputs effort_command``: the node's ~/effort_command in the measured run.

A command (std_msgs/Float64MultiArray) carries no stamp: the receiver keys each one by its
values (:func:`command_key`, rounded to 1e-9 N·m), and the bench, which knows every state it
publishes, computes the command the node must answer to each (g(q) of the same model, the
base's orientation as published, clamped to the effort limits: :func:`state_keys`). A
command is then matched to the latest joint_states message of its state published before it
arrived (:func:`stamps_of_commands`); the states are 1,000 apart in a 1 kHz stream, so a
command is never matched to the wrong one unless it is a second late.
"""
import hashlib

import numpy as np

COMMAND = "effort_command"


def command_key(values):
    """Return a 56-bit key of a command's values (rounded to 1e-9): equal commands, equal keys."""
    rounded = np.round(np.asarray(values, np.float64), 9) + 0.0     # -0.0 -> 0.0
    return int.from_bytes(hashlib.blake2b(rounded.tobytes(), digest_size=7).digest(), "little")


def node_parameters(joint_names):
    """Return the node's ``-p`` arguments for the command: every joint, gravity mode."""
    return ["-p", f"command_joints:=[{', '.join(joint_names)}]", "-p", "command_timeout:=0.5"]


def state_keys(urdf, states):
    """{command key: state index} of the bench's states (``node_run.make_states``)."""
    import rbd_ros
    model = rbd_ros.load_model(urdf, floating_base=True, mimic="independent")
    limit = np.asarray(model.effort_limit)
    keys = {}
    for k, (q, _, _, base) in enumerate(states):
        full = np.concatenate([base[:7], np.asarray(q)])
        g = rbd_ros.gravity_torques(model, full)[6:]
        keys[command_key(np.clip(g, -limit, limit))] = k
    return keys


def stamps_of_commands(received, index, published, keys, states):
    """
    Replace, in place, the key of each command row of ``received`` by the stamp it answers.

    ``received``: (topic index, key or stamp, receipt ns) rows; ``index``: the command's topic
    index; ``published``: (stamp ns, publish ns) per joint_states message, in order, message
    j of state j % ``states``. A command whose key is no state's keeps a key no stamp has.
    """
    sent = np.array([t for _, t in published], np.int64)
    stamps = np.array([s for s, _ in published], np.int64)
    for row in np.flatnonzero(received[:, 0] == index):
        state = keys.get(int(received[row, 1]))
        if state is None:
            continue
        candidates = np.arange(state, len(sent), states)
        before = candidates[sent[candidates] <= received[row, 2]]
        if len(before):
            received[row, 1] = stamps[before[-1]]


def enabler(bench, node_name):
    """Return a callable that asks the node's ``~/enable_command`` to switch it on."""
    from std_srvs.srv import SetBool
    client = bench.create_client(SetBool, f"/{node_name}/enable_command")

    def enable():
        if not client.wait_for_service(timeout_sec=10.0):
            print("  ~/enable_command not up", flush=True)
            return
        future = client.call_async(SetBool.Request(data=True))
        future.add_done_callback(lambda f: print(f"  enable_command: {f.result().message}",
                                                 flush=True))
    return enable
