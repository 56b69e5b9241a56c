#include "engine/knowledge/vocabulary.h"

#include <algorithm>

namespace hiera::engine::knowledge {

const std::vector<std::string>& pattern_vocabulary() {
  static const std::vector<std::string> words = {
      "elementwise_chain", "reduction", "norm",      "softmax", "gemm",         "gemm_epilogue",  "batched_gemm",
      "conv",              "conv_epilogue", "attention", "stencil", "launch_bound", "copy_transpose", "whole_module"};
  return words;
}

bool is_known_pattern(std::string_view pattern) { return contains(pattern_vocabulary(), pattern); }

const std::vector<std::string>& tensor_dtypes() {
  static const std::vector<std::string> words = {"float64", "float32", "float16", "bfloat16", "int64",
                                                 "int32",   "int8",    "uint8",   "bool"};
  return words;
}

const std::vector<std::string>& numerics_allowances() {
  static const std::vector<std::string> words = {"tf32", "fp16", "bf16", "fp8", "inplace"};
  return words;
}

const std::vector<std::string>& peak_rate_dtypes() {
  static const std::vector<std::string> words = {"float32", "tf32", "float16", "bfloat16", "float64", "int8"};
  return words;
}

const std::vector<std::string>& prompt_placeholders() {
  static const std::vector<std::string> words = {"task_name",    "language", "gpu",     "spec",    "space",
                                                 "space_rules",  "current_code", "profile", "recipes", "failures"};
  return words;
}

bool contains(const std::vector<std::string>& vocabulary, std::string_view word) {
  return std::find(vocabulary.begin(), vocabulary.end(), word) != vocabulary.end();
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

std::string canonical_allowance(std::string_view allowance) {
  if (allowance == "float16" || allowance == "half") return "fp16";
  if (allowance == "bfloat16") return "bf16";
  return std::string(allowance);
}

}  // namespace hiera::engine::knowledge
