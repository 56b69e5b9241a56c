#pragma once
// Taking the candidate's code out of an LLM reply: the fenced Markdown block
// that is code of the asked-for kind, or a rejection that says why there is none
// (the reason goes back to the model and into the report).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hiera::engine::propose::llm {

enum class Language {
  Python,  // a KernelBench module: must define `class ModelNew`
  Cuda,    // CUDA C++: must contain a `__global__` kernel
};

enum class RejectReason {
  Empty,        // nothing but whitespace
  Truncated,    // finish "length"/"max_tokens", or a fence that is never closed
  NoCodeBlock,  // no fenced (``` or ~~~) block at all
  WrongKind,    // blocks, but none satisfies the language's rule
  TooLarge,     // the chosen block is over max_bytes
};

std::string_view to_string(RejectReason reason);

struct Rejection {
  RejectReason reason;
  std::string message;
};

struct ExtractionResult {
  std::string code;                    // the block's content, "\n" line ends, ending with "\n"
  std::optional<Rejection> rejection;  // set exactly when there is no code

  bool ok() const { return !rejection.has_value(); }
};

// Rules, in order: empty; truncated (by finish, then by an unclosed fence);
// no fenced block; no block satisfying the rule; among those that do, the
// longest block tagged with the language (python/py/python3; cuda/cu/cpp/c++/c)
// or else the longest (the first on a tie); over max_bytes. CRLF reads as LF.
// Fences follow CommonMark: up to 3 spaces of indent, 3+ backticks or tildes,
// closed by a run of the same character at least as long.
ExtractionResult extract_code(std::string_view reply, std::string_view finish, Language language,
                              std::size_t max_bytes = 200000);

}  // namespace hiera::engine::propose::llm
