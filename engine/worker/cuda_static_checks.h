#pragma once
// Static checks on a candidate's CUDA source (verification rule 6): patterns
// that would let a candidate game the measurement or change the numerics
// without permission. Each finding names its rule and the line (1-based) in
// the source as given. Comments are stripped first, so an explanation that
// mentions a pattern is not a violation.
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::worker {

struct StaticCheckOptions {
  // Reduced-precision types are allowed when numerics.allow names them, or
  // when the task's own data already is of that type.
  bool allow_fp16 = false;
  bool allow_bf16 = false;
  bool allow_tf32 = false;
  bool allow_fp8 = false;
};

struct StaticFinding {
  int line = 0;
  std::string rule;     // "stream", "thread_or_process", "timer", "synchronisation", "fp16", "bf16", "tf32", "fp8"
  std::string message;  // names the offending text
};

std::vector<StaticFinding> check_cuda_source(std::string_view source, const StaticCheckOptions& options);

// The source with // and /* */ comments replaced by spaces (newlines kept, so
// line numbers still match); string and character literals are left intact.
std::string strip_comments(std::string_view source);

}  // namespace hiera::engine::worker
