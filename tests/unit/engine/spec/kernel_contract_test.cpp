// Kernel arguments and launch geometry in their protocol JSON form.
#include "engine/spec/kernel_contract.h"

#include <gtest/gtest.h>

#include "engine/spec/spec_error.h"
#include "thrown_message.h"

namespace hiera::engine::spec {
namespace {

using nlohmann::json;

std::string arg_error(const char* text) {
  return hiera::testing::thrown_message<SpecError>([&] { KernelArg::from_json(json::parse(text)); });
}

TEST(KernelContractTest, ArgumentsRoundTrip) {
  const json array = json::parse(R"({"name": "idx", "role": "input", "type": "int32", "extent": "M", "range": [0.0, 64.0]})");
  EXPECT_EQ(KernelArg::from_json(array).to_json(), array);
  const json scalar = json::parse(R"({"name": "a", "role": "scalar", "type": "float32", "value": "2.5"})");
  EXPECT_EQ(KernelArg::from_json(scalar).to_json(), scalar);
  // Numbers and integer extents arrive as they do on the wire; they are kept as text.
  EXPECT_EQ(KernelArg::from_json(json::parse(R"({"name": "a", "role": "scalar", "type": "float32", "value": 2.5})")).value, "2.5");
  EXPECT_EQ(KernelArg::from_json(json::parse(R"({"name": "x", "role": "output", "type": "float32", "extent": 64})")).extent, "64");
  EXPECT_TRUE(KernelArg::from_json(scalar).to_json().contains("value"));
  EXPECT_FALSE(KernelArg::from_json(scalar).is_array());
}

TEST(KernelContractTest, ArgumentErrors) {
  EXPECT_EQ(arg_error(R"({"name": "1x", "role": "input", "type": "float32", "extent": "N"})"),
            "an argument's name must be an identifier");
  EXPECT_EQ(arg_error(R"({"name": "x", "role": "in", "type": "float32", "extent": "N"})"),
            "argument 'x': role must be input, output, inout or scalar");
  EXPECT_EQ(arg_error(R"({"name": "x", "role": "input", "type": "float32"})"),
            "argument 'x': an array argument needs an extent");
  EXPECT_EQ(arg_error(R"({"name": "x", "role": "input", "type": "float32", "extent": "N", "stride": 2})"),
            "argument 'x': unknown field 'stride'");
  EXPECT_EQ(arg_error(R"({"name": "x", "role": "input", "type": "float32", "extent": "N", "range": [3, 1]})"),
            "argument 'x': range must be [lo, hi] with lo < hi");
  EXPECT_EQ(arg_error(R"({"name": "n", "role": "scalar", "type": "int32", "value": "N+"})"),
            "argument 'n': value: size expression 'N+': expected a number, a size name or '(' at column 3");
}

TEST(KernelContractTest, LaunchFillsMissingDimensions) {
  EXPECT_EQ(Launch::from_json(json::parse(R"({"grid": ["G"], "block": [32, 4]})")),
            (Launch{{{"G", "1", "1"}, {"32", "4", "1"}, "0"}}));
  EXPECT_EQ((Launch{{{"G", "1", "1"}, {"256", "1", "1"}, "S"}}).to_json(),
            json::parse(R"({"grid": ["G", "1", "1"], "block": ["256", "1", "1"], "shared_bytes": "S"})"));
  try {
    Launch::from_json(json::parse(R"({"grid": ["1"]})"));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "launch: block is missing");
  }
}

}  // namespace
}  // namespace hiera::engine::spec
