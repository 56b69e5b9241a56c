#pragma once
// Shared by the kernel rewrite tests: the real knowledge base (its templates),
// and NVRTC compilation of every generated kernel for sm_90 (no GPU needed),
// so that a syntax error in a template or a generator fails CI, not the H200.
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "engine/knowledge/knowledge_base.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/replacement.h"
#include "build_paths.h"
#ifdef HIERA_HAVE_WORKER
#include "engine/worker/nvrtc_compiler.h"
#endif

namespace hiera::testing {

inline const engine::knowledge::KnowledgeBase& source_knowledge() {
  static const engine::knowledge::KnowledgeBase kb =
      engine::knowledge::load_knowledge(std::filesystem::path(::hiera::testing::source_dir()) / "knowledge");
  return kb;
}

// Options with the real knowledge base's templates, as the proposer passes them.
inline engine::propose::recipes::kernels::KernelRewriteOptions source_options() {
  engine::propose::recipes::kernels::KernelRewriteOptions o;
  o.knowledge = &source_knowledge();
  return o;
}

// NVRTC's complaints about a kernel (errors and warnings); empty when it
// compiles cleanly, or when this build has no NVRTC (no CUDA toolkit).
inline std::string nvrtc_complaints(const engine::propose::recipes::KernelSource& kernel) {
#ifdef HIERA_HAVE_WORKER
  engine::worker::NvrtcCompiler compiler(std::nullopt);
  engine::worker::CompileRequest request;
  request.source = kernel.source;
  request.options = kernel.options;
  request.arch = "sm_90";
  request.name_expressions = {kernel.name};
  request.file_name = kernel.name + ".cu";
  const engine::worker::CompileResult result = compiler.compile(request);
  if (!result.ok) return result.log.empty() ? "did not compile" : result.log;
  if (result.log.find("warning") != std::string::npos) return result.log;
  return "";
#else
  (void)kernel;
  return "";
#endif
}

inline void expect_kernels_compile(const engine::propose::recipes::Replacement& replacement) {
  for (const auto& kernel : replacement.kernels)
    EXPECT_EQ(nvrtc_complaints(kernel), "") << kernel.name << ":\n" << kernel.source;
}

}  // namespace hiera::testing
