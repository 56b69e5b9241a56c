#pragma once
// The facts `hiera:` annotations state for source analysis (sizes; per-kernel
// flops and bytes), shared by `hiera analyze` and the server: Python takes the
// whole file's sizes, a CUDA kernel the annotations between the previous
// function and its own end (ANNOTATIONS.md: they belong to the kernel they precede).
#include <string_view>

#include "engine/analysis/analysis.h"

namespace hiera::engine::spec {

// `structure` is an analysis of `text` without facts.
analysis::AnalysisFacts annotation_facts(std::string_view text, analysis::Language language,
                                         const analysis::Analysis& structure);

}  // namespace hiera::engine::spec
