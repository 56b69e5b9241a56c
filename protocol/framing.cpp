#include "protocol/framing.h"

#include <algorithm>
#include <limits>
#include <string>

namespace hiera::protocol {

namespace {

constexpr std::string_view kContentLength = "content-length";

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

// Position of "Content-Length" (any case) in text at or after from, or npos.
std::size_t find_content_length(std::string_view text, std::size_t from = 0) {
  if (from >= text.size()) return std::string_view::npos;
  auto it = std::search(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(), kContentLength.begin(),
                        kContentLength.end(), [](char x, char y) { return ascii_lower(x) == y; });
  return it == text.end() ? std::string_view::npos : static_cast<std::size_t>(it - text.begin());
}

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// RFC 9110 token characters: rejects lines of JSON or prose that merely contain a colon.
bool is_token(std::string_view s) {
  constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || extra.find(c) != extra.npos;
  });
}

// Offending values go into error messages; keep them short.
std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 64;
  std::string out = "'";
  out.append(s.substr(0, kMax));
  if (s.size() > kMax) out += "...";
  out += "'";
  return out;
}

}  // namespace

FrameReader::FrameReader(std::size_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

void FrameReader::feed(std::string_view in) {
  while (!in.empty()) {
    if (skip_remaining_ > 0) {
      // Dropped straight from the input: an oversized body is never held in memory.
      const std::size_t n = std::min(skip_remaining_, in.size());
      in.remove_prefix(n);
      skip_remaining_ -= n;
    } else if (in_body_) {
      const std::size_t n = std::min(pending_body_ - buffer_.size(), in.size());
      buffer_.append(in.substr(0, n));
      in.remove_prefix(n);
      if (buffer_.size() == pending_body_) {
        events_.emplace_back(Frame{std::move(buffer_)});
        buffer_.clear();
        in_body_ = false;
        pending_body_ = 0;
      }
    } else if (resyncing_) {
      read_resync(in);
    } else {
      read_header(in);
    }
  }
}

std::optional<FrameEvent> FrameReader::next() {
  if (events_.empty()) return std::nullopt;
  FrameEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

std::optional<FramingError> FrameReader::finish() {
  std::optional<FramingError> error;
  const bool partial_header = !resyncing_ && skip_remaining_ == 0 && !in_body_ &&
                              (header_started_ || trim(buffer_).find_first_not_of("\r\n") != std::string_view::npos);
  if (in_body_) {
    error = FramingError{FramingErrorKind::TruncatedBody,
                         "the stream ended after " + std::to_string(buffer_.size()) + " of " +
                             std::to_string(pending_body_) + " body bytes"};
  } else if (partial_header) {
    error = FramingError{FramingErrorKind::TruncatedBody, "the stream ended inside a header block"};
  }
  // An oversized body cut short was already reported as BodyTooLarge; garbage
  // dropped while resynchronising was reported when the error happened.
  buffer_.clear();
  in_body_ = false;
  pending_body_ = 0;
  skip_remaining_ = 0;
  resyncing_ = false;
  reset_header();
  return error;
}

std::size_t FrameReader::buffered() const { return buffer_.size(); }

void FrameReader::reset_header() {
  header_bytes_ = 0;
  header_started_ = false;
  content_length_.reset();
}

void FrameReader::read_header(std::string_view& in) {
  const std::size_t newline = in.find('\n');
  const std::size_t line_part = newline == std::string_view::npos ? in.size() : newline;
  const std::size_t used = header_bytes_ + buffer_.size();
  if (used + line_part > kMaxHeaderBytes) {
    // Take only enough to cross the limit, so buffer_ stays bounded.
    const std::size_t take = std::min(line_part, kMaxHeaderBytes + 1 - std::min(used, kMaxHeaderBytes));
    buffer_.append(in.substr(0, take));
    in.remove_prefix(take);
    header_too_long();
    return;
  }
  if (newline == std::string_view::npos) {
    buffer_.append(in);
    in = {};
    return;
  }
  std::string owned;
  std::string_view line;
  if (buffer_.empty()) {
    line = in.substr(0, newline);
  } else {
    buffer_.append(in.substr(0, newline));
    owned = std::move(buffer_);
    buffer_.clear();
    line = owned;
  }
  in.remove_prefix(newline + 1);
  header_bytes_ += line.size() + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  handle_line(line);
}

void FrameReader::header_too_long() {
  events_.emplace_back(FramingError{FramingErrorKind::HeaderTooLong,
                                    "no end of header block within " + std::to_string(kMaxHeaderBytes) + " bytes"});
  reset_header();
  // The next header may start inside the overlong line itself.
  const std::size_t at = find_content_length(buffer_, 1);
  if (at != std::string::npos) {
    buffer_.erase(0, at);
    return;
  }
  // Keep a tail shorter than the marker: it may be the start of a split "Content-Length".
  const std::size_t keep = std::min(buffer_.size(), kContentLength.size() - 1);
  buffer_.erase(0, buffer_.size() - keep);
  resyncing_ = true;
}

void FrameReader::read_resync(std::string_view& in) {
  const std::size_t tail_max = kContentLength.size() - 1;
  if (!buffer_.empty()) {
    // A marker may straddle the tail kept from the previous feed and this one.
    std::string joined = buffer_;
    joined.append(in.substr(0, std::min(in.size(), tail_max)));
    const std::size_t at = find_content_length(joined);
    if (at != std::string::npos && at < buffer_.size()) {
      buffer_.erase(0, at);  // a prefix of the marker: a partial header line
      resyncing_ = false;
      reset_header();
      return;
    }
  }
  const std::size_t at = find_content_length(in);
  if (at != std::string_view::npos) {
    buffer_.clear();
    in.remove_prefix(at);
    resyncing_ = false;
    reset_header();
    return;
  }
  if (in.size() >= tail_max) {
    buffer_.assign(in.substr(in.size() - tail_max));
  } else {
    buffer_.append(in);
    buffer_.erase(0, buffer_.size() - std::min(buffer_.size(), tail_max));
  }
  in = {};
}

void FrameReader::handle_line(std::string_view line) {
  for (;;) {
    auto error = header_line(line);
    if (!error) return;
    events_.emplace_back(std::move(*error));
    reset_header();
    // Resynchronise: the next header may begin later in this same line (a body
    // shorter than claimed, or garbage, runs into the next "Content-Length").
    const std::size_t at = find_content_length(line, 1);
    if (at == std::string_view::npos) {
      resyncing_ = true;
      buffer_.clear();
      return;
    }
    line = line.substr(at);
    header_bytes_ = line.size() + 1;
  }
}

std::optional<FramingError> FrameReader::header_line(std::string_view line) {
  if (line.empty()) {
    // Blank lines before any header (say, a stray CRLF after a body) are noise.
    if (!header_started_) return std::nullopt;
    return end_of_header();
  }
  header_started_ = true;
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return FramingError{FramingErrorKind::MalformedHeader, "header line without a colon: " + quote(line)};
  }
  const std::string_view name = trim(line.substr(0, colon));
  const std::string_view value = trim(line.substr(colon + 1));
  if (!is_token(name)) {
    return FramingError{FramingErrorKind::MalformedHeader, "invalid header name " + quote(name)};
  }
  if (!iequals(name, kContentLength)) return std::nullopt;  // Content-Type and others are ignored

  const auto malformed = [&](const std::string& why) {
    return FramingError{FramingErrorKind::MalformedContentLength, "Content-Length " + quote(value) + " " + why};
  };
  if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return malformed("is not a non-negative decimal integer");
  }
  std::size_t length = 0;
  for (char c : value) {
    const auto digit = static_cast<std::size_t>(c - '0');
    if (length > (std::numeric_limits<std::size_t>::max() - digit) / 10) return malformed("is out of range");
    length = length * 10 + digit;
  }
  if (content_length_ && *content_length_ != length) {
    return malformed("conflicts with an earlier Content-Length " + std::to_string(*content_length_));
  }
  content_length_ = length;
  return std::nullopt;
}

std::optional<FramingError> FrameReader::end_of_header() {
  if (!content_length_) {
    return FramingError{FramingErrorKind::MissingContentLength, "header block without a Content-Length"};
  }
  const std::size_t length = *content_length_;
  reset_header();
  if (length > max_body_bytes_) {
    // Not a resync: the length is well-formed, so skipping exactly that many bytes stays in step.
    events_.emplace_back(FramingError{FramingErrorKind::BodyTooLarge,
                                      "Content-Length " + std::to_string(length) + " exceeds the limit of " +
                                          std::to_string(max_body_bytes_) + " bytes"});
    skip_remaining_ = length;
  } else if (length == 0) {
    events_.emplace_back(Frame{});
  } else {
    in_body_ = true;
    pending_body_ = length;
  }
  return std::nullopt;
}

void FrameWriter::write(std::string_view body) {
  const std::string frame = encode(body);  // built outside the lock; only the sink call is serialised
  std::lock_guard lock(mutex_);
  sink_(frame);
}

std::string FrameWriter::encode(std::string_view body) {
  std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  frame.append(body);
  return frame;
}

}  // namespace hiera::protocol
