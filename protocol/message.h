#pragma once
// JSON-RPC 2.0 messages: parsing a frame body into a request, notification or
// response, and building the JSON of each. Ids are integers or strings and are
// echoed back exactly as they arrived.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/error_codes.h"

namespace hiera::protocol {

using json = nlohmann::json;

// An integer or string request id, kept as the JSON value it arrived as.
class RequestId {
 public:
  RequestId() = default;  // the null id, used for errors with no known id
  explicit RequestId(std::int64_t value) : value_(value) {}
  explicit RequestId(std::string value) : value_(std::move(value)) {}
  // Accepts an integer or string JSON value; anything else yields nullopt.
  static std::optional<RequestId> from_json(const json& value);

  bool is_null() const { return value_.is_null(); }
  const json& to_json() const { return value_; }
  std::string to_string() const { return value_.dump(); }  // for logs and map keys
  friend bool operator==(const RequestId& a, const RequestId& b) { return a.value_ == b.value_; }

 private:
  json value_;
};

struct ResponseError {
  ErrorCode code = ErrorCode::InternalError;
  std::string message;
  std::optional<json> data;
};

struct Request {
  RequestId id;
  std::string method;
  json params;  // object, array, or null when absent
};

struct Notification {
  std::string method;
  json params;
};

struct Response {
  RequestId id;
  std::variant<json, ResponseError> result;  // result, or error
  bool ok() const { return result.index() == 0; }
};

using Message = std::variant<Request, Notification, Response>;

// A message that could not be accepted, with the id to answer when one could be read.
struct MessageError {
  ResponseError error;
  RequestId id;  // null when the id itself was missing or unreadable
};

// Parses one frame body. Never throws: malformed JSON is ParseError, a
// well-formed value that is not a JSON-RPC 2.0 message is InvalidRequest.
std::variant<Message, MessageError> parse_message(std::string_view body);
// Validates an already-parsed JSON value (the part of parse_message after JSON parsing).
std::variant<Message, MessageError> message_from_json(const json& value);

json to_json(const Request& request);
json to_json(const Notification& notification);
json to_json(const Response& response);
json to_json(const ResponseError& error);
json make_result(const RequestId& id, json result);
json make_error(const RequestId& id, ErrorCode code, std::string message, std::optional<json> data = std::nullopt);

// Thrown by handlers to answer with a specific JSON-RPC error.
class RpcError : public std::runtime_error {
 public:
  RpcError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace hiera::protocol
