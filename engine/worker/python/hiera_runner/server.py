"""The serve loop: frames in, one response per request out, jobs in order.

Methods: hello, evaluate, profile, deliver, capture, shutdown. A handler's
exception becomes a JSON-RPC error and the loop goes on; a broken CUDA
context ends the process with exit code 3 after the reply (the parent
restarts the runner).
"""

import gc
import os
import sys
import traceback

from . import WORKER_VERSION, framing, jsonrpc
from .jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError

EXIT_RESTART = 3


def log(message):
    sys.stderr.write("hiera_runner: %s\n" % message)
    sys.stderr.flush()


class Server(object):
    def __init__(self, in_fd, out_fd):
        self.in_fd = in_fd
        self.writer = framing.FrameWriter(out_fd)
        self.reader = framing.FrameReader()
        self.handlers = {"hello": self.hello, "evaluate": self.evaluate, "profile": self.profile,
                         "deliver": self.deliver, "capture": self.capture, "shutdown": self.shutdown}
        self._exit_code = None  # set by a handler: exit after its reply

    # --- the loop -------------------------------------------------------------
    def serve(self):
        """Runs until shutdown or end of input; returns the exit code."""
        while True:
            try:
                data = os.read(self.in_fd, 1 << 16)
            except InterruptedError:
                continue
            if not data:
                err = self.reader.finish()
                if err is not None:
                    log("input ended: %s" % err.message)
                return 0
            self.reader.feed(data)
            while True:
                item = self.reader.next()
                if item is None:
                    break
                if isinstance(item, framing.FramingError):
                    self.writer.write(jsonrpc.error(None, PARSE_ERROR, "framing: " + item.message))
                    continue
                self.handle(item)
                if self._exit_code is not None:
                    return self._exit_code

    def handle(self, body):
        try:
            request = jsonrpc.parse(body)
        except RpcError as e:
            self.writer.write(jsonrpc.error(getattr(e, "id", None), e.code, e.message))
            return
        handler = self.handlers.get(request.method)
        if request.is_notification:
            return  # notifications ($/cancelRequest, ...) need no reply; none is acted on
        if handler is None:
            self.writer.write(jsonrpc.error(request.id, METHOD_NOT_FOUND, "unknown method %r" % request.method))
            return
        try:
            result = handler(request.params if isinstance(request.params, dict) else {})
            reply = jsonrpc.result(request.id, result)
            if isinstance(result, dict) and result.get("restart"):
                self._exit_code = EXIT_RESTART
        except RpcError as e:
            reply = jsonrpc.error(request.id, e.code, e.message, e.data)
            if isinstance(e.data, dict) and e.data.get("restart"):
                self._exit_code = EXIT_RESTART
        except BaseException as e:  # a job must never end the loop
            if isinstance(e, KeyboardInterrupt):
                raise
            log("%s failed:\n%s" % (request.method, traceback.format_exc()))
            restart = _cuda_broken()
            reply = jsonrpc.error(request.id, INTERNAL_ERROR, "%s: %s" % (type(e).__name__, e),
                                  {"restart": True} if restart else None)
            if restart:
                self._exit_code = EXIT_RESTART
        self.writer.write(reply)

    # --- methods ----------------------------------------------------------------
    def hello(self, params):
        import torch
        from . import device
        engine = params.get("engine_version")
        if engine is not None and _major_minor(engine) != _major_minor(WORKER_VERSION):
            raise RpcError(INVALID_REQUEST, "engine version %s is not compatible with worker version %s"
                           % (engine, WORKER_VERSION))
        from . import candidate_spawn, isolation
        if torch.cuda.is_available():
            # The first job's candidate process (started before torch was imported, or now) is made ready
            # while the engine probes and plans.
            isolation.prepare_spare(device.select({"device": "cuda"}))
        candidate_spawn.take_early(None)  # one started on a wrong guess of the device ends here
        return {"worker_version": WORKER_VERSION, "python": sys.executable, "torch": torch.__version__,
                "cuda": torch.cuda.is_available(), "device": device.describe()}

    def evaluate(self, params):
        from . import evaluate
        return self._job(evaluate.evaluate, params)

    def profile(self, params):
        from . import profile
        return self._job(profile.profile, params)

    def deliver(self, params):
        from . import deliver
        return self._job(deliver.deliver, params)

    def capture(self, params):
        from . import graph_capture
        return self._job(graph_capture.capture, params)

    def shutdown(self, params):
        from . import isolation
        isolation.close_spares()
        isolation.remove_scratch_root()
        self._exit_code = 0
        return None

    def _job(self, fn, params):
        from . import state
        snapshot = state.Snapshot()
        try:
            return fn(params)
        finally:
            snapshot.restore()
            gc.collect()
            _release_cuda_cache()


def _major_minor(version):
    parts = str(version).split(".")
    return tuple(parts[:2])


def _cuda_broken():
    try:
        import torch
        if not torch.cuda.is_available() or not torch.cuda.is_initialized():
            return False
        from . import device
        return device.context_broken(torch.device("cuda", torch.cuda.current_device()))
    except Exception:
        return True


def _release_cuda_cache():
    try:
        import torch
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    except Exception:
        pass
