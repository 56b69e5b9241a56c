#pragma once
// JSON-RPC 2.0 and LSP 3.17 error codes.
namespace hiera::protocol {

enum class ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  UnknownErrorCode = -32001,
  RequestFailed = -32803,
  ServerCancelled = -32802,
  ContentModified = -32801,
  RequestCancelled = -32800,
};

// The name used in logs, e.g. "InvalidParams".
const char* to_string(ErrorCode code);

}  // namespace hiera::protocol
