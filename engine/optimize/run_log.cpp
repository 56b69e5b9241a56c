#include "engine/optimize/run_log.h"

#include <chrono>
#include <cctype>
#include <ctime>
#include <stdexcept>

namespace hiera::engine::optimize {

RunLog::RunLog(std::filesystem::path directory) : directory_(std::move(directory)), start_(std::chrono::steady_clock::now()) {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) throw std::runtime_error("cannot create the run directory " + directory_.string() + ": " + ec.message());
  out_.open(path(), std::ios::out | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write " + path().string());
}

void RunLog::write(const std::string& event, nlohmann::json fields) {
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_);
  nlohmann::json line = {{"event", event}, {"t_ms", elapsed.count()}};
  for (auto& [key, value] : fields.items()) line[key] = std::move(value);
  std::lock_guard lock(mutex_);
  // Replace invalid UTF-8 (a model's reply can hold anything) rather than throw.
  out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

std::filesystem::path RunLog::write_file(const std::string& name, const std::string& content) const {
  const auto file = directory_ / name;
  std::ofstream out(file, std::ios::out | std::ios::trunc | std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + file.string());
  return file;
}

std::filesystem::path new_run_directory(const std::filesystem::path& runs_dir, const std::string& file_stem,
                                        const std::string& symbol) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string base = std::string(stamp) + "-" + file_stem + (symbol.empty() ? "" : "-" + symbol);
  for (char& c : base) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  std::filesystem::path candidate = runs_dir / base;
  for (int n = 2; std::filesystem::exists(candidate); ++n) candidate = runs_dir / (base + "-" + std::to_string(n));
  return candidate;
}

}  // namespace hiera::engine::optimize
