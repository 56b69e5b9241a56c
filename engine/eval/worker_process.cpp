#include "engine/eval/worker_process.h"

#include <array>
#include <csignal>
#include <deque>
#include <stdexcept>
#include <thread>
#include <utility>
#include <variant>

#include <pthread.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/write.hpp>

#include "engine/common/byte_size.h"
#include "engine/eval/redacted_json.h"
#include "hiera/version.h"
#include "protocol/framing.h"
#include "protocol/json_text.h"
#include "protocol/message.h"

namespace hiera::engine::eval {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// How often a waiting call looks at its cancellation token: the token has no
// way to wake anyone, so it is polled; this bounds how late a cancel is seen.
constexpr std::chrono::milliseconds kCancelPoll{20};
// After the process is gone, how long its stderr may take to reach EOF (only
// a grandchild outside its process group could hold it open longer).
constexpr std::chrono::milliseconds kStderrDrain{1000};
// How much of the stderr tail goes into a failure message (all of it is in stderr_tail).
constexpr std::size_t kMessageTailBytes = 2000;

// The end of stderr for a message: whole lines where possible, trailing blanks dropped.
std::string message_tail(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.pop_back();
  }
  if (text.size() <= kMessageTailBytes) return text;
  std::string tail = text.substr(text.size() - kMessageTailBytes);
  const std::size_t newline = tail.find('\n');
  if (newline != std::string::npos && newline + 1 < tail.size()) tail.erase(0, newline + 1);
  return "..." + protocol::sanitize_utf8(tail);  // the cut may split a UTF-8 sequence
}

std::optional<int> version_part(std::string_view& text) {
  int value = 0;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9' && digits < 9) {
    value = value * 10 + (text[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  text.remove_prefix(digits);
  return value;
}

std::optional<std::pair<int, int>> major_minor(std::string_view text) {
  const auto major = version_part(text);
  if (!major || text.empty() || text.front() != '.') return std::nullopt;
  text.remove_prefix(1);
  const auto minor = version_part(text);
  if (!minor) return std::nullopt;
  return std::pair{*major, *minor};
}

std::string string_field(const json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Optional details are read leniently: a worker that omits or mistypes them is
// still usable; only worker_version is required.
WorkerHello parse_hello(const json& result) {
  WorkerHello hello;
  hello.worker_version = string_field(result, "worker_version");
  if (const auto cuda = result.find("cuda"); cuda != result.end() && cuda->is_boolean()) hello.cuda = cuda->get<bool>();
  if (const auto device = result.find("device"); device != result.end() && device->is_object()) {
    WorkerHello::Device d;
    if (const auto index = device->find("index"); index != device->end() && index->is_number_integer()) {
      d.index = index->get<int>();
    }
    d.name = string_field(*device, "name");
    d.cc = string_field(*device, "cc");
    hello.device = d;
  }
  if (const auto torch = result.find("pytorch"); torch != result.end() && torch->is_object()) {
    hello.pytorch = WorkerHello::Pytorch{string_field(*torch, "python"), string_field(*torch, "torch")};
  }
  return hello;
}

}  // namespace

bool same_major_minor(std::string_view a, std::string_view b) {
  const auto left = major_minor(a);
  const auto right = major_minor(b);
  return left && right && *left == *right;
}

std::string describe_command(const std::vector<std::string>& command) {
  std::string text;
  for (const auto& arg : command) {
    if (!text.empty()) text += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$") == std::string::npos;
    text += plain ? arg : "'" + arg + "'";
  }
  return text;
}

// The I/O thread: reads stdout into frames and stderr into the tail, writes
// requests, and tells the owner through its mutex and condition variable.
class WorkerProcess::Io {
 public:
  Io(WorkerProcess& owner, int in_fd, int out_fd, int err_fd)
      : owner_(owner),
        guard_(asio::make_work_guard(context_)),
        in_(context_, in_fd),
        out_(context_, out_fd),
        err_(context_, err_fd) {}
  ~Io() { stop(); }
  Io(const Io&) = delete;
  Io& operator=(const Io&) = delete;

  void start() {
    read_stdout();
    read_stderr();
    thread_ = std::thread([this] {
      // A worker that dies while we write to it must fail the write with EPIPE,
      // not kill the engine with SIGPIPE: blocked here, on the only thread that
      // writes to workers, it stays pending and is dropped when the thread ends.
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
      context_.run();
    });
  }

  void send(std::string frame) {
    asio::post(context_, [this, frame = std::move(frame)]() mutable {
      writes_.push_back(std::move(frame));
      if (writes_.size() == 1) write_next();
    });
  }

  // EOF on the worker's stdin: a worker waiting for the next request exits.
  void close_stdin() {
    asio::post(context_, [this] {
      boost::system::error_code ignored;
      in_.close(ignored);
    });
  }

  // Idempotent. Pending operations are dropped; the descriptors close with this object.
  void stop() {
    context_.stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void write_next() {
    asio::async_write(in_, asio::buffer(writes_.front()), [this](const boost::system::error_code& error, std::size_t) {
      if (error) {
        writes_.clear();
        std::lock_guard lock(owner_.mutex_);
        if (!owner_.write_error_) owner_.write_error_ = error.message();
        owner_.changed_.notify_all();
        return;
      }
      writes_.pop_front();
      if (!writes_.empty()) write_next();
    });
  }

  void read_stdout() {
    out_.async_read_some(asio::buffer(out_buffer_), [this](const boost::system::error_code& error, std::size_t n) {
      if (n > 0) {
        reader_.feed(std::string_view(out_buffer_.data(), n));
        while (auto event = reader_.next()) on_frame_event(std::move(*event));
      }
      if (error) {
        std::lock_guard lock(owner_.mutex_);
        owner_.stdout_closed_ = true;
        owner_.changed_.notify_all();
        return;
      }
      read_stdout();
    });
  }

  void read_stderr() {
    err_.async_read_some(asio::buffer(err_buffer_), [this](const boost::system::error_code& error, std::size_t n) {
      std::lock_guard lock(owner_.mutex_);
      if (n > 0) owner_.stderr_.append(std::string_view(err_buffer_.data(), n));
      if (error) {
        owner_.stderr_closed_ = true;
        owner_.changed_.notify_all();
        return;
      }
      read_stderr();
    });
  }

  void on_frame_event(protocol::FrameEvent event) {
    std::string problem;
    if (const auto* framing = std::get_if<protocol::FramingError>(&event)) {
      problem = "not a frame on stdout: " + framing->message;
    } else {
      auto parsed = protocol::parse_message(std::get<protocol::Frame>(event).body);
      if (const auto* invalid = std::get_if<protocol::MessageError>(&parsed)) {
        problem = "not a JSON-RPC message: " + invalid->error.message;
      } else {
        auto& message = std::get<protocol::Message>(parsed);
        if (auto* response = std::get_if<protocol::Response>(&message)) {
          std::lock_guard lock(owner_.mutex_);
          if (owner_.awaiting_ && response->id == protocol::RequestId(*owner_.awaiting_)) {
            owner_.response_ = protocol::to_json(*response);
            owner_.awaiting_.reset();
            owner_.changed_.notify_all();
            return;
          }
          problem = owner_.awaiting_ ? "a response with id " + response->id.to_string() + " to request " +
                                           std::to_string(*owner_.awaiting_)
                                     : "a response with id " + response->id.to_string() + " when no request was pending";
        } else if (const auto* request = std::get_if<protocol::Request>(&message)) {
          problem = "a request (" + request->method + "), but workers only answer";
        } else {
          problem = "a notification (" + std::get<protocol::Notification>(message).method + "), but workers only answer";
        }
      }
    }
    std::lock_guard lock(owner_.mutex_);
    if (!owner_.protocol_error_) owner_.protocol_error_ = std::move(problem);
    owner_.changed_.notify_all();
  }

  WorkerProcess& owner_;
  asio::io_context context_;  // first member to be built, last to go: the descriptors need it
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  asio::posix::stream_descriptor in_;
  asio::posix::stream_descriptor out_;
  asio::posix::stream_descriptor err_;
  std::array<char, 64u << 10> out_buffer_{};
  std::array<char, 16u << 10> err_buffer_{};
  protocol::FrameReader reader_;
  std::deque<std::string> writes_;  // touched only on the I/O thread
  std::thread thread_;
};

WorkerProcess::WorkerProcess(WorkerConfig config) : config_(std::move(config)), stderr_(config_.stderr_capacity) {
  if (config_.engine_version.empty()) config_.engine_version = hiera::kVersion;
}

WorkerProcess::~WorkerProcess() {
  kill();
  io_.reset();
  child_.reset();
}

std::optional<WorkerFailure> WorkerProcess::start(const CancellationToken& cancel) {
  if (child_) throw std::logic_error("WorkerProcess::start called twice; a restart is a new WorkerProcess");
  std::optional<std::string> aborted;
  {
    std::lock_guard lock(mutex_);
    if (aborted_) aborted = abort_reason_;
  }
  if (aborted) return failure(WorkerFailureKind::Cancelled, "cancelled before the worker started: " + *aborted);
  try {
    SpawnOptions options;
    options.remove_env = config_.secrets.names();  // a candidate must not read an API key from its environment
    options.die_with_parent = true;  // `kill -9` of the engine must not leave a worker (and its runner) running
    child_ = std::make_unique<ChildProcess>(config_.command, options);
  } catch (const std::exception& e) {
    return failure(WorkerFailureKind::Died, e.what());  // "cannot start NAME: No such file or directory"
  }
  pid_ = child_->pid();
  io_ = std::make_unique<Io>(*this, child_->take_stdin(), child_->take_stdout(), child_->take_stderr());
  {
    std::lock_guard lock(mutex_);
    alive_ = true;
  }
  io_->start();
  return handshake(cancel);
}

std::optional<WorkerFailure> WorkerProcess::handshake(const CancellationToken& cancel) {
  CallResult reply = call("hello", json{{"engine_version", config_.engine_version}}, config_.handshake_timeout, cancel);
  if (!reply.ok()) {
    WorkerFailure refused = std::move(*reply.failure);
    if (refused.kind == WorkerFailureKind::RpcError) {
      kill();  // it answered, so it still runs
      if (refused.rpc_code == static_cast<int>(protocol::ErrorCode::InvalidRequest)) {
        refused.kind = WorkerFailureKind::Refused;
        refused.message = "worker refused the handshake: " + refused.message;
      }
    }
    return refused;
  }
  if (!reply.result.is_object() || !reply.result.contains("worker_version") ||
      !reply.result["worker_version"].is_string()) {
    kill();
    return failure(WorkerFailureKind::Protocol, "worker broke the job protocol during hello: no \"worker_version\" in " +
                                                    protocol::dump_json(reply.result).substr(0, 200));
  }
  hello_ = parse_hello(reply.result);
  if (!same_major_minor(hello_.worker_version, config_.engine_version)) {
    shutdown(config_.kill_grace);
    return failure(WorkerFailureKind::Refused, "worker version " + hello_.worker_version +
                                                   " is incompatible with engine version " + config_.engine_version +
                                                   " (major.minor must match)");
  }
  return std::nullopt;
}

CallResult WorkerProcess::call(const std::string& method, json params, std::chrono::milliseconds timeout,
                               const CancellationToken& cancel) {
  const std::int64_t id = next_id_++;
  std::optional<std::string> aborted;
  bool alive = false;
  {
    std::lock_guard lock(mutex_);
    if (aborted_) aborted = abort_reason_;
    alive = alive_;
    if (!aborted && alive) {
      awaiting_ = id;
      response_.reset();
    }
  }
  // Built outside the lock: failure() takes it to copy the stderr tail.
  if (aborted) return {{}, failure(WorkerFailureKind::Cancelled, "cancelled before " + method + ": " + *aborted)};
  if (!alive) return {{}, failure(WorkerFailureKind::Died, "the worker is not running; cannot send " + method)};
  const protocol::Request request{protocol::RequestId(id), method, std::move(params)};
  std::string body = protocol::dump_json(protocol::to_json(request));
  if (body.size() > protocol::kDefaultMaxBodyBytes) {
    // The worker would skip it unread and answer an error with id null: say why here instead.
    {
      std::lock_guard lock(mutex_);
      awaiting_.reset();
    }
    return {{}, failure(WorkerFailureKind::RpcError,
                        "the " + method + " request is " + describe_bytes(body.size()) +
                            ", over the job protocol's frame limit of " +
                            describe_bytes(protocol::kDefaultMaxBodyBytes) + "; it was not sent to the worker")};
  }
  io_->send(protocol::FrameWriter::encode(body));
  body = std::string();

  switch (wait_for_response(timeout, cancel)) {
    case Wait::Response: {
      json message;
      {
        std::lock_guard lock(mutex_);
        message = std::move(*response_);
        response_.reset();
      }
      redact_strings(message, config_.secrets);
      if (const auto error = message.find("error"); error != message.end()) {
        const int code = error->value("code", 0);
        CallResult result{{}, failure(WorkerFailureKind::RpcError,
                                      error->value("message", std::string()) + " (error " + std::to_string(code) + " " +
                                          protocol::to_string(static_cast<protocol::ErrorCode>(code)) + " during " +
                                          method + ")")};
        result.failure->rpc_code = code;
        return result;
      }
      return {std::move(message["result"]), std::nullopt};
    }
    case Wait::Protocol: {
      std::string detail;
      {
        std::lock_guard lock(mutex_);
        detail = *protocol_error_;
      }
      kill();
      return {{}, failure(WorkerFailureKind::Protocol, "worker broke the job protocol during " + method + ": " + detail)};
    }
    case Wait::Closed:
      return {{}, died(method)};
    case Wait::Aborted: {
      kill();
      std::string reason;
      {
        std::lock_guard lock(mutex_);
        reason = abort_reason_;
      }
      return {{}, failure(WorkerFailureKind::Cancelled, "cancelled during " + method + ": " + reason)};
    }
    case Wait::Cancelled:
      kill();
      return {{}, failure(WorkerFailureKind::Cancelled, "cancelled during " + method)};
    case Wait::Timeout:
      kill();
      return {{}, failure(WorkerFailureKind::Timeout,
                          "worker timed out after " + describe_duration(timeout) + " during " + method)};
  }
  return {{}, failure(WorkerFailureKind::Protocol, "unreachable")};
}

WorkerProcess::Wait WorkerProcess::wait_for_response(std::chrono::milliseconds timeout,
                                                     const CancellationToken& cancel) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  for (;;) {
    // A response wins over what follows it: a worker may reply and then exit (a restart request).
    if (response_) return Wait::Response;
    if (protocol_error_) return Wait::Protocol;
    if (stdout_closed_ || write_error_) return Wait::Closed;
    if (aborted_) return Wait::Aborted;
    if (cancel.cancelled()) return Wait::Cancelled;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Wait::Timeout;
    changed_.wait_until(lock, std::min(deadline, now + kCancelPoll));
  }
}

WorkerFailure WorkerProcess::died(const std::string& method) {
  // Its stdout is closed (or its stdin refused a write): it is exiting, or it
  // closed the pipe and lives on, in which case it is killed.
  std::optional<ExitStatus> status = child_->wait_for(config_.kill_grace);
  if (!status) status = child_->terminate(config_.kill_grace);
  finish(*status);
  const std::string tail = message_tail(stderr_tail());
  WorkerFailure result =
      failure(WorkerFailureKind::Died, "worker died (" + status->describe() + ") during " + method +
                                           (tail.empty() ? std::string(" (nothing on stderr)") : ": " + tail));
  result.exit_code = status->code;
  result.signal = status->signal;
  return result;
}

WorkerFailure WorkerProcess::failure(WorkerFailureKind kind, std::string message) {
  WorkerFailure result;
  result.kind = kind;
  // Messages quote what the worker wrote, which may be any bytes; they end up in JSON.
  result.message = config_.secrets.redact(protocol::sanitize_utf8(message));
  result.stderr_tail = stderr_tail();
  return result;
}

void WorkerProcess::shutdown(std::chrono::milliseconds grace) {
  bool polite = false;
  {
    std::lock_guard lock(mutex_);
    polite = alive_ && !aborted_;
  }
  if (polite) {
    const CallResult reply = call("shutdown", json::object(), grace);
    // Any failure but an error reply has already killed and reaped it.
    if (!reply.ok() && reply.failure->kind != WorkerFailureKind::RpcError) return;
    io_->close_stdin();
    if (auto status = child_->wait_for(grace)) {
      finish(*status);
      return;
    }
  }
  kill();
}

void WorkerProcess::wait_exit(std::chrono::milliseconds grace) {
  if (!child_ || child_->exit_status()) return kill();
  io_->close_stdin();
  if (auto status = child_->wait_for(grace)) return finish(*status);
  kill();
}

void WorkerProcess::kill() {
  if (!child_) return;
  if (child_->exit_status()) {
    if (io_) io_->stop();  // finish() already ran, or the process went while nobody looked
    return;
  }
  finish(child_->terminate(config_.kill_grace));
}

void WorkerProcess::finish(ExitStatus status) {
  wait_for_stderr(std::min(config_.kill_grace, kStderrDrain));
  if (io_) io_->stop();
  std::lock_guard lock(mutex_);
  alive_ = false;
  exit_status_ = status;
  changed_.notify_all();
}

void WorkerProcess::wait_for_stderr(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, limit, [this] { return stderr_closed_; });
}

void WorkerProcess::abort(std::string reason) {
  std::lock_guard lock(mutex_);
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = std::move(reason);
  changed_.notify_all();
}

bool WorkerProcess::running() const {
  std::lock_guard lock(mutex_);
  return alive_ && !stdout_closed_ && !write_error_ && !protocol_error_;
}

std::string WorkerProcess::stderr_tail() const {
  std::lock_guard lock(mutex_);
  return config_.secrets.redact(protocol::sanitize_utf8(stderr_.text()));
}

std::optional<ExitStatus> WorkerProcess::exit_status() const {
  std::lock_guard lock(mutex_);
  return exit_status_;
}

}  // namespace hiera::engine::eval
