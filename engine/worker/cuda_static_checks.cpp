#include "engine/worker/cuda_static_checks.h"

#include <regex>

namespace hiera::engine::worker {

namespace {

struct Rule {
  const char* name;
  const char* pattern;
  const char* why;
};

// Always forbidden: work outside the timed stream, other threads or processes,
// and anything that touches timers or synchronisation (the harness owns both).
const Rule kAlwaysForbidden[] = {
    {"stream", R"(\b(cudaStreamCreate\w*|cuStreamCreate\w*|cudaStreamBeginCapture\w*|cudaGraph\w*|cuGraph\w*)\b)",
     "creates streams or graphs outside the timed stream"},
    {"thread_or_process", R"(\bstd\s*::\s*(thread|jthread|async)\b|\bpthread_\w+|\b(fork|vfork|system|popen|execv|execvp|execve|execl|execlp|posix_spawnp?)\s*\()",
     "starts a thread or a process"},
    {"timer", R"(\bcu(da)?Event\w*|\bcudaProfiler\w*|\b(clock_settime|settimeofday|adjtime|nvml\w+)\b)",
     "uses or changes timers or clocks"},
    {"synchronisation", R"(\b(cudaDeviceSynchronize|cudaStreamSynchronize|cudaStreamWaitEvent|cuCtxSynchronize|cuStreamSynchronize|cudaDeviceReset|cudaSetDevice|cudaDeviceSetLimit|cudaDeviceSetCacheConfig)\b)",
     "changes device synchronisation or state"},
};

// Forbidden unless allowed: reduced precision in place of the task's own.
const Rule kFp16 = {"fp16", R"(\b__(half|nv_half|float2half|half2float|floats2half2|hmul|hadd|hsub|hfma|hdiv|h2div|hneg|habs|hmax|hmin)\w*|\bcuda_fp16(\.h|\.hpp)?\b|\.f16(x2)?\b)",
                    "uses fp16 (__half) arithmetic or conversions; numerics.allow does not contain fp16"};
const Rule kBf16 = {"bf16", R"(\b__(nv_bfloat16|float2bfloat16|bfloat162float|floats2bfloat162)\w*|\bnv_bfloat16\w*|\bcuda_bf16(\.h|\.hpp)?\b|\.bf16(x2)?\b)",
                    "uses bf16 (__nv_bfloat16) arithmetic or conversions; numerics.allow does not contain bf16"};
const Rule kTf32 = {"tf32", R"(\btf32\b|\.tf32\b|__float_to_tf32)",
                    "uses TF32 tensor-core precision; numerics.allow does not contain tf32"};
const Rule kFp8 = {"fp8", R"(\b__nv_fp8\w*|\bcuda_fp8(\.h|\.hpp)?\b|\.e4m3\w*|\.e5m2\w*)",
                   "uses fp8 arithmetic or conversions; numerics.allow does not contain fp8"};

void scan(const std::string& stripped, const Rule& rule, std::vector<StaticFinding>& findings) {
  const std::regex pattern(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
  int line = 1;
  std::size_t line_start = 0;
  while (line_start <= stripped.size()) {
    std::size_t line_end = stripped.find('\n', line_start);
    if (line_end == std::string::npos) line_end = stripped.size();
    const std::string text = stripped.substr(line_start, line_end - line_start);
    std::smatch match;
    if (std::regex_search(text, match, pattern)) {
      findings.push_back({line, rule.name, "line " + std::to_string(line) + ": '" + match.str(0) + "' " + rule.why});
    }
    if (line_end == stripped.size()) break;
    line_start = line_end + 1;
    ++line;
  }
}

}  // namespace

std::string strip_comments(std::string_view source) {
  std::string out(source);
  enum class State { Code, LineComment, BlockComment, String, Char } state = State::Code;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case State::Code:
        if (c == '/' && next == '/') {
          state = State::LineComment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '/' && next == '*') {
          state = State::BlockComment;
          out[i] = out[i + 1] = ' ';
          ++i;
        } else if (c == '"') {
          state = State::String;
        } else if (c == '\'') {
          state = State::Char;
        }
        break;
      case State::LineComment:
        if (c == '\n') {
          // A backslash before the newline continues a // comment onto the next line.
          if (i > 0 && source[i - 1] == '\\') break;
          state = State::Code;
        } else {
          out[i] = ' ';
        }
        break;
      case State::BlockComment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = State::Code;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case State::String:
      case State::Char:
        if (c == '\\') {
          ++i;  // skip the escaped character
        } else if ((state == State::String && c == '"') || (state == State::Char && c == '\'') || c == '\n') {
          state = State::Code;
        }
        break;
    }
  }
  return out;
}

std::vector<StaticFinding> check_cuda_source(std::string_view source, const StaticCheckOptions& options) {
  const std::string stripped = strip_comments(source);
  std::vector<StaticFinding> findings;
  for (const auto& rule : kAlwaysForbidden) scan(stripped, rule, findings);
  if (!options.allow_fp16) scan(stripped, kFp16, findings);
  if (!options.allow_bf16) scan(stripped, kBf16, findings);
  if (!options.allow_tf32) scan(stripped, kTf32, findings);
  if (!options.allow_fp8) scan(stripped, kFp8, findings);
  return findings;
}

}  // namespace hiera::engine::worker
