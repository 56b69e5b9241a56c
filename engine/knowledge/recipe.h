#pragma once
// An optimization recipe (knowledge/recipes/*.json): what a rewrite does, in
// which implementation space, for which bottleneck, pattern, dtype and shape.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/knowledge/vocabulary.h"  // pattern_vocabulary(), tensor_dtypes(), numerics_allowances()

namespace hiera::engine::knowledge {

enum class Space { S1, S2, S3 };               // PyTorch operators, CUDA libraries, custom CUDA kernels
enum class Bottleneck { Memory, Compute, Latency };

const char* to_string(Space);                  // "S1", "S2", "S3"
const char* to_string(Bottleneck);             // "memory", "compute", "latency"
std::optional<Space> parse_space(std::string_view);             // exact inverse of to_string
std::optional<Bottleneck> parse_bottleneck(std::string_view);   // exact inverse of to_string

struct ShapeCondition {
  std::optional<std::int64_t> min_elements, max_elements;
  std::optional<int> last_dim_multiple_of;
};

struct Recipe {
  std::string id, title;
  Space space = Space::S1;
  std::vector<Bottleneck> bottlenecks;   // which bottleneck classes it addresses
  std::vector<std::string> patterns;     // from the fixed vocabulary (pattern_vocabulary())
  std::vector<std::string> dtypes;       // empty = any (tensor_dtypes())
  ShapeCondition shape;
  std::string what;                      // what it does
  std::string effect;                    // expected effect, in words
  double expected_speedup_low = 1.0, expected_speedup_high = 1.0;
  std::vector<std::string> pitfalls;
  std::optional<std::string> template_name;   // file under knowledge/templates/ the offline proposer fills
  std::vector<std::string> requires_allow;    // numerics allowances it needs, e.g. {"tf32"}

  // True when the recipe is in this space, addresses this bottleneck, is tagged
  // with this pattern, accepts this dtype and the element count lies within
  // shape.min_elements..max_elements (inclusive). An unknown dtype ("") or
  // element count (< 0) is not held against the recipe. The last-dimension
  // condition needs the shape, not a count: see applies_to_last_dim.
  bool applies(Space, Bottleneck, std::string_view pattern, std::string_view dtype, std::int64_t elements) const;
  // True when shape.last_dim_multiple_of is unset or divides last_dim.
  bool applies_to_last_dim(std::int64_t last_dim) const;
};

// A knowledge/recipes/*.json object -> Recipe (the JSON keys are the member
// names, except "template" for template_name and "expected_speedup": [low, high]).
// Throws FieldError naming the first missing, mistyped, unknown or
// inconsistent field. Whether the template exists is the loader's check.
Recipe recipe_from_json(const nlohmann::json& value);

}  // namespace hiera::engine::knowledge
