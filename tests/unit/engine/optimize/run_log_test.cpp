// The run log: one JSON object per line, flushed as written, in a directory
// of its own per run.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <unistd.h>

#include "engine/optimize/run_log.h"

namespace {

namespace fs = std::filesystem;
using hiera::engine::optimize::new_run_directory;
using hiera::engine::optimize::RunLog;

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("hiera-runlog-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(RunLog, WritesOneObjectPerLineAsItHappens) {
  const auto dir = scratch("lines");
  RunLog log(dir / "run");
  log.write("start", {{"target", "m.py::Model"}});
  log.write("candidate", {{"id", "c1"}, {"source", std::string("bad \xff utf-8")}});
  std::ifstream in(log.path());  // readable before the log is closed: flushed per line
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "start");
  EXPECT_EQ(lines[0]["target"], "m.py::Model");
  EXPECT_TRUE(lines[0]["t_ms"].is_number_integer());
  EXPECT_EQ(lines[1]["id"], "c1");
  EXPECT_EQ(lines[1]["source"], "bad \xEF\xBF\xBD utf-8");  // replaced, never a throw
  EXPECT_EQ(log.write_file("best.py", "x = 1\n"), dir / "run" / "best.py");
  fs::remove_all(dir);
}

TEST(RunLog, EachRunGetsItsOwnDirectory) {
  const auto dir = scratch("dirs");
  const auto first = new_run_directory(dir, "my model", "Model");
  EXPECT_EQ(first.parent_path(), dir);
  EXPECT_NE(first.filename().string().find("-my_model-Model"), std::string::npos) << first;
  fs::create_directories(first);
  const auto second = new_run_directory(dir, "my model", "Model");
  EXPECT_NE(first, second);
  EXPECT_EQ(second.filename().string(), first.filename().string() + "-2");
  fs::remove_all(dir);
}

TEST(RunLog, AnUnwritableDirectoryIsAClearError) {
  try {
    RunLog log("/proc/hiera-cannot-write-here/run");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot create the run directory /proc/hiera-cannot-write-here/run: ", 0), 0u) << e.what();
  }
}

}  // namespace
