#include "engine/bench/problem_discovery.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

namespace hiera::engine::bench {

namespace fs = std::filesystem;

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Hidden folders (.git, .hiera: where bench may write its own output) and caches hold no problems.
bool skipped_folder(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.empty() || name.front() == '.' || name == "__pycache__";
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DiscoveryError(file.string() + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool defines_model(std::string_view source) {
  // The same class pattern as optimize::make_target, for the class it picks by default.
  static const std::regex model(R"((?:^|\n)class\s+Model\s*\([^)]*Module[^)]*\)\s*:)");
  return std::regex_search(source.begin(), source.end(), model);
}

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const std::size_t run_a = i, run_b = j;
      while (i < a.size() && is_digit(a[i])) ++i;
      while (j < b.size() && is_digit(b[j])) ++j;
      std::string_view da = a.substr(run_a, i - run_a), db = b.substr(run_b, j - run_b);
      const std::size_t zeros_a = std::min(da.find_first_not_of('0'), da.size() - 1);
      const std::size_t zeros_b = std::min(db.find_first_not_of('0'), db.size() - 1);
      const std::string_view va = da.substr(zeros_a), vb = db.substr(zeros_b);
      if (va.size() != vb.size()) return va.size() < vb.size();
      if (va != vb) return va < vb;
      if (da.size() != db.size()) return da.size() < db.size();  // "1" before "01": a total order
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::vector<Problem> discover_problems(const fs::path& dir, const std::string& filter) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DiscoveryError(dir.string() + ": not a directory");
  std::regex selected;
  try {
    selected = std::regex(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw DiscoveryError("--filter '" + filter + "': not a valid regular expression (" + e.what() + ")");
  }

  std::vector<Problem> problems;
  fs::recursive_directory_iterator it(dir, ec);
  if (ec) throw DiscoveryError(dir.string() + ": cannot list the directory: " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw DiscoveryError(dir.string() + ": cannot list the directory: " + ec.message());
    const fs::directory_entry& entry = *it;
    if (entry.is_directory(ec)) {
      if (skipped_folder(entry.path())) it.disable_recursion_pending();
      continue;
    }
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".py") continue;
    if (!defines_model(read_file(entry.path()))) continue;
    Problem problem;
    problem.name = entry.path().stem().string();
    const fs::path folder = entry.path().lexically_relative(dir).parent_path();
    problem.group = folder.empty() ? kTopGroup : folder.generic_string();
    problem.file = entry.path();
    if (filter.empty() || std::regex_search(problem.id(), selected)) problems.push_back(std::move(problem));
  }
  std::sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    if (a.group != b.group) {
      if (a.group == kTopGroup || b.group == kTopGroup) return a.group == kTopGroup;
      return natural_less(a.group, b.group);
    }
    return natural_less(a.name, b.name);
  });
  return problems;
}

}  // namespace hiera::engine::bench
