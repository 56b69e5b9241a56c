#pragma once
// Runs jobs on a thread pool and tells the client about them: LSP work-done
// progress where the client supports it (window/showMessage otherwise),
// cancellation from the client or a command, and the result delivered as a
// versioned workspace/applyEdit that is never sent for a changed document.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "server/client/client.h"
#include "server/documents/document_store.h"
#include "server/jobs/job.h"

namespace hiera::server {

class JobManager {
 public:
  JobManager(Client& client, DocumentStore& documents, std::size_t threads);
  ~JobManager();  // cancels what runs and waits for it

  // Starts work in the background; returns the job id (also its progress token).
  std::string start(const std::string& title, JobWork work);
  // Cancels one job by id or progress token; false when no such running job.
  bool cancel(const std::string& id);
  std::size_t cancel_all();
  std::vector<JobStatus> jobs() const;
  std::optional<JobStatus> job(const std::string& id) const;
  // Blocks until no job runs (tests, shutdown).
  void wait_idle();

 private:
  class Context;
  struct Entry {
    JobStatus status;
    engine::CancellationToken cancel;
  };
  void run(const std::string& id, const std::string& title, const JobWork& work);
  bool begin_progress(const std::string& id, const std::string& title);
  void deliver(const std::string& id, const std::string& title, const DocumentEdit& edit, JobResult& result,
               JobState& state);
  void update(const std::string& id, const std::function<void(JobStatus&)>& change);

  Client& client_;
  DocumentStore& documents_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::map<std::string, Entry> entries_;
  std::size_t running_ = 0;
  std::uint64_t next_id_ = 1;
  boost::asio::thread_pool pool_;
};

}  // namespace hiera::server
