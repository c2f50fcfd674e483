// What a one-value reduction's repetition costs at 1M elements with its result handled four
// ways, in CUDA C++, on one GPU: the input of how rajaperf-rs's reductions could bring their
// result back (rajaperf-rs/results/README.md, 2026-11-30 afternoon: at 1M a repetition of
// PI_REDUCE or REDUCE_SUM is a host round trip of 21-28 us around a kernel of a few).
//
//   copies:   RAJAPerf's way: the initial value to the device (cudaMemcpyAsync from pinned
//             memory), the kernel, the result back (cudaMemcpyAsync to pinned), a stream sync.
//   memset:   the same with cudaMemsetAsync for the initial zero.
//   mapped:   the blocks add straight into pinned, mapped host memory (system-scope atomics
//             over the bus); the host sets the initial value and reads the result after a sync.
//   lastblock: the blocks add into a device slot; the last block to finish (a device counter)
//             writes the total into mapped host memory and resets the slot and the counter for
//             the next launch: one launch and one sync per repetition, nothing copied.
//
// Every repetition's result is checked against the host's sum of the same data (the data are
// small integers, so every order of addition gives the same double). Prints one JSON line per
// scheme: {"scheme":…,"n":…,"reps":…,"us_per_rep":median over seven batches,"min_us":…,
// "max_us":…,"wrong":results that differed}.
//
// Build and run (scripts/gpu-roundtrip-probe.sh does both when nvcc is there):
//   nvcc -O3 -arch=sm_90 -o reduce_roundtrip scripts/probes/reduce_roundtrip.cu && ./reduce_roundtrip
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

constexpr int kBlock = 256;

// The block's sum of x[i] over its elements, in thread 0.
__device__ double block_sum(const double* __restrict__ x, long n) {
  __shared__ double s[kBlock];
  const long i = static_cast<long>(blockIdx.x) * kBlock + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  return s[0];
}

// One atomic per block into `out` (device or mapped host memory).
__global__ void sum_atomic(const double* __restrict__ x, long n, double* out) {
  const double b = block_sum(x, n);
  if (threadIdx.x == 0) atomicAdd_system(out, b);
}

// One atomic per block into the device slot; the last block publishes and resets.
__global__ void sum_lastblock(const double* __restrict__ x, long n, double* slot,
                              unsigned* done, double* host_out, double init) {
  const double b = block_sum(x, n);
  if (threadIdx.x == 0) {
    atomicAdd(slot, b);
    __threadfence();
    if (atomicAdd(done, 1u) == gridDim.x - 1) {
      // Every other block's add is visible (each fenced before counting itself).
      const double total = atomicAdd(slot, 0.0);
      *host_out = init + total;
      *slot = 0.0;
      *done = 0;
      __threadfence_system();
    }
  }
}

using Clock = std::chrono::steady_clock;

// Times `reps` repetitions, seven times; every repetition's result is compared with `want`
// (the caller clears the result before each one, so a result never written shows).
template <typename Rep>
void measure(const char* scheme, long n, int reps, double want, Rep rep) {
  std::vector<double> batches;
  long wrong = 0;
  double last = 0.0;
  for (int batch = 0; batch < 7; ++batch) {
    const auto start = Clock::now();
    for (int r = 0; r < reps; ++r) {
      const double got = rep();
      if (got != want) ++wrong, last = got;
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / reps;
    batches.push_back(us);
  }
  std::vector<double> sorted = batches;
  std::sort(sorted.begin(), sorted.end());
  if (wrong > 0) std::fprintf(stderr, "%s: %ld wrong results (last %.17g, want %.17g)\n", scheme, wrong, last, want);
  std::printf("{\"scheme\":\"%s\",\"n\":%ld,\"reps\":%d,\"us_per_rep\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"wrong\":%ld}\n",
              scheme, n, reps, sorted[sorted.size() / 2], sorted.front(), sorted.back(), wrong);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 500;
  const unsigned grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  std::vector<double> host(n);
  double want = 0.0;
  for (long i = 0; i < n; ++i) {
    host[i] = static_cast<double>(i % 7);  // small integers: every order sums exactly
    want += host[i];
  }
  double* x;
  CHECK(cudaMalloc(&x, n * sizeof(double)));
  CHECK(cudaMemcpy(x, host.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  double *dslot, *pinned;
  unsigned* done;
  CHECK(cudaMalloc(&dslot, sizeof(double)));
  CHECK(cudaMalloc(&done, sizeof(unsigned)));
  CHECK(cudaMemset(dslot, 0, sizeof(double)));
  CHECK(cudaMemset(done, 0, sizeof(unsigned)));
  CHECK(cudaHostAlloc(&pinned, 2 * sizeof(double), cudaHostAllocMapped));
  double* mapped;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), pinned, 0));

  measure("copies", n, reps, want, [&] {
    pinned[0] = 0.0, pinned[1] = -1.0;
    CHECK(cudaMemcpyAsync(dslot, pinned, sizeof(double), cudaMemcpyHostToDevice, s));
    sum_atomic<<<grid, kBlock, 0, s>>>(x, n, dslot);
    CHECK(cudaMemcpyAsync(pinned + 1, dslot, sizeof(double), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    return pinned[1];
  });
  measure("memset", n, reps, want, [&] {
    pinned[1] = -1.0;
    CHECK(cudaMemsetAsync(dslot, 0, sizeof(double), s));
    sum_atomic<<<grid, kBlock, 0, s>>>(x, n, dslot);
    CHECK(cudaMemcpyAsync(pinned + 1, dslot, sizeof(double), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    return pinned[1];
  });
  CHECK(cudaMemset(dslot, 0, sizeof(double)));
  measure("lastblock", n, reps, want, [&] {
    pinned[1] = -1.0;
    sum_lastblock<<<grid, kBlock, 0, s>>>(x, n, dslot, done, mapped + 1, 0.0);
    CHECK(cudaStreamSynchronize(s));
    return *static_cast<volatile double*>(pinned + 1);
  });
  // Last: whether the GPU's atomics on host memory add up is up to the platform (the count
  // of wrong results says).
  measure("mapped", n, reps, want, [&] {
    pinned[0] = 0.0;
    sum_atomic<<<grid, kBlock, 0, s>>>(x, n, mapped);
    CHECK(cudaStreamSynchronize(s));
    return *static_cast<volatile double*>(pinned);
  });
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(dslot));
  CHECK(cudaFree(done));
  CHECK(cudaFree(x));
  return 0;
}
