#include "server/transport/tcp_transport.h"

#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

namespace hiera::server {

namespace asio = boost::asio;
using asio::ip::tcp;

struct TcpTransport::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  tcp::socket socket{io};
};

TcpTransport::TcpTransport(const std::string& address, std::uint16_t port) : impl_(std::make_unique<Impl>()) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) throw std::runtime_error("not an IP address: " + address);
  // A language server has no authentication: never listen beyond this machine.
  if (!ip.is_loopback()) throw std::runtime_error("refusing to listen on non-loopback address " + address);
  const tcp::endpoint endpoint(ip, port);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(endpoint, ec);
  if (ec) throw std::runtime_error("cannot listen on " + address + ":" + std::to_string(port) + ": " + ec.message());
  impl_->acceptor.listen(1);
}

TcpTransport::~TcpTransport() = default;

std::uint16_t TcpTransport::port() const { return impl_->acceptor.local_endpoint().port(); }

void TcpTransport::accept() {
  impl_->acceptor.accept(impl_->socket);
  impl_->socket.set_option(tcp::no_delay(true));
  impl_->acceptor.close();  // one client per server
}

void TcpTransport::read_loop(const std::function<void(std::string_view)>& on_bytes) {
  char buffer[64 * 1024];
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = impl_->socket.read_some(asio::buffer(buffer), ec);
    if (n > 0) on_bytes(std::string_view(buffer, n));
    if (ec == asio::error::eof || ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor ||
        !impl_->socket.is_open()) {
      return;
    }
    if (ec) throw std::runtime_error("TCP read failed: " + ec.message());
  }
}

void TcpTransport::write(std::string_view bytes) {
  boost::system::error_code ec;
  asio::write(impl_->socket, asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec) throw std::runtime_error("TCP write failed: " + ec.message());
}

void TcpTransport::close() {
  boost::system::error_code ignored;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace hiera::server
