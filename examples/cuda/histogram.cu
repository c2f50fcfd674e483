// Baseline for examples/histogram.rs: the same 256-bin histogram of the same values in CUDA C++,
// written the way a CUDA programmer would — per-block bins in shared memory updated with
// atomicAdd, merged into the global bins once per block, over a grid of as many blocks as are
// resident at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor) — and the naive kernel with
// one global atomic per value. Each timed histogram is preceded by a kernel that zeroes the bins,
// as on the Rust side. Prints one JSON line per kernel.
//
// Usage: histogram [VALUES] [REPS]   (defaults 16777216 and 50)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

constexpr int BINS = 256;

__global__ void histogram_shared(const unsigned *__restrict__ values, unsigned *bins, long n) {
  __shared__ unsigned local[BINS];
  for (int j = threadIdx.x; j < BINS; j += blockDim.x) local[j] = 0;
  __syncthreads();
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    atomicAdd(&local[values[i] % BINS], 1u);
  __syncthreads();
  for (int j = threadIdx.x; j < BINS; j += blockDim.x)
    if (local[j] != 0) atomicAdd(&bins[j], local[j]);
}

__global__ void histogram_global(const unsigned *__restrict__ values, unsigned *bins, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[values[i] % BINS], 1u);
}

__global__ void zero(unsigned *bins) {
  if (threadIdx.x < BINS) bins[threadIdx.x] = 0;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 24;
  int reps = argc > 2 ? atoi(argv[2]) : 50;
  std::vector<unsigned> values(n), want(BINS, 0), got(BINS);
  for (long i = 0; i < n; i++) {
    values[i] = ((unsigned)i * 2654435761u) >> 8;
    want[values[i] % BINS]++;
  }
  unsigned *dv, *db;
  CHECK(cudaMalloc(&dv, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&db, BINS * sizeof(unsigned)));
  CHECK(cudaMemcpy(dv, values.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  int device = 0, sms = 0, per_sm = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_shared, 256, 0));
  int blocks = sms * per_sm;
  struct Variant { const char *name; int grid; void (*kernel)(const unsigned *, unsigned *, long); };
  Variant variants[] = {{"shared", blocks, histogram_shared}, {"global", (int)((n + 255) / 256), histogram_global}};
  for (const Variant &v : variants) {
    for (int r = 0; r < 3; r++) {
      zero<<<1, BINS>>>(db);
      v.kernel<<<v.grid, 256>>>(dv, db, n);
    }
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; r++) {
      zero<<<1, BINS>>>(db);
      v.kernel<<<v.grid, 256>>>(dv, db, n);
    }
    CHECK(cudaDeviceSynchronize());
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / reps;
    CHECK(cudaMemcpy(got.data(), db, BINS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (got != want) {
      fprintf(stderr, "histogram %s: the bins differ from the host's\n", v.name);
      return 1;
    }
    printf("{\"bench\":\"histogram\",\"side\":\"cuda\",\"kernel\":\"%s\",\"values\":%ld,\"bins\":%d,\"blocks\":%d,\"reps\":%d,\"us\":%.2f}\n",
           v.name, n, BINS, v.grid, reps, us);
  }
  return 0;
}
