#include "server/documents/document_scheduler.h"

#include <algorithm>
#include <iostream>

#include <boost/asio/post.hpp>

namespace hiera::server {

DocumentScheduler::DocumentScheduler(boost::asio::io_context& loop, Build build, Options options)
    : loop_(loop), build_(std::move(build)), options_(options), pool_(options.threads == 0 ? 1 : options.threads) {}

DocumentScheduler::~DocumentScheduler() { pool_.join(); }

void DocumentScheduler::join() { pool_.join(); }

void DocumentScheduler::update(const Snapshot& snapshot, bool immediate) {
  if (stopped_ || !snapshot) return;
  ++updates_;
  const std::string& uri = snapshot->uri();
  Entry& entry = entries_[uri];
  if (!entry.debounce) entry.debounce = std::make_unique<boost::asio::steady_timer>(loop_);
  entry.cancel.cancel();  // the running build, if any, stops at its next poll and is not committed
  entry.cancel = engine::CancellationToken{};
  entry.latest = snapshot;
  entry.generation = next_generation_++;
  entry.pending = true;
  entry.due = false;
  answer(entry, [&](const Waiter& waiter) { return waiter.snapshot != snapshot; }, false);  // superseded

  if (immediate || options_.debounce.count() <= 0) {
    entry.debounce->cancel();
    entry.due = true;
    start(uri);
    return;
  }
  entry.debounce->expires_after(options_.debounce);  // cancels the wait armed by the previous change
  entry.debounce->async_wait([this, uri, generation = entry.generation](const boost::system::error_code& error) {
    if (error) return;
    auto it = entries_.find(uri);
    if (it == entries_.end() || it->second.generation != generation) return;
    it->second.due = true;
    start(uri);
  });
}

void DocumentScheduler::start(const std::string& uri) {
  auto it = entries_.find(uri);
  if (stopped_ || it == entries_.end()) return;
  Entry& entry = it->second;
  if (!entry.pending || !entry.due || entry.running) return;  // finish() comes back here
  entry.debounce->cancel();
  entry.pending = false;
  entry.due = false;
  entry.running = true;
  entry.running_generation = entry.generation;
  ++builds_;
  boost::asio::post(pool_, [this, uri, snapshot = entry.latest, generation = entry.generation, cancel = entry.cancel] {
    Commit commit;
    if (!cancel.cancelled()) {
      try {
        commit = build_(snapshot, cancel);
      } catch (const engine::Cancelled&) {
      } catch (const std::exception& e) {
        std::cerr << "hiera: building " << uri << " failed: " << e.what() << '\n';
      }
    }
    boost::asio::post(loop_, [this, uri, generation, commit = std::move(commit)]() mutable {
      finish(uri, generation, std::move(commit));
    });
  });
}

void DocumentScheduler::finish(const std::string& uri, std::uint64_t generation, Commit commit) {
  auto it = entries_.find(uri);
  if (it == entries_.end() || !it->second.running || it->second.running_generation != generation) {
    ++discarded_;  // closed (and perhaps reopened) while it ran
    return;
  }
  Entry& entry = it->second;
  entry.running = false;
  if (stopped_ || generation != entry.generation) {
    ++discarded_;  // superseded: a newer snapshot builds next
  } else {
    if (commit) {
      try {
        commit();
      } catch (const std::exception& e) {
        std::cerr << "hiera: committing " << uri << " failed: " << e.what() << '\n';
      }
    }
    ++commits_;
    entry.committed = entry.latest;
    entry.committed_generation = generation;
    answer(entry, [&](const Waiter& waiter) { return waiter.snapshot == entry.committed; }, true);
  }
  start(uri);
}

void DocumentScheduler::answer(Entry& entry, const std::function<bool(const Waiter&)>& which, bool current) {
  std::vector<std::shared_ptr<Waiter>> chosen;
  std::erase_if(entry.waiters, [&](const std::shared_ptr<Waiter>& waiter) {
    if (!which(*waiter)) return false;
    chosen.push_back(waiter);
    return true;
  });
  // Called after the entry's bookkeeping is done: a callback may read the documents, or reply.
  for (auto& waiter : chosen) {
    if (waiter->deadline) waiter->deadline->cancel();
    waiter->ready(current);
  }
}

void DocumentScheduler::close(const std::string& uri) {
  auto it = entries_.find(uri);
  if (it == entries_.end()) return;
  Entry entry = std::move(it->second);
  entries_.erase(it);
  entry.cancel.cancel();
  if (entry.debounce) entry.debounce->cancel();
  answer(entry, [](const Waiter&) { return true; }, false);
}

void DocumentScheduler::when_built(const Snapshot& snapshot, std::optional<std::chrono::milliseconds> max_wait, Ready ready) {
  auto it = stopped_ || !snapshot ? entries_.end() : entries_.find(snapshot->uri());
  if (it == entries_.end()) {
    ready(false);
    return;
  }
  Entry& entry = it->second;
  if (entry.committed == snapshot) {
    ready(true);
    return;
  }
  if (entry.latest != snapshot) {
    ready(false);
    return;
  }
  auto waiter = std::make_shared<Waiter>(Waiter{snapshot, std::move(ready), nullptr});
  if (max_wait) {
    waiter->deadline = std::make_shared<boost::asio::steady_timer>(loop_, *max_wait);
    waiter->deadline->async_wait([this, uri = snapshot->uri(), raw = waiter.get()](const boost::system::error_code& error) {
      if (error) return;
      auto found = entries_.find(uri);
      if (found == entries_.end()) return;
      answer(found->second, [raw](const Waiter& w) { return &w == raw; }, false);
    });
  }
  entry.waiters.push_back(std::move(waiter));
  // A reader does not wait out the debounce: its snapshot builds now (after a running build).
  entry.due = true;
  start(snapshot->uri());
}

void DocumentScheduler::stop() {
  stopped_ = true;
  for (auto& [uri, entry] : entries_) {
    entry.cancel.cancel();
    if (entry.debounce) entry.debounce->cancel();
    answer(entry, [](const Waiter&) { return true; }, false);
  }
}

DocumentScheduler::Stats DocumentScheduler::stats() const {
  return Stats{updates_.load(), builds_.load(), commits_.load(), discarded_.load()};
}

}  // namespace hiera::server
