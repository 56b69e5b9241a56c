// The configuration file: found by walking up from the start directory,
// --config and $HIERA_CONFIG before it, unknown keys named against the
// schema (docs/config.schema.json), and the schema listing every key the code reads.
#include "engine/facade/configuration.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "engine/spec/clause_registry.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace hiera::engine::facade {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// $HIERA_CONFIG set (or unset) for one test, restored after.
class ScopedConfigEnv {
 public:
  explicit ScopedConfigEnv(const char* value) {
    if (const char* old = std::getenv("HIERA_CONFIG")) old_ = old;
    if (value) ::setenv("HIERA_CONFIG", value, 1);
    else ::unsetenv("HIERA_CONFIG");
  }
  ~ScopedConfigEnv() {
    if (old_) ::setenv("HIERA_CONFIG", old_->c_str(), 1);
    else ::unsetenv("HIERA_CONFIG");
  }

 private:
  std::optional<std::string> old_;
};

fs::path write_config(const fs::path& dir, const std::string& text) {
  fs::create_directories(dir / ".hiera");
  std::ofstream(dir / ".hiera" / "config.json") << text;
  return dir / ".hiera" / "config.json";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ConfigurationFile, FoundByWalkingUpFromTheStartDirectory) {
  ScopedConfigEnv no_env(nullptr);
  hiera::testing::TempDirectory root("hiera-config-walk-");
  const fs::path deep = root.path() / "project" / "src" / "models";
  fs::create_directories(deep);
  EXPECT_EQ(find_configuration("", deep), fs::path()) << "no config anywhere above a fresh temp dir";

  const fs::path top = write_config(root.path() / "project", R"({"target_gpu": "a100"})");
  EXPECT_EQ(find_configuration("", deep), top);
  EXPECT_EQ(find_configuration("", root.path() / "project"), top);  // the start directory itself counts
  EXPECT_EQ(find_configuration("", root.path()), fs::path());        // never below the start

  // The nearest wins, as git's .git does.
  const fs::path nearer = write_config(root.path() / "project" / "src", R"({"target_gpu": "h100"})");
  EXPECT_EQ(find_configuration("", deep), nearer);
  const auto loaded = load_configuration("", deep);
  EXPECT_EQ(loaded.file, nearer);
  EXPECT_EQ(loaded.json, (json{{"target_gpu", "h100"}}));
  EXPECT_TRUE(loaded.warnings.empty());

  // A relative start is taken from the current directory; a directory named
  // .hiera without config.json in it is passed over.
  fs::create_directories(deep / ".hiera");
  EXPECT_EQ(find_configuration("", deep), nearer);
}

TEST(ConfigurationFile, ExplicitPathThenEnvironmentThenWalkUp) {
  hiera::testing::TempDirectory root("hiera-config-order-");
  const fs::path found = write_config(root.path(), R"({"runs_dir": "found"})");
  const fs::path from_env = root.path() / "env.json";
  const fs::path given = root.path() / "given.json";
  std::ofstream(from_env) << R"({"runs_dir": "env"})";
  std::ofstream(given) << R"({"runs_dir": "given"})";
  {
    ScopedConfigEnv env(from_env.c_str());
    EXPECT_EQ(load_configuration(given.string(), root.path()).json["runs_dir"], "given");
    EXPECT_EQ(load_configuration("", root.path()).json["runs_dir"], "env");
  }
  {
    ScopedConfigEnv env("");  // empty is unset
    EXPECT_EQ(load_configuration("", root.path()).json["runs_dir"], "found");
    EXPECT_EQ(load_configuration("", root.path()).file, found);
  }
  {
    ScopedConfigEnv env((root.path() / "missing.json").c_str());  // named but absent: an error, not the walk
    try {
      (void)load_configuration("", root.path());
      FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "cannot read the configuration " + (root.path() / "missing.json").string());
    }
  }
}

TEST(ConfigurationFile, RejectsWhatIsNotAJsonObjectNamingTheFile) {
  ScopedConfigEnv no_env(nullptr);
  hiera::testing::TempDirectory root("hiera-config-bad-");
  const fs::path file = write_config(root.path(), "[1, 2]");
  try {
    (void)load_configuration("", root.path());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "the configuration " + file.string() + " is not valid: must be a JSON object");
  }
}

TEST(ConfigurationFile, WarnsAboutEachUnknownKeyNamingItAndTheFile) {
  ScopedConfigEnv no_env(nullptr);
  hiera::testing::TempDirectory root("hiera-config-keys-");
  const fs::path file = write_config(root.path(), R"({
    "target_gpu": "h200", "targetgpu": "h100",
    "worker": {"command": "hiera worker", "cmd": "x"},
    "llm": {"default": "a", "endpoints": [{"name": "a", "provider": "openai", "base_url": "http://x", "model": "m"},
                                          {"name": "b", "provider": "openai", "base_url": "http://x", "model": "m", "url": "y"}]},
    "spec": {"numerics": {"atol": {"float32": 1e-4}, "tolerance": 1}, "budget": {"candidates": 3, "hours": 1}}
  })");
  const auto loaded = load_configuration("", root.path());
  const std::string tail = "' (ignored; the keys are in docs/config.schema.json)";
  const std::vector<std::string> expected = {
      file.string() + ": unknown configuration key 'llm.endpoints[1].url" + tail,
      file.string() + ": unknown configuration key 'spec.budget.hours" + tail,
      file.string() + ": unknown configuration key 'spec.numerics.tolerance" + tail,
      file.string() + ": unknown configuration key 'targetgpu" + tail,
      file.string() + ": unknown configuration key 'worker.cmd" + tail,
  };
  EXPECT_EQ(loaded.warnings, expected);
  // The README's example configuration has none.
  EXPECT_TRUE(unknown_configuration_keys(json::parse(R"({
    "llm": {"default": "local", "endpoints": [
      {"name": "local", "provider": "openai", "base_url": "http://127.0.0.1:8000", "model": "q", "api_key_env": ""},
      {"name": "claude", "provider": "anthropic", "base_url": "https://api.anthropic.com", "model": "c",
       "api_key_env": "ANTHROPIC_API_KEY", "max_concurrent": 4}]},
    "worker": {"command": "hiera worker --device 0"},
    "spec": {"numerics": {"atol": {"float32": 1e-4}}, "spaces": ["S1", "S2", "S3"],
             "budget": {"candidates": 24, "time_s": 900}, "target_speedup": 1.1},
    "target_gpu": "h200", "runs_dir": ".hiera/runs"})"), configuration_schema()).empty());
}

TEST(ConfigurationSchema, TheEmbeddedSchemaIsDocsConfigSchemaJson) {
  EXPECT_EQ(configuration_schema(),
            json::parse(read_text(fs::path(::hiera::testing::source_dir()) / "docs/config.schema.json")));
}

const json& properties(const std::vector<std::string>& path) {
  const json* node = &configuration_schema();
  for (const auto& key : path) {
    if (key == "[]") node = &node->at("items");
    else node = &node->at("properties").at(key);
  }
  return node->at("properties");
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

// Every string key read by `pattern` (its first group) in the file, between
// the markers `from` and `to` when given.
std::set<std::string> keys_read(const std::string& file, const std::string& pattern, const std::string& from = {},
                                const std::string& to = {}) {
  std::string text = read_text(fs::path(::hiera::testing::source_dir()) / file);
  if (!from.empty()) {
    const auto begin = text.find(from);
    const auto end = text.find(to, begin);
    EXPECT_NE(begin, std::string::npos) << file << ": no " << from;
    EXPECT_NE(end, std::string::npos) << file << ": no " << to;
    if (begin == std::string::npos || end == std::string::npos) return {};
    text = text.substr(begin, end - begin);
  }
  const std::regex re(pattern);
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.insert((*it)[1]);
  return out;
}

void expect_listed(const std::set<std::string>& read, const json& listed, const std::string& where) {
  EXPECT_FALSE(read.empty()) << where << ": the pattern found nothing (the code changed: update this test)";
  for (const auto& key : read) EXPECT_TRUE(listed.contains(key)) << where << " reads '" << key << "', which the schema does not list";
}

TEST(ConfigurationSchema, ListsEveryKeyTheCodeReads) {
  // The top level and worker/llm: what engine/optimize/optimizer_setup.cpp reads of the configuration.
  expect_listed(keys_read("engine/optimize/optimizer_setup.cpp", R"(config\.(?:value|contains)\(\"([a-z_]+)\")"),
                properties({}), "optimizer_setup.cpp (top level)");
  expect_listed(keys_read("engine/optimize/optimizer_setup.cpp", R"(worker(?:\[|\.contains\()\"([a-z_]+)\")"),
                properties({"worker"}), "optimizer_setup.cpp (worker)");
  expect_listed(keys_read("engine/optimize/optimizer_setup.cpp", R"(llm\.value\(\"([a-z_]+)\")"), properties({"llm"}),
                "optimizer_setup.cpp (llm)");
  // An endpoint's fields: what engine/propose/llm/endpoint.cpp parses (api_key is refused by name).
  auto endpoint = keys_read("engine/propose/llm/endpoint.cpp", R"(config\.contains\(\"([a-z_]+)\")");
  for (const auto& key : keys_read("engine/propose/llm/endpoint.cpp", R"(get_string\(config, name, \"([a-z_]+)\")")) endpoint.insert(key);
  expect_listed(endpoint, properties({"llm", "endpoints", "[]"}), "endpoint.cpp");
  EXPECT_FALSE(properties({"llm", "endpoints", "[]"}).contains("api_key"));
  // The spec: the keys spec_builder.cpp takes, and every clause of the registry under its family.
  auto spec = keys_read("engine/spec/spec_builder.cpp", R"(key == \"([a-z_]+)\")", "void configuration()", "void probe(");
  std::set<std::string> budget;
  for (const char* key : {"candidates", "minutes", "time_s", "compile_s"}) {
    spec.erase(key);  // budget's own keys, below
    budget.insert(key);
  }
  expect_listed(spec, properties({"spec"}), "spec_builder.cpp");
  expect_listed(budget, properties({"spec", "budget"}), "spec_builder.cpp (budget)");
  for (const auto& clause : spec::clause_registry()) {
    const std::string name(clause.name);
    const auto dot = name.find('.');
    EXPECT_TRUE(properties({"spec", name.substr(0, dot)}).contains(name.substr(dot + 1)))
        << "the clause " << name << " is not in the schema's spec." << name.substr(0, dot);
  }
  // And nothing listed that the code does not read (the top level, at least).
  EXPECT_EQ(keys_of(properties({})), (std::set<std::string>{"$schema", "llm", "runs_dir", "spec", "target_gpu", "worker"}));
}

}  // namespace
}  // namespace hiera::engine::facade
