#include "server/dispatch/dispatcher.h"

#include <gtest/gtest.h>

#include <thread>

namespace hiera::server {
namespace {

using nlohmann::json;
using protocol::ErrorCode;

class DispatcherTest : public ::testing::Test {
 protected:
  std::vector<json> sent;
  Dispatcher dispatcher{[this](json m) { sent.push_back(std::move(m)); }};

  void request(json id, const std::string& method, json params = json::object()) {
    dispatcher.dispatch(protocol::Request{*protocol::RequestId::from_json(id), method, std::move(params)});
  }
};

TEST_F(DispatcherTest, RepliesWithResultAndEchoesIntegerAndStringIds) {
  dispatcher.on_request("echo", [](const json& params, Reply& reply, auto) { reply.result(params); });
  request(7, "echo", {{"a", 1}});
  request("abc", "echo", {{"b", 2}});
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], (json{{"jsonrpc", "2.0"}, {"id", 7}, {"result", {{"a", 1}}}}));
  EXPECT_EQ(sent[1], (json{{"jsonrpc", "2.0"}, {"id", "abc"}, {"result", {{"b", 2}}}}));
}

TEST_F(DispatcherTest, UnknownMethodIsMethodNotFound) {
  request(1, "no/such");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["error"]["code"], -32601);
  EXPECT_EQ(sent[0]["error"]["message"], "unknown method: no/such");
  EXPECT_EQ(sent[0]["id"], 1);
}

TEST_F(DispatcherTest, HandlerThatForgetsToReplyGetsInternalError) {
  dispatcher.on_request("forgetful", [](const json&, Reply&, auto) {});
  request(2, "forgetful");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["error"]["code"], -32603);
  EXPECT_NE(sent[0]["error"]["message"].get<std::string>().find("returned without replying"), std::string::npos);
}

TEST_F(DispatcherTest, ExceptionsBecomeErrorsWithTheirCodes) {
  dispatcher.on_request("rpc", [](const json&, Reply&, auto) -> void {
    throw protocol::RpcError(ErrorCode::ContentModified, "changed");
  });
  dispatcher.on_request("type", [](const json& params, Reply& reply, auto) { reply.result(params.at("n").get<int>()); });
  dispatcher.on_request("std", [](const json&, Reply&, auto) -> void { throw std::runtime_error("boom"); });
  request(1, "rpc");
  request(2, "type", {{"n", "not a number"}});
  request(3, "std");
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0]["error"]["code"], -32801);
  EXPECT_EQ(sent[0]["error"]["message"], "changed");
  EXPECT_EQ(sent[1]["error"]["code"], -32602);
  EXPECT_EQ(sent[2]["error"]["code"], -32603);
  EXPECT_EQ(sent[2]["error"]["message"], "internal error in std: boom");
}

TEST_F(DispatcherTest, ReplyAfterThrowIsNotDuplicated) {
  dispatcher.on_request("both", [](const json&, Reply& reply, auto) -> void {
    reply.result(1);
    throw std::runtime_error("after reply");
  });
  request(1, "both");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["result"], 1);
}

TEST_F(DispatcherTest, AsyncReplyFromAnotherThreadIsSentOnce) {
  std::thread worker;
  dispatcher.on_request("later", [&](const json&, Reply& reply, auto) {
    worker = std::thread([r = std::move(reply)]() mutable { r.result("done"); });
  });
  request(5, "later");
  worker.join();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["result"], "done");
}

TEST_F(DispatcherTest, CancelBeforeDispatchAnswersRequestCancelled) {
  bool ran = false;
  dispatcher.on_request("slow", [&](const json&, Reply& reply, auto) {
    ran = true;
    reply.result(nullptr);
  });
  dispatcher.cancel(*protocol::RequestId::from_json(9));
  request(9, "slow");
  EXPECT_FALSE(ran);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["error"]["code"], -32800);
}

TEST_F(DispatcherTest, CancelDuringRunSetsTheToken) {
  dispatcher.on_request("poll", [&](const json&, Reply& reply, engine::CancellationToken token) {
    EXPECT_FALSE(token.cancelled());
    dispatcher.cancel(*protocol::RequestId::from_json("x"));  // as the reader thread would
    engine::throw_if_cancelled(token);
    reply.result("not cancelled");
  });
  request("x", "poll");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["error"]["code"], -32800);
}

TEST_F(DispatcherTest, GateRefusesBeforeTheHandler) {
  dispatcher.on_request("m", [](const json&, Reply& reply, auto) { reply.result(1); });
  dispatcher.set_gate([](const std::string&) {
    return std::optional<protocol::ResponseError>{{ErrorCode::ServerNotInitialized, "not yet", std::nullopt}};
  });
  request(1, "m");
  EXPECT_EQ(sent.at(0)["error"]["code"], -32002);
}

TEST_F(DispatcherTest, NotificationsRunAndUnknownOnesAreIgnored) {
  int seen = 0;
  dispatcher.on_notification("n", [&](const json& p) { seen = p.at("v").get<int>(); });
  dispatcher.dispatch(protocol::Notification{"n", {{"v", 3}}});
  dispatcher.dispatch(protocol::Notification{"$/unknown", json::object()});
  EXPECT_EQ(seen, 3);
  EXPECT_TRUE(sent.empty());
}

}  // namespace
}  // namespace hiera::server
