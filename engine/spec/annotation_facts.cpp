#include "engine/spec/annotation_facts.h"

#include "engine/analysis/line_index.h"
#include "engine/spec/annotations.h"
#include "engine/spec/kernel_annotation_lines.h"

namespace hiera::engine::spec {

namespace {

SizeMap sizes_of(const Annotations& annotations) {
  SizeMap sizes;
  for (const auto& clause : annotations.clauses) {
    if (clause.name != "interface.sizes" || !clause.value.is_object()) continue;
    for (const auto& [name, value] : clause.value.items()) {
      if (value.is_number_integer()) sizes[name] = value.get<std::int64_t>();
    }
  }
  return sizes;
}

}  // namespace

analysis::AnalysisFacts annotation_facts(std::string_view text, analysis::Language language,
                                         const analysis::Analysis& structure) {
  analysis::AnalysisFacts facts;
  if (language == analysis::Language::Python) {
    facts.sizes = sizes_of(parse_annotations(text, SourceLanguage::Python));
    return facts;
  }
  const analysis::LineIndex lines(text);
  // Split once for the whole file; each kernel parses only its own range.
  const auto comments = comment_lines(text, SourceLanguage::Cuda);
  for (std::size_t i = 0; i < structure.functions.size(); ++i) {
    const auto& function = structure.functions[i];
    if (function.kind == analysis::CudaFunctionKind::Kernel) {
      const LineRange range = kernel_annotation_lines(structure, i, lines);
      const auto annotations =
          parse_annotations(std::span<const CommentLine>(comments), SourceLanguage::Cuda, range.first, range.last);
      analysis::KernelWorkAnnotation work;
      work.sizes = sizes_of(annotations);
      for (const auto& clause : annotations.clauses) {
        if (clause.name == "performance.flops" && clause.value.is_string()) work.flops = clause.value.get<std::string>();
        if (clause.name == "performance.bytes" && clause.value.is_string()) work.bytes = clause.value.get<std::string>();
      }
      if (!work.flops.empty() || !work.bytes.empty()) facts.kernels[function.name] = work;
    }
  }
  return facts;
}

}  // namespace hiera::engine::spec
