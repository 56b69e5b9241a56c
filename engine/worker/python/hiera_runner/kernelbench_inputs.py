"""KernelBench's inputs: torch.manual_seed(s), then get_inputs() on the CPU,
for each of its trial seeds, with the values KernelBench's evaluator gets.

At today's sizes a draw takes seconds (the CPU generator is serial: about
3 s for 2 GB), so `SeededDraws` starts them on threads as soon as a job
knows it will check KernelBench's criterion, each thread with a generator of
its own handed to every random call it makes (a TorchFunctionMode, which is
thread-local), while the job verifies and compiles on its main thread. A
draw that reaches for a global generator (a random function that takes no
generator, such as rand_like or dropout) is not KernelBench's: then every
trial is drawn again one by one under torch.manual_seed, when it is needed.
"""

import concurrent.futures
import threading

import torch

from .inputs import _tensor_bytes

# Random functions that take a generator: inside _Seeded they draw from the trial's own.
_RANDOM_METHODS = ("uniform_", "normal_", "random_", "exponential_", "bernoulli_", "cauchy_", "log_normal_",
                   "geometric_")
_RANDOM_FUNCTIONS = ("rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson")
# A word of these in a function's name (split at "_") means it draws random numbers; one that is not
# above takes no generator, so it would draw from the global one.
_RANDOM_WORDS = frozenset(("rand", "randn", "randint", "randperm", "random", "dropout", "normal", "bernoulli",
                           "multinomial", "poisson", "uniform", "exponential", "cauchy", "geometric", "rrelu",
                           "gumbel"))


def kernelbench_seeds(trials):
    """KernelBench's trial seeds: torch.manual_seed(42), then a randint below
    2**32 - 1 per trial (drawn here from a generator of its own, which gives
    the same numbers and leaves the global one alone)."""
    g = torch.Generator().manual_seed(42)
    return [int(s) for s in torch.randint(0, 2 ** 32 - 1, (trials,), generator=g)]


def _random_callables():
    found = set()
    for name in _RANDOM_FUNCTIONS:
        if hasattr(torch, name):
            found.add(getattr(torch, name))
    for name in _RANDOM_METHODS:
        if hasattr(torch.Tensor, name):
            found.add(getattr(torch.Tensor, name))
    return found


def _draws_randomly(func):
    name = getattr(func, "__name__", "") or ""
    return bool(_RANDOM_WORDS.intersection(name.strip("_").lower().split("_")))


class _Seeded(torch.overrides.TorchFunctionMode):
    """Hands the trial's generator to every random call get_inputs() makes on its
    thread, so trials can be drawn at once and each gives what
    torch.manual_seed(seed) followed by get_inputs() gives. `global_draw`
    names the first random call that took no generator."""

    def __init__(self, generator, random):
        torch.overrides.TorchFunctionMode.__init__(self)
        self.generator = generator
        self.random = random
        self.global_draw = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in self.random:
            if kwargs.get("generator") is None:
                kwargs["generator"] = self.generator
        elif self.global_draw is None and _draws_randomly(func):
            self.global_draw = getattr(func, "__name__", repr(func))
        return func(*args, **kwargs)


class _GlobalDraw(Exception):
    pass


def _serial(get_inputs, seed):
    torch.manual_seed(seed)
    return get_inputs()


def _available_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class SeededDraws(object):
    """get_inputs() as KernelBench draws it for each seed, started on threads
    when made: the first, then as many of the others at once (up to `workers`)
    as half the host's free memory holds. Iterating yields them in order,
    waiting for the threads; a trial not drawn ahead, or every trial after a
    draw that touched a global generator or failed, is drawn then, one by
    one under torch.manual_seed."""

    def __init__(self, get_inputs, seeds, workers=4):
        self.get_inputs = get_inputs
        self.seeds = list(seeds)
        self.workers = max(1, workers)
        self.serial_reason = None  # why the trials are drawn one by one, if they are
        self._random = _random_callables()
        self._drawn = {}
        self._stopped = threading.Event()
        self._thread = None
        if self.seeds:
            self._thread = threading.Thread(target=self._drive, name="hiera-kernelbench-inputs", daemon=True)
            self._thread.start()

    def _draw(self, seed):
        if self._stopped.is_set():
            raise concurrent.futures.CancelledError()
        mode = _Seeded(torch.Generator().manual_seed(seed), self._random)
        with mode:
            value = self.get_inputs()
        if mode.global_draw is not None:
            raise _GlobalDraw("get_inputs() calls %s, which draws from the global generator" % mode.global_draw)
        return value

    def _drive(self):
        try:
            self._drawn[0] = self._draw(self.seeds[0])
            rest = self.seeds[1:]
            fit = _available_memory() // (2 * max(1, _tensor_bytes(self._drawn[0])))
            ahead = rest[:max(0, min(len(rest), fit))]
            if not ahead:
                return
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(self.workers, len(ahead)))
            try:
                futures = [pool.submit(self._draw, s) for s in ahead]
                for i, f in enumerate(futures):
                    self._drawn[i + 1] = f.result()
            finally:
                pool.shutdown(wait=True)
        except concurrent.futures.CancelledError:
            self._drawn.clear()
        except _GlobalDraw as e:
            self._drawn.clear()
            self.serial_reason = str(e)
        except Exception as e:  # drawn again on the job's thread, where the error is the job's
            self._drawn.clear()
            self.serial_reason = "a draw on a thread failed: %s: %s" % (type(e).__name__, e)

    def wait(self):
        """Until the draws started ahead have ended."""
        if self._thread is not None:
            self._thread.join()

    def stop(self):
        """No more draws start; what is drawn is dropped (a job that ends
        before KernelBench's check)."""
        self._stopped.set()
        self._drawn.clear()

    def __iter__(self):
        self.wait()
        for k, seed in enumerate(self.seeds):
            if self.serial_reason is None and k in self._drawn:
                yield self._drawn.pop(k)
            else:
                yield _serial(self.get_inputs, seed)
