"""How much a loaded machine adds to a round trip between two processes,
measured by the trusted side beside each timed call of a candidate.

A candidate's call crosses the process boundary: its wall time seen from the
runner is its own clock's figure, the harness's gap, and whatever delay the
scheduler adds to the two wake-ups of the exchange. The last is not the
candidate's to report (it answers every probe of its own process), so a
process that runs no candidate code answers one byte at once, and its round
trip, next to each call, says what the machine added then.
"""

import os
import subprocess
import sys
import threading
import time

# Reads a byte and writes it back until its stdin closes (the runner's exit).
_ECHO = "import os\nwhile True:\n    b = os.read(0, 1)\n    if not b:\n        break\n    os.write(1, b)\n"

_lock = threading.Lock()
_probe = None


class LoadProbe(object):
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", _ECHO], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0, close_fds=True, env={})

    def alive(self):
        return self.proc.poll() is None

    def round_trip_ms(self):
        t0 = time.perf_counter()
        os.write(self.proc.stdin.fileno(), b"x")
        if os.read(self.proc.stdout.fileno(), 1) != b"x":
            raise OSError("the load probe's process ended")
        return (time.perf_counter() - t0) * 1e3

    def close(self):
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()
        self.proc.wait()


def probe():
    """The runner's one probe process, started on first use (and again if it died)."""
    global _probe
    with _lock:
        if _probe is None or not _probe.alive():
            _probe = LoadProbe()
        return _probe


def round_trip_ms():
    """One round trip in ms; None where the probe cannot run (then nothing is allowed for load)."""
    try:
        return probe().round_trip_ms()
    except OSError:
        return None
