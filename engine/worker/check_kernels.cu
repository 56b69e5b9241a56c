// The worker's own verification kernels, an NVRTC program: check_program.cpp
// puts check_math.h in front of this file (so it has no #include), and the
// kernels apply that header's per-element rules to whole buffers: trial inputs
// generated in place, outputs classified against the reference's, inputs
// compared with their originals.
//
// Each thread accumulates over a grid-stride loop; a warp combines its
// threads' results by shuffles and its first lane publishes them with one
// atomic per field, so a buffer costs one pass over memory and a few thousand
// atomics. Blocks are whole warps (check_kernels.cpp launches 256 threads).

namespace check = hiera::engine::worker::check;

// An element's bits as the unsigned integer of its width.
template <int Type>
struct Storage;
template <>
struct Storage<check::kFloat32> {
  using type = unsigned int;
};
template <>
struct Storage<check::kFloat16> {
  using type = unsigned short;
};
template <>
struct Storage<check::kBFloat16> {
  using type = unsigned short;
};
template <>
struct Storage<check::kFloat64> {
  using type = unsigned long long;
};
template <>
struct Storage<check::kInt32> {
  using type = unsigned int;
};
template <>
struct Storage<check::kInt64> {
  using type = unsigned long long;
};
template <>
struct Storage<check::kUInt8> {
  using type = unsigned char;
};

__device__ __forceinline__ unsigned long long first_index() {
  return static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ unsigned long long grid_stride() {
  return static_cast<unsigned long long>(gridDim.x) * blockDim.x;
}

__device__ __forceinline__ bool first_lane() { return (threadIdx.x & 31u) == 0u; }

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

__device__ __forceinline__ unsigned long long warp_max(unsigned long long value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, value, offset);
    value = other > value ? other : value;
  }
  return value;
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, value, offset);
    value = other < value ? other : value;
  }
  return value;
}

// Every thread of the warp calls these; the first lane publishes the warp's total.
__device__ __forceinline__ void publish_sum(unsigned long long* total, unsigned long long value) {
  value = warp_sum(value);
  if (first_lane() && value != 0ull) atomicAdd(total, value);
}

__device__ __forceinline__ void publish_max(unsigned long long* total, unsigned long long value) {
  value = warp_max(value);
  if (first_lane() && value != 0ull) atomicMax(total, value);
}

__device__ __forceinline__ void publish_min(unsigned long long* total, unsigned long long value) {
  value = warp_min(value);
  if (first_lane() && value != check::kNoIndex) atomicMin(total, value);
}

// Fills `count` elements of input data: element i is check::generate_bits(..., i, ...).
template <int Type>
__global__ void hiera_check_generate(void* out, unsigned long long count, int distribution, unsigned long long key,
                                     int has_range, double lo, double hi) {
  using Bits = typename Storage<Type>::type;
  Bits* elements = static_cast<Bits*>(out);
  for (unsigned long long i = first_index(); i < count; i += grid_stride()) {
    elements[i] = static_cast<Bits>(check::generate_bits(Type, distribution, key, i, has_range != 0, lo, hi));
  }
}

// Classifies `count` output elements into *stats, which starts as
// check::empty_compare_stats().
template <int Type>
__global__ void hiera_check_compare(const void* reference, const void* run1, const void* run2, unsigned long long count,
                                    double atol, double rtol, int poisoned, check::CompareStats* stats) {
  using Bits = typename Storage<Type>::type;
  const Bits* expected = static_cast<const Bits*>(reference);
  const Bits* first = static_cast<const Bits*>(run1);
  const Bits* second = static_cast<const Bits*>(run2);
  check::CompareStats mine = check::empty_compare_stats();
  for (unsigned long long i = first_index(); i < count; i += grid_stride()) {
    check::note(mine, check::classify(Type, expected[i], first[i], second[i], atol, rtol, poisoned != 0), i);
  }
  publish_sum(&stats->compared, mine.compared);
  publish_sum(&stats->unwritten, mine.unwritten);
  publish_sum(&stats->mismatches, mine.mismatches);
  publish_sum(&stats->nan_inf, mine.nan_inf);
  publish_sum(&stats->nondeterministic, mine.nondeterministic);
  publish_max(&stats->max_abs_error_bits, mine.max_abs_error_bits);
  publish_max(&stats->max_rel_error_bits, mine.max_rel_error_bits);
  publish_min(&stats->first_unwritten, mine.first_unwritten);
  publish_min(&stats->first_mismatch, mine.first_mismatch);
  publish_min(&stats->first_nan_inf, mine.first_nan_inf);
  publish_min(&stats->first_nondeterministic, mine.first_nondeterministic);
}

// Counts the elements of an input whose bits differ from the original's, into
// *stats, which starts as check::empty_change_stats().
template <int Type>
__global__ void hiera_check_changed(const void* original, const void* after, unsigned long long count,
                                    check::ChangeStats* stats) {
  using Bits = typename Storage<Type>::type;
  const Bits* before = static_cast<const Bits*>(original);
  const Bits* now = static_cast<const Bits*>(after);
  check::ChangeStats mine = check::empty_change_stats();
  for (unsigned long long i = first_index(); i < count; i += grid_stride()) {
    check::note_change(mine, before[i], now[i], i);
  }
  publish_sum(&stats->changed, mine.changed);
  publish_min(&stats->first_changed, mine.first_changed);
}
