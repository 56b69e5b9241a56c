#include "engine/worker/kernel_host_protocol.h"

#include <cerrno>
#include <cstring>
#include <variant>

#include <poll.h>
#include <unistd.h>

namespace hiera::engine::worker::kernel_host {

using nlohmann::json;

namespace {

// A message is at most a cubin and its parameters: far below this.
constexpr std::size_t kMaxMessageBytes = 256u << 20;

[[noreturn]] void bad(const std::string& op, const std::string& text) {
  throw ProtocolError("kernel host message '" + op + "': " + text);
}

const json& field(const json& message, const std::string& op, const char* name) {
  const auto it = message.find(name);
  if (it == message.end()) bad(op, std::string("'") + name + "' is missing");
  return *it;
}

std::string binary_field(const json& message, const std::string& op, const char* name) {
  const json& value = field(message, op, name);
  if (!value.is_binary()) bad(op, std::string("'") + name + "' must be binary");
  const auto& bytes = value.get_binary();
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string string_field(const json& message, const std::string& op, const char* name) {
  const json& value = field(message, op, name);
  if (!value.is_string()) bad(op, std::string("'") + name + "' must be a string");
  return value.get<std::string>();
}

bool bool_field(const json& message, const std::string& op, const char* name) {
  const json& value = field(message, op, name);
  if (!value.is_boolean()) bad(op, std::string("'") + name + "' must be a boolean");
  return value.get<bool>();
}

long long int_field(const json& message, const std::string& op, const char* name, long long minimum) {
  const json& value = field(message, op, name);
  if (!value.is_number_integer() || value.get<long long>() < minimum) {
    bad(op, std::string("'") + name + "' must be an integer of at least " + std::to_string(minimum));
  }
  return value.get<long long>();
}

std::array<unsigned, 3> dims_field(const json& message, const std::string& op, const char* name) {
  const json& value = field(message, op, name);
  std::array<unsigned, 3> out{};
  bool valid = value.is_array() && value.size() == 3;
  for (std::size_t i = 0; valid && i < 3; ++i) {
    valid = value[i].is_number_unsigned() && value[i].get<std::uint64_t>() >= 1 && value[i].get<std::uint64_t>() <= 0xffffffffu;
    if (valid) out[i] = value[i].get<unsigned>();
  }
  if (!valid) bad(op, std::string("'") + name + "' must be 3 integers from 1 to 4294967295");
  return out;
}

json binary(const std::string& bytes) { return json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end())); }

}  // namespace

std::string encode(const json& message) {
  const std::vector<std::uint8_t> body = json::to_msgpack(message);
  return protocol::FrameWriter::encode(std::string_view(reinterpret_cast<const char*>(body.data()), body.size()));
}

json decode(std::string_view body) {
  json message;
  try {
    message = json::from_msgpack(body.begin(), body.end());
  } catch (const json::exception& e) {
    throw ProtocolError(std::string("kernel host message: not MessagePack (") + e.what() + ")");
  }
  if (!message.is_object()) throw ProtocolError("kernel host message: not an object");
  return message;
}

void Channel::send(const json& message) {
  const std::string bytes = encode(message);
  std::string_view rest = bytes;
  while (!rest.empty()) {
    const ssize_t n = ::write(out_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ChannelClosed(std::string("the kernel host channel is closed (") + std::strerror(errno) + ")");
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

json Channel::receive(std::optional<std::chrono::steady_clock::time_point> deadline) {
  char buffer[64 * 1024];
  for (;;) {
    if (auto event = reader_.next()) {
      if (auto* error = std::get_if<protocol::FramingError>(&*event)) {
        throw ProtocolError("kernel host message: bad frame (" + error->message + ")");
      }
      return decode(std::get<protocol::Frame>(*event).body);
    }
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw ChannelTimeout("no message from the kernel host in time");
      pollfd p{in_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the deadline check above ends it
    }
    const ssize_t n = ::read(in_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (auto error = reader_.finish()) throw ChannelClosed("the kernel host channel closed inside a message (" + error->message + ")");
      throw ChannelClosed("the kernel host channel is closed");
    }
    if (reader_.buffered() + static_cast<std::size_t>(n) > kMaxMessageBytes) {
      throw ProtocolError("kernel host message: larger than " + std::to_string(kMaxMessageBytes >> 20) + " MiB");
    }
    reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

json to_json(const Ready& ready) {
  return {{"op", "ready"},
          {"pid", ready.pid},
          {"protections", ready.protections},
          {"cuda_error", ready.cuda_error ? json(*ready.cuda_error) : json(nullptr)}};
}

json to_json(const LoadRequest& request) {
  return {{"op", "load"}, {"cubin", binary(request.cubin)}, {"kernel", request.kernel}};
}

json to_json(const MapRequest& request) {
  json handles = json::array();
  for (const auto& h : request.handles) handles.push_back(binary(h));
  return {{"op", "map"}, {"handles", std::move(handles)}};
}

json to_json(const LaunchRequest& request) {
  json args = json::array();
  for (const auto& a : request.args) {
    if (a.buffer) args.push_back({{"buffer", *a.buffer}});
    else args.push_back({{"bytes", binary(a.bytes)}});
  }
  return {{"op", "launch"},
          {"grid", request.dims.grid},
          {"block", request.dims.block},
          {"shared_bytes", request.dims.shared_bytes},
          {"args", std::move(args)},
          {"timed", request.timed},
          {"limit_ms", request.limit_ms}};
}

json to_json(const Reply& reply) {
  if (reply.ok) {
    json out = {{"ok", true}};
    if (reply.elapsed_ms) out["elapsed_ms"] = *reply.elapsed_ms;
    return out;
  }
  return {{"ok", false}, {"kind", reply.kind}, {"message", reply.message}, {"lost", reply.lost}};
}

std::string op_of(const json& message) {
  const auto it = message.find("op");
  if (it == message.end() || !it->is_string()) throw ProtocolError("kernel host message: 'op' must be a string");
  return it->get<std::string>();
}

Ready ready_from_json(const json& message) {
  if (op_of(message) != "ready") throw ProtocolError("kernel host message: expected 'ready', got '" + op_of(message) + "'");
  Ready ready;
  ready.pid = int_field(message, "ready", "pid", 1);
  const json& protections = field(message, "ready", "protections");
  if (!protections.is_object()) bad("ready", "'protections' must be an object of strings");
  for (const auto& [name, state] : protections.items()) {
    if (!state.is_string()) bad("ready", "'protections' must be an object of strings");
    ready.protections[name] = state.get<std::string>();
  }
  const json& cuda_error = field(message, "ready", "cuda_error");
  if (cuda_error.is_string()) ready.cuda_error = cuda_error.get<std::string>();
  else if (!cuda_error.is_null()) bad("ready", "'cuda_error' must be a string or null");
  return ready;
}

LoadRequest load_from_json(const json& message) {
  return {binary_field(message, "load", "cubin"), string_field(message, "load", "kernel")};
}

MapRequest map_from_json(const json& message) {
  const json& handles = field(message, "map", "handles");
  if (!handles.is_array()) bad("map", "'handles' must be an array of binary handles");
  MapRequest request;
  for (const auto& h : handles) {
    if (!h.is_binary()) bad("map", "'handles' must be an array of binary handles");
    request.handles.emplace_back(reinterpret_cast<const char*>(h.get_binary().data()), h.get_binary().size());
  }
  return request;
}

LaunchRequest launch_from_json(const json& message) {
  LaunchRequest request;
  request.dims.grid = dims_field(message, "launch", "grid");
  request.dims.block = dims_field(message, "launch", "block");
  request.dims.shared_bytes = static_cast<unsigned>(std::min<long long>(int_field(message, "launch", "shared_bytes", 0), 0xffffffffLL));
  request.timed = bool_field(message, "launch", "timed");
  request.limit_ms = int_field(message, "launch", "limit_ms", 1);
  const json& args = field(message, "launch", "args");
  if (!args.is_array()) bad("launch", "'args' must be an array");
  for (const auto& a : args) {
    LaunchArg arg;
    if (a.is_object() && a.contains("buffer")) {
      arg.buffer = static_cast<std::size_t>(int_field(a, "launch", "buffer", 0));
    } else if (a.is_object() && a.contains("bytes")) {
      arg.bytes = binary_field(a, "launch", "bytes");
    } else {
      bad("launch", "each of 'args' must be {\"buffer\": index} or {\"bytes\": binary}");
    }
    request.args.push_back(std::move(arg));
  }
  return request;
}

Reply reply_from_json(const json& message) {
  Reply reply;
  reply.ok = bool_field(message, "reply", "ok");
  if (reply.ok) {
    if (const auto it = message.find("elapsed_ms"); it != message.end()) {
      if (!it->is_number() || it->get<double>() < 0.0) bad("reply", "'elapsed_ms' must be a non-negative number");
      reply.elapsed_ms = it->get<double>();
    }
    return reply;
  }
  reply.kind = string_field(message, "reply", "kind");
  if (reply.kind != "runtime" && reply.kind != "timeout" && reply.kind != "out_of_memory" && reply.kind != "protocol") {
    bad("reply", "'kind' must be runtime, timeout, out_of_memory or protocol");
  }
  reply.message = string_field(message, "reply", "message");
  reply.lost = bool_field(message, "reply", "lost");
  return reply;
}

}  // namespace hiera::engine::worker::kernel_host
