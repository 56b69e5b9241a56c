#pragma once
// The closed vocabularies knowledge files are validated against: recipe
// patterns, tensor dtypes, numerics allowances, peak-rate dtypes, and the
// placeholders a prompt template may use.
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::knowledge {

// elementwise_chain, reduction, norm, softmax, gemm, gemm_epilogue, batched_gemm,
// conv, conv_epilogue, attention, stencil, launch_bound, copy_transpose, whole_module.
const std::vector<std::string>& pattern_vocabulary();
bool is_known_pattern(std::string_view pattern);
// float64, float32, float16, bfloat16, int64, int32, int8, uint8, bool (torch's names).
const std::vector<std::string>& tensor_dtypes();
// tf32, fp16, bf16, fp8, inplace: what numerics.allow may permit.
const std::vector<std::string>& numerics_allowances();
// float32, tf32, float16, bfloat16, float64, int8: the keys of GpuSpec::peak_tflops.
const std::vector<std::string>& peak_rate_dtypes();
// task_name, language, gpu, spec, space, space_rules, current_code, profile, recipes, failures.
const std::vector<std::string>& prompt_placeholders();

bool contains(const std::vector<std::string>& vocabulary, std::string_view word);
// "a, b, c" for messages.
std::string join(const std::vector<std::string>& words, std::string_view separator = ", ");

// The runner's spellings of an allowance mapped to ours: "float16"/"half" -> "fp16",
// "bfloat16" -> "bf16"; anything else unchanged.
std::string canonical_allowance(std::string_view allowance);

}  // namespace hiera::engine::knowledge
