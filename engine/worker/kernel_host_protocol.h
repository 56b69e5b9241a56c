#pragma once
// The messages between hiera-worker (trusted) and a kernel host (the process
// that runs one CUDA candidate): Content-Length frames (protocol/framing.h)
// whose bodies are MessagePack-encoded JSON objects, so a cubin, an IPC
// handle and a scalar's bytes travel as binary. Every decoder checks each
// field and throws ProtocolError naming it: a host's reply is untrusted input.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/worker/launch_contract.h"
#include "protocol/framing.h"

namespace hiera::engine::worker::kernel_host {

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The channel's far end closed it (the other process exited).
class ChannelClosed : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};

// No message arrived before the deadline.
class ChannelTimeout : public ProtocolError {
 public:
  using ProtocolError::ProtocolError;
};

// One frame's bytes for `message` (an object).
std::string encode(const nlohmann::json& message);
// A frame's body back to its object; throws ProtocolError.
nlohmann::json decode(std::string_view body);

// Frames over two descriptors (owned by the caller), one message at a time.
class Channel {
 public:
  Channel(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}
  // Throws ChannelClosed when the far end is gone.
  void send(const nlohmann::json& message);
  // The next message; throws ChannelTimeout past `deadline` (none: waits),
  // ChannelClosed at the end of input, ProtocolError for a malformed frame.
  nlohmann::json receive(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

 private:
  int in_;
  int out_;
  protocol::FrameReader reader_;
};

// host -> worker, first: what is in force, and whether CUDA came up.
struct Ready {
  long long pid = 0;
  std::map<std::string, std::string> protections;  // name -> "in force ..." | "not in force: reason"
  std::optional<std::string> cuda_error;
};

// worker -> host.
struct LoadRequest {
  std::string cubin;
  std::string kernel;  // the mangled (lowered) name
};
struct MapRequest {
  std::vector<std::string> handles;  // cudaIpcMemHandle_t bytes, one per array argument
};
struct LaunchArg {
  std::optional<std::size_t> buffer;  // an array argument: index into the mapped handles
  std::string bytes;                  // a scalar: its bytes as the kernel receives them
};
struct LaunchRequest {
  LaunchDims dims;
  std::vector<LaunchArg> args;
  bool timed = false;  // events around it, the L2 flushed first
  long long limit_ms = 0;
};

// host -> worker, after each request.
struct Reply {
  bool ok = false;
  std::optional<double> elapsed_ms;  // timed launches
  std::string kind;                  // when !ok: "runtime", "timeout", "out_of_memory", "protocol"
  std::string message;
  bool lost = false;  // the host's context is unusable: it exits after this reply
};

nlohmann::json to_json(const Ready& ready);
nlohmann::json to_json(const LoadRequest& request);
nlohmann::json to_json(const MapRequest& request);
nlohmann::json to_json(const LaunchRequest& request);
nlohmann::json to_json(const Reply& reply);
inline nlohmann::json exit_request() { return {{"op", "exit"}}; }

// "load", "map", "launch", "exit"; throws ProtocolError.
std::string op_of(const nlohmann::json& message);
Ready ready_from_json(const nlohmann::json& message);
LoadRequest load_from_json(const nlohmann::json& message);
MapRequest map_from_json(const nlohmann::json& message);
LaunchRequest launch_from_json(const nlohmann::json& message);
Reply reply_from_json(const nlohmann::json& message);

}  // namespace hiera::engine::worker::kernel_host
