#include "protocol/message.h"

#include "protocol/json_text.h"

#include <climits>
#include <utility>

namespace hiera::protocol {

namespace {

// Real LSP payloads nest a few dozen levels at most; a cap keeps a hostile body
// from driving the recursive copy, compare and dump code in nlohmann into a stack overflow.
constexpr int kMaxJsonDepth = 512;

MessageError invalid(std::string message, RequestId id = {}) {
  return MessageError{ResponseError{ErrorCode::InvalidRequest, std::move(message), std::nullopt}, std::move(id)};
}

// The id to answer with when the rest of the message is unacceptable.
RequestId readable_id(const json& object) {
  auto it = object.find("id");
  if (it == object.end()) return {};
  return RequestId::from_json(*it).value_or(RequestId{});
}

std::variant<ResponseError, std::string> parse_response_error(const json& value) {
  if (!value.is_object()) return std::string("\"error\" must be an object");
  auto code = value.find("code");
  if (code == value.end() || !code->is_number_integer()) return std::string("\"error.code\" must be an integer");
  // Compare through the signedness nlohmann chose so a huge unsigned code is not wrapped.
  const bool fits = code->is_number_unsigned() ? code->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                                               : code->get<std::int64_t>() >= INT_MIN && code->get<std::int64_t>() <= INT_MAX;
  if (!fits) return std::string("\"error.code\" is out of range");
  auto message = value.find("message");
  if (message == value.end() || !message->is_string()) return std::string("\"error.message\" must be a string");
  ResponseError error;
  // Peers may use codes we have no name for; the enum's fixed int base holds them all.
  error.code = static_cast<ErrorCode>(code->get<int>());
  error.message = message->get<std::string>();
  if (auto data = value.find("data"); data != value.end()) error.data = *data;
  return error;
}

}  // namespace

std::optional<RequestId> RequestId::from_json(const json& value) {
  if (!value.is_number_integer() && !value.is_string()) return std::nullopt;
  RequestId id;
  id.value_ = value;  // kept as-is (signed or unsigned) so it is echoed byte for byte
  return id;
}

std::variant<Message, MessageError> parse_message(std::string_view body) {
  // A client that sends a file with invalid UTF-8 (a Latin-1 source, a binary
  // blob) loses only those bytes, which become U+FFFD, not the whole message.
  std::string repaired;
  if (!is_valid_utf8(body)) {
    repaired = sanitize_utf8(body);
    body = repaired;
  }
  bool too_deep = false;
  json value;
  try {
    // Discard (rather than build) anything nested too deeply, but keep parsing so
    // the id of the message can still be read for the error reply.
    value = json::parse(body.begin(), body.end(), [&too_deep](int depth, json::parse_event_t event, json&) {
      if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
          depth >= kMaxJsonDepth) {
        too_deep = true;
        return false;
      }
      return true;
    });
  } catch (const json::exception& e) {
    return MessageError{ResponseError{ErrorCode::ParseError, std::string("invalid JSON: ") + e.what(), std::nullopt},
                        RequestId{}};
  }
  if (too_deep) {
    RequestId id = value.is_object() ? readable_id(value) : RequestId{};
    return invalid("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", std::move(id));
  }
  return message_from_json(value);
}

std::variant<Message, MessageError> message_from_json(const json& value) {
  if (value.is_array()) return invalid("batch messages are not supported by the Language Server Protocol");
  if (!value.is_object()) return invalid(std::string("a JSON-RPC message must be an object, got ") + value.type_name());

  const auto id_it = value.find("id");
  const bool has_id = id_it != value.end();
  std::optional<RequestId> id;
  if (has_id && !id_it->is_null()) {
    id = RequestId::from_json(*id_it);
    if (!id) return invalid(std::string("\"id\" must be an integer or a string, got ") + id_it->dump());
  }
  const RequestId reply_id = id.value_or(RequestId{});

  const auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") return invalid("\"jsonrpc\" must be \"2.0\"", reply_id);

  const auto method = value.find("method");
  const bool has_result = value.contains("result");
  const bool has_error = value.contains("error");

  if (method != value.end()) {
    if (!method->is_string()) return invalid("\"method\" must be a string", reply_id);
    if (has_result || has_error) return invalid("a message cannot have both \"method\" and \"result\"/\"error\"", reply_id);
    json params;  // null when absent
    if (auto it = value.find("params"); it != value.end()) {
      // null is taken as absent: some clients send "params": null for shutdown and exit.
      if (!it->is_object() && !it->is_array() && !it->is_null()) {
        return invalid("\"params\" must be an object or an array", reply_id);
      }
      params = *it;
    }
    if (!has_id) return Message{Notification{method->get<std::string>(), std::move(params)}};
    // A null id is reserved for errors about unreadable requests; a request cannot use it.
    if (!id) return invalid("a request id must be an integer or a string, not null");
    return Message{Request{*id, method->get<std::string>(), std::move(params)}};
  }

  if (has_result && has_error) return invalid("a response cannot have both \"result\" and \"error\"", reply_id);
  if (!has_result && !has_error) return invalid("a message needs \"method\", \"result\" or \"error\"", reply_id);
  if (!has_id) return invalid("a response needs an \"id\"");
  if (has_result) {
    if (!id) return invalid("a successful response cannot have a null id");
    return Message{Response{*id, value.at("result")}};
  }
  auto error = parse_response_error(value.at("error"));
  if (auto* problem = std::get_if<std::string>(&error)) return invalid(std::move(*problem), reply_id);
  return Message{Response{reply_id, std::get<ResponseError>(std::move(error))}};
}

json to_json(const Request& request) {
  json j = {{"jsonrpc", "2.0"}, {"id", request.id.to_json()}, {"method", request.method}};
  if (!request.params.is_null()) j["params"] = request.params;
  return j;
}

json to_json(const Notification& notification) {
  json j = {{"jsonrpc", "2.0"}, {"method", notification.method}};
  if (!notification.params.is_null()) j["params"] = notification.params;
  return j;
}

json to_json(const ResponseError& error) {
  json j = {{"code", static_cast<int>(error.code)}, {"message", error.message}};
  if (error.data) j["data"] = *error.data;
  return j;
}

json to_json(const Response& response) {
  json j = {{"jsonrpc", "2.0"}, {"id", response.id.to_json()}};
  if (response.ok()) {
    j["result"] = std::get<json>(response.result);  // null is a valid result and must still be sent
  } else {
    j["error"] = to_json(std::get<ResponseError>(response.result));
  }
  return j;
}

json make_result(const RequestId& id, json result) {
  return to_json(Response{id, std::move(result)});
}

json make_error(const RequestId& id, ErrorCode code, std::string message, std::optional<json> data) {
  return to_json(Response{id, ResponseError{code, std::move(message), std::move(data)}});
}

}  // namespace hiera::protocol
