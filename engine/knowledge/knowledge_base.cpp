#include "engine/knowledge/knowledge_base.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/knowledge/field_error.h"
#include "engine/knowledge/placeholders.h"
#include "engine/knowledge/vocabulary.h"

namespace hiera::engine::knowledge {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

template <typename T>
const T* find_by_id(const std::vector<T>& items, std::string_view id) {
  const auto it = std::find_if(items.begin(), items.end(), [&](const T& item) { return item.id == id; });
  return it == items.end() ? nullptr : &*it;
}

template <typename T>
void sort_by_id(std::vector<T>& items) {
  std::sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.id < b.id; });
}

// Collects problems while loading one directory.
class Loader {
 public:
  explicit Loader(KnowledgeBase& kb) : kb_(kb) {}

  void problem(const fs::path& path, std::string field, std::string message) {
    kb_.problems.push_back({path, std::move(field), std::move(message)});
  }

  std::optional<std::string> read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      problem(path, "", "cannot read the file");
      return std::nullopt;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::optional<json> read_json(const fs::path& path) {
    const auto text = read_text(path);
    if (!text) return std::nullopt;
    try {
      return json::parse(*text);
    } catch (const json::parse_error& e) {
      // nlohmann: "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ..."
      const std::string what = e.what();
      const std::size_t at = what.find("at line ");
      problem(path, "", at == std::string::npos ? "invalid JSON: " + what : "invalid JSON " + what.substr(at));
      return std::nullopt;
    }
  }

  // Regular, non-hidden files of `subdir` (with `extension` when given), sorted;
  // a missing directory is a problem.
  std::vector<fs::path> files(const fs::path& subdir, std::string_view extension) {
    std::vector<fs::path> out;
    std::error_code error;
    if (!fs::is_directory(subdir, error)) {
      problem(subdir, "", "missing directory");
      return out;
    }
    for (const auto& entry : fs::directory_iterator(subdir, error)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.front() == '.' || !entry.is_regular_file(error)) continue;
      if (!extension.empty() && entry.path().extension() != extension) continue;
      out.push_back(entry.path());
    }
    if (error) problem(subdir, "", "cannot list the directory: " + error.message());
    std::sort(out.begin(), out.end());
    return out;
  }

  void load_templates() {
    for (const fs::path& path : files(kb_.dir / "templates", "")) {
      auto text = read_text(path);
      if (!text) continue;
      CodeTemplate code{path.filename().string(), std::move(*text), {}};
      code.placeholders = find_placeholders(code.text);
      kb_.templates.emplace(code.name, std::move(code));
    }
  }

  void load_gpus() {
    std::map<std::string, fs::path> seen;
    for (const fs::path& path : files(kb_.dir / "gpus", ".json")) {
      const auto value = read_json(path);
      if (!value) continue;
      try {
        GpuSpec spec = gpu_spec_from_json(*value);
        if (const auto it = seen.find(spec.id); it != seen.end())
          throw FieldError("id", "duplicate id \"" + spec.id + "\" (already defined in " + it->second.filename().string() + ")");
        seen.emplace(spec.id, path);
        kb_.gpus.push_back(std::move(spec));
      } catch (const FieldError& e) {
        problem(path, e.field(), e.what());
      }
    }
    sort_by_id(kb_.gpus);
  }

  void load_recipes() {
    for (const fs::path& path : files(kb_.dir / "recipes", ".json")) {
      const auto value = read_json(path);
      if (!value) continue;
      try {
        Recipe recipe = recipe_from_json(*value);
        require_named_by_id(recipe.id, path);
        if (recipe.template_name && !kb_.templates.contains(*recipe.template_name))
          throw FieldError("template", "template \"" + *recipe.template_name + "\" not found in " +
                                           (kb_.dir / "templates").string());
        kb_.recipes.push_back(std::move(recipe));
      } catch (const FieldError& e) {
        problem(path, e.field(), e.what());
      }
    }
    sort_by_id(kb_.recipes);
  }

  void load_spaces() {
    const fs::path path = kb_.dir / "spaces.json";
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      problem(path, "", "missing file");
      return;
    }
    const auto value = read_json(path);
    if (!value) return;
    if (!value->is_object()) {
      problem(path, "", "expected a JSON object with keys S1, S2, S3");
      return;
    }
    for (const auto& [key, entry] : value->items()) {
      if (key == "notes") continue;
      const auto space = parse_space(key);
      if (!space) {
        problem(path, key, "unknown space \"" + key + "\" (known: S1, S2, S3)");
        continue;
      }
      try {
        kb_.spaces.push_back(space_info_from_json(*space, entry));
      } catch (const FieldError& e) {
        problem(path, e.field(), e.what());
      }
    }
    for (Space space : {Space::S1, Space::S2, Space::S3}) {
      if (!value->contains(to_string(space))) problem(path, to_string(space), "missing space");
    }
    std::sort(kb_.spaces.begin(), kb_.spaces.end(), [](const SpaceInfo& a, const SpaceInfo& b) { return a.space < b.space; });
  }

  void load_prompts() {
    std::set<std::string> files_present;
    for (const fs::path& path : files(kb_.dir / "prompts", ".json")) {
      files_present.insert(path.stem().string());
      const auto value = read_json(path);
      if (!value) continue;
      try {
        PromptTemplate prompt = prompt_template_from_json(*value);
        require_named_by_id(prompt.id, path);
        kb_.prompts.push_back(std::move(prompt));
      } catch (const FieldError& e) {
        problem(path, e.field(), e.what());
      }
    }
    // The proposer cannot work without these; a broken file was reported above.
    if (fs::is_directory(kb_.dir / "prompts")) {
      for (const char* id : {"propose", "repair"}) {
        if (!files_present.contains(id)) problem(kb_.dir / "prompts" / (std::string(id) + ".json"), "", "missing file");
      }
    }
    sort_by_id(kb_.prompts);
  }

 private:
  static void require_named_by_id(const std::string& id, const fs::path& path) {
    if (path.stem().string() != id)
      throw FieldError("id", "id \"" + id + "\" does not match the file name " + path.filename().string() +
                                 " (the file must be " + id + ".json)");
  }

  KnowledgeBase& kb_;
};

}  // namespace

const GpuSpec* KnowledgeBase::find_gpu(std::string_view device_name) const {
  const std::string name = lower(device_name);
  const GpuSpec* best = nullptr;
  std::size_t best_length = 0;
  for (const GpuSpec& spec : gpus) {
    for (const std::string& match : spec.match) {
      if (match.size() > best_length && name.find(lower(match)) != std::string::npos) {
        best = &spec;
        best_length = match.size();
      }
    }
  }
  return best;
}

namespace {

// Lower case, words apart by one space (spaces, '-' and '_' alike), without
// a leading "nvidia": "NVIDIA A100-SXM4-80GB" -> "a100 sxm4 80gb".
std::string gpu_words(std::string_view name) {
  std::string out;
  for (const char c : lower(name)) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  if (out == "nvidia") return "";
  if (out.rfind("nvidia ", 0) == 0) out.erase(0, 7);
  return out;
}

// The same without the spaces: "a100sxm480gb".
std::string gpu_key(std::string_view name) {
  std::string out = gpu_words(name);
  std::erase(out, ' ');
  return out;
}

// `words` begins with the whole words of `prefix`: "a100 sxm 80gb" with "a100", not "l40s" with "l40".
bool starts_with_words(const std::string& words, const std::string& prefix) {
  return words.rfind(prefix, 0) == 0 && (words.size() == prefix.size() || words[prefix.size()] == ' ');
}

}  // namespace

const GpuSpec* KnowledgeBase::gpu(std::string_view name) const {
  if (const GpuSpec* exact = find_by_id(gpus, name)) return exact;
  const std::string key = gpu_key(name);
  if (key.empty()) return nullptr;
  for (const GpuSpec& spec : gpus) {
    if (gpu_key(spec.id) == key) return &spec;
    for (const std::string& match : spec.match) {
      if (gpu_key(match) == key) return &spec;
    }
  }
  if (const GpuSpec* device = find_gpu(name)) return device;
  // A unique prefix of whole words: "A100" is the one GPU whose id starts with "a100_".
  const std::string words = gpu_words(name);
  const GpuSpec* found = nullptr;
  for (const GpuSpec& spec : gpus) {
    bool fits = starts_with_words(gpu_words(spec.id), words);
    for (const std::string& match : spec.match) fits = fits || starts_with_words(gpu_words(match), words);
    if (!fits) continue;
    if (found) return nullptr;
    found = &spec;
  }
  return found;
}

std::string KnowledgeBase::accepted_gpus() const {
  std::string ids;
  for (const GpuSpec& spec : gpus) ids += (ids.empty() ? "" : ", ") + spec.id;
  if (ids.empty()) return "none: the knowledge directory has no GPUs";
  return "a knowledge GPU id (" + ids + ") or a name such as \"H200\" or \"NVIDIA A100-SXM4-80GB\", in any case";
}

const Recipe* KnowledgeBase::recipe(std::string_view id) const { return find_by_id(recipes, id); }

std::vector<const Recipe*> KnowledgeBase::recipes_for(Space space_wanted, Bottleneck bottleneck, std::string_view pattern,
                                                      std::string_view dtype, std::int64_t elements,
                                                      const std::vector<std::string>& allowed) const {
  std::vector<std::string> granted;
  for (const auto& allowance : allowed) granted.push_back(canonical_allowance(allowance));
  std::vector<const Recipe*> out;
  for (const Recipe& candidate : recipes) {
    if (!candidate.applies(space_wanted, bottleneck, pattern, dtype, elements)) continue;
    const bool allowed_all = std::all_of(candidate.requires_allow.begin(), candidate.requires_allow.end(),
                                         [&](const std::string& needed) { return contains(granted, needed); });
    if (allowed_all) out.push_back(&candidate);
  }
  return out;
}

const PromptTemplate* KnowledgeBase::prompt(std::string_view id) const { return find_by_id(prompts, id); }

const SpaceInfo* KnowledgeBase::space(Space wanted) const {
  const auto it = std::find_if(spaces.begin(), spaces.end(), [&](const SpaceInfo& info) { return info.space == wanted; });
  return it == spaces.end() ? nullptr : &*it;
}

std::optional<std::string> KnowledgeBase::template_text(std::string_view name) const {
  const auto it = templates.find(name);
  if (it == templates.end()) return std::nullopt;
  return it->second.text;
}

KnowledgeBase load_knowledge(const fs::path& dir) {
  KnowledgeBase kb;
  kb.dir = dir;
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    kb.problems.push_back({dir, "", fs::exists(dir, error) ? "not a directory" : "knowledge directory not found"});
    return kb;
  }
  Loader loader(kb);
  loader.load_templates();  // first: recipes name them
  loader.load_gpus();
  loader.load_recipes();
  loader.load_spaces();
  loader.load_prompts();
  return kb;
}

}  // namespace hiera::engine::knowledge
