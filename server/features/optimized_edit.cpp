#include "server/features/optimized_edit.h"

namespace hiera::server {

namespace {

std::vector<ByteEdit> byte_edits(const std::vector<engine::analysis::TextEdit>& edits) {
  std::vector<ByteEdit> out;
  out.reserve(edits.size());
  for (const auto& e : edits) out.push_back({e.span.begin, e.span.end, e.new_text});
  return out;
}

}  // namespace

std::vector<ByteEdit> kernel_replacement(const std::string& document, const std::string& kernel,
                                         const std::string& delivered, const std::string& delivered_kernel,
                                         const std::string& annotation) {
  return byte_edits(engine::facade::kernel_replacement(document, kernel, delivered, delivered_kernel, annotation));
}

std::vector<ByteEdit> module_insertion(const std::string& document, const std::string& module,
                                       const std::string& delivered, const std::string& annotation) {
  return byte_edits(engine::facade::module_insertion(document, module, delivered, annotation));
}

}  // namespace hiera::server
