// hiera: annotations: Python and CUDA comments, lists, ranges, per-dtype
// tolerances, launch-contract lines, and exact errors with line and column.
#include "engine/spec/annotations.h"

#include <gtest/gtest.h>

namespace hiera::engine::spec {

void PrintTo(const AnnotationError& e, std::ostream* os) { *os << e.to_string(); }
void PrintTo(const AnnotatedClause& c, std::ostream* os) {
  *os << c.name << "=" << c.value.dump() << " @" << c.line << ":" << c.column << " " << c.origin();
}

namespace {

using nlohmann::json;
using Errors = std::vector<AnnotationError>;

Annotations python(const std::string& source) { return parse_annotations(source, SourceLanguage::Python); }
Annotations cuda(const std::string& source) { return parse_annotations(source, SourceLanguage::Cuda); }

// The clauses as {name: value}, for compact expectations.
json values(const Annotations& annotations) {
  json out = json::object();
  for (const auto& clause : annotations.clauses) out[clause.name] = clause.value;
  return out;
}

Errors errors_of(const std::string& python_source) { return python(python_source).errors; }

TEST(AnnotationsTest, PythonItemsSeparatedBySemicolonsAndCommas) {
  const auto parsed = python(
      "import torch\n"
      "class Model(torch.nn.Module):  # hiera: atol=1e-3, rtol=1e-3; allow=tf32|bf16\n");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(parsed.clauses, (std::vector<AnnotatedClause>{
                                {"numerics.atol", 0.001, 2, 41, {2}},
                                {"numerics.rtol", 0.001, 2, 52, {2}},
                                {"numerics.allow", json{"tf32", "bf16"}, 2, 63, {2}},
                            }));
}

TEST(AnnotationsTest, PerDtypeTolerancesMergeWithTheGeneralOne) {
  const auto parsed = python(
      "# hiera: atol=1e-3 atol.float16=5e-3\n"
      "# hiera: rtol.bfloat16=0.02\n");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(values(parsed), json::parse(R"j({"numerics.atol": {"*": 0.001, "float16": 0.005},
                                            "numerics.rtol": {"bfloat16": 0.02}})j"));
}

TEST(AnnotationsTest, EveryPythonKey) {
  const auto parsed = python(
      "# hiera: range batch_size=1..64 dim=1024..8192\n"
      "# hiera: second batch_size=3; size batch_size=16\n"
      "# hiera: outputs=0|2, inplace=x|y, deterministic=false, stateless=true, nan=forbid\n"
      "# hiera: spaces=S1|S2; libraries=torch|cublas; target=1.5x; budget=40; time=10m; compile=90s\n"
      "# hiera: flops=2*batch_size*dim bytes=8*batch_size*dim\n");
  EXPECT_EQ(parsed.errors, Errors{});
  EXPECT_EQ(values(parsed), json::parse(R"j({
    "interface.shape_range": {"batch_size": [1, 64], "dim": [1024, 8192]},
    "invariants.shape_generality": {"batch_size": 3},
    "interface.sizes": {"batch_size": 16},
    "interface.outputs_compared": [0, 2],
    "interface.inplace": ["x", "y"],
    "numerics.deterministic": false,
    "invariants.stateless": true,
    "numerics.nan_inf": "forbid",
    "environment.spaces": ["S1", "S2"],
    "environment.libraries": ["torch", "cublas"],
    "performance.target_speedup": 1.5,
    "environment.candidate_budget": 40,
    "environment.time_budget_s": 600,
    "environment.compile_budget_s": 90,
    "performance.flops": "2*batch_size*dim",
    "performance.bytes": "8*batch_size*dim"})j"));
  EXPECT_EQ(parsed.clauses[0].name, "interface.shape_range");
  EXPECT_EQ(parsed.clauses[0].origin(), "line 1");
}

TEST(AnnotationsTest, CudaLaunchContract) {
  const auto parsed = cuda(
      "// hiera: size N=16777216\n"
      "// hiera: arg n scalar int32 = N\n"
      "// hiera: arg a scalar float32=2.5\n"
      "/* hiera: arg x input float32[N] */\n"
      "// hiera: arg y output float32[N]\n"
      "// hiera: launch grid=(N+255)/256 block=256 smem=0\n"
      "// hiera: flops=2*N bytes=12*N\n"
      "__global__ void saxpy(int n, float a, const float* x, float* y) {}\n");
  EXPECT_EQ(parsed.errors, Errors{});
  EXPECT_EQ(values(parsed), json::parse(R"j({
    "interface.sizes": {"N": 16777216},
    "interface.args": [
      {"name": "n", "role": "scalar", "type": "int32", "value": "N"},
      {"name": "a", "role": "scalar", "type": "float32", "value": "2.5"},
      {"name": "x", "role": "input", "type": "float32", "extent": "N"},
      {"name": "y", "role": "output", "type": "float32", "extent": "N"}],
    "interface.launch": {"grid": ["(N+255)/256", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"},
    "performance.flops": "2*N",
    "performance.bytes": "12*N"})j"));
  const AnnotatedClause& args = parsed.clauses[1];
  EXPECT_EQ(args.name, "interface.args");
  EXPECT_EQ(args.origin(), "lines 2, 3, 4, 5");
  EXPECT_EQ(args.line, 2);
  EXPECT_EQ(args.column, 11);
}

TEST(AnnotationsTest, MultiDimensionalExtentsGridsAndValueRanges) {
  const auto parsed = cuda(
      "// hiera: size M=512 K=256 E=64\n"
      "// hiera: arg a input float16[M, K+1]; arg idx input int32[M] values=0..64\n"
      "// hiera: arg out inout float32[M*K]\n"
      "// hiera: launch grid=((M+15)/16, (K+15)/16) block=(16, 16) smem=16*16*4\n"
      "/*\n"
      " * hiera: second M=333\n"
      " */\n");
  EXPECT_EQ(parsed.errors, Errors{});
  EXPECT_EQ(values(parsed), json::parse(R"j({
    "interface.sizes": {"M": 512, "K": 256, "E": 64},
    "interface.args": [
      {"name": "a", "role": "input", "type": "float16", "extent": "M*(K+1)"},
      {"name": "idx", "role": "input", "type": "int32", "extent": "M", "range": [0.0, 64.0]},
      {"name": "out", "role": "inout", "type": "float32", "extent": "M*K"}],
    "interface.launch": {"grid": ["(M+15)/16", "(K+15)/16", "1"], "block": ["16", "16", "1"], "shared_bytes": "16*16*4"},
    "invariants.shape_generality": {"M": 333}})j"));
}

TEST(AnnotationsTest, AnnotationsInStringsAndOtherCommentsAreNot) {
  const auto parsed = python(
      "'''\n"
      "# hiera: atol=1\n"
      "'''\n"
      "src = \"// hiera: atol=2\"\n"
      "# TODO hiera: atol=3\n"
      "#hiera:rtol=4\n");
  EXPECT_TRUE(parsed.errors.empty());
  EXPECT_EQ(values(parsed), json::parse(R"j({"numerics.rtol": 4})j"));
  // A CUDA source inside a Python string (load_inline) carries no annotations of the module.
  EXPECT_TRUE(python("cuda_src = '''\n// hiera: size N=4\n'''\n").clauses.empty());
}

TEST(AnnotationsTest, LineRangeSelectsTheTargetsAnnotations) {
  const std::string source =
      "// hiera: atol=1e-3\n"
      "__global__ void a() {}\n"
      "// hiera: atol=1e-2\n"
      "__global__ void b() {}\n";
  const auto first = parse_annotations(source, SourceLanguage::Cuda, 1, 2);
  const auto second = parse_annotations(source, SourceLanguage::Cuda, 3, 4);
  EXPECT_EQ(values(first), json::parse(R"j({"numerics.atol": 0.001})j"));
  EXPECT_EQ(values(second), json::parse(R"j({"numerics.atol": 0.01})j"));
  EXPECT_EQ(second.clauses[0].line, 3);
}

// The comments split once and parsed range by range (what annotation_facts
// does for every kernel of a file) give what parsing the source per range gives.
TEST(AnnotationsTest, CommentsSplitOnceGiveTheSameRangesAsTheSource) {
  std::string source;
  for (int k = 0; k < 30; ++k) {
    source += "// hiera: atol=" + std::to_string(k + 1) + "\n"
              "/* hiera: rtol=" + std::to_string(k + 2) + "\n   hiera: bogus */\n"
              "__global__ void k" + std::to_string(k) + "() { const char* s = \"// hiera: atol=9\"; }\n";
  }
  const auto comments = comment_lines(source, SourceLanguage::Cuda);
  for (int first = 1; first <= 90; first += 7) {
    for (int last : {first, first + 2, first + 10, INT_MAX}) {
      const auto from_source = parse_annotations(source, SourceLanguage::Cuda, first, last);
      const auto from_comments = parse_annotations(std::span<const CommentLine>(comments), SourceLanguage::Cuda, first, last);
      EXPECT_EQ(from_comments.clauses, from_source.clauses) << first << ".." << last;
      EXPECT_EQ(from_comments.errors, from_source.errors) << first << ".." << last;
    }
  }
  EXPECT_EQ(values(parse_annotations(std::span<const CommentLine>(comments), SourceLanguage::Cuda, 4, 6)),
            json::parse(R"j({"numerics.atol": 2, "numerics.rtol": 3})j"));
}

TEST(AnnotationsTest, SyntaxErrors) {
  EXPECT_EQ(errors_of("# hiera:\n"),
            (Errors{{1, 9, "empty annotation: expected KEY=VALUE or a directive after 'hiera:'"}}));
  EXPECT_EQ(errors_of("# hiera: atol 1e-3\n"), (Errors{{1, 15, "expected '=' after 'atol'"}}));
  EXPECT_EQ(errors_of("# hiera: atol\n"), (Errors{{1, 14, "expected '=' after 'atol'"}}));
  EXPECT_EQ(errors_of("# hiera: atol=\n"), (Errors{{1, 14, "missing value for 'atol'"}}));
  EXPECT_EQ(errors_of("# hiera: =3\n"), (Errors{{1, 10, "expected a key before '='"}}));
  EXPECT_EQ(errors_of("# hiera: flops=(2*N\n"), (Errors{{1, 16, "unclosed '('"}}));
  EXPECT_EQ(errors_of("# hiera: flops=2*N)\n"), (Errors{{1, 19, "unexpected ')'"}}));
  EXPECT_EQ(errors_of("# hiera: flops=(2*N]\n"), (Errors{{1, 20, "unexpected ']' (expected ')')"}}));
  EXPECT_EQ(errors_of("# hiera: allow=tf32||bf16\n"),
            (Errors{{1, 21, "empty item in list 'tf32||bf16' (items are separated by '|')"}}));
  EXPECT_EQ(errors_of("# hiera: outputs=0,2\n"),
            (Errors{{1, 20, "expected KEY=VALUE, got '2' (list items are separated by '|': allow=tf32|bf16)"}}));
  EXPECT_EQ(errors_of("# hiera: size=4\n"),
            (Errors{{1, 10, "'size' is a directive, not a key: write 'size NAME=VALUE'"}}));
}

TEST(AnnotationsTest, BadKeysAndValues) {
  EXPECT_EQ(errors_of("# hiera: ulp=2\n"),
            (Errors{{1, 10,
                     "unknown key 'ulp' (known: atol, rtol, atol.DTYPE, rtol.DTYPE, allow, deterministic, nan, "
                     "stateless, inplace, outputs, spaces, libraries, target, budget, time, compile, memory, flops, "
                     "bytes; directives: size, second, range, shape, arg, launch)"}}));
  EXPECT_EQ(errors_of("# hiera: atol=abc\n"), (Errors{{1, 15, "atol must be a non-negative number, got 'abc'"}}));
  EXPECT_EQ(errors_of("# hiera: rtol=-1\n"), (Errors{{1, 15, "rtol must be a non-negative number, got '-1'"}}));
  EXPECT_EQ(errors_of("# hiera: atol.float8=1e-2\n"),
            (Errors{{1, 15, "unknown dtype 'float8' in 'atol.float8' (float64, float32, float16, bfloat16)"}}));
  EXPECT_EQ(errors_of("# hiera: allow=tf32|fp4\n"), (Errors{{1, 21, "unknown precision 'fp4' (tf32, bf16, fp16, fp8)"}}));
  EXPECT_EQ(errors_of("# hiera: allow=tf32|tf32\n"), (Errors{{1, 21, "'tf32' is listed twice"}}));
  EXPECT_EQ(errors_of("# hiera: deterministic=yes\n"),
            (Errors{{1, 24, "deterministic must be true or false, got 'yes'"}}));
  EXPECT_EQ(errors_of("# hiera: nan=ignore\n"), (Errors{{1, 14, "nan must be propagate or forbid, got 'ignore'"}}));
  EXPECT_EQ(errors_of("# hiera: spaces=S4\n"), (Errors{{1, 17, "unknown space 'S4' (S1, S2, S3)"}}));
  EXPECT_EQ(errors_of("# hiera: inplace=x-1\n"), (Errors{{1, 18, "not an argument name 'x-1' (a name: letters, digits, _)"}}));
  EXPECT_EQ(errors_of("# hiera: outputs=0|a.b\n"), (Errors{{1, 20, "not an output index or name 'a.b'"}}));
  EXPECT_EQ(errors_of("# hiera: target=fast\n"), (Errors{{1, 17, "target must be a speedup such as 1.5x, got 'fast'"}}));
  EXPECT_EQ(errors_of("# hiera: target=0.5x\n"),
            (Errors{{1, 17, "target must be at least 1x (a speedup over the reference), got '0.5x'"}}));
  EXPECT_EQ(errors_of("# hiera: budget=0\n"), (Errors{{1, 17, "budget must be a positive number of candidates, got '0'"}}));
  EXPECT_EQ(errors_of("# hiera: time=10y\n"),
            (Errors{{1, 15, "time must be a duration such as 600s, 10m or 1h, got '10y'"}}));
  EXPECT_EQ(errors_of("# hiera: flops=2*\n"),
            (Errors{{1, 16, "size expression '2*': expected a number, a size name or '(' at column 3"}}));
  EXPECT_EQ(errors_of("# hiera: range N=8192..1024\n"), (Errors{{1, 18, "empty range '8192..1024' (LO is above HI)"}}));
  EXPECT_EQ(errors_of("# hiera: range N=1024-8192\n"),
            (Errors{{1, 18, "expected a range LO..HI of positive integers, got '1024-8192'"}}));
  EXPECT_EQ(errors_of("# hiera: second 2N=5\n"), (Errors{{1, 17, "'2N' is not a size name"}}));
  EXPECT_EQ(errors_of("# hiera: size N=0\n"), (Errors{{1, 17, "size N must be a positive integer, got '0'"}}));
}

TEST(AnnotationsTest, Duplicates) {
  EXPECT_EQ(errors_of("# hiera: atol=1e-3\n"
                      "# hiera: rtol=1e-3, atol=1e-2\n"),
            (Errors{{2, 21, "duplicate 'atol' (first on line 1)"}}));
  // A per-dtype tolerance is its own key; the same one twice is not.
  EXPECT_EQ(errors_of("# hiera: atol=1e-3 atol.float16=1e-2 atol.float16=2e-2\n"),
            (Errors{{1, 38, "duplicate 'atol.float16' (first on line 1)"}}));
  EXPECT_EQ(cuda("// hiera: size N=4 M=2\n// hiera: size N=8\n").errors,
            (Errors{{2, 16, "duplicate 'size N' (first on line 1)"}}));
  EXPECT_EQ(cuda("// hiera: arg x input float32[4]\n// hiera: arg x output float32[4]\n").errors,
            (Errors{{2, 15, "duplicate 'arg x' (first on line 1)"}}));
  EXPECT_EQ(cuda("// hiera: launch grid=1 block=1\n// hiera: launch grid=2 block=1\n").errors,
            (Errors{{2, 11, "duplicate 'launch' (first on line 1)"}}));
}

TEST(AnnotationsTest, ContractLineErrors) {
  auto errors = [](const std::string& line) { return cuda(line + "\n").errors; };
  EXPECT_EQ(errors("// hiera: arg x input"),
            (Errors{{1, 22, "expected 'arg NAME ROLE TYPE[EXTENT]' or 'arg NAME scalar TYPE = VALUE'"}}));
  EXPECT_EQ(errors("// hiera: arg x in float32[N]"), (Errors{{1, 17, "unknown role 'in' (input, output, inout, scalar)"}}));
  EXPECT_EQ(errors("// hiera: arg x input float[N]"),
            (Errors{{1, 23, "unknown type 'float' (float32, float16, bfloat16, float64, int32, int64, uint8)"}}));
  EXPECT_EQ(errors("// hiera: arg x input float32"),
            (Errors{{1, 30, "an array needs an extent: 'arg x input float32[N]'"}}));
  EXPECT_EQ(errors("// hiera: arg x input float32[N+]"),
            (Errors{{1, 31, "size expression 'N+': expected a number, a size name or '(' at column 3"}}));
  EXPECT_EQ(errors("// hiera: arg x input float32[N]x"), (Errors{{1, 33, "unexpected 'x' after ']'"}}));
  EXPECT_EQ(errors("// hiera: arg x input float32[N] range=0..1"),
            (Errors{{1, 34, "unexpected 'range': an array argument takes only 'values=LO..HI'"}}));
  EXPECT_EQ(errors("// hiera: arg x input int32[N] values=5..1"),
            (Errors{{1, 39, "expected values=LO..HI with LO < HI, got '5..1'"}}));
  EXPECT_EQ(errors("// hiera: arg n scalar int32"),
            (Errors{{1, 29, "a scalar needs a value: 'arg n scalar int32 = VALUE'"}}));
  EXPECT_EQ(errors("// hiera: arg n scalar int32[N] = 3"),
            (Errors{{1, 29, "a scalar has no extent: write 'arg n scalar int32 = VALUE'"}}));
  EXPECT_EQ(errors("// hiera: launch grid=1"), (Errors{{1, 11, "launch needs block=..."}}));
  EXPECT_EQ(errors("// hiera: launch grid=1 block=1 stream=0"),
            (Errors{{1, 33, "unknown launch key 'stream' (grid, block, smem)"}}));
  EXPECT_EQ(errors("// hiera: launch grid=(1,2,3,4) block=1"),
            (Errors{{1, 30, "a launch dimension has at most 3 components (x, y, z)"}}));
}

TEST(AnnotationsTest, EveryErrorIsCollectedInSourceOrder) {
  const auto parsed = python(
      "# hiera: atol=x; rtol=1e-3, allow=fp4\n"
      "x = 1\n"
      "# hiera: deterministic=maybe\n"
      "# hiera: budget=12\n");
  EXPECT_EQ(parsed.errors, (Errors{{1, 15, "atol must be a non-negative number, got 'x'"},
                                   {1, 35, "unknown precision 'fp4' (tf32, bf16, fp16, fp8)"},
                                   {3, 24, "deterministic must be true or false, got 'maybe'"}}));
  // What was right is kept.
  EXPECT_EQ(values(parsed), json::parse(R"j({"numerics.rtol": 0.001, "environment.candidate_budget": 12})j"));
}

TEST(AnnotationsTest, ClausesThatAreNotContractsAreErrorsAtTheirKey) {
  EXPECT_EQ(errors_of("# hiera: budget=3, memory=8GiB\n"),
            (Errors{{1, 20,
                     "clause 'environment.memory_budget_bytes' is not a contract: no check enforces it (nothing "
                     "measures a candidate's memory use yet)"}}));
  // A launch contract in a Python module: there is no kernel to launch.
  EXPECT_EQ(errors_of("# hiera: launch grid=1 block=1\n"),
            (Errors{{1, 10, "clause 'interface.launch' applies to cuda targets only"}}));
}

}  // namespace
}  // namespace hiera::engine::spec
