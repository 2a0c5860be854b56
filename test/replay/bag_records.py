"""
Bag records as the replay tests write and read them, with rosbags' own (de)serializer.

Independent of the replay's decoders (``rbd_ros.formats.cdr``): the messages are made and
read back by ``rosbags``' typestore (``bag_io.typestore()``, the same message definitions).
"""
import numpy as np

from rbd_ros.replay import bag_io

STORE = bag_io.typestore()
T = STORE.types["builtin_interfaces/msg/Time"]
H = STORE.types["std_msgs/msg/Header"]
JS = STORE.types[bag_io.JOINT_STATE]


def read(path):
    """{topic: [(log time, message)]} with rosbags' own deserializer."""
    out = {}
    with bag_io.Reader(path) as r:
        for con, stamp, raw in r.messages():
            out.setdefault(con.topic, []).append(
                (stamp, STORE.deserialize_cdr(raw, con.msgtype)))
    return out


def js(names, q, v, e, ns):
    """Return the CDR bytes of a JointState stamped ``ns`` (frame "base")."""
    return STORE.serialize_cdr(JS(header=H(stamp=T(sec=ns // 10**9, nanosec=ns % 10**9),
                                           frame_id="base"), name=list(names),
                                  position=np.asarray(q, float), velocity=np.asarray(v, float),
                                  effort=np.asarray(e, float)), bag_io.JOINT_STATE)
