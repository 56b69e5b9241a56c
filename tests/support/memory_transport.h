#pragma once
// An in-process transport for tests, the fuzzer and benchmarks: the test
// pushes client bytes in, and reads the server's frames back as JSON.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/framing.h"
#include "server/transport/transport.h"

namespace hiera::testing {

class MemoryTransport final : public server::Transport {
 public:
  // Client side.
  void push(std::string bytes);          // raw bytes, any framing
  void push_message(const nlohmann::json& message);  // one framed message
  void end_input();                      // EOF after what was pushed
  // Waits until a message the server wrote satisfies `match`, returns it, and
  // removes it from the inbox; nullopt on timeout.
  std::optional<nlohmann::json> wait_for(const std::function<bool(const nlohmann::json&)>& match,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::optional<nlohmann::json> wait_for_response(const nlohmann::json& id,
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::vector<nlohmann::json> drain();  // everything received so far
  std::size_t raw_bytes_written() const;

  // Server side.
  void read_loop(const std::function<void(std::string_view)>& on_bytes) override;
  void write(std::string_view bytes) override;
  void close() override;

 private:
  mutable std::mutex mutex_;
  std::condition_variable input_cv_;
  std::condition_variable output_cv_;
  std::deque<std::string> input_;
  bool input_ended_ = false;
  bool closed_ = false;
  protocol::FrameReader output_reader_;
  std::deque<nlohmann::json> inbox_;
  std::size_t raw_bytes_ = 0;
};

nlohmann::json request(const nlohmann::json& id, const std::string& method, nlohmann::json params = nlohmann::json::object());
nlohmann::json notification(const std::string& method, nlohmann::json params = nlohmann::json::object());
// A minimal client capabilities object with every feature hiera reads turned on.
nlohmann::json full_capabilities();

}  // namespace hiera::testing
