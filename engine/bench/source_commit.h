#pragma once
// Which hiera produced a bench result: `git rev-parse HEAD` of the source tree
// this hiera was built from, with "+modified" when tracked files differ from it
// ("+unverified" when git could not say), or "unknown" (an installed hiera whose
// source is gone, a tree that is not a git checkout, no git).
#include <filesystem>
#include <string>

namespace hiera::engine::bench {

// The commit of `source_dir`.
std::string source_commit(const std::filesystem::path& source_dir);
// $HIERA_COMMIT when set, else the commit of the tree this library was built from.
std::string source_commit();

}  // namespace hiera::engine::bench
