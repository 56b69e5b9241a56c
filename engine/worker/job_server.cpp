#include "engine/worker/job_server.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include "protocol/framing.h"
#include "protocol/json_text.h"
#include "protocol/message.h"

namespace hiera::engine::worker {

using nlohmann::json;
using protocol::ErrorCode;

namespace {

class Output {
 public:
  explicit Output(int fd) : fd_(fd) {}
  void send(const json& message) {
    const std::string bytes = protocol::FrameWriter::encode(protocol::dump_json(message));
    std::string_view rest = bytes;
    while (!rest.empty()) {
      const ssize_t n = ::write(fd_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // The engine is gone; reading will see the end of input.
        std::cerr << "hiera-worker: cannot write a reply: " << std::strerror(errno) << "\n";
        return;
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
};

json handle_request(WorkerService& service, const protocol::Request& request) {
  try {
    return protocol::make_result(request.id, service.handle(request.method, request.params));
  } catch (const protocol::RpcError& e) {
    return protocol::make_error(request.id, e.code(), e.what());
  } catch (const ForwardedError& e) {
    return protocol::make_error(request.id, e.error().code, e.error().message, e.error().data);
  } catch (const std::exception& e) {
    std::cerr << "hiera-worker: " << request.method << " failed: " << e.what() << "\n";
    return protocol::make_error(request.id, ErrorCode::InternalError, e.what());
  }
}

}  // namespace

int serve_jobs(int in_fd, int out_fd, WorkerService& service) {
  Output out(out_fd);
  protocol::FrameReader reader;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(in_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (auto error = reader.finish()) out.send(protocol::make_error(protocol::RequestId(), ErrorCode::ParseError, error->message));
      std::cerr << "hiera-worker: the engine closed the connection without shutdown\n";
      return 1;
    }
    reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    while (auto event = reader.next()) {
      if (auto* error = std::get_if<protocol::FramingError>(&*event)) {
        const auto code = error->kind == protocol::FramingErrorKind::BodyTooLarge ? ErrorCode::InvalidRequest : ErrorCode::ParseError;
        std::cerr << "hiera-worker: bad frame: " << error->message << "\n";
        out.send(protocol::make_error(protocol::RequestId(), code, error->message));
        continue;
      }
      auto parsed = protocol::parse_message(std::get<protocol::Frame>(*event).body);
      if (auto* bad = std::get_if<protocol::MessageError>(&parsed)) {
        std::cerr << "hiera-worker: rejected message: " << bad->error.message << "\n";
        out.send(protocol::make_error(bad->id, bad->error.code, bad->error.message));
        continue;
      }
      auto& message = std::get<protocol::Message>(parsed);
      auto* request = std::get_if<protocol::Request>(&message);
      if (!request) continue;  // notifications and responses need no answer here
      out.send(handle_request(service, *request));
      if (auto code = service.exit_code()) return *code;
    }
  }
}

}  // namespace hiera::engine::worker
