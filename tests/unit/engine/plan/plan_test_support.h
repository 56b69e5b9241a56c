#pragma once
// Shared by the planner tests: the recorded profiles under
// tests/fixtures/profiles (probe, counted work, worker profile), turned into
// ceilings, TaskWork, regions and a plan; and a small recipe set built here,
// so the tests do not depend on knowledge/recipes.
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/eval/profile_result.h"
#include "engine/knowledge/recipe.h"
#include "engine/plan/planner.h"
#include "engine/plan/regions.h"
#include "engine/plan/roofline.h"
#include "build_paths.h"

namespace hiera::engine::plan::testing {

inline nlohmann::json load_fixture(const std::string& name) {
  const std::string path = ::hiera::testing::source_dir() + "/tests/fixtures/profiles/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

inline GpuCeilings probe_ceilings(const nlohmann::json& fixture) {
  const nlohmann::json probe = fixture.at("probe");
  return ceilings_from_probe(probe.at("measured").at("copy_gbs").get<double>(),
                             probe.at("measured").at("gemm_tflops").get<std::map<std::string, double>>(),
                             probe.at("name").get<std::string>());
}

inline TaskWork task_work(const nlohmann::json& fixture, bool with_ops = true) {
  const nlohmann::json work = fixture.at("work");
  TaskWork out;
  out.runs = work.at("runs").get<int>();
  out.flops = work.value("flops", 0.0);
  out.bytes = work.value("bytes", 0.0);
  out.dtype = work.value("dtype", "");
  out.elements = work.value("elements", std::int64_t{-1});
  if (work.contains("last_dim")) out.last_dim = work.at("last_dim").get<std::int64_t>();
  out.pattern = work.value("pattern", "");
  if (work.contains("module_ms")) out.module_ms = work.at("module_ms").get<double>();
  if (with_ops && work.contains("ops")) {
    const nlohmann::json ops = work.at("ops");
    for (const nlohmann::json& op : ops) {
      OpWork op_work;
      op_work.name = op.at("name").get<std::string>();
      op_work.pattern = op.at("pattern").get<std::string>();
      op_work.families = op.value("families", std::vector<std::string>{});
      op_work.flops = op.value("flops", 0.0);
      op_work.bytes = op.value("bytes", 0.0);
      out.ops.push_back(std::move(op_work));
    }
  }
  return out;
}

inline std::vector<Region> fixture_regions(const std::string& name, bool with_ops = true) {
  const nlohmann::json fixture = load_fixture(name);
  return regions_from_profile(eval::read_kernel_profile(fixture.at("profile")), task_work(fixture, with_ops),
                              probe_ceilings(fixture));
}

inline knowledge::Recipe recipe(std::string id, knowledge::Space space, std::vector<knowledge::Bottleneck> bottlenecks,
                                std::vector<std::string> patterns, std::vector<std::string> dtypes, double low,
                                double high) {
  knowledge::Recipe r;
  r.id = std::move(id);
  r.title = r.id;
  r.space = space;
  r.bottlenecks = std::move(bottlenecks);
  r.patterns = std::move(patterns);
  r.dtypes = std::move(dtypes);
  r.expected_speedup_low = low;
  r.expected_speedup_high = high;
  return r;
}

// The recipes the planner tests plan with.
inline std::vector<knowledge::Recipe> test_recipes() {
  using knowledge::Bottleneck;
  using knowledge::Space;
  const auto compute = Bottleneck::Compute, memory = Bottleneck::Memory, latency = Bottleneck::Latency;
  std::vector<knowledge::Recipe> recipes;
  recipes.push_back(recipe("addmm-bias-epilogue", Space::S1, {compute, memory}, {"gemm_epilogue"}, {}, 1.05, 1.15));
  recipes.push_back(recipe("compile-epilogue-fusion", Space::S1, {compute, memory},
                           {"gemm_epilogue", "elementwise_chain"}, {}, 1.10, 1.30));
  recipes.push_back(recipe("tf32-matmul", Space::S1, {compute}, {"gemm", "gemm_epilogue", "batched_gemm"},
                           {"float32"}, 3.0, 8.0));
  recipes.back().requires_allow = {"tf32"};
  recipes.push_back(recipe("cuda-graph-capture", Space::S1, {latency}, {"whole_module"}, {}, 2.0, 5.0));
  recipes.push_back(recipe("compile-reduce-overhead", Space::S1, {latency}, {"whole_module"}, {}, 1.5, 4.0));
  recipes.push_back(recipe("stencil-as-conv3d", Space::S1, {memory}, {"stencil"},
                           {"float32", "float16", "bfloat16"}, 0.8, 1.5));
  recipes.push_back(recipe("cublaslt-epilogue-gelu-bias", Space::S2, {compute, memory}, {"gemm_epilogue"},
                           {"float16", "bfloat16"}, 1.10, 1.35));
  recipes.push_back(recipe("cublaslt-tf32", Space::S2, {compute}, {"gemm", "gemm_epilogue"}, {"float32"}, 3.0, 8.5));
  recipes.back().requires_allow = {"TF32"};
  recipes.push_back(recipe("cutlass-evt-epilogue", Space::S3, {compute, memory}, {"gemm_epilogue"},
                           {"float16", "bfloat16"}, 1.10, 1.40));
  recipes.back().template_name = "gemm_epilogue_fusion";
  recipes.back().shape.last_dim_multiple_of = 8;
  recipes.push_back(recipe("stencil3d-7pt-tiled", Space::S3, {memory}, {"stencil"}, {"float32"}, 3.0, 8.0));
  recipes.back().template_name = "stencil3d_7pt";
  recipes.push_back(recipe("fused-mlp-persistent", Space::S3, {latency}, {"whole_module"}, {}, 5.0, 20.0));
  recipes.back().shape.max_elements = std::int64_t{1} << 20;
  recipes.push_back(recipe("vectorized-elementwise", Space::S3, {memory}, {"elementwise_chain"}, {}, 1.1, 1.5));
  recipes.back().template_name = "elementwise_vectorized";
  recipes.back().shape.last_dim_multiple_of = 4;
  return recipes;
}

// The plan for a recorded profile with the test recipes; the context's dtype,
// when it names none, is the fixture's.
inline Plan plan_fixture(const std::string& name, PlanContext context = {}, bool with_ops = true) {
  const nlohmann::json fixture = load_fixture(name);
  if (context.dtype.empty()) context.dtype = fixture.at("work").at("dtype").get<std::string>();
  return make_plan(fixture_regions(name, with_ops), probe_ceilings(fixture), context, test_recipes());
}

// Ceilings without a TF32 rate (a GPU without tensor cores): float32 work's only peak is float32's own, where
// with one a float32-accurate product runs as 3xTF32 at a third of it.
inline GpuCeilings without_tf32(GpuCeilings ceilings) {
  ceilings.peak_tflops.erase("tf32");
  return ceilings;
}

// plan_fixture on the recorded probe without its TF32 rate.
inline Plan plan_fixture_without_tf32(const std::string& name, PlanContext context = {}) {
  const nlohmann::json fixture = load_fixture(name);
  if (context.dtype.empty()) context.dtype = fixture.at("work").at("dtype").get<std::string>();
  return make_plan(fixture_regions(name), without_tf32(probe_ceilings(fixture)), context, test_recipes());
}

}  // namespace hiera::engine::plan::testing
