#include "server/documents/document_store.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/message.h"

namespace hiera::server {
namespace {

using protocol::lsp::DidChangeTextDocumentParams;
using protocol::lsp::Position;
using protocol::lsp::Range;
using protocol::lsp::TextDocumentContentChangeEvent;
using protocol::lsp::TextDocumentItem;

constexpr auto kUtf16 = PositionEncoding::Utf16;

TextDocumentItem item(std::string uri, std::int64_t version, std::string text) {
  return {std::move(uri), "python", version, std::move(text)};
}

DidChangeTextDocumentParams change(std::string uri, std::int64_t version,
                                   std::vector<TextDocumentContentChangeEvent> changes) {
  DidChangeTextDocumentParams params;
  params.textDocument.uri = std::move(uri);
  params.textDocument.version = version;
  params.contentChanges = std::move(changes);
  return params;
}

TextDocumentContentChangeEvent insert(std::int64_t line, std::int64_t character, std::string text) {
  return {Range{Position{line, character}, Position{line, character}}, std::move(text)};
}

TEST(DocumentStore, OpenGetUrisClose) {
  DocumentStore store;
  EXPECT_EQ(store.get("file:///a.py"), nullptr);
  EXPECT_TRUE(store.uris().empty());

  store.open(item("file:///b.py", 1, "b"));
  store.open(item("file:///a.py", 3, "a\nb"));
  const auto a = store.get("file:///a.py");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->uri(), "file:///a.py");
  EXPECT_EQ(a->language_id(), "python");
  EXPECT_EQ(a->version(), 3);
  EXPECT_EQ(a->text(), "a\nb");
  EXPECT_EQ(a->line_count(), 2u);
  EXPECT_EQ(store.uris(), (std::vector<std::string>{"file:///a.py", "file:///b.py"}));

  store.close("file:///a.py");
  EXPECT_EQ(store.get("file:///a.py"), nullptr);
  EXPECT_EQ(store.uris(), (std::vector<std::string>{"file:///b.py"}));
  EXPECT_EQ(a->text(), "a\nb");  // a held snapshot outlives close
  store.close("file:///a.py");  // closing twice is harmless
  store.close("file:///never.py");
  EXPECT_EQ(store.uris().size(), 1u);
}

TEST(DocumentStore, ReopenReplaces) {
  DocumentStore store;
  store.open(item("file:///a.py", 5, "first"));
  store.open(item("file:///a.py", 1, "second"));
  const auto a = store.get("file:///a.py");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->version(), 1);
  EXPECT_EQ(a->text(), "second");
  EXPECT_EQ(store.uris().size(), 1u);
}

TEST(DocumentStore, ChangeMakesANewSnapshot) {
  DocumentStore store;
  store.open(item("file:///a.py", 1, "hello"));
  const auto before = store.get("file:///a.py");
  const auto returned = store.change(change("file:///a.py", 2, {insert(0, 5, " world")}), kUtf16);
  ASSERT_NE(returned, nullptr);
  EXPECT_EQ(returned->text(), "hello world");
  EXPECT_EQ(returned->version(), 2);
  EXPECT_EQ(store.get("file:///a.py"), returned);
  EXPECT_EQ(before->text(), "hello");
  EXPECT_EQ(before->version(), 1);
}

TEST(DocumentStore, ChangeOfUnknownDocumentThrows) {
  DocumentStore store;
  try {
    store.change(change("file:///x.py", 2, {insert(0, 0, "a")}), kUtf16);
    FAIL() << "expected RpcError";
  } catch (const protocol::RpcError& error) {
    EXPECT_EQ(error.code(), protocol::ErrorCode::InvalidParams);
    EXPECT_STREQ(error.what(), "document not open: file:///x.py");
  }
  EXPECT_EQ(store.get("file:///x.py"), nullptr);
}

TEST(DocumentStore, NonIncreasingVersionIsStored) {
  DocumentStore store;
  store.open(item("file:///a.py", 10, "a"));
  store.change(change("file:///a.py", 10, {insert(0, 1, "b")}), kUtf16);
  EXPECT_EQ(store.get("file:///a.py")->version(), 10);
  store.change(change("file:///a.py", 4, {insert(0, 2, "c")}), kUtf16);
  EXPECT_EQ(store.get("file:///a.py")->version(), 4);
  EXPECT_EQ(store.get("file:///a.py")->text(), "abc");
}

TEST(DocumentStore, RejectedChangeLeavesDocumentAsItWas) {
  DocumentStore store;
  store.open(item("file:///a.py", 1, "one\ntwo"));
  const auto before = store.get("file:///a.py");
  const TextDocumentContentChangeEvent reversed{Range{Position{1, 0}, Position{0, 0}}, ""};
  EXPECT_THROW(store.change(change("file:///a.py", 2, {insert(0, 0, "x"), reversed}), kUtf16), protocol::RpcError);
  EXPECT_EQ(store.get("file:///a.py"), before);
  EXPECT_EQ(store.get("file:///a.py")->text(), "one\ntwo");
}

TEST(DocumentStore, ConcurrentReadersSeeImmutableSnapshots) {
  DocumentStore store;
  const std::string uri = "file:///big.py";
  std::string initial;
  for (int i = 0; i < 5000; ++i) initial += "line " + std::to_string(i) + "\n";
  store.open(item(uri, 0, initial));

  constexpr int kEdits = 400;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<long> reads{0};

  // Each reader holds the snapshot it got, checks it is internally consistent
  // (edit v appended line "edit v"), and after a while checks it has not changed.
  auto reader = [&] {
    std::int64_t last_version = -1;
    // Reads once more after the writer finishes, so every reader reads at least once.
    for (bool finished = false; !finished;) {
      finished = done.load();
      const auto snapshot = store.get(uri);
      if (!snapshot) {
        ++failures;
        return;
      }
      const std::string text_copy = snapshot->text();
      const std::int64_t version = snapshot->version();
      if (version < last_version) ++failures;  // versions only grow here
      last_version = version;
      if (snapshot->line_count() != static_cast<std::size_t>(5001 + version)) ++failures;
      if (version > 0 && snapshot->line(static_cast<std::size_t>(5000 + version - 1)) !=
                             "edit " + std::to_string(version)) {
        ++failures;
      }
      const auto end = snapshot->position_of(snapshot->text().size(), kUtf16);
      if (end != Position{5000 + version, 0}) ++failures;
      std::this_thread::yield();
      if (snapshot->text() != text_copy || snapshot->version() != version) ++failures;
      ++reads;
    }
  };

  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
  std::thread writer([&] {
    for (int v = 1; v <= kEdits; ++v) {
      // Append at the last (empty) line; the line number comes from the current snapshot.
      const auto current = store.get(uri);
      const auto line = static_cast<std::int64_t>(current->line_count() - 1);
      store.change(change(uri, v, {insert(line, 0, "edit " + std::to_string(v) + "\n")}), kUtf16);
    }
    done.store(true);
  });
  writer.join();
  for (auto& thread : readers) thread.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0);
  const auto final_snapshot = store.get(uri);
  EXPECT_EQ(final_snapshot->version(), kEdits);
  EXPECT_EQ(final_snapshot->line_count(), static_cast<std::size_t>(5001 + kEdits));
  EXPECT_EQ(final_snapshot->line(5000), "edit 1");
  EXPECT_EQ(final_snapshot->line(5000 + kEdits - 1), "edit " + std::to_string(kEdits));
}

TEST(DocumentStore, ConcurrentWritersToDifferentDocuments) {
  DocumentStore store;
  constexpr int kThreads = 4;
  constexpr int kEdits = 200;
  for (int t = 0; t < kThreads; ++t) store.open(item("file:///" + std::to_string(t), 0, ""));
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&store, t] {
      const std::string uri = "file:///" + std::to_string(t);
      for (int v = 1; v <= kEdits; ++v) {
        // Column 10000 clamps to the end of the single line: an append.
        store.change(change(uri, v, {insert(0, 10000, "x")}), kUtf16);
        (void)store.uris();
      }
    });
  }
  for (auto& thread : writers) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    const auto snapshot = store.get("file:///" + std::to_string(t));
    ASSERT_NE(snapshot, nullptr);
    EXPECT_EQ(snapshot->text(), std::string(kEdits, 'x'));
    EXPECT_EQ(snapshot->version(), kEdits);
  }
}

}  // namespace
}  // namespace hiera::server
