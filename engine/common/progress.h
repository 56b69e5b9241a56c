#pragma once
// Progress of long work, without knowing who shows it (LSP $/progress, a
// terminal progress bar, or a test).
#include <optional>
#include <string>

namespace hiera::engine {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // percentage in [0, 100] when known.
  virtual void report(const std::string& message, std::optional<int> percentage) = 0;
};

class NullProgress final : public ProgressSink {
 public:
  void report(const std::string&, std::optional<int>) override {}
};

}  // namespace hiera::engine
