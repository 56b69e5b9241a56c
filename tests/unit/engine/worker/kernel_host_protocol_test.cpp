// The kernel host's messages: each one round-trips through its frame, and a
// malformed message (not MessagePack, a missing or mistyped field, a short
// stream) is rejected with an error naming what is wrong.
#ifdef HIERA_HAVE_WORKER
#include <gtest/gtest.h>

#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "engine/worker/kernel_host_protocol.h"
#include "protocol/framing.h"
#include "thrown_message.h"

namespace {

using namespace hiera::engine::worker::kernel_host;
using hiera::testing::thrown_message;
using nlohmann::json;

// The body of the one frame in `bytes`.
std::string body_of(const std::string& bytes) {
  hiera::protocol::FrameReader reader;
  reader.feed(bytes);
  auto event = reader.next();
  EXPECT_TRUE(event && std::holds_alternative<hiera::protocol::Frame>(*event));
  return std::get<hiera::protocol::Frame>(*event).body;
}

json round_trip(const json& message) { return decode(body_of(encode(message))); }

TEST(KernelHostProtocol, ALaunchRoundTripsWithItsBinaryArguments) {
  LaunchRequest request;
  request.dims.grid = {4096, 2, 1};
  request.dims.block = {256, 1, 1};
  request.dims.shared_bytes = 49152;
  request.args.push_back({std::size_t{0}, ""});
  request.args.push_back({std::nullopt, std::string("\x00\x00\x20\x40", 4)});  // 2.5f, NUL bytes kept
  request.args.push_back({std::size_t{1}, ""});
  request.timed = true;
  request.limit_ms = 2000;
  const json message = round_trip(to_json(request));
  EXPECT_EQ(op_of(message), "launch");
  const LaunchRequest back = launch_from_json(message);
  EXPECT_EQ(back.dims.grid, request.dims.grid);
  EXPECT_EQ(back.dims.block, request.dims.block);
  EXPECT_EQ(back.dims.shared_bytes, 49152u);
  ASSERT_EQ(back.args.size(), 3u);
  EXPECT_EQ(back.args[0].buffer, std::optional<std::size_t>(0));
  EXPECT_FALSE(back.args[1].buffer);
  EXPECT_EQ(back.args[1].bytes, std::string("\x00\x00\x20\x40", 4));
  EXPECT_EQ(back.args[2].buffer, std::optional<std::size_t>(1));
  EXPECT_TRUE(back.timed);
  EXPECT_EQ(back.limit_ms, 2000);
}

TEST(KernelHostProtocol, LoadMapReadyAndRepliesRoundTrip) {
  const std::string cubin("\x7f" "ELF\x00\x01", 6);
  const LoadRequest load = load_from_json(round_trip(to_json(LoadRequest{cubin, "_Z4candPf"})));
  EXPECT_EQ(load.cubin, cubin);
  EXPECT_EQ(load.kernel, "_Z4candPf");

  const std::string handle(64, '\x01');
  EXPECT_EQ(map_from_json(round_trip(to_json(MapRequest{{handle, handle}}))).handles, (std::vector<std::string>{handle, handle}));
  EXPECT_TRUE(map_from_json(round_trip(to_json(MapRequest{}))).handles.empty());

  Ready ready;
  ready.pid = 42;
  ready.protections = {{"no_network", "in force"}, {"unprivileged_user", "not in force: there is no user 'nobody'"}};
  ready.cuda_error = "no CUDA device: none";
  const Ready back = ready_from_json(round_trip(to_json(ready)));
  EXPECT_EQ(back.pid, 42);
  EXPECT_EQ(back.protections, ready.protections);
  EXPECT_EQ(back.cuda_error, ready.cuda_error);
  ready.cuda_error.reset();
  EXPECT_FALSE(ready_from_json(round_trip(to_json(ready))).cuda_error);

  Reply ok;
  ok.ok = true;
  ok.elapsed_ms = 0.125;
  EXPECT_EQ(reply_from_json(round_trip(to_json(ok))).elapsed_ms, std::optional<double>(0.125));
  Reply failed;
  failed.kind = "runtime";
  failed.message = "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered";
  failed.lost = true;
  const Reply back_failed = reply_from_json(round_trip(to_json(failed)));
  EXPECT_FALSE(back_failed.ok);
  EXPECT_EQ(back_failed.kind, "runtime");
  EXPECT_EQ(back_failed.message, failed.message);
  EXPECT_TRUE(back_failed.lost);
}

TEST(KernelHostProtocol, ABodyThatIsNotAMessagePackObjectIsRejected) {
  const auto array = json::to_msgpack(json::array({1, 2}));
  EXPECT_EQ(thrown_message<ProtocolError>([&] { decode(std::string(array.begin(), array.end())); }),
            "kernel host message: not an object");
  const std::string error = thrown_message<ProtocolError>([] { decode("\xc1"); });  // 0xc1: never used in MessagePack
  EXPECT_EQ(error.rfind("kernel host message: not MessagePack (", 0), 0u) << error;
  const std::string cut = thrown_message<ProtocolError>([] {
    const auto bytes = json::to_msgpack(json{{"op", "load"}, {"kernel", "a long enough name"}});
    decode(std::string(bytes.begin(), bytes.begin() + 10));
  });
  EXPECT_EQ(cut.rfind("kernel host message: not MessagePack (", 0), 0u) << cut;
}

TEST(KernelHostProtocol, EachMalformedFieldIsNamed) {
  EXPECT_EQ(thrown_message<ProtocolError>([] { op_of(json{{"kernel", "k"}}); }), "kernel host message: 'op' must be a string");
  EXPECT_EQ(thrown_message<ProtocolError>([] { load_from_json(json{{"op", "load"}, {"kernel", "k"}}); }),
            "kernel host message 'load': 'cubin' is missing");
  EXPECT_EQ(thrown_message<ProtocolError>([] { load_from_json(json{{"op", "load"}, {"cubin", "text"}, {"kernel", "k"}}); }),
            "kernel host message 'load': 'cubin' must be binary");
  EXPECT_EQ(thrown_message<ProtocolError>([] { map_from_json(json{{"op", "map"}, {"handles", json::array({1})}}); }),
            "kernel host message 'map': 'handles' must be an array of binary handles");

  LaunchRequest launch;
  launch.limit_ms = 10;
  const json good = to_json(launch);
  auto with = [&](const char* key, json value) {
    json message = good;
    message[key] = std::move(value);
    return message;
  };
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("grid", json::array({1, 0, 1}))); }),
            "kernel host message 'launch': 'grid' must be 3 integers from 1 to 4294967295");
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("block", json::array({1, 1}))); }),
            "kernel host message 'launch': 'block' must be 3 integers from 1 to 4294967295");
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("limit_ms", 0)); }),
            "kernel host message 'launch': 'limit_ms' must be an integer of at least 1");
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("timed", "yes")); }),
            "kernel host message 'launch': 'timed' must be a boolean");
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("args", json::array({json{{"value", 1}}}))); }),
            "kernel host message 'launch': each of 'args' must be {\"buffer\": index} or {\"bytes\": binary}");
  EXPECT_EQ(thrown_message<ProtocolError>([&] { launch_from_json(with("args", json::array({json{{"buffer", -1}}}))); }),
            "kernel host message 'launch': 'buffer' must be an integer of at least 0");

  EXPECT_EQ(thrown_message<ProtocolError>([] { ready_from_json(json{{"op", "launch"}}); }),
            "kernel host message: expected 'ready', got 'launch'");
  EXPECT_EQ(thrown_message<ProtocolError>([] {
              ready_from_json(json{{"op", "ready"}, {"pid", 7}, {"protections", {{"no_network", 1}}}, {"cuda_error", nullptr}});
            }),
            "kernel host message 'ready': 'protections' must be an object of strings");
  EXPECT_EQ(thrown_message<ProtocolError>([] { reply_from_json(json{{"ok", true}, {"elapsed_ms", -1.0}}); }),
            "kernel host message 'reply': 'elapsed_ms' must be a non-negative number");
  EXPECT_EQ(thrown_message<ProtocolError>([] {
              reply_from_json(json{{"ok", false}, {"kind", "verdict"}, {"message", "passed"}, {"lost", false}});
            }),
            "kernel host message 'reply': 'kind' must be runtime, timeout, out_of_memory or protocol");
}

// A pipe: messages written at one end are read at the other, and a stream cut inside a frame is named.
class KernelHostChannel : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::pipe(fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void close_write_end() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  int fds_[2] = {-1, -1};
};

TEST_F(KernelHostChannel, MessagesArriveInOrder) {
  Channel writer(-1, fds_[1]);
  writer.send(to_json(LoadRequest{"cubin", "k1"}));
  writer.send(exit_request());
  Channel reader(fds_[0], -1);
  EXPECT_EQ(load_from_json(reader.receive()).kernel, "k1");
  EXPECT_EQ(op_of(reader.receive()), "exit");
}

TEST_F(KernelHostChannel, AShortReadIsAClosedChannelNamingTheCut) {
  const std::string frame = encode(to_json(LoadRequest{std::string(1000, 'x'), "k"}));
  ASSERT_EQ(::write(fds_[1], frame.data(), 500), 500);
  close_write_end();
  Channel reader(fds_[0], -1);
  const std::string error = thrown_message<ChannelClosed>([&] { reader.receive(); });
  EXPECT_EQ(error.rfind("the kernel host channel closed inside a message (", 0), 0u) << error;
}

TEST_F(KernelHostChannel, AnEmptyStreamIsClosedAndNoMessageIsATimeout) {
  Channel reader(fds_[0], -1);
  EXPECT_EQ(thrown_message<ChannelTimeout>([&] { reader.receive(std::chrono::steady_clock::now() + std::chrono::milliseconds(50)); }),
            "no message from the kernel host in time");
  close_write_end();
  EXPECT_EQ(thrown_message<ChannelClosed>([&] { reader.receive(); }), "the kernel host channel is closed");
}

TEST_F(KernelHostChannel, ABadFrameIsRejected) {
  const std::string bad = "Content-Length: x\r\n\r\n";
  ASSERT_EQ(::write(fds_[1], bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  Channel reader(fds_[0], -1);
  const std::string error = thrown_message<ProtocolError>([&] { reader.receive(); });
  EXPECT_EQ(error.rfind("kernel host message: bad frame (", 0), 0u) << error;
}

}  // namespace
#endif  // HIERA_HAVE_WORKER
