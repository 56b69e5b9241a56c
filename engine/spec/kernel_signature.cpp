#include "engine/spec/kernel_signature.h"

#include <cctype>

namespace hiera::engine::spec {

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The last identifier of a parameter declaration ("const float* __restrict__ x" -> "x"),
// ignoring a default value and array brackets.
std::string parameter_name(std::string_view declaration) {
  int depth = 0;
  for (std::size_t i = 0; i < declaration.size(); ++i) {
    const char c = declaration[i];
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (c == '=' && depth == 0) {
      declaration = declaration.substr(0, i);
      break;
    }
  }
  while (!declaration.empty()) {
    const char c = declaration.back();
    if (std::isspace(static_cast<unsigned char>(c))) {
      declaration.remove_suffix(1);
    } else if (c == ']') {
      declaration = declaration.substr(0, declaration.rfind('['));
    } else {
      break;
    }
  }
  std::size_t end = declaration.size();
  std::size_t start = end;
  while (start > 0 && is_ident_char(declaration[start - 1])) --start;
  return std::string(declaration.substr(start, end - start));
}

}  // namespace

std::optional<std::vector<std::string>> kernel_parameters(std::string_view source, std::string_view kernel) {
  kernel = kernel.substr(0, kernel.find('<'));
  if (const auto scope = kernel.rfind("::"); scope != std::string_view::npos) kernel = kernel.substr(scope + 2);
  std::size_t from = 0;
  for (;;) {
    const std::size_t global = source.find("__global__", from);
    if (global == std::string_view::npos) return std::nullopt;
    from = global + 10;
    // The declaration runs to its body or its ';'.
    const std::size_t stop = source.find_first_of("{;", from);
    const std::string_view declaration = source.substr(from, stop == std::string_view::npos ? std::string_view::npos : stop - from);
    for (std::size_t at = declaration.find(kernel); at != std::string_view::npos; at = declaration.find(kernel, at + 1)) {
      const bool whole = (at == 0 || !is_ident_char(declaration[at - 1])) &&
                         (at + kernel.size() == declaration.size() || !is_ident_char(declaration[at + kernel.size()]));
      if (!whole) continue;
      std::size_t open = at + kernel.size();
      while (open < declaration.size() && std::isspace(static_cast<unsigned char>(declaration[open]))) ++open;
      if (open >= declaration.size() || declaration[open] != '(') continue;
      std::vector<std::string> names;
      int depth = 0;
      std::size_t start = open + 1;
      for (std::size_t i = open; i < declaration.size(); ++i) {
        const char c = declaration[i];
        if (c == '(' || c == '<' || c == '[') ++depth;
        if (c == ')' || c == '>' || c == ']') --depth;
        if ((c == ',' && depth == 1) || (c == ')' && depth == 0)) {
          std::string name = parameter_name(declaration.substr(start, i - start));
          const bool is_void = names.empty() && c == ')' && name == "void";
          if (!name.empty() && !is_void) names.push_back(std::move(name));
          start = i + 1;
          if (c == ')') return names;
        }
      }
      return std::nullopt;  // unbalanced
    }
  }
}

}  // namespace hiera::engine::spec
