#include "engine/propose/compile_proposer.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

namespace hiera::engine::propose {

namespace {

// The name a candidate's own ModelNew is kept under, to be subclassed.
constexpr const char* kEagerModelNew = "_HieraEagerModelNew";

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\\'; }

// The index just past the string literal whose opening quote is at i.
std::size_t skip_string(std::string_view s, std::size_t i) {
  const char q = s[i];
  const bool triple = i + 2 < s.size() && s[i + 1] == q && s[i + 2] == q;
  std::size_t j = i + (triple ? 3 : 1);
  while (j < s.size()) {
    if (s[j] == '\\') {
      j += 2;
      continue;
    }
    if (triple) {
      if (s[j] == q && j + 2 < s.size() && s[j + 1] == q && s[j + 2] == q) return j + 3;
    } else if (s[j] == q || s[j] == '\n') {
      return j + 1;
    }
    ++j;
  }
  return s.size();
}

std::size_t skip_comment(std::string_view s, std::size_t i) {
  const std::size_t end = s.find('\n', i);
  return end == std::string_view::npos ? s.size() : end;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The arguments of a call whose '(' is at `open`, split at its top-level commas, trimmed.
std::vector<std::string_view> call_arguments(std::string_view s, std::size_t open) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t i = open; i < s.size();) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = skip_string(s, i);
      continue;
    }
    if (c == '#') {
      i = skip_comment(s, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        if (!trim(s.substr(start, i - start)).empty()) out.push_back(trim(s.substr(start, i - start)));
        return out;
      }
    }
    if (c == ',' && depth == 1) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
    ++i;
  }
  return out;  // an unclosed call: what there is
}

// "mode" of torch.compile(...)'s arguments: a string literal's text, else the argument as written.
std::string mode_of(const std::vector<std::string_view>& arguments) {
  for (std::string_view a : arguments) {
    if (a.substr(0, 4) != "mode") continue;
    std::string_view rest = trim(a.substr(4));
    if (rest.empty() || rest.front() != '=' || (rest.size() > 1 && rest[1] == '=')) continue;
    std::string_view value = trim(rest.substr(1));
    std::size_t q = 0;
    while (q < value.size() && (value[q] == 'r' || value[q] == 'R' || value[q] == 'u' || value[q] == 'U')) ++q;
    if (q < value.size() && (value[q] == '"' || value[q] == '\'') && value.size() >= q + 2 && value.back() == value[q] &&
        skip_string(value, q) == value.size()) {
      return std::string(value.substr(q + 1, value.size() - q - 2));
    }
    return std::string(value);
  }
  return kCompileModeDefault;
}

std::string with_final_newline(std::string source) {
  while (!source.empty() && (source.back() == '\n' || source.back() == ' ' || source.back() == '\t')) source.pop_back();
  return source + "\n";
}

std::string mode_argument(const std::string& mode) {
  return mode == kCompileModeDefault ? std::string() : ", mode=\"" + mode + "\"";
}

Candidate make_candidate(const ProposalRequest& request, std::string source, std::string notes) {
  Candidate c;
  c.proposer = kCompileProposerName;
  c.space = request.space;
  c.region = request.region;
  c.source = std::move(source);
  c.notes = std::move(notes);
  return c;
}

}  // namespace

bool defines_class(std::string_view source, std::string_view name) {
  for (std::size_t line = 0; line < source.size();) {
    std::size_t end = source.find('\n', line);
    if (end == std::string_view::npos) end = source.size();
    std::string_view text = source.substr(line, end - line);
    if (text.substr(0, 6) == "class ") {
      std::string_view rest = trim(text.substr(6));
      if (rest.substr(0, name.size()) == name && rest.size() > name.size() &&
          (rest[name.size()] == '(' || rest[name.size()] == ':' || space(rest[name.size()]))) {
        return true;
      }
    }
    line = end + 1;
  }
  return false;
}

std::optional<std::string> torch_compile_mode(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = skip_string(s, i);
      continue;
    }
    if (c == '#') {
      i = skip_comment(s, i);
      continue;
    }
    if (!ident_start(c) || (i > 0 && (ident_char(s[i - 1]) || s[i - 1] == '.'))) {
      ++i;
      continue;
    }
    // A dotted name, as written (spaces around the dots allowed, as Python does).
    std::string name;
    std::size_t j = i;
    while (true) {
      const std::size_t k = j;
      while (j < s.size() && ident_char(s[j])) ++j;
      name.append(s.substr(k, j - k));
      std::size_t d = j;
      while (d < s.size() && (s[d] == ' ' || s[d] == '\t')) ++d;
      if (d >= s.size() || s[d] != '.') break;
      ++d;
      while (d < s.size() && (s[d] == ' ' || s[d] == '\t')) ++d;
      if (d >= s.size() || !ident_start(s[d])) break;
      name += '.';
      j = d;
    }
    std::size_t open = j;
    while (open < s.size() && space(s[open])) ++open;
    if (name == "torch.compile" && open < s.size() && s[open] == '(') return mode_of(call_arguments(s, open));
    i = j;
  }
  return std::nullopt;
}

std::string compiled_module(const std::string& source, const std::string& base, const std::string& mode) {
  const bool reference = base == "Model";
  std::string out = with_final_newline(source);
  out += "\n\n# --- hiera: ModelNew is " + std::string(reference ? "Model" : "the ModelNew above") +
         " with its forward compiled by torch.compile (mode " + mode + ") ---\n";
  out += "import torch\n";
  std::string parent = base;
  if (!reference) {
    out += "\n" + std::string(kEagerModelNew) + " = ModelNew\n";
    parent = kEagerModelNew;
  }
  out += "\n\nclass ModelNew(" + parent + "):\n";
  out += "    \"\"\"" + std::string(reference ? "Model" : "The ModelNew above") +
         ", its forward compiled by torch.compile on the first call (compilation takes seconds; the\n"
         "    calls after it run the compiled code).\"\"\"\n\n";
  out += "    def __init__(self, *args, **kwargs):\n";
  out += "        if not hasattr(torch, \"compile\"):\n";
  out += "            raise RuntimeError(\"torch.compile is not available in torch %s (it needs torch 2.0 or newer)\"\n";
  out += "                               % torch.__version__)\n";
  out += "        super().__init__(*args, **kwargs)\n\n";
  out += "    def forward(self, *args, **kwargs):\n";
  out += "        # Compiled once per instance: a copy of the module compiles its own forward.\n";
  out += "        owner, compiled = self.__dict__.get(\"_hiera_compiled\", (None, None))\n";
  out += "        if owner != id(self):\n";
  out += "            compiled = torch.compile(super().forward" + mode_argument(mode) + ")\n";
  out += "            self.__dict__[\"_hiera_compiled\"] = (id(self), compiled)\n";
  out += "        return compiled(*args, **kwargs)\n";
  return out;
}

namespace {

// Whether the reference compiled in the default mode passed and is at least
// as fast as every other verified candidate of the run so far.
bool default_compile_leads(const ProposalRequest& request) {
  const std::string default_source = compiled_module(request.reference_source, "Model", kCompileModeDefault);
  std::optional<double> compiled, others;
  for (const auto& attempt : request.history) {
    if (!attempt.correct || !attempt.speedup) continue;
    auto& slot = attempt.candidate.source == default_source ? compiled : others;
    slot = std::max(slot.value_or(0.0), *attempt.speedup);
  }
  return compiled && (!others || *compiled >= *others);
}

// The module of hiera's to compile and the note that says which: the run's best where torch.compile can take it
// (no torch.compile of its own, no NVRTC launch); where a compiled module leads the run, hiera's fastest verified
// module that torch.compile can take; else none (empty source).
std::pair<std::string, std::string> module_to_compile(const ProposalRequest& request) {
  const auto compilable = [&](const std::string& source) {
    return !source.empty() && source != request.reference_source && defines_class(source, "ModelNew") &&
           !torch_compile_mode(source) && !launches_nvrtc_kernels(source);
  };
  const std::string& best = request.current_best_source;
  if (compilable(best)) return {best, "torch.compile of the best candidate so far (mode default)"};
  if (best.empty() || !torch_compile_mode(best)) return {};
  std::string fastest_source;
  double fastest = 1.0;  // verified faster than the reference, or not at all
  for (const auto& attempt : request.history) {
    if (attempt.correct && attempt.speedup && *attempt.speedup > fastest && compilable(attempt.candidate.source)) {
      fastest = *attempt.speedup;
      fastest_source = attempt.candidate.source;
    }
  }
  if (fastest_source.empty()) return {};
  return {fastest_source, "torch.compile of hiera's fastest module that torch.compile can take (mode default)"};
}

}  // namespace

bool launches_nvrtc_kernels(std::string_view source) {
  // Kernel regions under the decorator run outside torch.compile's trace (module_emitter.h's opaque regions).
  const std::string decorated = "\n" + std::string(kEagerRegionDecorator) + "\ndef ";
  return source.find("_KERNEL_COMPILERS") != std::string_view::npos && source.find(decorated) == std::string_view::npos;
}

bool has_torch_compile(std::string_view torch_version) {
  if (torch_version.empty()) return true;  // unknown: let verification say
  int major = 0;
  std::size_t i = 0;
  while (i < torch_version.size() && std::isdigit(static_cast<unsigned char>(torch_version[i]))) {
    major = major * 10 + (torch_version[i++] - '0');
    if (major > 1000) break;
  }
  return i == 0 || major >= 2;  // a version that does not start with a number: let verification say
}

std::vector<Candidate> CompileProposer::propose(const ProposalRequest& request, const CancellationToken& cancel) {
  throw_if_cancelled(cancel);
  // A CUDA kernel is not a module torch.compile could take.
  if (request.language != Language::Python) return {};
  // torch.compile came with torch 2.0: on an older torch every candidate would fail at construction.
  if (!has_torch_compile(request.torch_version)) return {};

  std::vector<Candidate> offers;
  // The reference compiled: S1, the floor that hiera's own candidates compete with.
  if (request.space == knowledge::Space::S1 && defines_class(request.reference_source, "Model")) {
    offers.push_back(make_candidate(request, compiled_module(request.reference_source, "Model", kCompileModeDefault),
                                    "torch.compile of the reference (mode default)"));
  }
  // hiera's best so far compiled (any step: its rewrites, inductor for the rest).
  const auto [best, note] = module_to_compile(request);
  if (!best.empty()) {
    Candidate c = make_candidate(request, compiled_module(best, "ModelNew", kCompileModeDefault), note);
    for (const auto& attempt : request.history) {
      if (attempt.candidate.source == best) {
        c.recipes = attempt.candidate.recipes;
        c.notes += " (" + attempt.candidate.id + ")";
        break;
      }
    }
    offers.push_back(std::move(c));
  }
  // max-autotune costs about a minute of compiling and autotuning per shape
  // (86 s for a Linear + GELU on an H200): worth it only once the default mode
  // is what would be delivered.
  const bool room_for_autotuning = request.budget == 0 || request.budget >= kMaxAutotuneMinBudget;
  if (request.space == knowledge::Space::S1 && defines_class(request.reference_source, "Model") && room_for_autotuning &&
      default_compile_leads(request)) {
    offers.push_back(
        make_candidate(request, compiled_module(request.reference_source, "Model", kCompileModeMaxAutotune),
                       std::string("torch.compile of the reference (mode ") + kCompileModeMaxAutotune + ")"));
  }

  std::set<std::string> seen;
  for (const auto& attempt : request.history) seen.insert(attempt.candidate.source);
  std::vector<Candidate> out;
  const std::size_t wanted = static_cast<std::size_t>(std::max(1, request.count));
  for (auto& c : offers) {
    if (out.size() >= wanted) break;
    if (seen.insert(c.source).second) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace hiera::engine::propose
