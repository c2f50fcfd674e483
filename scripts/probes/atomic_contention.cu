// How the reductions' one-atomic-per-block pattern (RAJAPerf's block-atomic DOT, REDUCE_SUM,
// ... and offload's Sum) performs on this GPU: time per launch of 2^25 / 256 blocks whose
// thread 0 adds to a result in device memory, (1) with no loads, only the atomics, and (2)
// as DOT (two arrays of 2^25 doubles, block tree sum, one atomic per block). The result is
// either one address, at several places in an allocation (does its time depend on where the
// result lies?), or spread over K addresses S bytes apart, block b adding to address b % K
// (how much does spreading the same atomics gain, and how far apart must the addresses be?).
//
// Build and run: nvcc -O3 -arch=sm_90 -o atomic_contention atomic_contention.cu && ./atomic_contention
// Prints one JSON object per measurement.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));  \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

constexpr int kBlock = 256;
constexpr long kN = 1L << 25;

__global__ void atomics_only(double* result, int spread, int stride) {
  if (threadIdx.x == 0) atomicAdd(result + (blockIdx.x % spread) * stride, 1.0);
}

__global__ void dot(const double* __restrict__ a, const double* __restrict__ b, double* result,
                    int spread, int stride, long n) {
  __shared__ double slots[kBlock];
  long i = (long)blockIdx.x * kBlock + threadIdx.x;
  slots[threadIdx.x] = i < n ? a[i] * b[i] : 0.0;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) slots[threadIdx.x] += slots[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result + (blockIdx.x % spread) * stride, slots[0]);
}

int main() {
  const int blocks = (int)(kN / kBlock), reps = 200;
  double *a, *b, *result;
  const size_t result_bytes = 64 << 20;  // room to place the result at many offsets
  CHECK(cudaMalloc(&a, kN * sizeof(double)));
  CHECK(cudaMalloc(&b, kN * sizeof(double)));
  CHECK(cudaMalloc(&result, result_bytes));
  CHECK(cudaMemset(a, 0, kN * sizeof(double)));
  CHECK(cudaMemset(b, 0, kN * sizeof(double)));
  CHECK(cudaMemset(result, 0, result_bytes));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  auto measure = [&](const char* kernel, size_t offset_bytes, int spread, int stride_bytes) -> int {
    const int stride = stride_bytes / (int)sizeof(double);
    double* r = result + offset_bytes / sizeof(double);
    for (int warm = 0; warm < 2; ++warm) {
      if (kernel[0] == 'a') atomics_only<<<blocks, kBlock>>>(r, spread, stride);
      else dot<<<blocks, kBlock>>>(a, b, r, spread, stride, kN);
    }
    CHECK(cudaEventRecord(start));
    for (int rep = 0; rep < reps; ++rep) {
      if (kernel[0] == 'a') atomics_only<<<blocks, kBlock>>>(r, spread, stride);
      else dot<<<blocks, kBlock>>>(a, b, r, spread, stride, kN);
    }
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("{\"kernel\":\"%s\",\"offset_bytes\":%zu,\"spread\":%d,\"stride_bytes\":%d,\"blocks\":%d,\"us_per_launch\":%.2f}\n",
                kernel, offset_bytes, spread, stride_bytes, blocks, ms * 1000.0 / reps);
    return 0;
  };
  const char* kernels[] = {"atomics_only", "dot"};
  for (const char* k : kernels) {
    // One address, at 16 neighbouring 256-byte places and at a few places megabytes apart.
    for (size_t off = 0; off < 16 * 256; off += 256)
      if (measure(k, off, 1, 8)) return 1;
    for (size_t off = 1 << 20; off < result_bytes - 65536; off += 7 << 20)
      if (measure(k, off, 1, 8)) return 1;
    for (int stride : {8, 32, 128, 256})
      for (int spread = 2; spread <= 256; spread *= 2)
        if (measure(k, 0, spread, stride)) return 1;
  }
  return 0;
}
