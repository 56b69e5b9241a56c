#include "memory_transport.h"

#include "protocol/json_text.h"

namespace hiera::testing {

using nlohmann::json;

void MemoryTransport::push(std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    input_.push_back(std::move(bytes));
  }
  input_cv_.notify_all();
}

void MemoryTransport::push_message(const json& message) {
  push(protocol::FrameWriter::encode(protocol::dump_json(message)));
}

void MemoryTransport::end_input() {
  {
    std::lock_guard lock(mutex_);
    input_ended_ = true;
  }
  input_cv_.notify_all();
}

void MemoryTransport::read_loop(const std::function<void(std::string_view)>& on_bytes) {
  for (;;) {
    std::string chunk;
    {
      std::unique_lock lock(mutex_);
      input_cv_.wait(lock, [this] { return !input_.empty() || input_ended_ || closed_; });
      if (closed_ || input_.empty()) return;
      chunk = std::move(input_.front());
      input_.pop_front();
    }
    on_bytes(chunk);
  }
}

void MemoryTransport::write(std::string_view bytes) {
  {
    std::lock_guard lock(mutex_);
    raw_bytes_ += bytes.size();
    output_reader_.feed(bytes);
    while (auto event = output_reader_.next()) {
      if (auto* frame = std::get_if<protocol::Frame>(&*event)) inbox_.push_back(json::parse(frame->body));
    }
  }
  output_cv_.notify_all();
}

void MemoryTransport::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  input_cv_.notify_all();
}

std::optional<json> MemoryTransport::wait_for(const std::function<bool(const json&)>& match,
                                              std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  std::optional<json> found;
  output_cv_.wait_for(lock, timeout, [&] {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
      if (match(*it)) {
        found = std::move(*it);
        inbox_.erase(it);
        return true;
      }
    }
    return false;
  });
  return found;
}

std::optional<json> MemoryTransport::wait_for_response(const json& id, std::chrono::milliseconds timeout) {
  return wait_for([&](const json& m) { return m.contains("id") && m["id"] == id && !m.contains("method"); }, timeout);
}

std::vector<json> MemoryTransport::drain() {
  std::lock_guard lock(mutex_);
  std::vector<json> out(inbox_.begin(), inbox_.end());
  inbox_.clear();
  return out;
}

std::size_t MemoryTransport::raw_bytes_written() const {
  std::lock_guard lock(mutex_);
  return raw_bytes_;
}

json request(const json& id, const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json notification(const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json full_capabilities() {
  return {
      {"general", {{"positionEncodings", {"utf-16"}}}},
      {"window", {{"workDoneProgress", true}, {"showMessage", json::object()}}},
      {"workspace",
       {{"applyEdit", true},
        {"configuration", true},
        {"workspaceEdit", {{"documentChanges", true}, {"changeAnnotationSupport", {{"groupsOnLabel", true}}}}}}},
      {"textDocument",
       {{"hover", {{"contentFormat", {"markdown", "plaintext"}}}},
        {"codeAction",
         {{"codeActionLiteralSupport", {{"codeActionKind", {{"valueSet", {"quickfix", "refactor", "source"}}}}}},
          {"resolveSupport", {{"properties", {"edit"}}}},
          {"dataSupport", true}}}}},
  };
}

}  // namespace hiera::testing
