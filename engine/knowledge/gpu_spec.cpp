#include "engine/knowledge/gpu_spec.h"

#include <climits>
#include <regex>

#include <nlohmann/json.hpp>

#include "engine/knowledge/json_fields.h"
#include "engine/knowledge/vocabulary.h"

namespace hiera::engine::knowledge {

GpuSpec gpu_spec_from_json(const nlohmann::json& value) {
  JsonFields fields(value, "");
  GpuSpec spec;
  spec.id = fields.text("id");
  spec.name = fields.text("name");
  spec.match = fields.texts("match");
  spec.compute_capability = fields.text("compute_capability");
  static const std::regex kCapability(R"(\d+\.\d+)");
  if (!std::regex_match(spec.compute_capability, kCapability))
    throw FieldError("compute_capability", "expected \"major.minor\" such as \"9.0\", got \"" + spec.compute_capability + "\"");
  spec.sm_count = static_cast<int>(fields.integer("sm_count", 1, INT_MAX));
  spec.memory_bandwidth_gbs = fields.positive_number("memory_bandwidth_gbs");
  spec.memory_bytes = fields.integer("memory_bytes", 1, INT64_MAX);
  spec.l2_bytes = fields.integer("l2_bytes", 1, INT64_MAX);
  spec.smem_per_sm_bytes = fields.integer("smem_per_sm_bytes", 1, INT64_MAX);
  spec.smem_per_block_optin_bytes = fields.integer("smem_per_block_optin_bytes", 1, spec.smem_per_sm_bytes);
  spec.max_threads_per_sm = static_cast<int>(fields.integer("max_threads_per_sm", 1, INT_MAX));
  spec.boost_clock_mhz = fields.positive_number("boost_clock_mhz");

  JsonFields peaks(fields.required("peak_tflops"), "peak_tflops");
  for (const auto& [dtype, rate] : value.at("peak_tflops").items()) {
    if (!contains(peak_rate_dtypes(), dtype))
      throw FieldError(peaks.path(dtype), "unknown dtype \"" + dtype + "\" (known: " + join(peak_rate_dtypes()) + ")");
    spec.peak_tflops[dtype] = peaks.positive_number(dtype);
  }
  if (spec.peak_tflops.empty()) throw FieldError("peak_tflops", "must not be empty");
  spec.source = fields.text("source");
  fields.reject_unknown();
  return spec;
}

}  // namespace hiera::engine::knowledge
