// Baseline for examples/sort.rs: CUB's cub::DeviceRadixSort::SortKeys over the same u32 keys,
// and SortPairs over the same keys carrying their indices, each with its temporary storage
// allocated once outside the timed loop; each repetition sorts the unsorted data again (copied
// in, untimed), as the Rust side does. Verified against the host's (stable) sort; prints one
// JSON line for each.
//
// Usage: sort [KEYS] [REPS]   (defaults 67108864 and 20)
#include <algorithm>
#include <utility>
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

  // Pairs: each key carries its index.
  std::vector<unsigned> index(n), got_values(n), want_values(n);
  for (long i = 0; i < n; i++) index[i] = (unsigned)i;
  std::vector<std::pair<unsigned, unsigned>> pairs(n);
  for (long i = 0; i < n; i++) pairs[i] = {keys[i], (unsigned)i};
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  for (long i = 0; i < n; i++) want_values[i] = pairs[i].second;
  unsigned *vin, *vout;
  CHECK(cudaMalloc(&vin, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&vout, n * sizeof(unsigned)));
  size_t pair_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, pair_bytes, in, out, vin, vout, (int)n));
  void *pair_temp;
  CHECK(cudaMalloc(&pair_temp, pair_bytes));
  total = 0;
  for (int r = 0; r < reps + 3; r++) {
    CHECK(cudaMemcpy(in, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(vin, index.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    CHECK(cub::DeviceRadixSort::SortPairs(pair_temp, pair_bytes, in, out, vin, vout, (int)n));
    CHECK(cudaDeviceSynchronize());
    if (r >= 3) total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_values.data(), vout, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (got != want || got_values != want_values) {
    fprintf(stderr, "sort (CUB pairs): the order differs from the host's stable sort\n");
    return 1;
  }
  us = total / reps;
  printf("{\"bench\":\"sort\",\"side\":\"cuda-pairs\",\"keys\":%ld,\"reps\":%d,\"us\":%.1f,\"gkeys_per_s\":%.2f}\n", n,
         reps, us, n / (us * 1e-6) / 1e9);
  return 0;
}
