#include "engine/worker/cubin_cache.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/sha256.h"

namespace hiera::engine::worker {

namespace {

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ';';
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

bool write_atomically(const std::filesystem::path& path, std::string_view bytes) {
  std::random_device entropy;
  const auto temp = path.string() + ".tmp" + std::to_string(entropy());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) std::filesystem::remove(temp, ec);
  return !ec;
}

}  // namespace

std::string cubin_cache_key(const CubinKeyInput& input) {
  std::string material = "hiera-cubin-v1;";
  append_field(material, input.source);
  append_field(material, std::to_string(input.options.size()));
  for (const auto& option : input.options) append_field(material, option);
  append_field(material, input.arch);
  append_field(material, input.nvrtc_version);
  if (!input.name_expressions.empty()) {
    append_field(material, "names");
    for (const auto& name : input.name_expressions) append_field(material, name);
  }
  return engine::sha256_hex(material);
}

CubinCache::CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path CubinCache::cubin_path(const std::string& key) const { return dir_ / (key + ".cubin"); }

std::optional<CachedCubin> CubinCache::load(const std::string& key) const {
  auto cubin = read_file(cubin_path(key));
  if (!cubin || cubin->empty()) return std::nullopt;
  CachedCubin entry{std::move(*cubin), {}};
  if (auto names = read_file(dir_ / (key + ".names.json"))) {
    try {
      entry.lowered_names = nlohmann::json::parse(*names).get<std::map<std::string, std::string>>();
    } catch (const std::exception&) {
      return std::nullopt;  // a damaged side file: recompile rather than guess
    }
  }
  return entry;
}

void CubinCache::store(const std::string& key, const CachedCubin& entry) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    std::cerr << "hiera-worker: cubin cache disabled: cannot create " << dir_ << ": " << ec.message() << "\n";
    return;
  }
  // The names first: a cubin present without its names would be a hit missing them.
  if (!entry.lowered_names.empty() &&
      !write_atomically(dir_ / (key + ".names.json"), nlohmann::json(entry.lowered_names).dump())) {
    std::cerr << "hiera-worker: cannot write to the cubin cache " << dir_ << "\n";
    return;
  }
  if (!write_atomically(cubin_path(key), entry.cubin)) {
    std::cerr << "hiera-worker: cannot write to the cubin cache " << dir_ << "\n";
  }
}

}  // namespace hiera::engine::worker
