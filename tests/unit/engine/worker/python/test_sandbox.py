"""sandbox.filter_syscalls: in a child process (the filter cannot be undone),
the denied calls fail with EPERM on every thread, one started before the
filter among them, in the processes it starts, and what a candidate needs
(files in its scratch directory, threads, subprocesses) still works. And the
hole it closes: a candidate process of a user that is not root owns its user
namespace, so without the filter it can unmount its read-only bind and write
the user's file."""

import json
import os
import subprocess
import sys
import unittest

import fixtures
from hiera_runner import sandbox

CHILD = r'''
import ctypes, errno, json, os, subprocess, sys, threading
from hiera_runner import sandbox
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWNET, MNT_DETACH = 0x00020000, 0x40000000, 2

def denied(call):
    return call() == -1 and ctypes.get_errno() == errno.EPERM

go, seen = threading.Event(), {}
def early():
    go.wait()
    seen["early_thread_unshare"] = denied(lambda: libc.unshare(CLONE_NEWNS))
before = threading.Thread(target=early)
before.start()

p = sandbox.Protections()
sandbox.filter_syscalls(p)
go.set()
before.join()
seen["protections"] = p.as_dict()
seen["unshare"] = denied(lambda: libc.unshare(CLONE_NEWNET))
seen["umount2"] = denied(lambda: libc.umount2(b"/proc", MNT_DETACH))
seen["mount"] = denied(lambda: libc.mount(b"none", b"/mnt", b"tmpfs", 0, None))
seen["ptrace_attach_parent"] = denied(lambda: libc.ptrace(16, os.getppid(), None, None))
seen["clock_settime"] = denied(lambda: libc.clock_settime(0, ctypes.byref((ctypes.c_long * 2)(0, 0))))
later = threading.Thread(target=lambda: seen.__setitem__("later_thread_unshare",
                                                        denied(lambda: libc.unshare(CLONE_NEWNS))))
later.start()
later.join()
child = subprocess.run([sys.executable, "-c",
                        "import ctypes, errno; c = ctypes.CDLL(None, use_errno=True); "
                        "print(c.unshare(0x00020000) == -1 and ctypes.get_errno() == errno.EPERM)"],
                       capture_output=True, text=True)
seen["subprocess_unshare"] = child.stdout.strip() == "True"
with open(os.path.join(sys.argv[1], "scratch.txt"), "w") as f:
    f.write("ok")
seen["scratch_write"] = open(os.path.join(sys.argv[1], "scratch.txt")).read() == "ok"
print(json.dumps(seen))
'''


# As a user that is not root: the sandbox's namespaces and read-only bind over
# argv[1], the filter when argv[2] says so, then the escape.
ESCAPE = r'''
import ctypes, json, os, sys
from hiera_runner import sandbox
p = sandbox.Protections()
target, mode = sys.argv[1], sys.argv[2]
sandbox.enter_namespaces(p, [target], "/nonexistent")
if mode == "filter":
    sandbox.filter_syscalls(p)
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.umount2(target.encode(), 2)
umount = "ok" if rc == 0 else os.strerror(ctypes.get_errno())
try:
    with open(os.path.join(target, "users_file"), "w") as f:
        f.write("escaped")
    write = "ok"
except OSError as e:
    write = e.strerror
print(json.dumps({"protections": p.as_dict(), "umount2": umount, "write": write}))
'''


def libseccomp_loads():
    try:
        sandbox._libseccomp()
        return True
    except OSError:
        return False


class SyscallFilterTest(unittest.TestCase):
    def test_the_list_is_the_files_names_without_comments(self):
        names = sandbox.denied_syscalls()
        with open(os.path.join(fixtures.PACKAGE_DIR, "hiera_runner", "denied_syscalls.txt")) as f:
            lines = [line.strip() for line in f]
        self.assertEqual(names, [line for line in lines if line and not line.startswith("#")])
        for name in ("mount", "umount2", "unshare", "ptrace", "process_vm_writev", "clock_settime", "io_uring_setup"):
            self.assertIn(name, names)
        self.assertEqual(len(names), len(set(names)))

    @unittest.skipUnless(libseccomp_loads(), "libseccomp.so.2 is not installed here")
    def test_the_filter_denies_its_calls_everywhere_and_leaves_the_rest(self):
        import tempfile
        with tempfile.TemporaryDirectory() as scratch:
            env = dict(os.environ, PYTHONPATH=fixtures.PACKAGE_DIR)
            run = subprocess.run([sys.executable, "-c", CHILD, scratch], capture_output=True, text=True, env=env,
                                 timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        seen = json.loads(run.stdout)
        protections = seen.pop("protections")
        self.assertEqual(protections, {"syscall_filter": "%d system calls denied (mounts, namespaces, ptrace, the clock, "
                                       "the kernel's modules and keyrings, io_uring)" % len(sandbox.denied_syscalls())})
        self.assertEqual(seen, {"early_thread_unshare": True, "unshare": True, "umount2": True, "mount": True,
                                "ptrace_attach_parent": True, "clock_settime": True, "later_thread_unshare": True,
                                "subprocess_unshare": True, "scratch_write": True})

    @unittest.skipUnless(os.getuid() == 0 and libseccomp_loads(), "needs root, to start the child as nobody")
    def test_a_user_that_is_not_root_cannot_undo_its_read_only_mounts(self):
        import pwd
        import tempfile
        nobody = pwd.getpwnam("nobody")
        for needed in (fixtures.PACKAGE_DIR, os.path.realpath(sys.executable)):
            if not sandbox._readable_by_others(needed):
                self.skipTest("nobody cannot read %s (a checkout under a private home)" % needed)
        seen = {}
        for mode in ("no filter", "filter"):
            with tempfile.TemporaryDirectory() as target:
                with open(os.path.join(target, "users_file"), "w") as f:
                    f.write("original")
                for path in (target, os.path.join(target, "users_file")):
                    os.chown(path, nobody.pw_uid, nobody.pw_gid)
                env = {"PATH": os.environ.get("PATH", "/usr/bin"), "PYTHONPATH": fixtures.PACKAGE_DIR}
                run = subprocess.run([sys.executable, "-c", ESCAPE, target, mode], capture_output=True, text=True,
                                     env=env, cwd="/", timeout=60, user=nobody.pw_uid, group=nobody.pw_gid,
                                     extra_groups=[])
                self.assertEqual(run.returncode, 0, run.stderr)
                result = json.loads(run.stdout)
                if result["protections"].get("read_only_user_files") != target:
                    self.skipTest("no user namespaces for nobody here: %s" % result["protections"])
                with open(os.path.join(target, "users_file")) as f:
                    result["users_file"] = f.read()
                seen[mode] = result
        self.assertEqual((seen["no filter"]["umount2"], seen["no filter"]["write"], seen["no filter"]["users_file"]),
                         ("ok", "ok", "escaped"))
        self.assertEqual((seen["filter"]["umount2"], seen["filter"]["write"], seen["filter"]["users_file"]),
                         ("Operation not permitted", "Read-only file system", "original"))

    def test_without_libseccomp_the_filter_is_reported_missing(self):
        original = sandbox._libseccomp

        def missing():
            raise OSError("libseccomp.so.2: cannot open shared object file: No such file or directory")
        sandbox._libseccomp = missing  # the one part of the machine this test replaces: the library's presence
        try:
            p = sandbox.Protections()
            sandbox.filter_syscalls(p)
        finally:
            sandbox._libseccomp = original
        self.assertEqual(p.as_dict(), {"syscall_filter": "not in force: libseccomp.so.2 cannot be loaded: "
                                       "libseccomp.so.2: cannot open shared object file: No such file or directory"})


if __name__ == "__main__":
    unittest.main()
