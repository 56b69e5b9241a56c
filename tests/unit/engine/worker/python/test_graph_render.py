"""graph_render.size_list: the size lists of views and reshapes written so that
the generated module holds at other batch sizes (torch.export writes numbers)."""

import unittest

from hiera_runner import graph_render


class SizeListTest(unittest.TestCase):
    def test_leading_sizes_equal_to_the_sources_follow_it(self):
        # GPT-2's head split and merge, captured at batch 8 and 1024 tokens.
        self.assertEqual(graph_render.size_list([8, 1024, 12, 64], "getitem_1", [8, 1024, 768]),
                         "[getitem_1.shape[0], getitem_1.shape[1], 12, 64]")
        self.assertEqual(graph_render.size_list([8, 1024, 768], "contiguous", [8, 1024, 12, 64]),
                         "[contiguous.shape[0], contiguous.shape[1], 768]")
        # Only the leading run: after the first size that differs, numbers.
        self.assertEqual(graph_render.size_list([8, 64, 1024], "x", [8, 1024, 64]), "[x.shape[0], 64, 1024]")

    def test_a_flattened_leading_size_becomes_minus_one(self):
        self.assertEqual(graph_render.size_list([8192, 768], "h", [8, 1024, 768]), "[-1, 768]")
        self.assertEqual(graph_render.size_list([8192, 12, 64], "h", [8, 1024, 12, 64]), "[-1, 12, 64]")
        # Not a flattening of the leading sizes: numbers.
        self.assertEqual(graph_render.size_list([4096, 1536], "h", [8, 1024, 768]), "[4096, 1536]")

    def test_a_first_size_that_splits_the_sources_first_becomes_minus_one(self):
        # Swin's windowed attention, batch 64 and 64 windows: [B * nW, heads, N, N] -> [B, nW, heads, N, N],
        # and the window reverse [B * 8 * 8, 7, 7, C] -> [B, 8, 8, 7, 7, C].
        self.assertEqual(graph_render.size_list([64, 64, 3, 49, 49], "add", [4096, 3, 49, 49]),
                         "[-1, 64, 3, 49, 49]")
        self.assertEqual(graph_render.size_list([64, 8, 8, 7, 7, 96], "w", [4096, 7, 7, 96]),
                         "[-1, 8, 8, 7, 7, 96]")
        # The trailing sizes differ, or the split is not of the first size: numbers.
        self.assertEqual(graph_render.size_list([64, 64, 49, 3, 49], "add", [4096, 3, 49, 49]),
                         "[64, 64, 49, 3, 49]")
        self.assertEqual(graph_render.size_list([32, 64, 3, 49, 49], "add", [4096, 3, 49, 49]),
                         "[32, 64, 3, 49, 49]")
        # A one-dimensional source has no batch to follow.
        self.assertEqual(graph_render.size_list([16, 16], "x", [256]), "[16, 16]")

    def test_sizes_of_one_and_unrelated_sizes_stay_numbers(self):
        self.assertEqual(graph_render.size_list([1, 1024, 768], "x", [1, 1024, 768]),
                         "[1, 1024, 768]")
        self.assertEqual(graph_render.size_list([16, 16], "x", [256]), "[16, 16]")
        self.assertEqual(graph_render.size_list([], "x", [4]), "[]")


if __name__ == "__main__":
    unittest.main()
