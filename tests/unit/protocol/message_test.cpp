#include "protocol/message.h"

#include <gtest/gtest.h>

#include <string>

namespace hiera::protocol {
namespace {

Message parse_ok(std::string_view body) {
  auto parsed = parse_message(body);
  if (auto* error = std::get_if<MessageError>(&parsed)) {
    ADD_FAILURE() << "unexpected error for " << body << ": " << error->error.message;
    return Notification{};
  }
  return std::get<Message>(std::move(parsed));
}

MessageError parse_bad(std::string_view body) {
  auto parsed = parse_message(body);
  if (!std::holds_alternative<MessageError>(parsed)) {
    ADD_FAILURE() << "expected an error for " << body;
    return {};
  }
  return std::get<MessageError>(std::move(parsed));
}

TEST(ParseMessage, RequestWithIntegerId) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null}})");
  auto* request = std::get_if<Request>(&message);
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->id.to_json(), json(1));
  EXPECT_EQ(request->id.to_string(), "1");
  EXPECT_EQ(request->method, "initialize");
  EXPECT_EQ(request->params, json::parse(R"({"processId":null})"));
}

TEST(ParseMessage, RequestWithStringIdIsEchoedUnchanged) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":"abc-1","method":"shutdown"})");
  auto& request = std::get<Request>(message);
  EXPECT_EQ(request.id.to_string(), "\"abc-1\"");
  EXPECT_TRUE(request.params.is_null());
  EXPECT_EQ(make_result(request.id, nullptr).dump(), R"({"id":"abc-1","jsonrpc":"2.0","result":null})");
}

TEST(ParseMessage, LargeAndNegativeIdsAreEchoedExactly) {
  for (const char* id : {"9223372036854775807", "-9223372036854775808", "18446744073709551615", "-5", "0"}) {
    auto message = parse_ok(std::string(R"({"jsonrpc":"2.0","method":"m","id":)") + id + "}");
    auto& request = std::get<Request>(message);
    EXPECT_EQ(request.id.to_string(), id);
    EXPECT_EQ(make_result(request.id, 1).dump(), std::string(R"({"id":)") + id + R"(,"jsonrpc":"2.0","result":1})");
  }
}

TEST(ParseMessage, NonIntegerIdsAreInvalidRequests) {
  for (const char* id : {"1.5", "1.0", "1e3", "true", "{}", "[1]"}) {
    auto error = parse_bad(std::string(R"({"jsonrpc":"2.0","method":"m","id":)") + id + "}");
    EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest) << id;
    EXPECT_TRUE(error.id.is_null()) << id;
  }
  auto error = parse_bad(R"({"jsonrpc":"2.0","method":"m","id":1.5})");
  EXPECT_EQ(error.error.message, "\"id\" must be an integer or a string, got 1.5");
}

TEST(ParseMessage, RequestWithNullIdIsInvalid) {
  auto error = parse_bad(R"({"jsonrpc":"2.0","method":"m","id":null})");
  EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest);
  EXPECT_TRUE(error.id.is_null());
}

TEST(ParseMessage, Notification) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///a"}}})");
  auto* notification = std::get_if<Notification>(&message);
  ASSERT_NE(notification, nullptr);
  EXPECT_EQ(notification->method, "textDocument/didClose");
  EXPECT_EQ(notification->params["textDocument"]["uri"], "file:///a");
}

TEST(ParseMessage, ParamsMayBeAnArrayOrNull) {
  EXPECT_EQ(std::get<Request>(parse_ok(R"({"jsonrpc":"2.0","id":2,"method":"m","params":[1,"x"]})")).params,
            json::parse(R"([1,"x"])"));
  // Some clients send "params": null for shutdown and exit; it reads as absent.
  EXPECT_TRUE(std::get<Notification>(parse_ok(R"({"jsonrpc":"2.0","method":"exit","params":null})")).params.is_null());
}

TEST(ParseMessage, ScalarParamsAreInvalidAndKeepTheId) {
  for (const char* params : {"1", "\"s\"", "true"}) {
    auto error = parse_bad(std::string(R"({"jsonrpc":"2.0","id":7,"method":"m","params":)") + params + "}");
    EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest);
    EXPECT_EQ(error.error.message, "\"params\" must be an object or an array");
    EXPECT_EQ(error.id.to_json(), json(7));
  }
}

TEST(ParseMessage, JsonrpcMustBeTwoPointZero) {
  for (const char* version : {R"("1.0")", "2.0", "null", R"("2")"}) {
    auto error = parse_bad(std::string(R"({"jsonrpc":)") + version + R"(,"id":"q","method":"m"})");
    EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest) << version;
    EXPECT_EQ(error.error.message, "\"jsonrpc\" must be \"2.0\"");
    EXPECT_EQ(error.id.to_json(), json("q"));
  }
  auto missing = parse_bad(R"({"id":3,"method":"m"})");
  EXPECT_EQ(missing.error.code, ErrorCode::InvalidRequest);
  EXPECT_EQ(missing.id.to_json(), json(3));
}

TEST(ParseMessage, BatchesAreNotSupported) {
  auto error = parse_bad(R"([{"jsonrpc":"2.0","id":1,"method":"m"}])");
  EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest);
  EXPECT_EQ(error.error.message, "batch messages are not supported by the Language Server Protocol");
  EXPECT_TRUE(error.id.is_null());
}

TEST(ParseMessage, NonObjectsAreInvalidRequests) {
  for (const char* body : {"1", "\"text\"", "null", "true"}) {
    EXPECT_EQ(parse_bad(body).error.code, ErrorCode::InvalidRequest) << body;
  }
}

TEST(ParseMessage, MalformedJsonIsAParseError) {
  for (const char* body : {"", "{", R"({"jsonrpc":"2.0","id":1,)", "{'a':1}", "nul"}) {
    auto error = parse_bad(body);
    EXPECT_EQ(error.error.code, ErrorCode::ParseError) << body;
    EXPECT_TRUE(error.id.is_null());
    EXPECT_EQ(error.error.message.rfind("invalid JSON: ", 0), 0u) << error.error.message;
  }
}

TEST(ParseMessage, InvalidUtf8InTheBodyIsReplacedNotRejected) {
  auto message = parse_ok("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"a\xFF\xC0" "b\"}}");
  const auto& notification = std::get<Notification>(message);
  EXPECT_EQ(notification.params["t"], "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");  // each bad byte is U+FFFD
}

TEST(ParseMessage, MethodMustBeAString) {
  auto error = parse_bad(R"({"jsonrpc":"2.0","id":4,"method":5})");
  EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest);
  EXPECT_EQ(error.id.to_json(), json(4));
}

TEST(ParseMessage, MethodWithResultIsInvalid) {
  EXPECT_EQ(parse_bad(R"({"jsonrpc":"2.0","id":4,"method":"m","result":1})").error.code, ErrorCode::InvalidRequest);
}

TEST(ParseMessage, SuccessfulResponse) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":3,"result":{"applied":true}})");
  auto* response = std::get_if<Response>(&message);
  ASSERT_NE(response, nullptr);
  EXPECT_TRUE(response->ok());
  EXPECT_EQ(response->id, RequestId(3));
  EXPECT_EQ(std::get<json>(response->result), json::parse(R"({"applied":true})"));
}

TEST(ParseMessage, NullResultIsStillAResult) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":"r","result":null})");
  auto& response = std::get<Response>(message);
  EXPECT_TRUE(response.ok());
  EXPECT_TRUE(std::get<json>(response.result).is_null());
}

TEST(ParseMessage, ErrorResponseWithAnyCodeAndData) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"nope","data":{"x":1}}})");
  auto& response = std::get<Response>(message);
  ASSERT_FALSE(response.ok());
  const auto& error = std::get<ResponseError>(response.result);
  EXPECT_EQ(static_cast<int>(error.code), -1);
  EXPECT_EQ(error.message, "nope");
  ASSERT_TRUE(error.data.has_value());
  EXPECT_EQ(*error.data, json::parse(R"({"x":1})"));
}

TEST(ParseMessage, ErrorResponseMayHaveANullId) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})");
  auto& response = std::get<Response>(message);
  EXPECT_TRUE(response.id.is_null());
  EXPECT_EQ(std::get<ResponseError>(response.result).code, ErrorCode::ParseError);
  EXPECT_FALSE(std::get<ResponseError>(response.result).data.has_value());
}

TEST(ParseMessage, MalformedResponses) {
  struct Case {
    const char* body;
    const char* message;
    json id;
  };
  const Case cases[] = {
      {R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})",
       "a response cannot have both \"result\" and \"error\"", 1},
      {R"({"jsonrpc":"2.0","id":1})", "a message needs \"method\", \"result\" or \"error\"", 1},
      {R"({"jsonrpc":"2.0","id":null,"result":1})", "a successful response cannot have a null id", nullptr},
      {R"({"jsonrpc":"2.0","result":1})", "a response needs an \"id\"", nullptr},
      {R"({"jsonrpc":"2.0","id":2,"error":"bad"})", "\"error\" must be an object", 2},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":"x","message":"m"}})", "\"error.code\" must be an integer", 2},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"m"}})", "\"error.code\" must be an integer", 2},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":99999999999,"message":"m"}})", "\"error.code\" is out of range", 2},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":1}})", "\"error.message\" must be a string", 2},
  };
  for (const auto& c : cases) {
    auto error = parse_bad(c.body);
    EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest) << c.body;
    EXPECT_EQ(error.error.message, c.message) << c.body;
    EXPECT_EQ(error.id.to_json(), c.id) << c.body;
  }
}

TEST(ParseMessage, UnknownFieldsAreIgnored) {
  auto message = parse_ok(R"({"jsonrpc":"2.0","id":1,"method":"m","extra":{"x":1}})");
  EXPECT_TRUE(std::holds_alternative<Request>(message));
}

TEST(ParseMessage, DeepNestingIsRejectedButTheIdIsKept) {
  const int depth = 100000;
  std::string body = R"({"jsonrpc":"2.0","id":12,"method":"m","params":)";
  body += std::string(depth, '[') + std::string(depth, ']') + "}";
  auto error = parse_bad(body);
  EXPECT_EQ(error.error.code, ErrorCode::InvalidRequest);
  EXPECT_EQ(error.error.message, "JSON nested deeper than 512 levels");
  EXPECT_EQ(error.id.to_json(), json(12));

  std::string fine = R"({"jsonrpc":"2.0","id":12,"method":"m","params":)";
  fine += std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_TRUE(std::holds_alternative<Request>(parse_ok(fine)));
}

TEST(MessageFromJson, ValidatesAnAlreadyParsedValue) {
  auto parsed = message_from_json(json{{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object()}});
  ASSERT_TRUE(std::holds_alternative<Message>(parsed));
  EXPECT_TRUE(std::holds_alternative<Notification>(std::get<Message>(parsed)));
}

TEST(RequestId, FromJsonAcceptsOnlyIntegersAndStrings) {
  EXPECT_TRUE(RequestId::from_json(json(5)).has_value());
  EXPECT_TRUE(RequestId::from_json(json(-5)).has_value());
  EXPECT_TRUE(RequestId::from_json(json("x")).has_value());
  EXPECT_FALSE(RequestId::from_json(json(nullptr)).has_value());
  EXPECT_FALSE(RequestId::from_json(json(1.0)).has_value());
  EXPECT_FALSE(RequestId::from_json(json(true)).has_value());
  EXPECT_FALSE(RequestId::from_json(json::array()).has_value());
  EXPECT_FALSE(RequestId::from_json(json::object()).has_value());
}

TEST(RequestId, EqualityAndStringForm) {
  // A parsed positive integer is stored unsigned; it still equals the same signed id.
  EXPECT_EQ(*RequestId::from_json(json::parse("5")), RequestId(5));
  EXPECT_FALSE(RequestId("5") == RequestId(5));
  EXPECT_EQ(RequestId("5").to_string(), "\"5\"");
  EXPECT_EQ(RequestId(5).to_string(), "5");
  EXPECT_TRUE(RequestId().is_null());
  EXPECT_EQ(RequestId().to_string(), "null");
}

TEST(BuildMessages, ExactResultJson) {
  EXPECT_EQ(make_result(RequestId(1), json{{"capabilities", json::object()}}).dump(),
            R"({"id":1,"jsonrpc":"2.0","result":{"capabilities":{}}})");
  EXPECT_EQ(make_result(RequestId(2), nullptr).dump(), R"({"id":2,"jsonrpc":"2.0","result":null})");
}

TEST(BuildMessages, ExactErrorJson) {
  EXPECT_EQ(make_error(RequestId("a"), ErrorCode::MethodNotFound, "unknown method: foo").dump(),
            R"({"error":{"code":-32601,"message":"unknown method: foo"},"id":"a","jsonrpc":"2.0"})");
  EXPECT_EQ(make_error(RequestId(), ErrorCode::ParseError, "bad").dump(),
            R"({"error":{"code":-32700,"message":"bad"},"id":null,"jsonrpc":"2.0"})");
  EXPECT_EQ(make_error(RequestId(3), ErrorCode::RequestFailed, "failed", json{{"why", 1}}).dump(),
            R"({"error":{"code":-32803,"data":{"why":1},"message":"failed"},"id":3,"jsonrpc":"2.0"})");
}

TEST(BuildMessages, ExactRequestAndNotificationJson) {
  EXPECT_EQ(to_json(Request{RequestId(4), "workspace/configuration", json{{"items", json::array()}}}).dump(),
            R"({"id":4,"jsonrpc":"2.0","method":"workspace/configuration","params":{"items":[]}})");
  EXPECT_EQ(to_json(Request{RequestId("s"), "shutdown", nullptr}).dump(),
            R"({"id":"s","jsonrpc":"2.0","method":"shutdown"})");
  EXPECT_EQ(to_json(Notification{"exit", nullptr}).dump(), R"({"jsonrpc":"2.0","method":"exit"})");
  EXPECT_EQ(to_json(Notification{"$/progress", json{{"token", 1}}}).dump(),
            R"({"jsonrpc":"2.0","method":"$/progress","params":{"token":1}})");
}

TEST(BuildMessages, ResponsesRoundTrip) {
  const Response ok{RequestId(8), json{{"a", 1}}};
  const Response failed{RequestId("z"), ResponseError{ErrorCode::ContentModified, "changed", std::nullopt}};
  for (const auto& original : {ok, failed}) {
    auto parsed = message_from_json(to_json(original));
    ASSERT_TRUE(std::holds_alternative<Message>(parsed));
    const auto& back = std::get<Response>(std::get<Message>(parsed));
    EXPECT_EQ(back.id, original.id);
    EXPECT_EQ(to_json(back), to_json(original));
  }
}

TEST(RpcError, CarriesCodeAndMessage) {
  const RpcError error(ErrorCode::InvalidParams, "textDocument.uri: required string field is missing");
  EXPECT_EQ(error.code(), ErrorCode::InvalidParams);
  EXPECT_STREQ(error.what(), "textDocument.uri: required string field is missing");
}

}  // namespace
}  // namespace hiera::protocol
