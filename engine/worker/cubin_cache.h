#pragma once
// On-disk cache of compiled cubins, content-addressed: the key is the SHA-256
// of everything that determines the machine code (source, options, target
// architecture, NVRTC version, and any kernel names whose mangled form is
// needed), so a hit can skip NVRTC without ever returning stale code.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hiera::engine::worker {

struct CubinKeyInput {
  std::string_view source;
  const std::vector<std::string>& options;
  std::string_view arch;
  std::string_view nvrtc_version;
  const std::vector<std::string>& name_expressions;  // empty for a plain compile
};

// Each field is length-prefixed, so ("ab", "c") and ("a", "bc") never collide.
std::string cubin_cache_key(const CubinKeyInput& input);

struct CachedCubin {
  std::string cubin;
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled kernel name
};

// `<dir>/<key>.cubin`, plus `<key>.names.json` when names were lowered. Writes
// go to a temporary file renamed into place, so concurrent workers sharing the
// directory never read a half-written cubin. I/O failures only lose caching.
class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir);
  std::optional<CachedCubin> load(const std::string& key) const;
  void store(const std::string& key, const CachedCubin& entry) const;
  std::filesystem::path cubin_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace hiera::engine::worker
