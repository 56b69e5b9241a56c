// workspace/symbol through the whole server: the kernels and modules of the
// open documents whose names contain the query's letters in order, any case.
#include "server/features/workspace_symbols.h"

#include "analysis_views_fixture.h"

namespace hiera::server::views_test {
namespace {

json found(const std::string& name, int kind, const std::string& uri, json at, const std::string& container) {
  return {{"name", name}, {"kind", kind}, {"location", {{"uri", uri}, {"range", std::move(at)}}}, {"containerName", container}};
}

const json kBlock = found("Block", 5, kPyUri, range(4, 6, 4, 11), "block.py");
const json kSaxpy = found("saxpy", 12, kCuUri, range(4, 16, 4, 21), "kernels.cu");
const json kFill = found("fill", 12, kCuUri, range(9, 16, 9, 20), "kernels.cu");

TEST_F(AnalysisViewsTest, WorkspaceSymbolListsTheKernelsAndModulesOfTheOpenDocuments) {
  start();
  open(kCuUri, "cuda", kCu);
  open(kPyUri, "python", kPy);
  EXPECT_EQ(workspace_symbols("")["result"], json::array({kBlock, kSaxpy, kFill}));  // by URI, then source order
}

TEST_F(AnalysisViewsTest, WorkspaceSymbolMatchesASubsequenceIgnoringCase) {
  start();
  open(kCuUri, "cuda", kCu);
  open(kPyUri, "python", kPy);
  EXPECT_EQ(workspace_symbols("SXP")["result"], json::array({kSaxpy}));
  EXPECT_EQ(workspace_symbols("axp")["result"], json::array({kSaxpy}));
  EXPECT_EQ(workspace_symbols("bk")["result"], json::array({kBlock}));
  EXPECT_EQ(workspace_symbols("l")["result"], json::array({kBlock, kFill}));
  EXPECT_EQ(workspace_symbols("twice")["result"], json::array());  // device functions are not listed
  EXPECT_EQ(workspace_symbols("saxpyy")["result"], json::array());
}

TEST_F(AnalysisViewsTest, WorkspaceSymbolForgetsClosedDocuments) {
  start();
  open(kCuUri, "cuda", kCu);
  open(kPyUri, "python", kPy);
  transport.push_message(hiera::testing::notification("textDocument/didClose", {{"textDocument", {{"uri", kCuUri}}}}));
  EXPECT_EQ(workspace_symbols("")["result"], json::array({kBlock}));
}

TEST(WorkspaceSymbolMatch, IsACaseInsensitiveSubsequence) {
  EXPECT_TRUE(symbol_matches("saxpy", ""));
  EXPECT_TRUE(symbol_matches("saxpy", "saxpy"));
  EXPECT_TRUE(symbol_matches("saxpy", "SAX"));
  EXPECT_TRUE(symbol_matches("MatmulKernel", "mmk"));
  EXPECT_FALSE(symbol_matches("saxpy", "ys"));
  EXPECT_FALSE(symbol_matches("fill", "fills"));
}

}  // namespace
}  // namespace hiera::server::views_test
