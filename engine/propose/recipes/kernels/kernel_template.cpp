#include "engine/propose/recipes/kernels/kernel_template.h"

#include <stdexcept>
#include <vector>

#include "engine/knowledge/placeholders.h"

namespace hiera::engine::propose::recipes::kernels {

std::string fill_kernel_template(const knowledge::KnowledgeBase& knowledge, std::string_view name,
                                 const std::map<std::string, std::string, std::less<>>& values) {
  const auto text = knowledge.template_text(name);
  if (!text) throw std::invalid_argument("the knowledge base has no template " + std::string(name));
  // The documentation block stays in knowledge/templates; a candidate carries the code.
  std::size_t start = 0;
  while (start < text->size()) {
    const std::size_t end = text->find('\n', start);
    const std::string_view line = std::string_view(*text).substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind("//", 0) != 0 && !line.empty()) break;
    if (end == std::string::npos) {
      start = text->size();
      break;
    }
    start = end + 1;
  }
  return "// hiera: generated from knowledge/templates/" + std::string(name) + "\n" +
         knowledge::fill_placeholders(std::string_view(*text).substr(start), values);
}

std::string join_lines(const std::vector<std::string>& lines, int indent) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n" + std::string(static_cast<std::size_t>(indent), ' ');
    out += lines[i];
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
