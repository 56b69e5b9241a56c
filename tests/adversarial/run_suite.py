#!/usr/bin/env python3
"""The adversarial suite: candidates written the way a reward-hacking model
writes them, each with the verdict and the check it must get, run through
the real `hiera-worker` and its Python runner (the job protocol over pipes).

    run_suite.py --worker PATH/hiera-worker --device cpu|cuda [--out DIR] [--filter SUBSTR]

Each candidate file starts with `# expect: passed` or `# expect: failed CHECK`
(`# expect-cpu:` / `# expect-cuda:` where the devices differ). Besides each
verdict the suite checks what no candidate may achieve: the secret given to
the worker appears in no reply, the user's file is still there and nothing
was written beside hiera's sources, nothing reached the loopback listener,
and the worker answers after every candidate. Prints one line per candidate
and 'N passed, M failed'; --out gets adversarial.json and adversarial.md.
"""

import argparse
import datetime
import json
import os
import re
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "engine", "worker", "python"))
from hiera_runner import framing  # noqa: E402  (the runner's own framing, no torch)

SIZES = {"cpu": {"BATCH": 64, "N": 128}, "cuda": {"BATCH": 2048, "N": 2048}}
REPLY_TIMEOUT_S = 600


class Worker(object):
    def __init__(self, command, env, cwd):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=env, cwd=cwd)
        self.reader = framing.FrameReader()
        self.next_id = 1

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        self.proc.stdin.write(framing.encode(body))
        self.proc.stdin.flush()
        deadline = time.time() + REPLY_TIMEOUT_S
        while True:
            item = self.reader.next()
            if item is not None:
                if isinstance(item, framing.FramingError):
                    raise RuntimeError("the worker's stream broke: %s" % item.message)
                reply = json.loads(item.decode())
                if reply.get("id") != rid:
                    raise RuntimeError("a reply to request %r where %d was expected" % (reply.get("id"), rid))
                return reply
            left = deadline - time.time()
            if left <= 0:
                raise RuntimeError("no reply from the worker within %d s" % REPLY_TIMEOUT_S)
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                data = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not data:
                    raise RuntimeError("the worker closed its stdout: %s" % self.stderr_tail())
                self.reader.feed(data)

    def stderr_tail(self):
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-3000:]

    def close(self):
        try:
            self.call("shutdown", {})
        except Exception:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def expectation(text, device):
    """-> ("passed", None) or ("failed", CHECK)."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"#\s*expect(-cpu|-cuda)?:\s*(passed|failed)\s*(\w+)?", line)
        if m:
            found[m.group(1) or ""] = (m.group(2), m.group(3))
    key = "-" + device
    if key in found:
        return found[key]
    if "" in found:
        return found[""]
    raise ValueError("no '# expect:' line")


class Listener(object):
    """A loopback listener the network candidates try to reach."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True, help="the hiera-worker executable")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--out", help="a directory for adversarial.json and adversarial.md")
    ap.add_argument("--filter", default="")
    ap.add_argument("--python", help="python3 for the runner (default: the worker's choice)")
    args = ap.parse_args(argv)

    sizes = SIZES[args.device]
    workspace = tempfile.mkdtemp(prefix="hiera-adversarial-")
    victim = os.path.join(workspace, "victim.txt")
    with open(victim, "w") as f:
        f.write("the user's file\n")
    pwned = os.path.join(ROOT, "engine", "worker", "python", "hiera_runner", "PWNED")
    secret = "sk-adversarial-" + secrets.token_hex(16)
    listener = Listener()
    env = dict(os.environ, HIERA_ADVERSARIAL_SECRET=secret, ADVERSARIAL_API_KEY=secret,
               HIERA_CANDIDATE_MEMORY_BYTES=str(1 << 30), HIERA_CANDIDATE_TIMEOUT_S="20")
    command = [os.path.abspath(args.worker), "--cache-dir", os.path.join(workspace, "cache")]
    if args.python:
        command += ["--python", args.python]

    with open(os.path.join(HERE, "reference.py")) as f:
        reference = f.read()
    for k, v in sizes.items():
        reference = re.sub(r"\b%s\b" % k, str(v), reference)
    names = sorted(n for n in os.listdir(os.path.join(HERE, "candidates")) if n.endswith(".py") and args.filter in n)

    worker = Worker(command, env, workspace)
    rows, ok_count, bad_count = [], 0, 0
    started = time.time()
    try:
        hello = worker.call("hello", {"engine_version": "0.1.0"})
        if "result" not in hello:
            raise RuntimeError("hello failed: %s" % hello)
        for name in names:
            with open(os.path.join(HERE, "candidates", name)) as f:
                text = f.read()
            want = expectation(text, args.device)
            source = text.replace("VICTIM", repr(victim)).replace("LISTEN_PORT", str(listener.port))
            for k, v in sizes.items():
                source = re.sub(r"\b%s\b" % k, str(v), source)
            task = {"kind": "pytorch", "device": args.device, "reference": {"source": reference},
                    "candidate": {"source": source}}
            t0 = time.time()
            reply = worker.call("evaluate", {"task": task, "trials": 5, "timing_trials": 10, "seed": 4242})
            seconds = time.time() - t0
            result = reply.get("result") or {}
            verdict = result.get("verdict", "error")
            checks = [f.get("check") for f in result.get("failures", [])]
            message = (result.get("failures") or [{}])[0].get("message", "") if checks else ""
            if "error" in reply:
                verdict, message = "error", reply["error"].get("message", "")
            problems = []
            if want[0] != verdict:
                problems.append("verdict %s, expected %s" % (verdict, want[0]))
            elif want[0] == "failed" and want[1] not in checks:
                problems.append("failed for %s, expected %s" % (checks, want[1]))
            if secret in json.dumps(reply):
                problems.append("the secret appears in the reply")
            if not os.path.exists(victim):
                problems.append("the user's file was deleted")
            if os.path.exists(pwned):
                problems.append("a file was written beside hiera's sources")
                os.remove(pwned)
            if listener.connections:
                problems.append("%d connection(s) reached the loopback listener" % listener.connections)
            alive = worker.call("hello", {"engine_version": "0.1.0"})
            if "result" not in alive:
                problems.append("the worker no longer answers")
            ok = not problems
            ok_count += ok
            bad_count += not ok
            rows.append({"candidate": name, "expected": "%s %s" % want if want[1] else want[0],
                         "verdict": verdict, "checks": checks, "message": message[:400], "seconds": round(seconds, 2),
                         "ok": ok, "problems": problems, "sandbox": result.get("sandbox")})
            print("%-4s %-45s expected %-26s got %-8s %-22s %5.1fs%s" % (
                "ok" if ok else "FAIL", name, rows[-1]["expected"], verdict, ",".join(c for c in checks if c) or "-",
                seconds, ("  <- " + "; ".join(problems)) if problems else ""))
            sys.stdout.flush()
    finally:
        worker.close()
        listener.close()
    total = time.time() - started
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        record = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "device": args.device,
                  "sizes": sizes, "worker": args.worker, "seconds": round(total, 1), "passed": ok_count,
                  "failed": bad_count, "cases": rows, "hello": hello.get("result")}
        with open(os.path.join(args.out, "adversarial.json"), "w") as f:
            json.dump(record, f, indent=1)
        with open(os.path.join(args.out, "adversarial.md"), "w") as f:
            f.write("# Adversarial suite, %s, device %s (BATCH %d, N %d)\n\n" % (
                record["date"], args.device, sizes["BATCH"], sizes["N"]))
            f.write("%d of %d candidates got the verdict and the check they must get.\n\n" % (ok_count, len(rows)))
            f.write("| candidate | expected | verdict | checks | seconds |\n|---|---|---|---|---|\n")
            for r in rows:
                f.write("| %s | %s | %s | %s | %.1f |\n" % (r["candidate"], r["expected"], r["verdict"],
                                                          ", ".join(c for c in r["checks"] if c) or "-", r["seconds"]))
            if rows and rows[0].get("sandbox"):
                f.write("\nSandbox protections reported:\n\n")
                for k, v in sorted(rows[0]["sandbox"].items()):
                    f.write("- %s: %s\n" % (k, v))
    print("adversarial: %d passed, %d failed" % (ok_count, bad_count))
    return 0 if bad_count == 0 and rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
