#pragma once
// One HTTP POST through libcurl, bounded in time and in reply size and
// abortable through a CancellationToken. Knows nothing of LLMs; the client
// decides what a status means and whether to retry.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "engine/common/cancellation.h"

namespace hiera::engine::propose::llm {

struct HttpPost {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  // the whole transfer
  std::size_t max_reply_bytes = std::size_t{1} << 20;
};

enum class TransferFailure {
  None,       // a complete HTTP reply arrived (any status)
  Network,    // no reply: refused, reset, DNS, TLS, ...
  Timeout,    // the transfer ran past HttpPost::timeout
  TooLarge,   // the body is over max_reply_bytes (by Content-Length or as it arrived)
  Cancelled,  // the token was cancelled during the transfer
};

struct HttpReply {
  TransferFailure failure = TransferFailure::None;
  std::string failure_message;  // libcurl's explanation when failure != None
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; of the final response
  std::string body;
};

// The token is polled by libcurl's progress callback, which runs at least about
// once a second while the transfer waits, so a cancellation ends it within that.
HttpReply http_post(const HttpPost& request, const CancellationToken& cancel);

}  // namespace hiera::engine::propose::llm
