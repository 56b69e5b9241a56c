#pragma once
// A background job: long work run off the message loop, with progress,
// cancellation, and an optional edit to one document as its result.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/cancellation.h"

namespace hiera::server {

// A replacement of bytes [begin, end) of the document text at `version`.
struct ByteEdit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string text;
};

// Edits computed against one version of one document. They are applied only
// if the document is still at that version when the job ends.
struct DocumentEdit {
  std::string uri;
  std::int64_t version = 0;
  std::vector<ByteEdit> edits;
  std::string label;                // shown by the client (undo entry, confirmation)
  bool needs_confirmation = false;  // ask the user before applying, where the client can
};

// The states a client sees (hiera.jobs): "running", then one of "done" (a job
// with no optimizer verdict), "improved", "no improvement", "measured"
// (Profile), "no GPU" (refused before it ran: no worker has a GPU and no CPU
// run was asked for), "failed", "cancelled", "conflict" (its edit was not
// applied: the document changed). Nothing that failed is reported as done.
enum class JobState { Done, Running, Improved, NoImprovement, Measured, NoGpu, Failed, Cancelled, Conflict };
const char* to_string(JobState state);

struct JobResult {
  std::string message;  // the progress "end" message, e.g. "1.8x faster, verified"
  std::optional<DocumentEdit> edit{};
  std::string report_path{};  // a report the job wrote (hiera.jobs lists it); "" none
  // Called once the client applied `edit` (not on a conflict or a refusal).
  std::function<void()> on_applied{};
  // How the work ended when it returned (a throw is Failed): Done, Improved,
  // NoImprovement, Measured or NoGpu. An edit that is then not applied makes
  // it Conflict or Failed.
  JobState state = JobState::Done;
};

// What a job's work sees: its progress goes to the client's $/progress (the
// engine's own reports are OptimizeProgress; a feature turns them into these
// lines), and its cancellation.
class JobContext {
 public:
  virtual ~JobContext() = default;
  // percentage in [0, 100] when known.
  virtual void report(const std::string& message, std::optional<int> percentage) = 0;
  virtual const engine::CancellationToken& cancellation() const = 0;
  bool cancelled() const { return cancellation().cancelled(); }
};

using JobWork = std::function<JobResult(JobContext&)>;

struct JobStatus {
  std::string id;
  std::string title;
  JobState state = JobState::Running;
  std::string message;          // last progress message, or the outcome
  std::optional<int> percentage;
  std::string report_path;      // set when the job ended with a report; "" none
};

}  // namespace hiera::server
