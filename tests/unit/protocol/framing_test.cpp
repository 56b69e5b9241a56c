#include "protocol/framing.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

namespace hiera::protocol {
namespace {

const char* kind_name(FramingErrorKind kind) {
  switch (kind) {
    case FramingErrorKind::MissingContentLength: return "MissingContentLength";
    case FramingErrorKind::MalformedContentLength: return "MalformedContentLength";
    case FramingErrorKind::BodyTooLarge: return "BodyTooLarge";
    case FramingErrorKind::HeaderTooLong: return "HeaderTooLong";
    case FramingErrorKind::MalformedHeader: return "MalformedHeader";
    case FramingErrorKind::TruncatedBody: return "TruncatedBody";
  }
  return "?";
}

// Events as short strings, so whole sequences compare exactly: "frame:{}" or "error:BodyTooLarge".
std::vector<std::string> drain(FrameReader& reader) {
  std::vector<std::string> out;
  while (auto event = reader.next()) {
    if (auto* frame = std::get_if<Frame>(&*event)) {
      out.push_back("frame:" + frame->body);
    } else {
      out.push_back(std::string("error:") + kind_name(std::get<FramingError>(*event).kind));
    }
  }
  return out;
}

std::vector<std::string> read_all(std::string_view stream, std::size_t max_body = kDefaultMaxBodyBytes) {
  FrameReader reader(max_body);
  reader.feed(stream);
  return drain(reader);
}

std::vector<std::string> read_bytewise(std::string_view stream, std::size_t max_body = kDefaultMaxBodyBytes) {
  FrameReader reader(max_body);
  std::vector<std::string> out;
  for (char c : stream) {
    reader.feed(std::string_view(&c, 1));
    for (auto& e : drain(reader)) out.push_back(std::move(e));
  }
  return out;
}

std::string frame(std::string_view body) { return FrameWriter::encode(body); }

using Events = std::vector<std::string>;

TEST(FrameReader, ReadsOneFrame) {
  EXPECT_EQ(read_all("Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}"), Events{"frame:{\"jsonrpc\":\"2.0\"}"});
}

TEST(FrameReader, NothingUntilTheBodyIsComplete) {
  FrameReader reader;
  reader.feed("Content-Length: 4\r\n\r\n{}");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.buffered(), 2u);
  reader.feed("[]");
  EXPECT_EQ(drain(reader), Events{"frame:{}[]"});
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(FrameReader, FramesSplitAtEveryByteBoundary) {
  const std::string stream = frame(R"({"id":1})") + frame(R"({"method":"x","params":[1,2]})");
  const Events expected{R"(frame:{"id":1})", R"(frame:{"method":"x","params":[1,2]})"};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameReader reader;
    reader.feed(std::string_view(stream).substr(0, cut));
    Events got = drain(reader);
    reader.feed(std::string_view(stream).substr(cut));
    for (auto& e : drain(reader)) got.push_back(std::move(e));
    EXPECT_EQ(got, expected) << "cut at " << cut;
    EXPECT_FALSE(reader.finish().has_value());
  }
  EXPECT_EQ(read_bytewise(stream), expected);
}

TEST(FrameReader, SeveralMessagesInOneChunk) {
  EXPECT_EQ(read_all(frame("{}") + frame("[1]") + frame("\"three\"")),
            (Events{"frame:{}", "frame:[1]", "frame:\"three\""}));
}

TEST(FrameReader, IgnoresExtraHeaders) {
  const std::string stream =
      "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\nX-Other: a:b\r\n\r\n{}";
  EXPECT_EQ(read_all(stream), Events{"frame:{}"});
  EXPECT_EQ(read_bytewise(stream), Events{"frame:{}"});
}

TEST(FrameReader, HeaderNamesAreCaseInsensitive) {
  EXPECT_EQ(read_all("content-length: 2\r\n\r\n{}"), Events{"frame:{}"});
  EXPECT_EQ(read_all("CONTENT-LENGTH: 2\r\n\r\n{}"), Events{"frame:{}"});
  EXPECT_EQ(read_all("CoNtEnT-LeNgTh: 2\r\n\r\n{}"), Events{"frame:{}"});
}

TEST(FrameReader, ToleratesBareNewlinesAndBlanksAroundTheValue) {
  EXPECT_EQ(read_all("Content-Length: 2\n\n{}"), Events{"frame:{}"});
  EXPECT_EQ(read_all("Content-Length:2\r\n\r\n{}"), Events{"frame:{}"});
  EXPECT_EQ(read_all("Content-Length: \t 2 \t\r\n\r\n{}"), Events{"frame:{}"});
  EXPECT_EQ(read_all("Content-Length: 0002\r\n\r\n{}"), Events{"frame:{}"});
}

TEST(FrameReader, StrayBlankLinesBetweenFramesAreIgnored) {
  EXPECT_EQ(read_all(frame("{}") + "\r\n\r\n" + frame("[]")), (Events{"frame:{}", "frame:[]"}));
}

TEST(FrameReader, ZeroLengthBodyIsAnEmptyFrame) {
  EXPECT_EQ(read_all("Content-Length: 0\r\n\r\n" + frame("{}")), (Events{"frame:", "frame:{}"}));
}

TEST(FrameReader, IdenticalDuplicateContentLengthIsAccepted) {
  EXPECT_EQ(read_all("Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}"), Events{"frame:{}"});
}

TEST(FrameReader, MissingContentLengthThenResync) {
  const std::string stream = "Content-Type: text/plain\r\n\r\n{\"lost\":1}" + frame("{}");
  EXPECT_EQ(read_all(stream), (Events{"error:MissingContentLength", "frame:{}"}));
  EXPECT_EQ(read_bytewise(stream), (Events{"error:MissingContentLength", "frame:{}"}));
}

TEST(FrameReader, MalformedContentLengthValues) {
  for (const char* value : {"abc", "-5", "+5", "5x", "", "0x10", "1.5", "1 2", "-0"}) {
    const std::string stream = std::string("Content-Length: ") + value + "\r\n\r\n{\"a\":1}" + frame("{}");
    EXPECT_EQ(read_all(stream), (Events{"error:MalformedContentLength", "frame:{}"})) << value;
    EXPECT_EQ(read_bytewise(stream), (Events{"error:MalformedContentLength", "frame:{}"})) << value;
  }
}

TEST(FrameReader, MalformedContentLengthMessageNamesTheValue) {
  FrameReader reader;
  reader.feed("Content-Length: -5\r\n\r\n");
  auto event = reader.next();
  ASSERT_TRUE(event.has_value());
  const auto& error = std::get<FramingError>(*event);
  EXPECT_EQ(error.kind, FramingErrorKind::MalformedContentLength);
  EXPECT_EQ(error.message, "Content-Length '-5' is not a non-negative decimal integer");
}

TEST(FrameReader, OverflowingContentLengthIsMalformed) {
  FrameReader reader;
  reader.feed("Content-Length: 99999999999999999999999\r\n\r\n{}" + frame("[]"));
  auto event = reader.next();
  ASSERT_TRUE(event.has_value());
  const auto& error = std::get<FramingError>(*event);
  EXPECT_EQ(error.kind, FramingErrorKind::MalformedContentLength);
  EXPECT_EQ(error.message, "Content-Length '99999999999999999999999' is out of range");
  EXPECT_EQ(drain(reader), Events{"frame:[]"});
}

TEST(FrameReader, LargestSizeTIsTooLargeNotMalformed) {
  EXPECT_EQ(read_all("Content-Length: 18446744073709551615\r\n\r\n"), Events{"error:BodyTooLarge"});
}

TEST(FrameReader, ConflictingContentLengthsAreMalformed) {
  EXPECT_EQ(read_all("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + frame("[]")),
            (Events{"error:MalformedContentLength", "frame:[]"}));
}

TEST(FrameReader, HeaderLineWithoutColonThenResync) {
  FrameReader reader;
  reader.feed("garbage\r\n" + frame("{}"));
  auto event = reader.next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(std::get<FramingError>(*event).kind, FramingErrorKind::MalformedHeader);
  EXPECT_EQ(std::get<FramingError>(*event).message, "header line without a colon: 'garbage'");
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
}

TEST(FrameReader, JsonWhereAHeaderShouldBeIsMalformed) {
  EXPECT_EQ(read_all("{\"a\":1}\r\n" + frame("{}")), (Events{"error:MalformedHeader", "frame:{}"}));
}

TEST(FrameReader, ResyncFindsAHeaderGluedToGarbage) {
  // No newline between the garbage and the next header, as after a bad body.
  const std::string stream = "xyz{}" + frame("{}") + frame("[]");
  EXPECT_EQ(read_all(stream), (Events{"error:MalformedHeader", "frame:{}", "frame:[]"}));
  EXPECT_EQ(read_bytewise(stream), (Events{"error:MalformedHeader", "frame:{}", "frame:[]"}));
}

TEST(FrameReader, ResyncAfterGarbageAtEverySplit) {
  const std::string stream = "Content-Length: zz\r\n\r\nnot json at all" + frame("{}") + frame("[]");
  const Events expected{"error:MalformedContentLength", "frame:{}", "frame:[]"};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameReader reader;
    reader.feed(std::string_view(stream).substr(0, cut));
    reader.feed(std::string_view(stream).substr(cut));
    EXPECT_EQ(drain(reader), expected) << "cut at " << cut;
  }
  EXPECT_EQ(read_bytewise(stream), expected);
}

TEST(FrameReader, ResyncKeepsOnlyATailOfGarbage) {
  FrameReader reader;
  reader.feed("bad line\r\n");
  EXPECT_EQ(drain(reader), Events{"error:MalformedHeader"});
  reader.feed(std::string(100000, 'g'));
  EXPECT_LT(reader.buffered(), 14u);
  reader.feed("Content-Le");
  reader.feed("ngth: 2\r\n\r\n{}");
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
}

TEST(FrameReader, ABodyShorterThanClaimedCostsItsNeighbourOnly) {
  // The 10-byte body swallows the start of the next header; the third frame survives.
  const std::string stream = "Content-Length: 10\r\n\r\n{}" + frame("{}") + frame("[]");
  EXPECT_EQ(read_all(stream), (Events{"frame:{}Content-", "error:MissingContentLength", "frame:[]"}));
}

TEST(FrameReader, BodyOverTheCapIsSkippedExactlyWithoutBuffering) {
  constexpr std::size_t kCap = 1024;
  FrameReader reader(kCap);
  // The skipped body itself looks like frames: it must be dropped byte for byte, not resynced into.
  std::string body;
  while (body.size() < 5000) body += frame("{\"inside\":true}");
  body.resize(5000, ' ');
  reader.feed("Content-Length: 5000\r\n\r\n");
  auto event = reader.next();
  ASSERT_TRUE(event.has_value());
  const auto& error = std::get<FramingError>(*event);
  EXPECT_EQ(error.kind, FramingErrorKind::BodyTooLarge);
  EXPECT_EQ(error.message, "Content-Length 5000 exceeds the limit of 1024 bytes");
  for (std::size_t i = 0; i < body.size(); i += 100) {
    reader.feed(std::string_view(body).substr(i, 100));
    EXPECT_EQ(reader.buffered(), 0u);
    EXPECT_FALSE(reader.next().has_value());
  }
  reader.feed(frame("{}"));
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
  EXPECT_FALSE(reader.finish().has_value());
}

TEST(FrameReader, OversizedBodyInTheSameChunkAsFollowingFrames) {
  const std::string stream = "Content-Length: 2000\r\n\r\n" + std::string(2000, 'x') + frame("{}");
  EXPECT_EQ(read_all(stream, 1024), (Events{"error:BodyTooLarge", "frame:{}"}));
  EXPECT_EQ(read_bytewise(stream, 1024), (Events{"error:BodyTooLarge", "frame:{}"}));
}

TEST(FrameReader, BodyExactlyAtTheCapIsAccepted) {
  const std::string at_cap(1024, 'a');
  EXPECT_EQ(read_all(frame(at_cap), 1024), Events{"frame:" + at_cap});
  EXPECT_EQ(read_all(frame(at_cap + "a"), 1024), Events{"error:BodyTooLarge"});
}

TEST(FrameReader, HundredMegabyteClaimIsRejectedImmediatelyWithTheDefaultCap) {
  FrameReader reader;
  reader.feed("Content-Length: 100000000\r\n\r\n");
  auto event = reader.next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(std::get<FramingError>(*event).kind, FramingErrorKind::BodyTooLarge);
  EXPECT_EQ(reader.buffered(), 0u);
  // The 100 MB are then dropped as they arrive, never held.
  const std::string chunk(1'000'000, 'z');
  for (int i = 0; i < 100; ++i) {
    reader.feed(chunk);
    ASSERT_EQ(reader.buffered(), 0u);
  }
  reader.feed(frame("{}"));
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
}

TEST(FrameReader, EofInTheMiddleOfABody) {
  FrameReader reader;
  reader.feed("Content-Length: 10\r\n\r\n{\"a\"");
  EXPECT_FALSE(reader.next().has_value());
  auto error = reader.finish();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind, FramingErrorKind::TruncatedBody);
  EXPECT_EQ(error->message, "the stream ended after 4 of 10 body bytes");
  EXPECT_EQ(reader.buffered(), 0u);
  EXPECT_FALSE(reader.finish().has_value());
}

TEST(FrameReader, EofInTheMiddleOfAHeader) {
  FrameReader reader;
  reader.feed("Content-Length: 1");
  auto error = reader.finish();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind, FramingErrorKind::TruncatedBody);

  FrameReader after_line;
  after_line.feed("Content-Length: 12\r\n");
  ASSERT_TRUE(after_line.finish().has_value());
}

TEST(FrameReader, CleanEofIsNotAnError) {
  FrameReader reader;
  reader.feed(frame("{}") + "\r\n");
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
  EXPECT_FALSE(reader.finish().has_value());
  FrameReader empty;
  EXPECT_FALSE(empty.finish().has_value());
}

TEST(FrameReader, HeaderLineLongerThanTheLimitThenResync) {
  const std::string stream = "X-Long: " + std::string(kMaxHeaderBytes + 100, 'a') + "\r\n\r\n" + frame("{}");
  EXPECT_EQ(read_all(stream), (Events{"error:HeaderTooLong", "frame:{}"}));
  EXPECT_EQ(read_bytewise(stream), (Events{"error:HeaderTooLong", "frame:{}"}));
}

TEST(FrameReader, TooManyHeaderLinesThenResync) {
  std::string stream;
  while (stream.size() <= kMaxHeaderBytes) stream += "X-A: b\r\n";
  stream += "\r\n" + frame("{}");
  EXPECT_EQ(read_all(stream), (Events{"error:HeaderTooLong", "frame:{}"}));
}

TEST(FrameReader, EndlessHeaderLineStaysBounded) {
  FrameReader reader;
  const std::string chunk(4096, 'q');
  for (int i = 0; i < 100; ++i) {
    reader.feed(chunk);
    ASSERT_LE(reader.buffered(), kMaxHeaderBytes + 1);
  }
  EXPECT_EQ(drain(reader), Events{"error:HeaderTooLong"});
  reader.feed(frame("{}"));
  EXPECT_EQ(drain(reader), Events{"frame:{}"});
}

TEST(FrameReader, EventsDoNotDependOnChunking) {
  // Random streams of header fragments, bodies and garbage: feeding them whole,
  // byte by byte and in random chunks must give the same events.
  const char* pieces[] = {"Content-Length: ", "content-length:", "12", "2", "0", "-1", "99999999999999999999",
                          "\r\n", "\n", "\r", ":", "{}", "[1]", "x", "Content-Type: a\r\n", "\xff", "Content-Le",
                          "ngth", "  ", R"({"jsonrpc":"2.0","id":1,"method":"m"})", "300"};
  std::mt19937 rng(7);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string stream;
    const int count = static_cast<int>(rng() % 30);
    for (int i = 0; i < count; ++i) stream += pieces[rng() % std::size(pieces)];
    if (rng() % 100 == 0) stream += std::string(kMaxHeaderBytes + rng() % 100, 'a');
    const std::size_t cap = rng() % 2 ? 20 : 1000;
    const auto collect = [&](std::size_t max_chunk) {
      FrameReader reader(cap);
      Events out;
      for (std::size_t at = 0; at < stream.size();) {
        const std::size_t n = std::min(stream.size() - at, max_chunk == 0 ? stream.size() : 1 + rng() % max_chunk);
        reader.feed(std::string_view(stream).substr(at, n));
        at += n;
        for (auto& e : drain(reader)) out.push_back(std::move(e));
      }
      if (auto error = reader.finish()) out.push_back(std::string("finish:") + kind_name(error->kind));
      return out;
    };
    const Events whole = collect(0);
    ASSERT_EQ(collect(1), whole) << "stream: " << stream;
    ASSERT_EQ(collect(40), whole) << "stream: " << stream;
  }
}

TEST(FrameWriter, EncodesHeaderAndBody) {
  EXPECT_EQ(FrameWriter::encode("{}"), "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(FrameWriter::encode(""), "Content-Length: 0\r\n\r\n");
  // The length counts bytes, not characters.
  EXPECT_EQ(FrameWriter::encode("\"\xC3\xA9\""), "Content-Length: 4\r\n\r\n\"\xC3\xA9\"");
}

TEST(FrameWriter, OneSinkCallPerFrame) {
  std::vector<std::string> calls;
  FrameWriter writer([&](std::string_view bytes) { calls.emplace_back(bytes); });
  writer.write("{\"a\":1}");
  writer.write("[]");
  EXPECT_EQ(calls, (std::vector<std::string>{"Content-Length: 7\r\n\r\n{\"a\":1}", "Content-Length: 2\r\n\r\n[]"}));
}

TEST(FrameWriter, ConcurrentWritersNeverInterleave) {
  std::string out;  // the sink runs under the writer's lock, so no lock of its own
  FrameWriter writer([&](std::string_view bytes) { out.append(bytes); });
  constexpr int kThreads = 8;
  constexpr int kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&writer, t] {
      const std::string body = "{\"thread\":" + std::to_string(t) + ",\"pad\":\"" + std::string(100 + t * 37, 'p') + "\"}";
      for (int i = 0; i < kEach; ++i) writer.write(body);
    });
  }
  for (auto& thread : threads) thread.join();
  FrameReader reader;
  reader.feed(out);
  std::vector<int> per_thread(kThreads, 0);
  int frames = 0;
  while (auto event = reader.next()) {
    auto* f = std::get_if<Frame>(&*event);
    ASSERT_NE(f, nullptr);
    const int t = f->body[10] - '0';
    ASSERT_EQ(f->body, "{\"thread\":" + std::to_string(t) + ",\"pad\":\"" + std::string(100 + t * 37, 'p') + "\"}");
    ++per_thread[t];
    ++frames;
  }
  EXPECT_EQ(frames, kThreads * kEach);
  for (int count : per_thread) EXPECT_EQ(count, kEach);
  EXPECT_FALSE(reader.finish().has_value());
}

}  // namespace
}  // namespace hiera::protocol
