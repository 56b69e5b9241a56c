#pragma once
// For tests that run a real server or worker process: frame a message for its
// stdin, and split its stdout into messages, failing the test if stdout held
// anything but complete frames.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/framing.h"

namespace hiera::testing {

inline std::string frame(const nlohmann::json& message) {
  return protocol::FrameWriter::encode(message.dump());
}

inline std::vector<nlohmann::json> frames(const std::string& out) {
  protocol::FrameReader reader;
  reader.feed(out);
  std::vector<nlohmann::json> messages;
  while (auto event = reader.next()) {
    auto* f = std::get_if<protocol::Frame>(&*event);
    EXPECT_NE(f, nullptr) << "stdout carried something that is not a frame";
    if (f) messages.push_back(nlohmann::json::parse(f->body));
  }
  EXPECT_EQ(reader.buffered(), 0u) << "stdout ended inside a frame";
  return messages;
}

}  // namespace hiera::testing
