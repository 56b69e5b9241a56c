#pragma once
// The configured secrets (the values of the environment variables that hold
// LLM API keys) and their removal from text: a candidate may put a key it
// read into its exception text, and what a worker says must never carry it
// into a report, a log, a cache, a prompt or an editor. Every occurrence of a
// value becomes "[redacted $NAME]". Values shorter than kMinSecretLength are
// not secrets worth the name and would redact ordinary words.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine {

class SecretRedactor {
 public:
  static constexpr std::size_t kMinSecretLength = 8;

  // NAME's value in this process's environment, when it is set; the name is
  // kept either way, so that workers start without it.
  void add_from_environment(const std::string& name);
  // A secret called NAME with this value (ignored, but its name kept, when
  // the value is shorter than kMinSecretLength). The same name twice: the last value wins.
  void add(const std::string& name, std::string value);

  // text with every occurrence of every secret replaced by "[redacted $NAME]";
  // where two secrets overlap, the longer one is replaced.
  std::string redact(std::string_view text) const;
  // Whether redact would change text.
  bool contains_secret(std::string_view text) const;

  // The names of the variables (set or not), in the order added: what a child's environment must not hold.
  const std::vector<std::string>& names() const { return names_; }
  bool empty() const { return secrets_.empty(); }

 private:
  struct Secret {
    std::string name;
    std::string value;
  };
  std::vector<std::string> names_;
  std::vector<Secret> secrets_;  // longest value first, so a secret inside another never splits it
};

}  // namespace hiera::engine
