#include "engine/analysis/analysis.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "engine/analysis/cuda_hints.h"
#include "engine/analysis/cuda_lexer.h"
#include "engine/analysis/cuda_scanner.h"
#include "engine/analysis/python_lexer.h"
#include "engine/analysis/python_syntax.h"
#include "engine/analysis/relocation.h"
#include "engine/analysis/torch_hints.h"
#include "engine/analysis/torch_scanner.h"

namespace hiera::engine::analysis {

namespace {

// The findings of one function definition or one module class, as they were
// when its text was `text` at offset `begin`, in a file whose other facts it
// depends on read `context`.
struct CachedItem {
  std::string text;
  std::string context;
  std::size_t begin = 0;
  CudaFunction function;
  std::vector<LaunchSite> launches;
  TorchModule module;
  std::vector<Hint> hints;
};

using ItemMap = std::unordered_multimap<std::size_t, std::shared_ptr<const CachedItem>>;

std::size_t item_key(std::string_view text, const std::string& context) {
  return std::hash<std::string_view>{}(text) ^ (std::hash<std::string>{}(context) * 31);
}

}  // namespace

struct AnalysisCache {
  Language language = Language::Cuda;
  std::string text;
  AnalysisFacts facts;
  ItemMap items;
};

namespace {

std::shared_ptr<const CachedItem> find_item(const AnalysisCache* cache, std::size_t key, std::string_view text, const std::string& context) {
  if (!cache) return nullptr;
  const auto [first, last] = cache->items.equal_range(key);
  for (auto it = first; it != last; ++it) {
    if (it->second->text == text && it->second->context == context) return it->second;
  }
  return nullptr;
}

// What a CUDA function's findings depend on outside its own text: the file's
// constants and file-scope shared arrays.
std::string cuda_context(std::string_view text, const CudaScan& scan) {
  std::string context;
  for (const auto& [name, value] : scan.constants) context += name + "=" + std::to_string(value) + ";";
  for (const auto& a : scan.shared_arrays) context += std::string(a.span.text(text)) + ";";
  return context;
}

void analyze_cuda(std::string_view text, const AnalysisFacts& facts, const AnalysisCache* previous, AnalysisCache& cache,
                  Analysis& out) {
  CudaLex lex = lex_cuda(text);
  CudaScan scan = scan_cuda(text, lex.tokens);
  const std::string context = cuda_context(text, scan);
  for (std::size_t f = 0; f < scan.functions.size(); ++f) {
    const CudaFunction& function = scan.functions[f];
    std::shared_ptr<const CachedItem> item;
    if (function.body) {
      const std::string_view own = function.span.text(text);
      const std::size_t key = item_key(own, context);
      item = find_item(previous, key, own, context);
      ++out.items;
      if (item) ++out.reused;
      if (!item) {
        scan_cuda_body(text, scan, f);
        auto fresh = std::make_shared<CachedItem>();
        fresh->text = std::string(own);
        fresh->context = context;
        fresh->begin = function.span.begin;
        fresh->function = scan.functions[f];
        fresh->launches = scan.bodies[f].launches;
        fresh->hints = cuda_hints(text, scan, f);
        item = std::move(fresh);
      }
      cache.items.emplace(key, item);
    }
    const std::int64_t delta = static_cast<std::int64_t>(function.span.begin) - static_cast<std::int64_t>(item ? item->begin : function.span.begin);
    CudaFunction found = item ? item->function : function;
    if (item) {
      relocate(found, delta);
      for (LaunchSite launch : item->launches) {
        relocate(launch, delta);
        out.launches.push_back(std::move(launch));
      }
      for (Hint hint : item->hints) {
        relocate(hint, delta);
        out.hints.push_back(std::move(hint));
      }
    }
    if (found.kind == CudaFunctionKind::Host) continue;
    if (const auto a = facts.kernels.find(found.name); a != facts.kernels.end() && found.kind == CudaFunctionKind::Kernel) {
      Work work;
      const auto flops = a->second.flops.empty() ? std::optional<std::int64_t>(0) : evaluate_constant(a->second.flops, a->second.sizes);
      const auto bytes = a->second.bytes.empty() ? std::optional<std::int64_t>(0) : evaluate_constant(a->second.bytes, a->second.sizes);
      // A bad annotation is engine/spec's to report; the kernel just has no estimate.
      if (flops && bytes) {
        work.flops = static_cast<double>(*flops);
        work.bytes = static_cast<double>(*bytes);
        work.dtype = a->second.dtype;
        work.source = "annotations";
        found.work = work;
      }
    }
    out.functions.push_back(std::move(found));
  }
  // Across functions: a launcher's grid against its kernel's bounds check.
  std::vector<Hint> overruns = launch_overrun_hints(text, out.functions, out.launches, out.hints);
  if (!overruns.empty()) {
    out.hints.insert(out.hints.end(), std::make_move_iterator(overruns.begin()), std::make_move_iterator(overruns.end()));
    std::stable_sort(out.hints.begin(), out.hints.end(), [](const Hint& a, const Hint& b) { return a.span.begin < b.span.begin; });
  }
  out.problems = std::move(lex.problems);
  out.problems.insert(out.problems.end(), scan.problems.begin(), scan.problems.end());
}

void analyze_python(std::string_view text, const AnalysisFacts& facts, const AnalysisCache* previous, AnalysisCache& cache,
                    Analysis& out) {
  PythonLex lex = lex_python(text);
  const PythonSyntax syntax = parse_python(text, lex.tokens);
  const TorchFile file(text, syntax, facts.sizes);
  for (const PyStmt* c : file.module_classes()) {
    const std::string_view own = c->span.text(text);
    const std::string context = file.context(*c);
    const std::size_t key = item_key(own, context);
    std::shared_ptr<const CachedItem> item = find_item(previous, key, own, context);
    ++out.items;
    if (item) ++out.reused;
    if (!item) {
      auto fresh = std::make_shared<CachedItem>();
      fresh->text = std::string(own);
      fresh->context = context;
      fresh->begin = c->span.begin;
      auto scanned = file.scan_module(*c);
      fresh->hints = torch_hints(text, scanned.module, scanned.trace);
      fresh->module = std::move(scanned.module);
      item = std::move(fresh);
    }
    cache.items.emplace(key, item);
    const std::int64_t delta = static_cast<std::int64_t>(c->span.begin) - static_cast<std::int64_t>(item->begin);
    TorchModule module = item->module;
    relocate(module, delta);
    out.modules.push_back(std::move(module));
    for (Hint hint : item->hints) {
      relocate(hint, delta);
      out.hints.push_back(std::move(hint));
    }
  }
  out.kernelbench = file.kernelbench();
  out.problems = std::move(lex.problems);
  out.problems.insert(out.problems.end(), syntax.problems.begin(), syntax.problems.end());
}

}  // namespace

Analysis analyze(std::string_view text, Language language, const AnalysisFacts& facts, const Analysis* previous) {
  const AnalysisCache* old = previous && previous->cache && previous->cache->language == language ? previous->cache.get() : nullptr;
  if (old && old->facts == facts && old->text == text) return *previous;
  Analysis out;
  out.language = language;
  auto cache = std::make_shared<AnalysisCache>();
  cache->language = language;
  cache->text = std::string(text);
  cache->facts = facts;
  if (language == Language::Cuda) analyze_cuda(text, facts, old, *cache, out);
  else analyze_python(text, facts, old, *cache, out);
  const auto by_position = [](const auto& a, const auto& b) { return a.span.begin < b.span.begin; };
  std::stable_sort(out.hints.begin(), out.hints.end(), by_position);
  // A module inheriting forward from another of the file repeats its hints: keep one.
  out.hints.erase(std::unique(out.hints.begin(), out.hints.end(),
                              [](const Hint& a, const Hint& b) { return a.rule == b.rule && a.span == b.span && a.message == b.message; }),
                  out.hints.end());
  std::stable_sort(out.problems.begin(), out.problems.end(), by_position);
  out.cache = std::move(cache);
  return out;
}

}  // namespace hiera::engine::analysis
