#include "protocol/error_codes.h"

namespace hiera::protocol {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::ParseError: return "ParseError";
    case ErrorCode::InvalidRequest: return "InvalidRequest";
    case ErrorCode::MethodNotFound: return "MethodNotFound";
    case ErrorCode::InvalidParams: return "InvalidParams";
    case ErrorCode::InternalError: return "InternalError";
    case ErrorCode::ServerNotInitialized: return "ServerNotInitialized";
    case ErrorCode::UnknownErrorCode: return "UnknownErrorCode";
    case ErrorCode::RequestFailed: return "RequestFailed";
    case ErrorCode::ServerCancelled: return "ServerCancelled";
    case ErrorCode::ContentModified: return "ContentModified";
    case ErrorCode::RequestCancelled: return "RequestCancelled";
  }
  // A peer's response may carry any integer code; it still needs a printable name,
  // distinct from the real UnknownErrorCode (-32001).
  return "UnrecognizedErrorCode";
}

}  // namespace hiera::protocol
