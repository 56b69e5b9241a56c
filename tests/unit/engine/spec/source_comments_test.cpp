// Comments found line by line, and string literals that only look like comments.
#include "engine/spec/source_comments.h"

#include <gtest/gtest.h>

namespace hiera::engine::spec {

void PrintTo(const CommentLine& c, std::ostream* os) {
  *os << "{" << c.line << ", " << c.column << ", \"" << c.text << "\", " << (c.block ? "true" : "false") << "}";
}

namespace {

TEST(SourceCommentsTest, PythonCommentsWithPositions) {
  const std::string source =
      "import torch  # hiera: atol=1e-3\n"
      "# plain\n"
      "x = 1\n";
  EXPECT_EQ(comment_lines(source, SourceLanguage::Python),
            (std::vector<CommentLine>{{1, 16, " hiera: atol=1e-3", false}, {2, 2, " plain", false}}));
}

TEST(SourceCommentsTest, PythonStringsAreNotComments) {
  const std::string source =
      "a = '# hiera: no'\n"
      "b = \"it's # not\"  # yes\n"
      "c = '''\n"
      "# hiera: inside a docstring\n"
      "'''\n"
      "d = \"\"\"x\"\"\" # after\n"
      "e = r'\\'' # raw\n"
      "f = 'unterminated\n"
      "# next line\n";
  EXPECT_EQ(comment_lines(source, SourceLanguage::Python),
            (std::vector<CommentLine>{{2, 20, " yes", false},
                                      {6, 14, " after", false},
                                      {7, 12, " raw", false},
                                      {9, 2, " next line", false}}));
}

TEST(SourceCommentsTest, CudaLineAndBlockComments) {
  const std::string source =
      "// hiera: size N=4\n"
      "int x; /* one */ int y;\n"
      "/* first\n"
      " * second */\n"
      "__global__ void k() {}  // tail\r\n";
  EXPECT_EQ(comment_lines(source, SourceLanguage::Cuda),
            (std::vector<CommentLine>{{1, 3, " hiera: size N=4", false},
                                      {2, 10, " one ", true},
                                      {3, 3, " first", true},
                                      {4, 1, " * second ", true},
                                      {5, 27, " tail", false}}));
}

TEST(SourceCommentsTest, CudaStringsCharsRawStringsAndNumbers) {
  const std::string source =
      "const char* s = \"// not \\\" /* not */\";\n"
      "char c = '\"'; // one\n"
      "auto r = R\"x(// not )\" still)x\"; // two\n"
      "int n = 1'000'000; // three\n"
      "char q = '/'; // four\n";
  EXPECT_EQ(comment_lines(source, SourceLanguage::Cuda),
            (std::vector<CommentLine>{{2, 17, " one", false},
                                      {3, 36, " two", false},
                                      {4, 22, " three", false},
                                      {5, 17, " four", false}}));
}

TEST(SourceCommentsTest, CudaLineCommentContinuedByBackslash) {
  const std::string source = "// a \\\n b\nint x;\n";
  EXPECT_EQ(comment_lines(source, SourceLanguage::Cuda),
            (std::vector<CommentLine>{{1, 3, " a \\", false}, {2, 1, " b", false}}));
}

}  // namespace
}  // namespace hiera::engine::spec
