#pragma once
// The JSON form of an Analysis (what `hiera analyze --json` prints): every
// finding, hint and problem with LSP-style ranges, {"start": {"line",
// "character"}, "end": {...}}, 0-based, characters in UTF-16 code units.
// With a roofline, every op or kernel whose work is known gets its roofline
// time on that GPU. The layout is documented in engine/analysis/README.md.
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/analysis/analysis.h"
#include "engine/analysis/roofline_time.h"

namespace hiera::engine::analysis {

nlohmann::json to_json(const Analysis& analysis, std::string_view text, const GpuCeilings* roofline = nullptr);

}  // namespace hiera::engine::analysis
