"""
The planner services off the tick path: computed on a thread of their own, answered from it.

The node's fallback (parameter ``planner_process`` false): by default a child process serves
them (``process``), since what this thread cannot move off the ticks, rclpy's
deserialization of the request (below), holds them for milliseconds with a large request.

A 1,000-point ``~/trajectory_torques`` on talos or a rollout with derivatives computes for
tens to hundreds of milliseconds; on the executor's thread the ticks behind it would wait
that long. rclpy has no deferred service response, and its EventsExecutor (rclpy 7.1)
does not run coroutine service callbacks, so the deferral is made at the one step every
executor shares: it calls the service's callback, then ``service.send_response(response,
header)`` on the same object. The callback here only records the request; this service's
``send_response`` (set on the instance) hands request, response and header to the worker
thread, which computes, fills the response and sends it with rclpy's own
``Service.send_response``. The executor's thread is back at the ticks within microseconds
(rclpy's deserialization of the request, before the callback, stays on it). Checked with
the EventsExecutor, the SingleThreadedExecutor and the MultiThreadedExecutor of the tests.

Beside the tick, the worker must not hold what the tick needs:

* the GIL: the batch kernels release it (``nogil``, ``rbd_ros._jit.batch_kernel``), and the
  worker's Python (request checks, the rollout's steps) hands it over at the interpreter's
  switch interval, lowered to :data:`SWITCH_INTERVAL` for the node's process;
* the cores: the worker's batch kernels run on all cores but one (``numba.set_num_threads``
  is per thread), so the tick keeps a core;
* the workspace: each request computes in a ``Data`` of its own, on the model of the robot
  current when it starts (one consistent model for the whole request: a robot description
  or payload swapped in meanwhile applies to the next request).

Requests are computed one at a time, in arrival order. A request in flight when the node is
destroyed is dropped (its client gets no answer).
"""
import os
import queue
import sys
import threading

import numba
from rclpy.service import Service

SWITCH_INTERVAL = 0.0002      # s: Python's default 0.005 would let the worker hold a tick


class PlannerWorker:
    """One worker thread that computes and answers the services created through it."""

    def __init__(self, logger):
        self._logger = logger
        self._jobs = queue.SimpleQueue()
        self._pending = {}              # id(response) -> (request, callback)
        self._lock = threading.Lock()
        self.threads = max(1, min(numba.config.NUMBA_NUM_THREADS, (os.cpu_count() or 1) - 1))
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._run, daemon=True, name="rbd_planner")
        self._thread.start()

    def create_service(self, node, srv_type, name, callback):
        """
        Create the service ``name`` on ``node``, computed by ``callback(request, response)``.

        ``callback`` fills the response and never raises (``services.guarded_service``); it runs
        on the worker thread.
        """
        def take(request, response):          # the executor's thread: record, return
            with self._lock:
                self._pending[id(response)] = (request, callback)
            return response

        service = node.create_service(srv_type, name, take)

        def send_response(response, header):  # the executor's thread, right after take()
            with self._lock:
                pending = self._pending.pop(id(response), None)
            if pending is None:               # not a response of take(): send it as it is
                Service.send_response(service, response, header)
            else:
                self._jobs.put((service, pending[0], response, pending[1], header))

        service.send_response = send_response
        return service

    def close(self):
        """Stop the worker after the request it computes (if any); later ones are dropped."""
        self._jobs.put(None)

    def _run(self):
        numba.set_num_threads(self.threads)
        while True:
            job = self._jobs.get()
            if job is None:
                return
            service, request, response, callback, header = job
            callback(request, response)
            try:
                Service.send_response(service, response, header)
            except Exception as exc:          # the service destroyed meanwhile (shutdown)
                self._logger.debug(f"planner answer not sent: {type(exc).__name__}: {exc}")
