#pragma once
// The last N bytes of an unbounded stream (a worker's stderr): enough to
// explain a crash, never more memory than that however much a worker logs.
#include <cstddef>
#include <string>
#include <string_view>

namespace hiera::engine::eval {

class TailBuffer {
 public:
  explicit TailBuffer(std::size_t capacity) : capacity_(capacity) {}

  void append(std::string_view bytes) {
    if (bytes.size() >= capacity_) {
      text_.assign(bytes.substr(bytes.size() - capacity_));
      dropped_ = true;
      return;
    }
    text_.append(bytes);
    // Trimmed only past twice the capacity, so the copy is paid once per capacity bytes, not per append.
    if (text_.size() > 2 * capacity_) trim();
  }

  // The retained tail, at most capacity bytes.
  std::string text() const {
    if (text_.size() <= capacity_) return text_;
    return text_.substr(text_.size() - capacity_);
  }
  // Whether earlier bytes were dropped to stay within the capacity.
  bool truncated() const { return dropped_ || text_.size() > capacity_; }
  std::size_t capacity() const { return capacity_; }

 private:
  void trim() {
    text_.erase(0, text_.size() - capacity_);
    dropped_ = true;
  }

  std::size_t capacity_;
  std::string text_;
  bool dropped_ = false;
};

}  // namespace hiera::engine::eval
