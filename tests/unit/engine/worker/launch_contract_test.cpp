// Launch contracts: parsing, launch geometry, byte counts, scalar encoding,
// and a clear ContractError for each way a contract can be wrong.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "engine/worker/cuda_task.h"
#include "engine/worker/launch_contract.h"
#include "thrown_message.h"

namespace {

using namespace hiera::engine::worker;
using nlohmann::json;

json saxpy_contract() {
  return json::parse(R"({
    "sizes": {"N": 16777216},
    "second_sizes": {"N": 1000003},
    "args": [
      {"name": "a", "role": "scalar", "type": "float32", "value": "2.5"},
      {"name": "x", "role": "input",  "type": "float32", "extent": "N"},
      {"name": "y", "role": "output", "type": "float32", "extent": "N"},
      {"name": "n", "role": "scalar", "type": "int32", "value": "N"}],
    "reference_launch": {"grid": ["(N+255)/256", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "0"},
    "candidate_launch": {"grid": ["(N+1023)/1024"], "block": [1024], "shared_bytes": 4096},
    "flops": "2*N", "bytes": "12*N",
    "inout_allowed": false})");
}

std::string error_of(const json& contract) {
  return hiera::testing::thrown_message<ContractError>([&] { parse_launch_contract(contract); }, "(no error)");
}

TEST(LaunchContract, ParsesTheProtocolExample) {
  const LaunchContract c = parse_launch_contract(saxpy_contract());
  EXPECT_EQ(c.sizes.at("N"), 16777216);
  ASSERT_TRUE(c.second_sizes.has_value());
  EXPECT_EQ(c.second_sizes->at("N"), 1000003);
  ASSERT_EQ(c.args.size(), 4u);
  EXPECT_EQ(c.args[0].role, ArgRole::Scalar);
  EXPECT_EQ(c.args[1].role, ArgRole::Input);
  EXPECT_EQ(c.args[2].role, ArgRole::Output);
  EXPECT_EQ(c.args[2].type, ScalarType::Float32);
  EXPECT_TRUE(c.args[2].is_compared());
  EXPECT_FALSE(c.args[1].is_compared());
  EXPECT_EQ(*c.flops, "2*N");
  EXPECT_EQ(*work_count(c.bytes, c.sizes), 12.0 * 16777216);
  EXPECT_FALSE(c.inout_allowed);
}

TEST(LaunchContract, ResolvesLaunchGeometryAtEachSize) {
  const LaunchContract c = parse_launch_contract(saxpy_contract());
  const LaunchDims ref = resolve_launch(c.reference_launch, c.sizes);
  EXPECT_EQ(ref.grid, (std::array<unsigned, 3>{65536, 1, 1}));
  EXPECT_EQ(ref.block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(ref.shared_bytes, 0u);
  const LaunchDims cand = resolve_launch(c.candidate_launch, *c.second_sizes);
  EXPECT_EQ(cand.grid, (std::array<unsigned, 3>{977, 1, 1}));  // missing dimensions are 1; integers accepted
  EXPECT_EQ(cand.block, (std::array<unsigned, 3>{1024, 1, 1}));
  EXPECT_EQ(cand.shared_bytes, 4096u);
}

TEST(LaunchContract, CandidateLaunchDefaultsToTheReferences) {
  json contract = saxpy_contract();
  contract.erase("candidate_launch");
  const LaunchContract c = parse_launch_contract(contract);
  EXPECT_EQ(c.candidate_launch.grid, c.reference_launch.grid);
}

TEST(LaunchContract, CountsElementsAndBytes) {
  json contract = saxpy_contract();
  contract["args"].push_back({{"name", "h"}, {"role", "inout"}, {"type", "float16"}, {"extent", "N*3"}});
  contract["args"].push_back({{"name", "d"}, {"role", "input"}, {"type", "float64"}, {"extent", "0"}});
  const LaunchContract c = parse_launch_contract(contract);
  EXPECT_EQ(element_count(c.args[4], c.sizes), 3u * 16777216u);
  EXPECT_EQ(byte_count(c.args[4], c.sizes), 6u * 16777216u);
  EXPECT_EQ(byte_count(c.args[5], c.sizes), 0u);
  EXPECT_EQ(byte_count(c.args[1], *c.second_sizes), 4u * 1000003u);
}

TEST(LaunchContract, EncodesScalarsAsTheKernelReceivesThem) {
  json contract = saxpy_contract();
  contract["args"].push_back({{"name", "h"}, {"role", "scalar"}, {"type", "float16"}, {"value", "-2"}});
  contract["args"].push_back({{"name", "big"}, {"role", "scalar"}, {"type", "int64"}, {"value", "N*N"}});
  contract["args"].push_back({{"name", "f"}, {"role", "scalar"}, {"type", "float64"}, {"value", "N"}});
  contract["args"].push_back({{"name", "g"}, {"role", "scalar"}, {"type", "float32"}, {"value", -1e-3}});
  const LaunchContract c = parse_launch_contract(contract);
  auto a = scalar_argument(c.args[0], c.sizes);
  float af = 0;
  std::memcpy(&af, a.data(), 4);
  EXPECT_EQ(af, 2.5f);
  auto n = scalar_argument(c.args[3], *c.second_sizes);
  std::int32_t ni = 0;
  std::memcpy(&ni, n.data(), 4);
  EXPECT_EQ(ni, 1000003);
  auto h = scalar_argument(c.args[4], c.sizes);
  ASSERT_EQ(h.size(), 2u);
  std::uint16_t hb = 0;
  std::memcpy(&hb, h.data(), 2);
  EXPECT_EQ(hb, 0xc000);  // -2 in binary16
  auto big = scalar_argument(c.args[5], c.sizes);
  std::int64_t bigi = 0;
  std::memcpy(&bigi, big.data(), 8);
  EXPECT_EQ(bigi, std::int64_t{16777216} * 16777216);
  auto f = scalar_argument(c.args[6], c.sizes);
  double fd = 0;
  std::memcpy(&fd, f.data(), 8);
  EXPECT_EQ(fd, 16777216.0);
  auto g = scalar_argument(c.args[7], c.sizes);
  float gf = 0;
  std::memcpy(&gf, g.data(), 4);
  EXPECT_EQ(gf, -1e-3f);
}

TEST(LaunchContract, EachMistakeIsAClearError) {
  auto with = [](auto edit) {
    json c = saxpy_contract();
    edit(c);
    return error_of(c);
  };
  EXPECT_NE(with([](json& c) { c["args"][1]["extent"] = "X"; }).find("unknown size name 'X'"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["role"] = "scratch"; }).find("unknown role 'scratch'"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["type"] = "float8"; }).find("unknown type 'float8'"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1].erase("extent"); }).find("needs an extent"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][0].erase("value"); }).find("needs a value"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][2]["name"] = "x"; }).find("'x' appears twice"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][2]["role"] = "input"; }).find("no output"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"] = json::array(); }).find("non-empty array"), std::string::npos);
  EXPECT_NE(with([](json& c) { c.erase("reference_launch"); }).find("reference_launch is missing"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["reference_launch"]["block"] = {"2048"}; }).find("block.x"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["reference_launch"]["grid"] = {"N-N"}; }).find("grid.x ('N-N') is 0"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["reference_launch"]["grid"] = {"1", "1", "1", "1"}; }).find("1 to 3"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["reference_launch"]["grid"] = {"N/0"}; }).find("division by zero"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["sizes"]["N"] = "big"; }).find("sizes.N must be an integer"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["sizes"]["2x"] = 3; }).find("not a valid size name"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["extent"] = "0-N"; }).find("negative"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["extent"] = "N*N*N*N"; }).find("overflow"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["extent"] = "N*N*(N/1000)"; }).find("too large"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][3]["value"] = "N*N"; }).find("does not fit in int32"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["args"][1]["range"] = {5, 1}; }).find("lo < hi"), std::string::npos);
  EXPECT_NE(with([](json& c) { c["inout_allowed"] = "no"; }).find("true or false"), std::string::npos);
  // The second sizes are checked too.
  EXPECT_NE(with([](json& c) { c["second_sizes"]["N"] = 0; }).find("grid.x"), std::string::npos);
  EXPECT_NE(error_of(json::array()).find("must be an object"), std::string::npos);
}

TEST(CudaTask, ParsesKernelsNumericsAndTheStaticCheckAllowances) {
  json task = {{"kind", "cuda"},
               {"reference", {{"source", "r"}, {"kernel", "saxpy"}}},
               {"candidate", {{"source", "c"}, {"kernel", "saxpy_fast"}, {"options", {"-DX=1"}}}},
               {"contract", saxpy_contract()},
               {"numerics", {{"atol", 1e-3}, {"rtol", 0}, {"allow", {"tf32"}}}}};
  CudaTask parsed = parse_cuda_task(task);
  EXPECT_EQ(parsed.candidate.kernel, "saxpy_fast");
  EXPECT_EQ(parsed.candidate.options, std::vector<std::string>{"-DX=1"});
  EXPECT_EQ(parsed.numerics.tolerance.atol, 1e-3);
  EXPECT_EQ(parsed.numerics.tolerance.rtol, 0.0);
  auto allowed = static_check_options(parsed);
  EXPECT_TRUE(allowed.allow_tf32);
  EXPECT_FALSE(allowed.allow_fp16);
  EXPECT_FALSE(allowed.allow_bf16);
  // A task whose data already is fp16 may use __half.
  task["contract"]["args"][2]["type"] = "float16";
  EXPECT_TRUE(static_check_options(parse_cuda_task(task)).allow_fp16);

  task["candidate"].erase("kernel");
  EXPECT_THROW(parse_cuda_task(task), ContractError);
  task["candidate"]["kernel"] = "k";
  task["numerics"]["atol"] = -1;
  EXPECT_THROW(parse_cuda_task(task), ContractError);
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
