#pragma once
// Integer size expressions as the job protocol's launch contracts use them
// ("(N+255)/256", "2*N*K": integers, size names, + - * / % and parentheses, / and
// % rounding down), checked here so a bad contract is reported against the
// annotation that wrote it, before any job reaches a worker. engine/spec keeps
// its own copy of the grammar: the engine may not depend on engine/worker.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace hiera::engine::spec {

using SizeMap = std::map<std::string, std::int64_t, std::less<>>;

// The size names an expression uses, in sorted order. Throws SpecError
// ("size expression '(N+1': expected ')' at column 5") on bad syntax.
std::set<std::string> size_expression_names(std::string_view expression);

// The value at these sizes. Throws SpecError on bad syntax, an unknown name,
// division by zero or overflow.
std::int64_t evaluate_size_expression(std::string_view expression, const SizeMap& sizes);

// Whether the text is a C identifier (a size or argument name).
bool is_identifier(std::string_view text);

}  // namespace hiera::engine::spec
