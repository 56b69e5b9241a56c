#include "engine/propose/llm/chat.h"

namespace hiera::engine::propose::llm {

std::string_view to_string(ChatErrorKind kind) {
  switch (kind) {
    case ChatErrorKind::Network: return "network";
    case ChatErrorKind::Timeout: return "timeout";
    case ChatErrorKind::HttpStatus: return "http_status";
    case ChatErrorKind::Malformed: return "malformed";
    case ChatErrorKind::TooLarge: return "too_large";
    case ChatErrorKind::Cancelled: return "cancelled";
    case ChatErrorKind::Configuration: return "configuration";
  }
  return "unknown";
}

}  // namespace hiera::engine::propose::llm
