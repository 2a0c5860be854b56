"""
The receiver of ``bench_node.py``'s runs: a process that takes every output of the node.

``bench_node.py --receiver PATH`` runs :func:`receiver` in a process of its own, so that the
node's outputs are taken as a subscriber elsewhere would take them, and the bench process's
own work does not delay them; :func:`stamp_ns_of` reads a serialized message's stamp.
"""
import gc
import signal
import struct
import time

import numpy as np

from node_trees import NODE_NAME


def stamp_ns_of(raw):
    """
    Return the header stamp of a serialized message whose first field is std_msgs/Header.

    CDR: 4-byte encapsulation, then int32 sec, uint32 nanosec, little endian.
    """
    sec, nanosec = struct.unpack_from("<iI", raw, 4)
    return sec * 1_000_000_000 + nanosec


def receiver(out_path, outputs):
    """
    Take every output message, and on SIGINT save them to ``out_path``.

    A process of its own that takes every output message (serialized, no deserialization)
    in a bare wait-set loop, and on SIGINT saves (topic, stamp, receipt time) to OUT (.npy).
    perf_counter is CLOCK_MONOTONIC: comparable across processes.
    """
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from rbd_ros.node.conversions import message_class
    from rbd_ros.outputs import BY_NAME, CONTACT_WRENCH, OBSERVER_BY_NAME

    stop = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("rbd_bench_receiver")
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST)
    from node_command import COMMAND, command_key
    types = {k: message_class("std_msgs/msg/Float64MultiArray" if k == COMMAND else
                              {**BY_NAME, **OBSERVER_BY_NAME}.get(k, CONTACT_WRENCH).msgtype)
             for k in outputs}
    command = outputs.index(COMMAND) if COMMAND in outputs else -1
    from rclpy.serialization import deserialize_message
    subs = [(i, types[k], node.create_subscription(types[k], f"/{NODE_NAME}/{k}", lambda m: None,
                                                   qos, raw=True).handle)
            for i, k in enumerate(outputs)]
    log = np.zeros((4_000_000, 3), np.int64)      # topic, stamp ns, receipt ns
    n = 0
    clock = time.perf_counter_ns
    wait_set = _rclpy.WaitSet(len(subs), 0, 0, 0, 0, 0, node.context.handle)
    gc.freeze()
    print("ready", flush=True)
    while not stop:
        wait_set.clear_entities()
        for _, _, handle in subs:
            wait_set.add_subscription(handle)
        wait_set.wait(50_000_000)
        for i, msg_type, handle in subs:
            while n < len(log):
                taken = handle.take_message(msg_type, True)
                if taken is None:
                    break
                log[n] = i, (command_key(deserialize_message(taken[0], msg_type).data)
                             if i == command else stamp_ns_of(taken[0])), clock()
                n += 1
    np.save(out_path, log[:n])
    node.destroy_node()
    rclpy.shutdown()
