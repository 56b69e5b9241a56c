#include "protocol/error_codes.h"

#include <gtest/gtest.h>

#include <string>

namespace hiera::protocol {
namespace {

TEST(ErrorCodes, NumericValuesMatchJsonRpcAndLsp) {
  EXPECT_EQ(static_cast<int>(ErrorCode::ParseError), -32700);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidRequest), -32600);
  EXPECT_EQ(static_cast<int>(ErrorCode::MethodNotFound), -32601);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidParams), -32602);
  EXPECT_EQ(static_cast<int>(ErrorCode::InternalError), -32603);
  EXPECT_EQ(static_cast<int>(ErrorCode::ServerNotInitialized), -32002);
  EXPECT_EQ(static_cast<int>(ErrorCode::UnknownErrorCode), -32001);
  EXPECT_EQ(static_cast<int>(ErrorCode::RequestFailed), -32803);
  EXPECT_EQ(static_cast<int>(ErrorCode::ServerCancelled), -32802);
  EXPECT_EQ(static_cast<int>(ErrorCode::ContentModified), -32801);
  EXPECT_EQ(static_cast<int>(ErrorCode::RequestCancelled), -32800);
}

TEST(ErrorCodes, Names) {
  EXPECT_STREQ(to_string(ErrorCode::ParseError), "ParseError");
  EXPECT_STREQ(to_string(ErrorCode::InvalidRequest), "InvalidRequest");
  EXPECT_STREQ(to_string(ErrorCode::MethodNotFound), "MethodNotFound");
  EXPECT_STREQ(to_string(ErrorCode::InvalidParams), "InvalidParams");
  EXPECT_STREQ(to_string(ErrorCode::InternalError), "InternalError");
  EXPECT_STREQ(to_string(ErrorCode::ServerNotInitialized), "ServerNotInitialized");
  EXPECT_STREQ(to_string(ErrorCode::UnknownErrorCode), "UnknownErrorCode");
  EXPECT_STREQ(to_string(ErrorCode::RequestFailed), "RequestFailed");
  EXPECT_STREQ(to_string(ErrorCode::ServerCancelled), "ServerCancelled");
  EXPECT_STREQ(to_string(ErrorCode::ContentModified), "ContentModified");
  EXPECT_STREQ(to_string(ErrorCode::RequestCancelled), "RequestCancelled");
}

TEST(ErrorCodes, CodesFromPeersWithoutANameStillPrint) {
  EXPECT_STREQ(to_string(static_cast<ErrorCode>(-1)), "UnrecognizedErrorCode");
}

}  // namespace
}  // namespace hiera::protocol
