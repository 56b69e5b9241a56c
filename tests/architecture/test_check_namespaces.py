#!/usr/bin/env python3
"""check_namespaces.py on tiny synthetic trees: a clean one passes, a namespace its folder does not name fails by name."""

import os
import unittest

from synthetic_tree import SyntheticTreeMixin

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_namespaces.py")

TABLE = {"scan": ["server", "engine"], "layers": {}}

CLEAN = {
    "engine/common/cancellation.h": "namespace hiera::engine {\n}\n",
    "engine/eval/worker_pool.cpp": "namespace hiera::engine::eval {\nnamespace {\n}\n}\n",
    # Deeper than the folder, an alias, and a namespace outside hiera are all fine.
    "engine/worker/kernel_host.h": "namespace hiera::engine::worker::kernel_host {\n}\nnamespace kh = hiera::engine::worker;\n",
    "engine/propose/llm/chat.cpp": "namespace hiera::engine::propose::llm {\n}\nnamespace std {\n}\n",
    # Not under engine/: not checked.
    "server/lsp_server.cpp": "namespace hiera::server {\n}\n",
}


class CheckNamespacesTest(SyntheticTreeMixin, unittest.TestCase):
    CHECKER = CHECKER
    TABLE = TABLE

    def test_clean_tree_passes(self):
        rc, out = self.run_checker(self.tree(CLEAN))
        self.assertEqual(rc, 0, out)
        self.assertIn("Namespace rule: 4 engine files pass", out)

    def test_a_namespace_that_disagrees_with_its_folder_fails_naming_both(self):
        files = dict(CLEAN)
        files["engine/worker/job_server.cpp"] = "// The job loop.\nnamespace hiera::worker {\n}\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/worker/job_server.cpp:2: namespace hiera::worker: engine/worker is hiera::engine::worker", out)

    def test_a_subfolder_in_its_parents_namespace_fails(self):
        files = dict(CLEAN)
        files["engine/propose/llm/endpoint.h"] = "namespace hiera::engine::propose {\n}\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/propose/llm/endpoint.h:1: namespace hiera::engine::propose: engine/propose/llm is "
                      "hiera::engine::propose::llm", out)

    def test_the_vocabulary_folder_may_not_open_a_namespace_of_its_own_name_elsewhere(self):
        files = dict(CLEAN)
        files["engine/common/sha256.h"] = "namespace hiera::common {\n}\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/common/sha256.h:1: namespace hiera::common: engine/common is hiera::engine", out)


if __name__ == "__main__":
    unittest.main()
