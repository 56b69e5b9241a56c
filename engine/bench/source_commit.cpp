#include "engine/bench/source_commit.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

#include "engine/common/child_process.h"

namespace hiera::engine::bench {

std::string source_commit(const std::filesystem::path& source_dir) {
  std::error_code ec;
  if (source_dir.empty() || !std::filesystem::is_directory(source_dir, ec)) return "unknown";
  try {
    SpawnOptions options;
    options.die_with_parent = true;  // every child hiera starts ends with it
    const CompletedProcess git = run_to_completion({"git", "-C", source_dir.string(), "rev-parse", "HEAD"}, "",
                                                   std::chrono::seconds(10), options);
    std::string commit = git.out;
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
    const bool hex = !commit.empty() && std::all_of(commit.begin(), commit.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    if (git.timed_out || git.status.code != 0 || !hex) return "unknown";
    // Tracked files that differ from HEAD (work not committed, or a copy whose .git is older than its files):
    // the result is not that commit's, and says so.
    const CompletedProcess status = run_to_completion(
        {"git", "-C", source_dir.string(), "status", "--porcelain", "--untracked-files=no"}, "", std::chrono::seconds(10), options);
    if (status.timed_out || status.status.code != 0) return commit + "+unverified";
    return status.out.empty() ? commit : commit + "+modified";
  } catch (const std::exception&) {
    return "unknown";  // no git on this machine
  }
}

std::string source_commit() {
  // A copy of the tree whose .git is stale or missing (one shipped to a GPU machine) is named by its sender.
  if (const char* named = std::getenv("HIERA_COMMIT"); named && *named) return named;
  return source_commit(HIERA_BENCH_SOURCE_DIR);
}

}  // namespace hiera::engine::bench
