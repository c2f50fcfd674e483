// Baseline for examples/sort.rs: CUB's cub::DeviceRadixSort::SortKeys over the same u32 keys,
// its temporary storage allocated once outside the timed loop; each repetition sorts the
// unsorted keys again (copied in, untimed), as the Rust side does. Verified against the host's
// sort; prints one JSON line.
//
// Usage: sort [KEYS] [REPS]   (defaults 67108864 and 20)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cub/cub.cuh>
#include <vector>

#include "check.h"

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 26;
  int reps = argc > 2 ? atoi(argv[2]) : 20;
  std::vector<unsigned> keys(n), got(n);
  for (long i = 0; i < n; i++)
    keys[i] = (unsigned)(((unsigned long long)i * 0x9E3779B97F4A7C15ull) >> 32) ^ (unsigned)(i % 7);
  std::vector<unsigned> want = keys;
  std::sort(want.begin(), want.end());
  unsigned *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&out, n * sizeof(unsigned)));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, in, out, (int)n));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  double total = 0;
  for (int r = 0; r < reps + 3; r++) {
    CHECK(cudaMemcpy(in, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, (int)n));
    CHECK(cudaDeviceSynchronize());
    if (r >= 3) total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (got != want) {
    fprintf(stderr, "sort (CUB): the order differs from the host's\n");
    return 1;
  }
  double us = total / reps;
  printf("{\"bench\":\"sort\",\"side\":\"cuda\",\"keys\":%ld,\"reps\":%d,\"us\":%.1f,\"gkeys_per_s\":%.2f}\n", n, reps, us,
         n / (us * 1e-6) / 1e9);
  return 0;
}
