#include "engine/propose/llm/code_extraction.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <vector>

namespace hiera::engine::propose::llm {
namespace {

struct Fence {
  char marker = 0;
  std::size_t length = 0;
  std::string info;  // the word after an opening fence, lower-cased
};

struct Block {
  std::string tag;
  std::string code;
};

// A fence line: up to 3 spaces, then 3+ of '`' or '~', then the rest.
std::optional<Fence> fence_of(std::string_view line) {
  std::size_t at = 0;
  while (at < line.size() && at < 3 && line[at] == ' ') ++at;
  if (at >= line.size() || (line[at] != '`' && line[at] != '~')) return std::nullopt;
  Fence fence;
  fence.marker = line[at];
  while (at < line.size() && line[at] == fence.marker) ++fence.length, ++at;
  if (fence.length < 3) return std::nullopt;
  const std::string_view rest = line.substr(at);
  if (fence.marker == '`' && rest.find('`') != std::string_view::npos) return std::nullopt;  // inline code
  std::size_t begin = 0;
  while (begin < rest.size() && std::isspace(static_cast<unsigned char>(rest[begin]))) ++begin;
  std::size_t end = begin;
  while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
  fence.info = std::string(rest.substr(begin, end - begin));
  std::transform(fence.info.begin(), fence.info.end(), fence.info.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return fence;
}

bool closes(const Fence& open, std::string_view line) {
  const auto fence = fence_of(line);
  // info is the first word after the run: empty exactly when only spaces follow it.
  return fence && fence->marker == open.marker && fence->length >= open.length && fence->info.empty();
}

bool tagged_as(const std::string& tag, Language language) {
  static constexpr std::array<std::string_view, 3> kPython{"python", "py", "python3"};
  static constexpr std::array<std::string_view, 5> kCuda{"cuda", "cu", "cpp", "c++", "c"};
  if (language == Language::Python) return std::find(kPython.begin(), kPython.end(), tag) != kPython.end();
  return std::find(kCuda.begin(), kCuda.end(), tag) != kCuda.end();
}

bool satisfies(const std::string& code, Language language) {
  if (language == Language::Cuda) {
    static const std::regex kGlobal(R"(\b__global__\b)");
    return std::regex_search(code, kGlobal);
  }
  static const std::regex kModelNew(R"((^|\n)[ \t]*class[ \t]+ModelNew\b)");
  return std::regex_search(code, kModelNew);
}

ExtractionResult reject(RejectReason reason, std::string message) {
  return ExtractionResult{"", Rejection{reason, std::move(message)}};
}

std::string_view language_name(Language language) { return language == Language::Python ? "Python" : "CUDA"; }

}  // namespace

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::Empty: return "empty";
    case RejectReason::Truncated: return "truncated";
    case RejectReason::NoCodeBlock: return "no_code_block";
    case RejectReason::WrongKind: return "wrong_kind";
    case RejectReason::TooLarge: return "too_large";
  }
  return "unknown";
}

ExtractionResult extract_code(std::string_view reply, std::string_view finish, Language language,
                              std::size_t max_bytes) {
  if (std::all_of(reply.begin(), reply.end(), [](unsigned char c) { return std::isspace(c); })) {
    return reject(RejectReason::Empty, "the reply is empty");
  }
  if (finish == "length" || finish == "max_tokens") {
    return reject(RejectReason::Truncated, "the reply was cut off at the token limit (finish \"" +
                                               std::string(finish) + "\")");
  }

  std::vector<Block> blocks;
  std::optional<Fence> open;
  std::size_t open_line = 0;
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < reply.size();) {
    std::size_t end = reply.find('\n', begin);
    if (end == std::string_view::npos) end = reply.size();
    std::string_view line = reply.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    begin = end + 1;
    ++line_number;
    if (!open) {
      if ((open = fence_of(line))) {
        open_line = line_number;
        blocks.push_back(Block{open->info, ""});
      }
    } else if (closes(*open, line)) {
      open.reset();
    } else {
      blocks.back().code.append(line).push_back('\n');
    }
  }
  if (open) {
    return reject(RejectReason::Truncated,
                  "the code block opened on line " + std::to_string(open_line) + " is never closed");
  }
  if (blocks.empty()) return reject(RejectReason::NoCodeBlock, "the reply has no fenced code block");

  const Block* chosen = nullptr;
  bool chosen_tagged = false;
  for (const Block& block : blocks) {
    if (!satisfies(block.code, language)) continue;
    const bool tagged = tagged_as(block.tag, language);
    if (chosen == nullptr || (tagged && !chosen_tagged) ||
        (tagged == chosen_tagged && block.code.size() > chosen->code.size())) {
      chosen = &block;
      chosen_tagged = tagged;
    }
  }
  if (chosen == nullptr) {
    return reject(RejectReason::WrongKind,
                  std::string("no code block is ") + std::string(language_name(language)) + " code that " +
                      (language == Language::Python ? "defines `class ModelNew`" : "contains a `__global__` kernel") +
                      " (" + std::to_string(blocks.size()) + (blocks.size() == 1 ? " block" : " blocks") + " read)");
  }
  if (chosen->code.size() > max_bytes) {
    return reject(RejectReason::TooLarge, "the code block is " + std::to_string(chosen->code.size()) +
                                              " bytes, over the limit of " + std::to_string(max_bytes));
  }
  return ExtractionResult{chosen->code, std::nullopt};
}

}  // namespace hiera::engine::propose::llm
