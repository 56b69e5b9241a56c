#pragma once
// The text edits that put a verified optimization into the source it was
// computed for, with its evidence comment (evidence_comment.h):
// - a CUDA kernel: its definition (from its first specifier to its closing
//   brace, as engine/analysis finds it) is replaced by the annotation, the
//   delivered source's __device__ helpers the document does not define, and
//   the delivered kernel under the original name (its parameter types must be
//   the original's); the delivered #include/#define lines the document lacks
//   go after the document's last such line before the kernel (else at the top);
// - a PyTorch module: the original class stays; right after it go the
//   annotation and the delivered source's top-level statements the document
//   lacks (ModelNew, its constants and helpers), leaving out the delivered
//   copies of the original class, `Model`, get_inputs and get_init_inputs; the
//   delivered imports the document lacks go after its last top-level import
//   (else at the top).
// Edits are byte spans of the document; front ends convert them to their own.
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/analysis/source_span.h"

namespace hiera::engine::facade {

class SourceSpliceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `delivered_kernel`: the kernel's name in the delivered source ("" = `kernel`).
// Throws SourceSpliceError: the kernel is not defined in the document or the
// delivered source, or its parameter types differ.
std::vector<analysis::TextEdit> kernel_replacement(const std::string& document, const std::string& kernel,
                                                   const std::string& delivered, const std::string& delivered_kernel,
                                                   const std::string& annotation);

// Throws SourceSpliceError: no class `module` in the document, nothing new in the delivered source.
std::vector<analysis::TextEdit> module_insertion(const std::string& document, const std::string& module,
                                                 const std::string& delivered, const std::string& annotation);

}  // namespace hiera::engine::facade
