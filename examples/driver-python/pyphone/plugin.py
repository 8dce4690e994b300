"""The go-plugin side of a driver (SPEC.md section 1): the cookie, the
socket, the health, controller and stdio services, the handshake line, and
the process's lifetime.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import empty_pb2

from grpc_health.v1 import health_pb2
from plugin import grpc_controller_pb2, grpc_stdio_pb2

COOKIE_KEY = "PINKY_DRIVER_PLUGIN"
COOKIE_VALUE = "6c1f4e2a9b7d43c8a5e0f3b2d1c49a87"
MAX_MESSAGE = 16 << 20  # SPEC.md section 3


def log(level, msg, **fields):
    """log writes one JSON line on stderr, which the host keeps with its level."""
    fields.update(level=level, msg=msg, time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    sys.stderr.write(json.dumps(fields) + "\n")
    sys.stderr.flush()


def check_start():
    """check_start refuses to run without the host, as SPEC.md 1.2 asks."""
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("%s is a Pinky driver plugin: the pinky daemon starts it "
                         "(try: pinky driver check %s)\n" % (sys.argv[0], sys.argv[0]))
        sys.exit(1)
    # PLUGIN_PROTOCOL_VERSIONS is not read: version 1 is the only contract
    # version, and the host refuses a driver whose version it did not list.


def _health(req, context):
    # go-plugin asks for the service "plugin"; "" is the whole server.
    if req.service in ("", "plugin"):
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
    context.abort(grpc.StatusCode.NOT_FOUND, "unknown service %r" % req.service)


class Plugin:
    """Plugin is the gRPC server of one driver process and its lifetime."""

    def __init__(self, driver_handler, on_stop):
        self._on_stop = on_stop
        self._stopped = threading.Event()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                                  options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                           ("grpc.max_send_message_length", MAX_MESSAGE)])
        self.server.add_generic_rpc_handlers((
            driver_handler,
            grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
                "Check": grpc.unary_unary_rpc_method_handler(
                    _health, request_deserializer=health_pb2.HealthCheckRequest.FromString,
                    response_serializer=health_pb2.HealthCheckResponse.SerializeToString)}),
            grpc.method_handlers_generic_handler("plugin.GRPCController", {
                "Shutdown": grpc.unary_unary_rpc_method_handler(
                    self._shutdown, request_deserializer=grpc_controller_pb2.Empty.FromString,
                    response_serializer=grpc_controller_pb2.Empty.SerializeToString)}),
            grpc.method_handlers_generic_handler("plugin.GRPCStdio", {
                "StreamStdio": grpc.unary_stream_rpc_method_handler(
                    self._stdio, request_deserializer=empty_pb2.Empty.FromString,
                    response_serializer=grpc_stdio_pb2.StdioData.SerializeToString)}),
        ))
        self._dir = None

    def _shutdown(self, req, context):
        log("INFO", "shutting down: the host asked (GRPCController.Shutdown)")
        # The socket folder goes at once: the host kills a driver that has
        # not exited two seconds after this call, and on a busy machine
        # the stop below may not reach its end by then. The connection in
        # use lives on without the file.
        self._remove_dir()
        # Answer first; stop once the answer is on its way.
        threading.Thread(target=self.stop, daemon=True).start()
        return grpc_controller_pb2.Empty()

    def _stdio(self, req, context):
        # This driver writes its logs to stderr itself, which the host reads
        # from the process; the stream only has to stay open, or the host
        # logs that stdio is not served.
        done = threading.Event()
        context.add_callback(done.set)
        while not done.wait(0.5) and not self._stopped.is_set():
            pass
        return
        yield  # a generator that sends nothing

    def listen(self):
        """listen binds the socket and returns the handshake's network and address."""
        if os.name == "nt":
            lo, hi = int(os.environ.get("PLUGIN_MIN_PORT", "10000")), int(os.environ.get("PLUGIN_MAX_PORT", "25000"))
            for port in range(lo, hi + 1):
                try:
                    if self.server.add_insecure_port("127.0.0.1:%d" % port):
                        return "tcp", "127.0.0.1:%d" % port
                except RuntimeError:
                    continue
            raise RuntimeError("no free port in %d..%d" % (lo, hi))
        # A private folder (0700) of our own, inside PLUGIN_UNIX_SOCKET_DIR
        # when the host sets it; removed when the driver exits.
        self._dir = tempfile.mkdtemp(prefix="pinky-pyphone-", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
        path = os.path.join(self._dir, "driver.sock")
        self.server.add_insecure_port("unix:" + path)
        return "unix", path

    def serve(self):
        """serve listens, prints the handshake line and returns when the
        driver has stopped."""
        network, addr = self.listen()
        self.server.start()
        log("INFO", "listening", network=network, addr=addr, pid=os.getpid())
        # SPEC.md 1.4: core protocol 1, contract version 1, network,
        # address, grpc, and an empty sixth field (no automatic mTLS).
        sys.stdout.write("1|1|%s|%s|grpc|\n" % (network, addr))
        sys.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=self.stop, daemon=True).start())
        threading.Thread(target=self._watch_parent, args=(os.getppid(),), daemon=True).start()
        self._stopped.wait()
        self.server.wait_for_termination()

    def stop(self):
        """stop ends the streams, the server and the socket folder; it is idempotent."""
        if self._stopped.is_set():
            return
        self._remove_dir()
        self._on_stop()
        self._stopped.set()
        self.server.stop(grace=0.5).wait()

    def _remove_dir(self):
        """_remove_dir removes the socket folder; it is idempotent."""
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)

    def _watch_parent(self, ppid):
        # SPEC.md 1.6: exit within a second once the host is gone.
        while not self._stopped.is_set():
            if os.getppid() != ppid:
                log("INFO", "the host process is gone; exiting")
                self.stop()
                return
            time.sleep(0.25)
