#!/usr/bin/env python3
"""check_includes.py on tiny synthetic trees: a clean one passes, each wrong include fails by name."""

import json
import os
import subprocess
import sys
import unittest

from synthetic_tree import SyntheticTreeMixin

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_includes.py")

TABLE = {
    "scan": ["protocol", "server", "engine"],
    "generated": ["hiera/"],
    "layers": {
        "protocol": {"may_include": []},
        "server": {"may_include": ["protocol", "engine/analysis"]},
        "engine/analysis": {"may_include": []},
        "engine/eval": {"may_include": ["protocol"]},
    },
    "restricted": {"\"protocol/lsp_types.h\"": ["protocol", "server"], "<cuda": ["engine/worker"]},
    "known_exceptions": [],
}

CLEAN = {
    "protocol/message.h": "#pragma once\n",
    "protocol/lsp_types.h": '#include "protocol/message.h"\n',
    "engine/analysis/analysis.h": "#pragma once\n#include <string>\n",
    "engine/analysis/analysis.cpp": '#include "engine/analysis/analysis.h"\n#include "hiera/version.h"\n',
    "engine/eval/client.cpp": '#include "protocol/message.h"\n#include "local_only.h"\n',
    "server/server.cpp": '#include "protocol/lsp_types.h"\n#include "engine/analysis/analysis.h"\n',
}


class CheckIncludesTest(SyntheticTreeMixin, unittest.TestCase):
    CHECKER = CHECKER
    TABLE = TABLE

    def test_clean_tree_passes(self):
        rc, out = self.run_checker(self.tree(CLEAN))
        self.assertEqual(rc, 0, out)
        self.assertIn("pass", out)

    def test_engine_including_server_fails_naming_it(self):
        files = dict(CLEAN)
        files["engine/analysis/analysis.cpp"] = '#include "engine/analysis/analysis.h"\n\n#include "server/server.h"\n'
        files["server/server.h"] = "#pragma once\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn('engine/analysis/analysis.cpp:3: #include "server/server.h"', out)
        self.assertIn("engine/analysis may not include server", out)

    def test_lsp_types_outside_server_fails(self):
        files = dict(CLEAN)
        files["engine/eval/client.cpp"] = '#include "protocol/lsp_types.h"\n'
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn('engine/eval/client.cpp:1: #include "protocol/lsp_types.h"', out)
        self.assertIn("restricted to protocol, server", out)

    def test_gpu_header_outside_worker_fails(self):
        files = dict(CLEAN)
        files["server/server.cpp"] += "#include <cuda_runtime.h>\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("server/server.cpp:3: #include <cuda_runtime.h>", out)

    def test_known_exception_allows_and_stale_one_fails(self):
        files = dict(CLEAN)
        files["engine/eval/client.cpp"] += '#include "engine/analysis/analysis.h"\n'
        table = json.loads(json.dumps(TABLE))
        rc, out = self.run_checker(self.tree(files, table))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/eval may not include engine/analysis", out)

        table["known_exceptions"] = [{"from": "engine/eval", "to": "engine/analysis", "reason": "test", "waits_on": "x"}]
        rc, out = self.run_checker(self.tree(files, table))
        self.assertEqual(rc, 0, out)

        rc, out = self.run_checker(self.tree(CLEAN, table))
        self.assertEqual(rc, 1, out)
        self.assertIn("known_exceptions[0] engine/eval -> engine/analysis is no longer needed", out)

    def test_folder_missing_from_table_fails(self):
        files = dict(CLEAN)
        files["engine/newthing/x.cpp"] = "int x;\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/newthing/x.cpp: lies in no layer", out)

    def test_cycle_in_table_fails(self):
        table = json.loads(json.dumps(TABLE))
        table["layers"]["protocol"]["may_include"] = ["server"]
        rc, out = self.run_checker(self.tree(CLEAN, table))
        self.assertEqual(rc, 1, out)
        self.assertIn("cycle", out)

    def test_project_table_keeps_the_server_behind_the_facade(self):
        # The project's own rules, without its known exceptions: the server reaches the engine only through engine/facade.
        with open(os.path.join(HERE, "layers.json"), encoding="utf-8") as fh:
            table = json.load(fh)
        table["known_exceptions"] = []
        engine = {
            "engine/common/cancellation.h": "#pragma once\n",
            "engine/analysis/analysis.h": '#pragma once\n#include "engine/common/cancellation.h"\n',
            "engine/spec/task_spec.h": '#pragma once\n#include "engine/analysis/analysis.h"\n',
            "engine/eval/job_results.h": "#pragma once\n",
            "engine/plan/units.h": "#pragma once\n",
            "engine/knowledge/knowledge_base.h": "#pragma once\n",
            "engine/facade/document_analysis.h": '#pragma once\n#include "engine/analysis/analysis.h"\n',
        }
        through_facade = dict(engine)
        through_facade["server/features/hover.cpp"] = '#include "engine/facade/document_analysis.h"\n'
        through_facade["server/state/store.cpp"] = '#include "engine/facade/document_analysis.h"\n'
        rc, out = self.run_checker(self.tree(through_facade, table))
        self.assertEqual(rc, 0, out)

        for folder in ("server", "server/features", "server/state"):
            for header, layer in (("engine/analysis/analysis.h", "engine/analysis"), ("engine/spec/task_spec.h", "engine/spec"),
                                  ("engine/eval/job_results.h", "engine/eval"), ("engine/plan/units.h", "engine/plan"),
                                  ("engine/knowledge/knowledge_base.h", "engine/knowledge")):
                with self.subTest(folder=folder, header=header):
                    files = dict(engine)
                    files[folder + "/wrong.cpp"] = f'#include "engine/facade/document_analysis.h"\n#include "{header}"\n'
                    rc, out = self.run_checker(self.tree(files, table))
                    self.assertEqual(rc, 1, out)
                    self.assertIn(f'{folder}/wrong.cpp:2: #include "{header}"', out)
                    self.assertIn(f"{folder} may not include {layer}", out)

    def test_project_table_passes_on_this_tree(self):
        proc = subprocess.run([sys.executable, CHECKER], capture_output=True, text=True, check=False)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main()
