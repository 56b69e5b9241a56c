#include "engine/propose/llm/http_post.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <curl/curl.h>

namespace hiera::engine::propose::llm {
namespace {

struct Transfer {
  const HttpPost* request = nullptr;
  const CancellationToken* cancel = nullptr;
  HttpReply* reply = nullptr;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer.reply->body.size() + bytes > transfer.request->max_reply_bytes) {
    transfer.too_large = true;
    return 0;  // anything but `bytes` aborts the transfer with CURLE_WRITE_ERROR
  }
  transfer.reply->body.append(data, bytes);
  return bytes;
}

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const std::string line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {
    transfer.reply->headers.clear();  // a new response (after a 100 Continue): keep only the last
    return bytes;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return bytes;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = trim(line.substr(colon + 1));
  auto [it, inserted] = transfer.reply->headers.emplace(name, value);
  if (!inserted) it->second += ", " + value;
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto& transfer = *static_cast<Transfer*>(user);
  return transfer.cancel->cancelled() ? 1 : 0;  // non-zero aborts with CURLE_ABORTED_BY_CALLBACK
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("curl_global_init failed");
  });
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};

}  // namespace

HttpReply http_post(const HttpPost& request, const CancellationToken& cancel) {
  global_init();
  HttpReply reply;
  if (cancel.cancelled()) {
    reply.failure = TransferFailure::Cancelled;
    reply.failure_message = "cancelled";
    return reply;
  }
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) throw std::runtime_error("curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  std::vector<std::string> lines = request.headers;
  lines.emplace_back("Expect:");  // no "Expect: 100-continue" round trip before a large body
  for (const std::string& header : lines) {
    curl_slist* appended = curl_slist_append(headers.get(), header.c_str());
    if (appended == nullptr) throw std::runtime_error("curl_slist_append failed");
    headers.release();
    headers.reset(appended);
  }

  Transfer transfer{&request, &cancel, &reply};
  char error_buffer[CURL_ERROR_SIZE] = {};
  CURL* handle = easy.get();
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_POST, 1L);
  curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "hiera");
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // required with threads
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_reply_bytes));
  curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl can decode
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);

  const CURLcode code = curl_easy_perform(handle);
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &reply.status);
  if (code == CURLE_OK) return reply;

  reply.failure_message = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  if (code == CURLE_ABORTED_BY_CALLBACK && cancel.cancelled()) {
    reply.failure = TransferFailure::Cancelled;
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    reply.failure = TransferFailure::Timeout;
  } else if (code == CURLE_FILESIZE_EXCEEDED || (code == CURLE_WRITE_ERROR && transfer.too_large)) {
    reply.failure = TransferFailure::TooLarge;
  } else {
    reply.failure = TransferFailure::Network;
  }
  return reply;
}

}  // namespace hiera::engine::propose::llm
