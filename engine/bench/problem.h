#pragma once
// One problem of a KernelBench-format suite: a .py file defining `Model`,
// get_inputs() and get_init_inputs(), named by its file and grouped by the
// subfolder it sits in.
#include <filesystem>
#include <string>

namespace hiera::engine::bench {

// The group of problems that sit directly in the suite directory.
inline constexpr const char* kTopGroup = ".";

struct Problem {
  std::string name;            // the file's stem: "19_ReLU"
  std::string group;           // the folder under the suite: "fusion", "level1/extra"; kTopGroup at the top
  std::filesystem::path file;  // the suite directory joined with the relative path
  // "fusion/19_ReLU"; just the name at the top level. Unique within a suite.
  std::string id() const { return group == kTopGroup ? name : group + "/" + name; }
};

}  // namespace hiera::engine::bench
