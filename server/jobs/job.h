#pragma once
// A background job: long work run off the message loop, with progress,
// cancellation, and an optional edit to one document as its result.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/cancellation.h"
#include "engine/common/progress.h"

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

struct JobResult {
  std::string message;  // the progress "end" message, e.g. "1.8x faster, verified"
  std::optional<DocumentEdit> edit;
  std::string report_path;  // a report the job wrote (hiera.jobs lists it); "" none
  // Called once the client applied `edit` (not on a conflict or a refusal).
  std::function<void()> on_applied;
};

class JobContext : public engine::ProgressSink {
 public:
  virtual const engine::CancellationToken& cancellation() const = 0;
  bool cancelled() const { return cancellation().cancelled(); }
};

using JobWork = std::function<JobResult(JobContext&)>;

enum class JobState { Running, Succeeded, Failed, Cancelled, Conflict };
const char* to_string(JobState state);

struct JobStatus {
  std::string id;
  std::string title;
  JobState state = JobState::Running;
  std::string message;          // last progress message, or the outcome
  std::optional<int> percentage;
  std::string report_path;      // set when the job ended with a report; "" none
};

}  // namespace hiera::server
