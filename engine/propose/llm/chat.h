#pragma once
// The vocabulary of one chat call to an LLM: the request, the token usage, and
// the result, which is either the model's reply or a typed error.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace hiera::engine::propose::llm {

struct ChatRequest {
  std::string system;             // omitted from the wire when empty
  std::string user;
  std::optional<int> max_tokens;  // the endpoint's max_tokens when empty
};

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;

  Usage& operator+=(const Usage& other) {
    prompt_tokens += other.prompt_tokens;
    completion_tokens += other.completion_tokens;
    return *this;
  }
  bool operator==(const Usage&) const = default;
};

struct ChatReply {
  std::string text;
  // As the provider gave it: "stop"/"length" (OpenAI), "end_turn"/"max_tokens" (Anthropic), ...
  std::string finish;
  Usage usage;
  bool from_cache = false;
  int attempts = 0;     // HTTP requests made for this reply; 0 from the cache
  int http_status = 0;  // of the answering request; 0 from the cache
};

enum class ChatErrorKind {
  Network,        // no HTTP reply: connection refused, reset, DNS, TLS, ...
  Timeout,        // no complete reply within the endpoint's timeout
  HttpStatus,     // a non-2xx reply (after the retries, for 429 and 5xx)
  Malformed,      // a 2xx reply that is not the JSON the provider documents
  TooLarge,       // a reply body over max_reply_bytes
  Cancelled,      // the token was cancelled
  Configuration,  // the request cannot be made as configured (e.g. the key's variable is unset)
};

std::string_view to_string(ChatErrorKind kind);

struct ChatError {
  ChatErrorKind kind = ChatErrorKind::Network;
  std::string message;  // never contains the API key
  int http_status = 0;  // of the last reply; 0 when there was none
  int attempts = 0;     // HTTP requests made
};

class ChatResult {
 public:
  ChatResult(ChatReply reply) : value_(std::move(reply)) {}  // NOLINT(google-explicit-constructor)
  ChatResult(ChatError error) : value_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<ChatReply>(value_); }
  // std::bad_variant_access when asked for the other alternative.
  const ChatReply& reply() const { return std::get<ChatReply>(value_); }
  const ChatError& error() const { return std::get<ChatError>(value_); }

 private:
  std::variant<ChatReply, ChatError> value_;
};

}  // namespace hiera::engine::propose::llm
