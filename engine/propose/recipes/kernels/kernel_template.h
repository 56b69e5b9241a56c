#pragma once
// A knowledge/templates file filled with a kernel's values: every generated
// kernel is one of these, so the templates stay the single source of the code.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/knowledge/knowledge_base.h"

namespace hiera::engine::propose::recipes::kernels {

// fill_placeholders(text of templates/<name>, values), with the template's
// leading comment (its documentation and placeholder list) replaced by one
// line naming it. Throws std::invalid_argument when the template is missing
// or a placeholder has no value.
std::string fill_kernel_template(const knowledge::KnowledgeBase& knowledge, std::string_view name,
                                 const std::map<std::string, std::string, std::less<>>& values);

// Lines joined for a placeholder that sits at `indent` spaces inside the template.
std::string join_lines(const std::vector<std::string>& lines, int indent);

}  // namespace hiera::engine::propose::recipes::kernels
