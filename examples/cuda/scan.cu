// Baseline for examples/scan.rs: CUB's cub::DeviceScan::ExclusiveSum (the single-pass
// decoupled look-back scan that CUDA programmers reach for) over the same values, with its
// temporary storage allocated once outside the timed loop. Verified against the host; prints
// one JSON line.
//
// Usage: scan [VALUES] [REPS]   (defaults 67108864 and 50)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cub/cub.cuh>
#include <vector>

#include "check.h"

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 26;
  int reps = argc > 2 ? atoi(argv[2]) : 50;
  std::vector<unsigned> values(n), got(n);
  for (long i = 0; i < n; i++) values[i] = ((unsigned)i * 2654435761u) >> 28;
  unsigned *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&out, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(in, values.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in, out, (int)n));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  auto scan = [&]() { return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, (int)n); };
  for (int r = 0; r < 3; r++) CHECK(scan());
  CHECK(cudaDeviceSynchronize());
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; r++) CHECK(scan());
  CHECK(cudaDeviceSynchronize());
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / reps;
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned run = 0;
  for (long i = 0; i < n; i++) {
    if (got[i] != run) {
      fprintf(stderr, "scan (CUB): element %ld is %u, want %u\n", i, got[i], run);
      return 1;
    }
    run += values[i];
  }
  printf("{\"bench\":\"scan\",\"side\":\"cuda\",\"values\":%ld,\"reps\":%d,\"us\":%.2f,\"gb_per_s\":%.1f}\n", n, reps, us,
         2.0 * n * 4 / (us * 1e-6) / 1e9);
  return 0;
}
