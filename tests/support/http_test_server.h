#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (an ephemeral port, its own thread,
// Boost.Beast) that answers from a scripted queue of replies: it stands in for
// an LLM provider so the client's tests go through libcurl and real sockets.
// It records every request and how many were being answered at once.
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hiera::testing {

namespace detail {
struct ServerState;
}

struct ScriptedResponse {
  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // added to Content-Length/Transfer-Encoding
  std::string body;
  std::chrono::milliseconds delay{0};  // waited after reading the request, before answering
  bool chunked = false;                // Transfer-Encoding: chunked instead of Content-Length
  bool drop = false;                   // close the connection without answering
};

struct RecordedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The header's value, or "" when absent (name in any case).
  std::string header(std::string name) const;
};

class HttpTestServer {
 public:
  HttpTestServer();   // listening once constructed
  ~HttpTestServer();  // stops at once, abandoning delayed replies
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  unsigned short port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  // Replies are used in order, one per request; with none left a request gets
  // 500 with the body "no scripted response".
  void enqueue(ScriptedResponse response);
  void enqueue_json(unsigned status, std::string body);  // with Content-Type: application/json

  std::vector<RecordedRequest> requests() const;
  std::size_t request_count() const;
  // The most requests read and not yet answered at one time. A request counts
  // until its reply starts being written, so a client that only sends its next
  // request after reading a reply never overlaps with it here.
  int max_concurrent_requests() const;

 private:
  std::unique_ptr<detail::ServerState> state_;
};

// A loopback port that nothing listens on (bound, read and closed again).
unsigned short closed_port();

}  // namespace hiera::testing
