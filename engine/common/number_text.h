#pragma once
// Numbers as printf writes them, for the texts of reports, prompts, progress
// and plan reasons: one definition instead of a copy per file.
#include <string>

namespace hiera::engine {

// "%.*f": fixed(1.2345, 2) == "1.23".
std::string fixed(double value, int digits);
// "%g": general(0.0001) == "0.0001", general(1.5e-7) == "1.5e-07".
std::string general(double value);
// "%.*g": significant(1234.5, 3) == "1.23e+03", significant(0.01234, 3) == "0.0123".
std::string significant(double value, int digits = 3);

}  // namespace hiera::engine
