"""What the checkers' tests share: a synthetic source tree with its layer
table in a temporary directory, and a checker run over it as a process."""

import json
import os
import shutil
import subprocess
import sys
import tempfile


class SyntheticTreeMixin:
    """For a unittest.TestCase whose class sets CHECKER (the script's path) and TABLE."""

    def tree(self, files, table=None):
        root = tempfile.mkdtemp(prefix="hiera-architecture-")
        self.addCleanup(shutil.rmtree, root, True)
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        with open(os.path.join(root, "layers.json"), "w", encoding="utf-8") as fh:
            json.dump(self.TABLE if table is None else table, fh)
        return root

    def run_checker(self, root):
        proc = subprocess.run([sys.executable, self.CHECKER, "--root", root, "--table", os.path.join(root, "layers.json")],
                              capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout + proc.stderr
