// hiera-worker's check kernels on a real GPU, in process: inputs generated on
// the device equal the host's fill_random bit for bit, and the device's
// comparisons equal the host's compare_output / compare_input (counts, maxima
// and messages) on buffers crafted with unwritten, NaN/Inf, mismatching and
// nondeterministic elements. Skips when no GPU is visible.
#ifdef HIERA_WORKER_BIN
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "engine/worker/check_kernels.h"
#include "engine/worker/cuda_device.h"
#include "engine/worker/input_generator.h"
#include "engine/worker/nvrtc_compiler.h"
#include "engine/worker/output_checks.h"
#include "engine/worker/scalar_types.h"

namespace {

using namespace hiera::engine::worker;

constexpr ScalarType kAllTypes[] = {ScalarType::Float32, ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float64,
                                    ScalarType::Int32,   ScalarType::Int64,   ScalarType::UInt8};
constexpr Distribution kAllDistributions[] = {Distribution::Uniform, Distribution::Normal, Distribution::Large};

// The device and its check kernels, opened once for the binary (and never
// closed: the kernels live as long as the process, as in the worker).
struct Gpu {
  std::optional<DeviceInfo> device;
  std::string reason;
  NvrtcCompiler compiler{std::nullopt};
  const CheckKernels* checks = nullptr;
};

const Gpu& gpu() {
  static const Gpu* opened = [] {
    auto* g = new Gpu;
    g->device = CudaDevice::open(0, &g->reason);
    if (g->device) g->checks = &CheckKernels::get(g->compiler, *g->device);
    return g;
  }();
  return *opened;
}

#define REQUIRE_GPU()                                                                 \
  do {                                                                                \
    if (!gpu().checks) GTEST_SKIP() << "no CUDA device visible: " << gpu().reason;    \
  } while (0)

// A device allocation for one test.
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 256)), cudaSuccess);
  }
  explicit DeviceArray(const std::vector<std::byte>& host) : DeviceArray(host.size()) {
    EXPECT_EQ(cudaMemcpy(ptr_, host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void* get() const { return ptr_; }
  std::vector<std::byte> download() const {
    std::vector<std::byte> host(bytes_);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

std::uint64_t element_bits(const std::vector<std::byte>& data, ScalarType type, std::size_t index) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, data.data() + index * size_of(type), size_of(type));
  return bits;
}

void set_element(std::vector<std::byte>& data, ScalarType type, std::size_t index, std::uint64_t bits) {
  std::memcpy(data.data() + index * size_of(type), &bits, size_of(type));
}

void set_value(std::vector<std::byte>& data, ScalarType type, std::size_t index, double value) {
  store_from_double(type, value, data.data() + index * size_of(type));
}

std::uint64_t poison_bits_of(ScalarType type, Poison which) {
  const auto element = poison_element(type, which);
  std::uint64_t bits = 0;
  std::memcpy(&bits, element.data(), element.size());
  return bits;
}

double value_at(const std::vector<std::byte>& data, ScalarType type, std::size_t index) {
  return load_as_double(type, data.data() + index * size_of(type));
}

// The first element where two buffers differ, for a readable failure.
std::string first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b, ScalarType type) {
  for (std::size_t i = 0; i * size_of(type) < a.size(); ++i) {
    if (element_bits(a, type, i) != element_bits(b, type, i)) {
      return "[" + std::to_string(i) + "]: host " + format_value(value_at(a, type, i)) + ", device " +
             format_value(value_at(b, type, i));
    }
  }
  return "none";
}

void expect_same(const OutputComparison& host, const OutputComparison& device, const std::string& what) {
  EXPECT_EQ(device.elements, host.elements) << what;
  EXPECT_EQ(device.compared, host.compared) << what;
  EXPECT_EQ(device.unwritten, host.unwritten) << what;
  EXPECT_EQ(device.mismatches, host.mismatches) << what;
  EXPECT_EQ(device.nan_inf, host.nan_inf) << what;
  EXPECT_EQ(device.nondeterministic, host.nondeterministic) << what;
  EXPECT_EQ(device.max_abs_error, host.max_abs_error) << what;  // exactly: the same double arithmetic
  EXPECT_EQ(device.max_rel_error, host.max_rel_error) << what;
  EXPECT_EQ(device.first_unwritten, host.first_unwritten) << what;
  EXPECT_EQ(device.first_mismatch, host.first_mismatch) << what;
  EXPECT_EQ(device.first_nan_inf, host.first_nan_inf) << what;
  EXPECT_EQ(device.first_nondeterministic, host.first_nondeterministic) << what;
}

// ---------------------------------------------------------------- generation

TEST(CheckKernelsGpu, GeneratedInputsEqualTheHostsBitForBit) {
  REQUIRE_GPU();
  const std::size_t n = 1000003;  // odd: the last normal is the first half of a Box-Muller pair
  const std::optional<std::pair<double, double>> ranges[] = {std::nullopt, std::make_pair(-5.0, 5.0),
                                                             std::make_pair(0.25, 2.5)};
  for (ScalarType type : kAllTypes) {
    for (Distribution d : kAllDistributions) {
      for (const auto& range : ranges) {
        const std::uint64_t key = argument_seed(1234 + static_cast<std::uint64_t>(d), static_cast<std::size_t>(type));
        std::vector<std::byte> host(n * size_of(type));
        fill_random(type, host.data(), n, d, key, range);
        DeviceArray device(host.size());
        gpu().checks->generate(type, device.get(), n, d, key, range);
        const auto back = device.download();
        const std::string what = std::string(to_string(type)) + " " + to_string(d) +
                                 (range ? " range [" + format_value(range->first) + ", " + format_value(range->second) + ")" : "");
        ASSERT_TRUE(host == back) << what << ": first difference " << first_difference(host, back, type);
      }
    }
  }
}

TEST(CheckKernelsGpu, FarElementsOfLargeBuffersEqualTheHosts) {
  REQUIRE_GPU();
  // Many grid-stride iterations per thread; sampled, as the host would take seconds for all.
  for (ScalarType type : {ScalarType::Float32, ScalarType::Float64}) {
    const std::size_t n = (std::size_t{1} << 25) + 5;
    DeviceArray device(n * size_of(type));
    gpu().checks->generate(type, device.get(), n, Distribution::Normal, 99, std::nullopt);
    const auto back = device.download();
    for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{1} << 20,
                          (std::size_t{1} << 24) + 1, (std::size_t{1} << 25) - 1, std::size_t{1} << 25, n - 1}) {
      ASSERT_EQ(element_bits(back, type, i), random_element(type, i, Distribution::Normal, 99)) << to_string(type) << " [" << i << "]";
    }
  }
}

TEST(CheckKernelsGpu, EmptyBuffersNeedNoLaunch) {
  REQUIRE_GPU();
  gpu().checks->generate(ScalarType::Float32, nullptr, 0, Distribution::Normal, 1, std::nullopt);
  const auto c = gpu().checks->compare_output(ScalarType::Float32, 0, nullptr, nullptr, nullptr, {}, true);
  EXPECT_EQ(c.elements, 0u);
  EXPECT_EQ(c.compared, 0u);
  EXPECT_EQ(gpu().checks->compare_input(ScalarType::Int32, 0, nullptr, nullptr).changed, 0u);
}

// ---------------------------------------------------------------- comparison

struct Crafted {
  std::vector<std::byte> reference, run1, run2;
};

// A reference output and two candidate runs with every kind of problem,
// spread over the buffer so each first index is found across blocks.
Crafted craft(ScalarType type, std::size_t n) {
  Crafted c;
  c.reference.resize(n * size_of(type));
  fill_random(type, c.reference.data(), n, Distribution::Normal, 4242);
  c.run1 = c.reference;
  c.run2 = c.reference;
  const std::uint64_t a = poison_bits_of(type, Poison::A);
  const std::uint64_t b = poison_bits_of(type, Poison::B);
  // Never written by the candidate (the reference wrote them).
  for (std::size_t i : {250001ul, 123457ul, 200000ul}) {
    set_element(c.run1, type, i, a);
    set_element(c.run2, type, i, b);
  }
  // Left alone by the reference too: skipped, written or not.
  set_element(c.reference, type, 5, a);
  set_element(c.run1, type, 5, a);
  set_element(c.run2, type, 5, b);
  set_element(c.reference, type, 6, a);
  // Beyond the tolerance, in both runs.
  for (std::size_t i : {277777ul, 150000ul, 299999ul}) {
    set_value(c.run1, type, i, value_at(c.reference, type, i) + 10.0);
    set_value(c.run2, type, i, value_at(c.reference, type, i) + 10.0);
  }
  // Different bits in the second run.
  for (std::size_t i : {133333ul, 260000ul}) set_element(c.run2, type, i, element_bits(c.run1, type, i) ^ 1u);
  if (is_floating(type)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // NaN or Inf where the reference has a number, or the reverse.
    for (std::size_t i : {180001ul, 99999ul}) {
      set_value(c.run1, type, i, nan);
      set_value(c.run2, type, i, nan);
    }
    set_value(c.run1, type, 170000, -inf);
    set_value(c.run2, type, 170000, -inf);
    set_value(c.reference, type, 160000, inf);
    // NaN where the reference has NaN, the same Inf where it has Inf: fine.
    set_value(c.reference, type, 7, nan);
    set_value(c.run1, type, 7, nan);
    set_value(c.run2, type, 7, nan);
    set_value(c.reference, type, 8, -inf);
    set_value(c.run1, type, 8, -inf);
    set_value(c.run2, type, 8, -inf);
    // Within the tolerance: they only raise the maximum errors.
    for (std::size_t i = 11; i < n; i += 97) {
      const double v = value_at(c.reference, type, i);
      if (!std::isfinite(v)) continue;
      set_value(c.run1, type, i, v + 1e-3);
      set_value(c.run2, type, i, v + 1e-3);
    }
  }
  return c;
}

TEST(CheckKernelsGpu, OutputComparisonEqualsTheHostsOnCraftedBuffers) {
  REQUIRE_GPU();
  const std::size_t n = 300007;
  const Tolerance tolerance{1e-2, 1e-2};
  for (ScalarType type : kAllTypes) {
    const Crafted c = craft(type, n);
    const DeviceArray reference(c.reference), run1(c.run1), run2(c.run2);
    for (bool poisoned : {true, false}) {
      const std::string what = std::string(to_string(type)) + (poisoned ? " output" : " inout");
      const auto host = compare_output(type, n, c.reference.data(), c.run1.data(), c.run2.data(), tolerance, poisoned);
      const auto device = gpu().checks->compare_output(type, n, reference.get(), run1.get(), run2.get(), tolerance, poisoned);
      expect_same(host, device, what);
      if (poisoned) {
        // The crafted problems were all found (both sides agree, so this pins the device too).
        EXPECT_EQ(host.unwritten, 3u) << what;
        EXPECT_EQ(host.first_unwritten.rfind("[123457]: expected ", 0), 0u) << host.first_unwritten;
        EXPECT_GE(host.mismatches, 3u) << what;
        EXPECT_EQ(host.nondeterministic, 2u) << what;  // the unwritten elements count as unwritten only
      }
    }
    // The check after timing: one buffer as both runs.
    const auto host = compare_output(type, n, c.reference.data(), c.run1.data(), c.run1.data(), tolerance, true);
    const auto device = gpu().checks->compare_output(type, n, reference.get(), run1.get(), run1.get(), tolerance, true);
    expect_same(host, device, std::string(to_string(type)) + " after timing");
    EXPECT_EQ(host.unwritten, 0u);
  }
}

TEST(CheckKernelsGpu, FloatingProblemsAreNamedLikeTheHostNamesThem) {
  REQUIRE_GPU();
  const std::size_t n = 300007;
  const Crafted c = craft(ScalarType::Float32, n);
  const DeviceArray reference(c.reference), run1(c.run1), run2(c.run2);
  const auto device = gpu().checks->compare_output(ScalarType::Float32, n, reference.get(), run1.get(), run2.get(), {1e-2, 1e-2}, true);
  EXPECT_EQ(device.nan_inf, 4u);  // two NaN, one -Inf, one reference Inf
  EXPECT_EQ(device.first_nan_inf.rfind("[99999]: expected ", 0), 0u) << device.first_nan_inf;
  EXPECT_NE(device.first_nan_inf.find(", got nan"), std::string::npos) << device.first_nan_inf;
  EXPECT_EQ(device.first_nondeterministic.rfind("[133333]: first run ", 0), 0u) << device.first_nondeterministic;
  EXPECT_GT(device.max_abs_error, 9.9);
}

TEST(CheckKernelsGpu, InputComparisonEqualsTheHosts) {
  REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 20) + 3;
  for (ScalarType type : kAllTypes) {
    std::vector<std::byte> original(n * size_of(type));
    fill_random(type, original.data(), n, Distribution::Large, 7);
    std::vector<std::byte> after = original;
    const DeviceArray device_original(original);
    {
      const DeviceArray device_after(after);
      EXPECT_EQ(gpu().checks->compare_input(type, n, device_original.get(), device_after.get()).changed, 0u);
    }
    for (std::size_t i : {999999ul, 500001ul, 700000ul, n - 1}) set_element(after, type, i, element_bits(after, type, i) ^ 3u);
    const DeviceArray device_after(after);
    const auto host = compare_input(type, n, original.data(), after.data());
    const auto device = gpu().checks->compare_input(type, n, device_original.get(), device_after.get());
    EXPECT_EQ(device.changed, 4u) << to_string(type);
    EXPECT_EQ(device.changed, host.changed) << to_string(type);
    EXPECT_EQ(device.first_changed, host.first_changed) << to_string(type);
    EXPECT_EQ(device.first_changed.rfind("[500001]: was ", 0), 0u) << device.first_changed;
  }
}

}  // namespace
#endif  // HIERA_WORKER_BIN
