#pragma once
// Per-document background builds, off the message loop (clangd's TUScheduler
// in small). A build is what the server computes for one snapshot of one
// document (its diagnostics: the features analyse the text on the way) and the
// commit that publishes it.
//
// - Debounced and coalesced: a change arms the document's timer; a newer
//   snapshot cancels the pending build and the token of the running one, so a
//   storm of edits costs a few builds, not one per edit.
// - One build per document at a time, on a thread pool; documents build side
//   by side.
// - A commit runs on the message loop and only for the newest snapshot: the
//   loop is where changes are applied, so nothing a superseded build made is
//   ever sent once the change that superseded it has been read.
// - Requests wait on the loop without blocking it: when_built() calls back
//   once the build of their snapshot is committed, or at a deadline, or when
//   the snapshot is superseded, whichever comes first (a hover answers from the
//   last analysis after a short wait; a code lens waits for its own version).
//
// Every method except the constructor, the destructor and stats() is called
// on the loop's thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "engine/common/cancellation.h"
#include "server/documents/document_store.h"

namespace hiera::server {

class DocumentScheduler {
 public:
  using Snapshot = DocumentStore::Snapshot;
  using Commit = std::function<void()>;
  // Runs on the pool; returns what to run on the loop if the snapshot is still
  // the newest when it is done (empty: nothing to commit). Polls `cancel`.
  using Build = std::function<Commit(const Snapshot&, const engine::CancellationToken& cancel)>;
  // `current`: the snapshot's build was committed (false: the deadline passed,
  // the snapshot was superseded or closed, or the scheduler stopped).
  using Ready = std::function<void(bool current)>;

  struct Options {
    std::chrono::milliseconds debounce{50};
    std::size_t threads = 1;
  };

  struct Stats {
    std::uint64_t updates = 0;    // snapshots scheduled
    std::uint64_t builds = 0;     // builds started on the pool
    std::uint64_t commits = 0;    // builds committed (published)
    std::uint64_t discarded = 0;  // builds finished after being superseded
  };

  DocumentScheduler(boost::asio::io_context& loop, Build build, Options options);
  ~DocumentScheduler();  // waits for running builds (call stop() first on the loop)

  // A new snapshot of a document (didOpen, didChange, or the same snapshot
  // again when what a build depends on changed, e.g. settings). `immediate`
  // skips the debounce (didOpen).
  void update(const Snapshot& snapshot, bool immediate = false);
  // The document closed: its pending work is dropped, nothing more is committed.
  void close(const std::string& uri);
  // Calls `ready` on the loop when `snapshot`'s build is committed, or after
  // `max_wait` (nullopt: no deadline), or once it is superseded. A pending
  // build of it starts at once (a reader does not wait out the debounce).
  // When it is already committed, `ready(true)` runs before this returns.
  void when_built(const Snapshot& snapshot, std::optional<std::chrono::milliseconds> max_wait, Ready ready);
  // Cancels everything and answers every waiter `false`; builds are no longer started.
  void stop();
  // Waits for the builds on the pool (any thread but the loop's; after stop()).
  void join();

  Stats stats() const;

 private:
  struct Waiter {
    Snapshot snapshot;
    Ready ready;
    std::shared_ptr<boost::asio::steady_timer> deadline;
  };
  struct Entry {
    Snapshot latest;
    std::uint64_t generation = 0;  // bumped by every update: a build commits only at its own
    engine::CancellationToken cancel;
    std::unique_ptr<boost::asio::steady_timer> debounce;
    bool pending = false;    // the latest generation waits for its build
    bool due = false;        // ... and may start (its debounce passed, or a reader asked)
    bool running = false;    // a build of this document is on the pool
    std::uint64_t running_generation = 0;
    Snapshot committed;      // the snapshot whose build was committed last
    std::uint64_t committed_generation = 0;
    std::vector<std::shared_ptr<Waiter>> waiters;
  };

  void start(const std::string& uri);
  void finish(const std::string& uri, std::uint64_t generation, Commit commit);
  void answer(Entry& entry, const std::function<bool(const Waiter&)>& which, bool current);

  boost::asio::io_context& loop_;
  Build build_;
  Options options_;
  std::map<std::string, Entry> entries_;
  std::uint64_t next_generation_ = 1;
  bool stopped_ = false;
  std::atomic<std::uint64_t> updates_{0}, builds_{0}, commits_{0}, discarded_{0};
  boost::asio::thread_pool pool_;
};

}  // namespace hiera::server
