#include "http_test_server.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace hiera::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

struct detail::ServerState {
  // What the test thread and the server thread share.
  mutable std::mutex mutex;
  std::deque<ScriptedResponse> script;
  std::vector<RecordedRequest> requests;
  int in_flight = 0;
  int max_in_flight = 0;

  // Declared after the shared data and before the acceptor: the io_context
  // outlives the acceptor, and the data outlives the sessions it destroys.
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;

  ScriptedResponse take(RecordedRequest request) {
    std::lock_guard lock(mutex);
    requests.push_back(std::move(request));
    max_in_flight = std::max(max_in_flight, ++in_flight);
    if (script.empty()) return ScriptedResponse{500, {}, "no scripted response", {}, false, false};
    ScriptedResponse next = std::move(script.front());
    script.pop_front();
    return next;
  }

  void answered() {
    std::lock_guard lock(mutex);
    --in_flight;
  }

  void accept();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, detail::ServerState& server)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), server_(server) {}

  void read() {
    request_ = {};
    http::async_read(socket_, buffer_, request_, [self = shared_from_this()](beast::error_code error, std::size_t) {
      if (!error) self->on_request();
    });
  }

 private:
  void on_request() {
    RecordedRequest recorded;
    recorded.method = std::string(request_.method_string());
    recorded.target = std::string(request_.target());
    for (const auto& field : request_) {
      auto [it, inserted] = recorded.headers.emplace(lower(std::string(field.name_string())), std::string(field.value()));
      if (!inserted) it->second += ", " + std::string(field.value());
    }
    recorded.body = request_.body();
    scripted_ = server_.take(std::move(recorded));
    if (scripted_.delay.count() > 0) {
      timer_.expires_after(scripted_.delay);
      timer_.async_wait([self = shared_from_this()](beast::error_code error) {
        if (!error) self->respond();
      });
    } else {
      respond();
    }
  }

  void respond() {
    server_.answered();
    if (scripted_.drop) {
      beast::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_both, ignored);
      socket_.close(ignored);
      return;
    }
    response_ = {};
    response_.result(scripted_.status);
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    for (const auto& [name, value] : scripted_.headers) response_.insert(name, value);
    response_.body() = scripted_.body;
    if (scripted_.chunked) {
      response_.chunked(true);
    } else {
      response_.prepare_payload();
    }
    http::async_write(socket_, response_, [self = shared_from_this()](beast::error_code error, std::size_t) {
      if (error) return;
      if (self->response_.need_eof()) {
        beast::error_code ignored;
        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->read();
    });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  detail::ServerState& server_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  ScriptedResponse scripted_;
};

}  // namespace

void detail::ServerState::accept() {
  acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (error) return;  // closed: the server is stopping
    std::make_shared<Session>(std::move(socket), *this)->read();
    accept();
  });
}

std::string RecordedRequest::header(std::string name) const {
  const auto it = headers.find(lower(std::move(name)));
  return it == headers.end() ? "" : it->second;
}

HttpTestServer::HttpTestServer() : state_(std::make_unique<detail::ServerState>()) {
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(asio::socket_base::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  state_->accept();
  state_->work.emplace(state_->io.get_executor());
  state_->thread = std::thread([state = state_.get()] { state->io.run(); });
}

HttpTestServer::~HttpTestServer() {
  state_->io.stop();
  state_->thread.join();
}

unsigned short HttpTestServer::port() const { return state_->acceptor.local_endpoint().port(); }

std::string HttpTestServer::base_url() const { return "http://127.0.0.1:" + std::to_string(port()); }

void HttpTestServer::enqueue(ScriptedResponse response) {
  std::lock_guard lock(state_->mutex);
  state_->script.push_back(std::move(response));
}

void HttpTestServer::enqueue_json(unsigned status, std::string body) {
  enqueue(ScriptedResponse{status, {{"Content-Type", "application/json"}}, std::move(body), {}, false, false});
}

std::vector<RecordedRequest> HttpTestServer::requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->requests;
}

std::size_t HttpTestServer::request_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->requests.size();
}

int HttpTestServer::max_concurrent_requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->max_in_flight;
}

unsigned short closed_port() {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const unsigned short port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

}  // namespace hiera::testing
