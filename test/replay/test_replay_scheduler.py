"""
``rbd_replay --scheduler`` at a TCP service that is not Dask: a short message, exit status 2.

A local HTTP server made the run hang for minutes (Dask's timeout covers the connection, not
its handshake); a peer answering garbage gave a traceback after Dask tried to allocate what
its first bytes said (3 EiB). Each peer here is a socket server on 127.0.0.1 of this test.
"""
import gc
import os
import socket
import threading
import time

import pytest

from rbd_ros.replay import cli

HTTP_ANSWER = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class Peer:
    """A TCP server on 127.0.0.1 answering each connection as ``mode`` says."""

    def __init__(self, mode):
        self.mode, self.accepted = mode, []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = "tcp://127.0.0.1:%d" % self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:                       # closed
                return
            self.accepted.append(conn)            # kept open: "silent" never answers
            if self.mode == "http":
                conn.recv(65536)
                conn.sendall(HTTP_ANSWER)
            elif self.mode == "garbage":
                conn.sendall(bytes(range(256)) * 16)

    def close(self):
        self.server.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def peer():
    made = []

    def make(mode):
        made.append(Peer(mode))
        return made[-1]
    yield make
    for p in made:
        p.close()


def replay(tmp_path, scheduler, *more):
    out = tmp_path / "fleet"
    status = cli.main([str(tmp_path / "some.mcap"), "-o", str(out), "--no-bag",
                       "--no-progress", "--scheduler", scheduler, *more])
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if "partial" in p]
    return status


@pytest.mark.parametrize("mode", ["http", "garbage"])
def test_a_peer_that_answers_something_else_is_no_scheduler(mode, peer, tmp_path, capsys):
    p = peer(mode)
    assert replay(tmp_path, p.address) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rbd_replay: --scheduler '{p.address}': what answered is not a Dask "
                          "scheduler (its answer does not follow Dask's protocol")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert p.accepted                             # it was asked
    # the client Dask half made is gone: left to a later garbage collection, its __del__
    # deadlocked the next client's start for 10 s when it ran in that client's loop thread
    assert not unclosed_clients()


def unclosed_clients():
    """Return the Dask clients in memory that are not closed (gc.get_objects: no collection)."""
    from distributed import Client
    return [o for o in gc.get_objects() if type(o) is Client and o.status != "closed"]


def test_a_peer_that_never_answers_times_out(peer, tmp_path, capsys):
    p = peer("silent")
    started = time.monotonic()
    assert replay(tmp_path, p.address, "--scheduler-timeout", "5") == 2
    took = time.monotonic() - started
    err = capsys.readouterr().err.strip()
    assert err == (f"rbd_replay: --scheduler '{p.address}': no Dask scheduler answered within "
                   "5 s (connection and handshake): is it the address of a Dask scheduler?")
    assert took >= 5                               # it waited for the handshake, then gave up
    assert p.accepted                              # it was asked


def test_nothing_listening_is_said_plainly(tmp_path, capsys):
    with socket.create_server(("127.0.0.1", 0)) as s:
        address = "tcp://127.0.0.1:%d" % s.getsockname()[1]
    assert replay(tmp_path, address, "--scheduler-timeout", "2") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rbd_replay: --scheduler '{address}': ") and "Traceback" not in err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e9"])
def test_a_bad_scheduler_timeout_is_refused(value, tmp_path, capsys):
    assert replay(tmp_path, "tcp://127.0.0.1:9", "--scheduler-timeout", value) == 2
    assert "--scheduler-timeout must be a number of seconds" in capsys.readouterr().err
