#pragma once
// The full history of one optimization run as JSON Lines (run.jsonl in the
// run's directory): one object per event, flushed as it happens, so a run that
// crashes or is cancelled still leaves what it did. Thread-safe.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace hiera::engine::optimize {

class RunLog {
 public:
  // Creates the directory and run.jsonl; throws std::runtime_error when it cannot.
  explicit RunLog(std::filesystem::path directory);
  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path path() const { return directory_ / "run.jsonl"; }

  // Writes {"event": event, "t_ms": milliseconds since the run began, ...fields}.
  void write(const std::string& event, nlohmann::json fields = nlohmann::json::object());
  // A file next to the log (the best candidate's source, result.json, report.md).
  std::filesystem::path write_file(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path directory_;
  std::ofstream out_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
};

// <runs_dir>/<UTC yyyymmdd-HHMMSS>-<file stem>-<symbol>, made unique with a suffix when taken.
std::filesystem::path new_run_directory(const std::filesystem::path& runs_dir, const std::string& file_stem,
                                        const std::string& symbol);

}  // namespace hiera::engine::optimize
