#pragma once
// LSP base protocol framing: "Content-Length: N\r\n[other headers]\r\n\r\n" + N bytes.
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace hiera::protocol {

inline constexpr std::size_t kDefaultMaxBodyBytes = 64u << 20;  // 64 MiB
inline constexpr std::size_t kMaxHeaderBytes = 8u << 10;

struct Frame {
  std::string body;
};

enum class FramingErrorKind {
  MissingContentLength,   // a header block with no Content-Length
  MalformedContentLength, // not a non-negative decimal integer
  BodyTooLarge,           // length over the cap: the body is skipped unread
  HeaderTooLong,          // no blank line within kMaxHeaderBytes
  MalformedHeader,        // a header line without "name: value"
  TruncatedBody,          // the stream ended inside a message
};

struct FramingError {
  FramingErrorKind kind;
  std::string message;  // human-readable, names the offending value
};

using FrameEvent = std::variant<Frame, FramingError>;

// Incremental reader: feed() bytes as they arrive in any chunking, then drain
// next() until it returns nullopt. After an error the reader resynchronises on
// the next "Content-Length" header line, so one bad frame loses only itself.
// ("Content-Length" is looked for anywhere, case-insensitively, not only at a
// line start: bodies are not newline-terminated, so the next header usually
// follows the previous body on the same line.) Header names are
// case-insensitive; "\r\n" and bare "\n" line ends are both accepted.
class FrameReader {
 public:
  explicit FrameReader(std::size_t max_body_bytes = kDefaultMaxBodyBytes);

  void feed(std::string_view bytes);
  std::optional<FrameEvent> next();
  // Called at end of stream: yields TruncatedBody if a message was cut short.
  std::optional<FramingError> finish();
  // Bytes held waiting for the rest of a message.
  std::size_t buffered() const;

 private:
  void read_header(std::string_view& in);
  void read_resync(std::string_view& in);
  void handle_line(std::string_view line);
  std::optional<FramingError> header_line(std::string_view line);
  std::optional<FramingError> end_of_header();
  void header_too_long();
  void reset_header();

  std::size_t max_body_bytes_;
  // A partial header line, a partial body, or (while resynchronising) the last
  // few bytes seen, in case "Content-Length" is split across two feeds.
  std::string buffer_;
  std::size_t pending_body_ = 0;   // body length of the header just read
  bool in_body_ = false;
  std::size_t skip_remaining_ = 0; // bytes of an oversized body still to drop
  bool resyncing_ = false;         // after an error: dropping bytes up to the next "Content-Length"
  std::size_t header_bytes_ = 0;   // bytes of complete lines in the current header block
  bool header_started_ = false;    // a non-blank line of the current block has been read
  std::optional<std::size_t> content_length_;
  std::deque<FrameEvent> events_;  // decoded in feed(), handed out by next()
};

// Serialises header + body into one buffer and hands it to the sink in a
// single call under a mutex, so concurrent senders never interleave.
class FrameWriter {
 public:
  using Sink = std::function<void(std::string_view)>;
  explicit FrameWriter(Sink sink) : sink_(std::move(sink)) {}
  void write(std::string_view body);
  static std::string encode(std::string_view body);

 private:
  std::mutex mutex_;
  Sink sink_;
};

}  // namespace hiera::protocol
