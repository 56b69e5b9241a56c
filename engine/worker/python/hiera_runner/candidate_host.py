"""The candidate process: `python3 -m hiera_runner.candidate_host CONFIG`.

The untrusted side of the runner. It loads one candidate, constructs its
ModelNew, runs forward on the tensors the trusted side hands it and hands
back its outputs, over the exchange socket (exchange.py) and nothing else.
It holds no reference outputs, no comparison code and no verdict: whatever
a candidate does to this process (patching modules, forging replies, lying
about its timings) changes only what this process says, and the trusted
side checks every reply against its own measurements. One process serves
one candidate and is then ended.

CONFIG is JSON: {"fd": the socket's descriptor, "parent": the runner's pid,
"device": "cuda:N" | "cpu", "read_only": [paths], "home": the user's home,
"writable": [paths handed to the sandbox user]}.
"""

import json
import os
import socket
import sys


def _setup(config):
    from . import sandbox
    protections = sandbox.Protections()
    sandbox.die_with_parent(protections, int(config["parent"]))
    sandbox.enter_namespaces(protections, config.get("read_only", []), config.get("home", ""))
    sandbox.set_limits(protections)
    return protections


def main(argv):
    config = json.loads(argv[0])
    protections = _setup(config)  # before torch: namespaces need a single thread
    sock = socket.socket(fileno=int(config["fd"]))
    import torch
    from . import exchange, sandbox
    channel = exchange.Channel(sock)
    device = torch.device(config.get("device", "cpu"))
    cuda_error = None
    if device.type == "cuda":
        try:
            torch.cuda.set_device(device)
            torch.cuda.init()
            torch.empty(1, device=device).zero_()
            torch.cuda.synchronize(device)
        except Exception as e:  # reported in "ready"; the trusted side decides
            cuda_error = "%s: %s" % (type(e).__name__, e)
    sandbox.drop_privileges(protections, sandbox.python_paths(), config.get("writable", []))
    sandbox.filter_syscalls(protections)
    os.chdir(os.environ.get("HOME", "/"))
    import time
    channel.send({"op": "ready", "pid": os.getpid(), "protections": protections.as_dict(),
                  "cuda_error": cuda_error, "at": time.time()})
    Host(channel, device).serve()
    os._exit(0)


class Host(object):
    def __init__(self, channel, device):
        import torch
        from . import exchange, verify
        self.torch, self.exchange, self.verify = torch, exchange, verify
        self.channel = channel
        self.device = device
        self.loaded = None
        self.model = None
        self.outputs = None       # the last call's output leaves, until fetched
        self.opened = {}          # IPC handle -> DeviceBuffer (the trusted side reuses its buffers)
        self.out_buffers = []     # exchange buffers for outputs, reused by position and size
        self.poison = verify.poison_for(device) if device.type == "cuda" else None
        self.mapped = []          # this call's CPU input mappings, closed before the next
        self.kept = []            # outputs exported to the trusted side, alive until the next call

    def serve(self):
        while True:
            try:
                message, fds = self.channel.recv()
            except self.exchange.ExchangeError:
                return
            op = message.get("op")
            handler = getattr(self, "op_" + str(op), None)
            if handler is None:
                self.channel.send({"ok": False, "error": "unknown op %r" % (op,)})
                continue
            if op == "exit":
                return
            try:
                handler(message, fds)
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    # --- ops ------------------------------------------------------------------------
    def op_load(self, message, fds):
        from . import loader
        torch = self.torch
        try:
            self.loaded = loader.load(message["source"], "candidate")
            cls = self.loaded.get("ModelNew")
            if not callable(cls):
                raise loader.LoadError("compile", "the candidate defines no ModelNew")
        except loader.LoadError as e:
            self.channel.send({"ok": False, "check": e.check, "message": e.message, "cuda_broken": self._broken()})
            return
        try:
            init = self._values(message.get("init", []), fds)
            torch.manual_seed(int(message.get("seed", 0)))
            model = cls(*init)
            if hasattr(model, "to"):
                model = model.to(self.device)
            self._sync()
            self.model = model
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            self.channel.send({"ok": False, "check": "runtime", "where": "construction",
                               "message": loader.describe_exception(e, "<candidate>", "candidate"),
                               "cuda_broken": self._broken()})
            return
        self.channel.send({"ok": True})

    def op_run(self, message, fds):
        """One forward on the inputs given; the outputs are kept for `fetch`.
        With "timed", CUDA events (or perf_counter) around the call."""
        from . import loader
        verify = self.verify
        for m in self.mapped:
            m.close()
        self.mapped = []
        try:
            args = self._values(message.get("inputs", []), fds)
        except self.exchange.ExchangeError as e:
            self.channel.send({"ok": False, "where": "inputs", "message": str(e)})
            return
        poison = message.get("poison")
        self.outputs = None
        self.kept = []
        if poison and self.poison is not None:
            self.poison.fit(int(message.get("output_bytes", 0)))
            # The finite poison decides whether NaN was computed or never written: it must reach every
            # free block, and so must the poison for outputs small enough to come from a partly used
            # segment; the NaN poison of an ordinary call takes the cheap way (most blocks).
            out_bytes = int(message.get("output_bytes", 0))
            self.poison(word=verify.FINITE_POISON_WORD if poison == "finite" else verify.POISON_WORD,
                        every_free_block=poison == "finite" or out_bytes <= (1 << 20))
        elapsed = None
        try:
            seed = int(message.get("seed", 0))
            if message.get("fill") and verify.FillPass.available():
                with verify.FillPass():
                    out = verify.call(self.model, args, self.device, seed)
            elif message.get("timed"):
                out, elapsed = self._timed(args, seed)
            else:
                out = verify.call(self.model, args, self.device, seed)
            self.outputs = verify.flatten(out)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            self.channel.send({"ok": False, "where": "forward",
                               "message": loader.describe_exception(e, "<candidate>", "candidate"),
                               "cuda_broken": self._broken()})
            return
        self.channel.send({"ok": True, "elapsed_ms": elapsed, "outputs": len(self.outputs)})

    def _timed(self, args, seed):
        torch = self.torch
        from . import timing
        torch.manual_seed(seed)
        with torch.no_grad():
            if self.device.type == "cuda":
                start, end = timing._Event(enable_timing=True), timing._Event(enable_timing=True)
                timing._record(start)
                out = self.model(*args)
                timing._record(end)
                timing._synchronize(self.device)
                return out, timing._elapsed_time(start, end)
            t0 = timing._perf_counter()
            out = self.model(*args)
            return out, (timing._perf_counter() - t0) * 1e3

    def op_fetch(self, message, fds):
        """The kept outputs: on CUDA the memory they are in, exported as it is
        (its allocation's IPC handle and the offset in it); on the CPU copied
        into a memfd of their own."""
        torch, exchange = self.torch, self.exchange
        if self.outputs is None:
            self.channel.send({"ok": False, "where": "fetch", "message": "no outputs to fetch"})
            return
        descs, send_fds, kept = [], [], []
        try:
            for k, x in enumerate(self.outputs):
                if not isinstance(x, torch.Tensor):
                    descs.append(exchange.describe_value(x))
                    continue
                x = x.detach()
                if x.device != self.device:
                    x = x.to(self.device)
                x = x.contiguous()
                nbytes = x.numel() * x.element_size()
                d = {"kind": "tensor", "dtype": exchange.DTYPE_NAMES.get(x.dtype, str(x.dtype)),
                     "shape": list(x.shape), "nbytes": nbytes}
                if self.device.type == "cuda":
                    if nbytes:
                        if self._is_input_memory(x):
                            x = x.clone()  # memory the trusted side handed over cannot be exported back
                        d["handle"], d["offset"] = exchange.export_device_memory(x.data_ptr())
                    kept.append(x)
                else:
                    buf = self._out_buffer(k, nbytes)
                    buf.tensor(x.dtype, list(x.shape), nbytes).copy_(x)
                    d["fd_index"] = len(send_fds)
                    send_fds.append(buf.fd)
                descs.append(d)
            self._sync()
        except Exception as e:
            self.channel.send({"ok": False, "where": "fetch", "message": "%s: %s" % (type(e).__name__, e),
                               "cuda_broken": self._broken()})
            return
        self.kept = kept  # alive (and so not reused) until the next call
        self.channel.send({"ok": True, "outputs": descs}, fds=send_fds)

    def _is_input_memory(self, x):
        ptr = x.data_ptr()
        return any(b.ptr <= ptr < b.ptr + b.nbytes for b in self.opened.values())

    def op_calibrate(self, message, fds):
        """A timed call of a probe (a copy of the first tensor input) through
        the same path as the candidate's timed calls. Only answered before a
        candidate is loaded: then this process has run no candidate code, and
        the gap it shows between its clock and the trusted side's is the
        harness's own."""
        torch = self.torch
        if self.loaded is not None:
            self.channel.send({"ok": False, "where": "calibrate", "message": "a candidate is already loaded"})
            return
        try:
            args = self._values(message.get("inputs", []), fds)
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            model, self.model = self.model, (lambda *a: tensors[0].clone() if tensors else None)
            try:
                _, elapsed = self._timed(args, 0)
            finally:
                self.model = model
        except Exception as e:
            self.channel.send({"ok": False, "where": "calibrate", "message": "%s: %s" % (type(e).__name__, e)})
            return
        self.channel.send({"ok": True, "elapsed_ms": elapsed})

    def op_ping(self, message, fds):
        """The exchange's round trip, as a call makes it: the inputs decoded,
        one (empty) piece of GPU work and a synchronize, no forward."""
        try:
            self._values(message.get("inputs", []), fds)
        except self.exchange.ExchangeError:
            pass
        if self.device.type == "cuda":
            self.torch.cuda.current_stream(self.device).record_event()
        self._sync()
        self.channel.send({"ok": True})

    def op_profile(self, message, fds):
        from . import loader, profile
        try:
            args = self._values(message.get("inputs", []), fds)
            kernels = profile.run(self.model, args, self.device, int(message.get("calls", 5)))
        except Exception as e:
            self.channel.send({"ok": False, "where": "profile",
                               "message": loader.describe_exception(e, "<candidate>", "candidate"),
                               "cuda_broken": self._broken()})
            return
        self.channel.send({"ok": True, "kernels": kernels})

    def op_exit(self, message, fds):
        pass

    # --- helpers ---------------------------------------------------------------------
    def _out_buffer(self, k, nbytes):
        exchange = self.exchange
        while len(self.out_buffers) <= k:
            self.out_buffers.append(None)
        buf = self.out_buffers[k]
        if buf is None or buf.nbytes < nbytes:
            if buf is not None:
                buf.close()
            buf = exchange.DeviceBuffer(self.device, nbytes=nbytes) if self.device.type == "cuda" \
                else exchange.HostBuffer(nbytes)
            self.out_buffers[k] = buf
        return buf

    def _values(self, descs, fds):
        """Input descriptors -> the values forward gets (tensors on shared memory)."""
        exchange = self.exchange
        out = []
        for d in descs:
            if not isinstance(d, dict):
                raise exchange.ExchangeError("an input descriptor that is not an object")
            kind = d.get("kind")
            if kind == "value":
                out.append(_decode_value(d.get("value")))
            elif kind == "tensor":
                dtype, shape, nbytes = exchange.check_descriptor(d, 1 << 62)
                if "handle" in d:
                    buf = self.opened.get(d["handle"])
                    if buf is None:
                        buf = exchange.DeviceBuffer(self.device, handle=d["handle"])
                        self.opened[d["handle"]] = buf
                    t = buf.tensor(dtype, shape, nbytes)
                else:
                    fd = fds[int(d["fd_index"])]
                    mapped = exchange.HostBuffer(nbytes, fd=os.dup(fd))
                    self.mapped.append(mapped)
                    t = mapped.tensor(dtype, shape, nbytes)
                if d.get("requires_grad"):
                    t.requires_grad_(True)
                out.append(t)
            else:
                raise exchange.ExchangeError("an input of unknown kind %r" % (kind,))
        return out

    def _sync(self):
        if self.device.type == "cuda":
            from . import timing
            timing._synchronize(self.device)

    def _broken(self):
        from . import device as device_mod
        return device_mod.context_broken(self.device)


def _decode_value(v):
    if isinstance(v, dict) and "tuple" in v:
        return tuple(_decode_value(x) for x in v["tuple"])
    if isinstance(v, list):
        return [_decode_value(x) for x in v]
    return v


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except SystemExit:
        raise
    except BaseException:
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
