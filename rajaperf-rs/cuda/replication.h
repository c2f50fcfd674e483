// MULTI_REDUCE's and HISTOGRAM's replicated bins (their atomic_shared(s)_global(g) tunings,
// runners.h): which copies there are and where an element's value goes. Shared by the CUDA
// kernels (reduce.cu) and the host stand-in, which runs the same arithmetic block by block.
//
// `global` holds g copies of the num_bins bins, one after the other; a block's shared memory
// holds s copies, bin-major (bin b's copies are adjacent). With s > 0, thread t of a block adds
// to shared copy t mod s, and the block adds each non-zero bin's sum of its copies to global
// copy (block mod g); with s = 0, element i adds to global copy ((i / 32) mod g), its warp's.
// s and g are powers of two; after a repetition the host adds the g global copies up.
#ifndef RAJAPERF_REPLICATION_H
#define RAJAPERF_REPLICATION_H

#include <algorithm>

#include "bodies.h"
#include "runners.h"

#ifdef __CUDACC__
#define RP_HOST_DEVICE __host__ __device__
#else
#define RP_HOST_DEVICE
#endif

namespace rp {

struct Replication {
  Index_type shared, global;
};

// The preferred replications of each tuning, indexed like kMultiReduceTunings and
// kHistogramTunings (HISTOGRAM's "cub" has none).
constexpr Replication kMultiReduceReplication[] = {{0, 1}, {16, 2}};
constexpr Replication kHistogramReplication[] = {{0, 0}, {0, 1}, {16, 2}};
static_assert(sizeof(kMultiReduceReplication) / sizeof(Replication) ==
                  sizeof(kMultiReduceTunings) / sizeof(kMultiReduceTunings[0]),
              "one per tuning");
static_assert(sizeof(kHistogramReplication) / sizeof(Replication) ==
                  sizeof(kHistogramTunings) / sizeof(kHistogramTunings[0]),
              "one per tuning");

inline Index_type next_pow2(Index_type n) {
  Index_type p = 1;
  while (p < n) p *= 2;
  return p;
}

inline Index_type prev_pow2(Index_type n) {
  if (n <= 0) return 0;
  Index_type p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// RAJAPerf's choice from the preferred replications: g = next_pow2(min(preferred, blocks)),
// s = prev_pow2(min(preferred, max_shared)), max_shared being the copies of the bins that fit
// the kernel's dynamic shared memory.
inline Replication choose_replication(Replication preferred, Index_type blocks, Index_type max_shared) {
  return {prev_pow2(std::min(preferred.shared, max_shared)),
          next_pow2(std::min(preferred.global, std::max<Index_type>(blocks, 1)))};
}

// Shared copy of `bin` that thread `thread` of a block adds to.
RP_HOST_DEVICE inline Index_type shared_slot(Index_type bin, Index_type thread, Index_type shared_rep) {
  return bin * shared_rep + (thread & (shared_rep - 1));
}

// Global copy of `bin` for `spreader` (the block with shared copies, the warp without).
RP_HOST_DEVICE inline Index_type global_slot(Index_type bin, Index_type spreader, Index_type global_rep,
                                             Index_type num_bins) {
  return bin + (spreader & (global_rep - 1)) * num_bins;
}

// Adds the `global_rep` copies of each of the `num_bins` bins of `copies` up into `final`.
template <typename T>
void fold_copies(const T* copies, Index_type num_bins, Index_type global_rep, T* final) {
  for (Index_type b = 0; b < num_bins; ++b) {
    T sum = T(0);
    for (Index_type r = 0; r < global_rep; ++r) sum += copies[global_slot(b, r, global_rep, num_bins)];
    final[b] = sum;
  }
}

}  // namespace rp

#endif
