#pragma once
// Cooperative cancellation shared by the server, the CLI and the engine:
// whoever starts work keeps the source, the work polls the token.
#include <atomic>
#include <memory>

namespace hiera::engine {

class CancellationToken {
 public:
  CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  bool cancelled() const { return flag_->load(std::memory_order_acquire); }
  void cancel() const { flag_->store(true, std::memory_order_release); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

// Thrown by work that noticed its token was cancelled.
struct Cancelled {};

inline void throw_if_cancelled(const CancellationToken& token) {
  if (token.cancelled()) throw Cancelled{};
}

}  // namespace hiera::engine
