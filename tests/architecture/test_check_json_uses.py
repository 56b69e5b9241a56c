#!/usr/bin/env python3
"""check_json_uses.py on tiny synthetic trees: a clean one passes, each undocumented or stale use fails by name."""

import os
import unittest

from synthetic_tree import SyntheticTreeMixin

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_json_uses.py")

TABLE = {"scan": ["protocol", "server", "engine"], "layers": {}}

INCLUDE = "#include <nlohmann/json.hpp>\n"

CLEAN = {
    # The JSON zones are not checked.
    "protocol/message.h": INCLUDE,
    "engine/eval/job_results.cpp": INCLUDE,
    "engine/worker/main.cpp": INCLUDE,
    # A remaining use, named in its folder's README (both files of a brace name).
    "engine/knowledge/recipe.h": INCLUDE,
    "engine/knowledge/recipe.cpp": "nlohmann::json value;\n",
    "engine/knowledge/loader.cpp": INCLUDE,
    "engine/knowledge/plain.cpp": "int main() {}\n",
    "engine/knowledge/README.md": "# engine/knowledge\n\nText.\n\n## JSON here\n"
                                  "- `recipe.{h,cpp}`: the recipe files are JSON\n"
                                  "- `loader.cpp`: reads knowledge/*.json (`nlohmann::json` is not a file name)\n"
                                  "\n## Must not know\n`plain.cpp` here is prose, not a name.\n",
    # A subfolder without a README of its own is named in the nearest one above it.
    "engine/propose/kernels/node_args.cpp": INCLUDE,
    "engine/propose/README.md": "# engine/propose\n\n## JSON here\n- `kernels/node_args.cpp`: graph attributes\n",
    # No JSON, no section needed.
    "engine/plan/plan.cpp": "int plan();\n",
    "engine/plan/README.md": "# engine/plan\n",
    "server/lsp_server.cpp": INCLUDE,
    "server/README.md": "# server\n\n### JSON here\n- `lsp_server.cpp`: LSP messages are JSON\n",
}


class CheckJsonUsesTest(SyntheticTreeMixin, unittest.TestCase):
    CHECKER = CHECKER
    TABLE = TABLE

    def test_clean_tree_passes(self):
        rc, out = self.run_checker(self.tree(CLEAN))
        self.assertEqual(rc, 0, out)
        self.assertIn("5 files outside protocol, engine/eval, engine/worker use nlohmann/json", out)

    def test_an_unnamed_use_fails_naming_the_file_and_the_readme(self):
        files = dict(CLEAN)
        files["engine/knowledge/gpu_spec.cpp"] = "nlohmann::json spec;\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/knowledge/gpu_spec.cpp: uses nlohmann/json but engine/knowledge/README.md", out)
        self.assertIn("(add `gpu_spec.cpp` with why)", out)

    def test_a_name_outside_the_section_does_not_count(self):
        files = dict(CLEAN)
        files["engine/knowledge/plain.cpp"] = INCLUDE  # named only under "Must not know"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/knowledge/plain.cpp: uses nlohmann/json", out)

    def test_a_folder_without_a_readme_fails(self):
        files = dict(CLEAN)
        files["engine/graph/op_graph.cpp"] = INCLUDE
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/graph/op_graph.cpp: uses nlohmann/json, and no folder above it has a README.md", out)

    def test_a_readme_without_the_section_fails(self):
        files = dict(CLEAN)
        files["engine/plan/plan.cpp"] = INCLUDE
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/plan/README.md: has no '## JSON here' section, but these use nlohmann/json: plan.cpp", out)

    def test_stale_names_fail(self):
        files = dict(CLEAN)
        files["engine/knowledge/recipe.cpp"] = "int recipe();\n"
        del files["engine/knowledge/loader.cpp"]
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("names `recipe.cpp`, which no longer uses nlohmann/json (delete it)", out)
        self.assertIn("names `loader.cpp`, which does not exist (delete it)", out)

    def test_a_name_in_the_wrong_readme_fails(self):
        files = dict(CLEAN)
        files["engine/propose/kernels/README.md"] = "# kernels\n\n## JSON here\n- `node_args.cpp`: graph attributes\n"
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 1, out)
        self.assertIn("engine/propose/README.md: 'JSON here' names `kernels/node_args.cpp`, "
                      "which belongs to the README nearer to it", out)

    def test_the_json_zones_are_not_checked(self):
        files = dict(CLEAN)
        files["engine/eval/profile_result.cpp"] = INCLUDE
        files["engine/worker/python/runner.cpp"] = INCLUDE
        files["protocol/framing.cpp"] = INCLUDE
        rc, out = self.run_checker(self.tree(files))
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
