"""
Test harness for the rbd_ros dynamics node: the node in-process, a tester node beside it.

Each :class:`Harness` owns its own rclpy ``Context`` (so a test's DDS traffic, endpoints and
shutdown are its own), a namespace of its own, a ``MultiThreadedExecutor`` spinning both
nodes on a background thread, publishers for every input and subscriptions to every
output. Nothing here sleeps for a fixed long time: waits poll a condition until a deadline.

ROS_DOMAIN_ID / ROS_AUTOMATIC_DISCOVERY_RANGE must be set before the first Context is
initialised; this folder's conftest.py does that before any test module is imported.
"""
import contextlib
import itertools
import os
import signal
import subprocess
import threading
import time

import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Log
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rbd_ros.node.dynamics_node import DynamicsNode
from rbd_ros_interfaces import msg as rbd_msg
from rbd_ros_interfaces import srv as rbd_srv

TIMEOUT = 10.0          # s: the longest any single condition is waited for
# s: a process's start (Python, rclpy, the kernels from the cache) before its services are
# up; on a loaded machine (both cores busy, CI neighbours) 10 s was not always enough
STARTUP = 120.0

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                      history=HistoryPolicy.KEEP_LAST)
BEST_EFFORT = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT,
                         history=HistoryPolicy.KEEP_LAST)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     history=HistoryPolicy.KEEP_LAST)

OUTPUTS = {"torques": JointState, "accelerations": rbd_msg.JointVector,
           "inverse_inertia": rbd_msg.JointMatrix,
           "rnea_derivatives": rbd_msg.DynamicsDerivatives,
           "aba_derivatives": rbd_msg.DynamicsDerivatives}
# the whole-body outputs: switched by a link (end_effector_frame) or publish_center_of_mass,
# centroidal_momentum only for a floating base; the harness listens to them too
WHOLE_BODY_OUTPUTS = {"end_effector": rbd_msg.EndEffector, "center_of_mass": PointStamped,
                      "centroidal_momentum": rbd_msg.CentroidalMomentum}
LISTENED = {**OUTPUTS, **WHOLE_BODY_OUTPUTS}
SERVICES = {"inverse_dynamics": rbd_srv.InverseDynamics,
            "forward_dynamics": rbd_srv.ForwardDynamics,
            "inverse_inertia": rbd_srv.InverseInertia,
            "inverse_dynamics_derivatives": rbd_srv.InverseDynamicsDerivatives,
            "forward_dynamics_derivatives": rbd_srv.ForwardDynamicsDerivatives}
# the services of issue 16 (whole trajectories, payload): requests of their own shape
PLANNER_SERVICES = {"trajectory_torques": rbd_srv.TrajectoryTorques,
                    "trajectory_forward": rbd_srv.TrajectoryForward,
                    "set_payload": rbd_srv.SetPayload,
                    "retime_trajectory": rbd_srv.RetimeTrajectory,
                    "trajectory_effective_mass": rbd_srv.TrajectoryEffectiveMass}

_namespaces = itertools.count()
_stamps = itertools.count(1)


def shm_segment_sizes(pid):
    """Return the sizes of the Fast DDS shared-memory segments process ``pid`` maps (and 0)."""
    sizes = [0]
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if "/dev/shm/fastrtps_" in line and "_el" not in line and "port" not in line:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                sizes.append(end - start)
    return sizes


def new_stamp():
    """Return a stamp no other message of this process carries."""
    k = next(_stamps)
    return Time(sec=1000 + k, nanosec=k * 1000)


def same_stamp(a, b):
    return a.sec == b.sec and a.nanosec == b.nanosec


def wait_for(condition, timeout=TIMEOUT, what="condition"):
    """Poll ``condition()`` until it is truthy; returns its value or fails the test."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


def call_service(client, request, what, timeout=TIMEOUT, resend_after=3.0):
    """
    Send ``request`` on ``client`` (service up) until answered; return the response.

    Sent again when unanswered after ``resend_after`` s, then after twice as long each time:
    Fast DDS drops a response whose client reader the server has not matched yet
    (rmw_fastrtps waits ~100 ms for that match), which on a loaded machine happens to a
    request sent just after ``wait_for_service``, and the client waits forever (CI: a
    get_parameters to the planner child, unanswered for 10 s); the growing wait lets a
    server that is merely slow answer instead of being sent the same work again and again.
    The requests sent here leave the same state when served twice (a refusal is counted
    twice: tests that count refusals send once); an abandoned one is withdrawn from the
    client.
    """
    assert client.wait_for_service(timeout_sec=timeout), f"service {client.srv_name} not up"
    deadline = time.monotonic() + timeout
    wait = resend_after
    while True:
        future = client.call_async(request)
        next_send = min(deadline, time.monotonic() + wait)
        wait *= 2
        while not future.done() and time.monotonic() < next_send:
            time.sleep(0.005)
        if future.done():
            return future.result()
        client.remove_pending_request(future)
        future.cancel()
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class ParameterServices:
    """The parameter services of the node named ``target``, called with :func:`call_service`."""

    def __init__(self, tester, target):
        from rcl_interfaces.srv import DescribeParameters, GetParameters, SetParameters
        self.target = target
        self.clients = {name: tester.create_client(srv_type, f"{target}/{name}")
                        for name, srv_type in (("get_parameters", GetParameters),
                                               ("set_parameters", SetParameters),
                                               ("describe_parameters", DescribeParameters))}

    def wait_up(self, timeout=STARTUP):
        """Wait until the node's parameter services are up (its process has started)."""
        for client in self.clients.values():
            assert client.wait_for_service(timeout_sec=timeout), \
                f"service {client.srv_name} not up within {timeout:g} s"
        return self

    def _call(self, name, **fields):
        client = self.clients[name]
        return call_service(client, client.srv_type.Request(**fields),
                            f"{self.target}'s {name} response")

    def get(self, names):
        """Return the ParameterValue of each of ``names``, in order."""
        return list(self._call("get_parameters", names=list(names)).values)

    def set(self, **values):
        """Set parameters; return the SetParametersResult of each, in order."""
        return list(self._call("set_parameters", parameters=[
            Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]).results)

    def describe(self, names):
        """Return the ParameterDescriptor of each of ``names``, in order."""
        return list(self._call("describe_parameters", names=list(names)).descriptors)


class SpinThread:
    """
    A thread spinning ``executor`` until :meth:`stop`, which returns once it is out.

    Not ``Thread(target=executor.spin)`` then ``executor.shutdown()``: rclpy 7.1's shutdown
    destroys the executor's guard conditions without waiting for its spin to leave the wait
    (it checks ``_is_shutdown`` just after setting it), so a spin thread still inside died
    on ``gc.handle`` of None ("Exception in thread ... (spin)", a CI warning). Here the spin
    is out first, then the executor is shut down.
    """

    def __init__(self, executor):
        self.executor = executor
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stopping.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def stop(self, timeout=5.0):
        self._stopping.set()
        self._thread.join(timeout=timeout)
        # a MultiThreadedExecutor's last spin_once may have handed a take to its pool that has
        # not run yet; run after the nodes' destruction it fails ("cannot use Destroyable",
        # printed at exit as an exception never retrieved). The same shutdown bug: it does
        # not wait for them, so wait here (rclpy keeps them in ``_futures``)
        pending = list(getattr(self.executor, "_futures", ()))
        deadline = time.monotonic() + timeout
        while not all(task.done() for task in pending) and time.monotonic() < deadline:
            time.sleep(0.005)
        self.executor.shutdown(timeout_sec=timeout)


def joint_state(names, position, velocity=(), effort=(), stamp=None):
    msg = JointState()
    msg.header.stamp = stamp if stamp is not None else new_stamp()
    msg.name = list(names)
    msg.position = [float(x) for x in position]
    msg.velocity = [float(x) for x in velocity]
    msg.effort = [float(x) for x in effort]
    return msg


def odometry(base_q, base_v):
    msg = Odometry()
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in base_q)
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(x) for x in base_v)
    return msg


def joint_vector(names, data):
    msg = rbd_msg.JointVector()
    msg.names = list(names)
    msg.data = [float(x) for x in data]
    return msg


class Harness:
    """
    A DynamicsNode plus a tester node, spinning on their own context and thread.

    Without a planner process unless ``params`` ask for it (``planner_process``: the tests
    of the trajectory services do): its start and stop doubled the CPU of the node tests
    that do not use it (test_node, test_node_mimic, test_node_parameters: 8.5 s of CPU and
    15 s wall with it, 4.1 s and 8.7 s without, on the shared 2-core VM).
    """

    def __init__(self, params, js_qos=RELIABLE):
        params = {"planner_process": False, **params}
        self.namespace = f"/rbd_node_test_{os.getpid()}_{next(_namespaces)}"
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = None
        self.spinner = None
        self.node = self.tester = None
        try:
            self._start(params, js_qos)
        except BaseException:
            self.close()
            raise

    def _start(self, params, js_qos):
        ns, ctx = self.namespace, self.context
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        self.node = DynamicsNode(namespace=ns, context=ctx, parameter_overrides=overrides)
        self.params = self.node.params
        self.tester = t = Node("rbd_node_tester", namespace=ns, context=ctx)
        self._lock = threading.Lock()
        self.received = {k: [] for k in list(LISTENED) + ["diagnostics", "rosout"]}
        base = f"{ns}/rbd_dynamics/"
        self.subs = {}
        for name, msg_type in LISTENED.items():
            self.subs[name] = t.create_subscription(msg_type, base + name,
                                                    self._collector(name), RELIABLE)
        self.subs["diagnostics"] = t.create_subscription(
            DiagnosticArray, "/diagnostics", self._collector("diagnostics"), RELIABLE)
        self.subs["rosout"] = t.create_subscription(Log, "/rosout", self._collector("rosout"),
                                                    RELIABLE)
        self.joint_states = t.create_publisher(JointState, params.get(
            "joint_states_topic", "joint_states"), js_qos)
        self.description = t.create_publisher(String, params.get(
            "robot_description_topic", "robot_description"), LATCHED)
        self.odom = t.create_publisher(Odometry, params.get("odometry_topic", "odom"),
                                       RELIABLE)
        self.accel = None
        if params.get("acceleration_topic"):
            self.accel = t.create_publisher(rbd_msg.JointVector, params["acceleration_topic"],
                                            RELIABLE)
        self.clients = {name: t.create_client(srv_type, base + name)
                        for name, srv_type in {**SERVICES, **PLANNER_SERVICES}.items()}
        self.answered = set()                  # the services that answered a call
        self.executor = MultiThreadedExecutor(num_threads=4, context=ctx)
        self.executor.add_node(self.node)
        self.executor.add_node(t)
        self.spinner = SpinThread(self.executor)
        # every enabled output must be matched both ways before anything is published:
        # the node's publishers are volatile, a sample sent before the match is lost
        for name in LISTENED:
            if self.node.outputs[name]:
                wait_for(lambda n=name: self.node._pub[n].get_subscription_count() > 0
                         and self.subs[n].get_publisher_count() > 0,
                         what=f"discovery of ~/{name}")

    def _collector(self, name):
        def callback(msg):
            with self._lock:
                self.received[name].append(msg)
        return callback

    def close(self):
        try:
            if self.node is not None:
                # a description still loading on the node's own thread finishes first
                with self.node._loading:
                    pass
            if self.spinner is not None:
                self.spinner.stop()
            for n in (self.tester, self.node):
                if n is not None:
                    n.destroy_node()
        finally:
            if self.context.ok():
                rclpy.shutdown(context=self.context)

    # -- outputs ----------------------------------------------------------------------------
    def messages(self, topic):
        with self._lock:
            return list(self.received[topic])

    def find(self, topic, stamp, accept=None):
        """Return the latest message on ``topic`` stamped ``stamp`` (and accepted), or None."""
        for msg in reversed(self.messages(topic)):
            if same_stamp(msg.header.stamp, stamp) and (accept is None or accept(msg)):
                return msg
        return None

    def exchange(self, publish, stamp, topics=("torques",), accept=None, timeout=TIMEOUT,
                 retry=0.5):
        """
        Call ``publish()`` until every topic in ``topics`` carries a message stamped ``stamp``.

        Again every ``retry`` s: a best-effort sample may be lost before discovery
        completes. Returns {topic: message}.
        """
        deadline = time.monotonic() + timeout
        while True:
            publish()
            next_try = time.monotonic() + retry
            while time.monotonic() < next_try:
                found = {t: self.find(t, stamp, accept) for t in topics}
                if all(m is not None for m in found.values()):
                    return found
                time.sleep(0.005)
            if time.monotonic() > deadline:
                missing = [t for t, m in found.items() if m is None]
                raise AssertionError(f"no output on {missing} stamped {stamp} within "
                                     f"{timeout} s; node stats {self.node.stats()}, skipped "
                                     f"for {list(self.node.skips().reasons)[-3:]}")

    def send_joint_states(self, msg, publisher=None):
        """
        Publish ``msg`` (again every 0.3 s) until the node has taken it in; return the copies sent.

        That is: its callback ran (whether it then computed, skipped or rejected the
        message). On a loaded machine a copy sent again may reach the node later still.
        """
        publisher = publisher or self.joint_states
        before = self.node.stats()["joint_states"]
        deadline = time.monotonic() + TIMEOUT
        sent = 0
        while time.monotonic() < deadline:
            publisher.publish(msg)
            sent += 1
            try:
                wait_for(lambda: self.node.stats()["joint_states"] > before, timeout=0.3)
                return sent
            except AssertionError:
                pass
        raise AssertionError("the node never received the joint_states message")

    def no_output(self, stamp):
        """Tell whether no output topic carries ``stamp``."""
        return all(self.find(t, stamp) is None for t in LISTENED)

    def wait_log(self, text, timeout=TIMEOUT):
        """Wait for a /rosout line of the dynamics node containing ``text``."""
        def found():
            return any(text in m.msg and m.name.endswith("rbd_dynamics")
                       for m in self.messages("rosout"))
        return wait_for(found, timeout=timeout, what=f"log line {text!r}")

    # -- parameters, through the node's parameter services (those ros2 param calls) ---------
    def parameter_services(self):
        if getattr(self, "_parameter_services", None) is None:
            self._parameter_services = ParameterServices(
                self.tester, f"{self.namespace}/rbd_dynamics")
        return self._parameter_services

    def set_parameters(self, **values):
        """Set parameters of the node; return the SetParametersResult of each, in order."""
        return self.parameter_services().set(**values)

    def describe_parameters(self, names):
        """Return the ParameterDescriptor of each of ``names``, in order."""
        return self.parameter_services().describe(names)

    # -- services ---------------------------------------------------------------------------
    def call(self, service, request, timeout=None):
        """
        Call ``service``; return its response (waiting ``timeout`` s, or as below if None).

        Without a ``timeout``, a service's first call may wait up to STARTUP s, later ones
        TIMEOUT. The node compiles the services' kernels in a thread once its outputs flow (the
        planner process its own): on an empty kernel cache, a fresh machine's, a first
        request waits for that compile, longer than ``TIMEOUT`` on 2 busy cores.
        """
        if timeout is None:
            timeout = TIMEOUT if service in self.answered else STARTUP
        response = call_service(self.clients[service], request, f"the {service} response",
                                timeout)
        self.answered.add(service)
        return response


class Probe:
    """
    A tester node on a Context and spin thread of its own, for a node in another process.

    ``subscribe`` collects a topic's messages into a list; ``close`` ends it all.
    """

    def __init__(self, namespace):
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("rbd_probe", namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.spinner = SpinThread(self.executor)

    def subscribe(self, msg_type, topic, qos=RELIABLE):
        """Return the list the messages on ``topic`` are appended to."""
        got = []
        self.node.create_subscription(msg_type, topic, got.append, qos)
        return got

    def call(self, srv_type, name, request, timeout=30.0):
        """Call the service ``name`` once it is up; return the response."""
        return call_service(self.node.create_client(srv_type, name), request,
                            f"the {name} response", timeout)

    def close(self):
        self.spinner.stop()                   # the spin thread is out before the node goes
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def stop_process(proc, signum=signal.SIGINT, timeout=20.0):
    """Stop ``proc`` with ``signum`` (SIGKILL after ``timeout`` s); return its exit status."""
    if proc.poll() is None:
        proc.send_signal(signum)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


@contextlib.contextmanager
def probing(namespace, proc):
    """
    Yield a :class:`Probe` in ``namespace`` beside the node process ``proc``; one teardown.

    At the end ``proc`` is stopped (SIGINT; a test that checks its clean stop has done it
    already) and then the probe closed: its spin loop is out before its executor shuts down.
    """
    probe = Probe(namespace)
    try:
        yield probe
    finally:
        try:
            stop_process(proc)
        finally:
            probe.close()
