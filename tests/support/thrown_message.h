#pragma once
// The message of the exception a call throws, for the tests that assert an
// error's exact text: one helper instead of a try/catch in every test file.
#include <string>
#include <utility>

namespace hiera::testing {

// What `call()` throws as an Error, or `otherwise` when it returns. Any other
// exception goes on (and fails the test).
template <class Error, class Call>
std::string thrown_message(Call&& call, std::string otherwise = "") {
  try {
    std::forward<Call>(call)();
  } catch (const Error& error) {
    return error.what();
  }
  return otherwise;
}

}  // namespace hiera::testing
