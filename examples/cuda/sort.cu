// Baseline for examples/sort.rs: CUB's cub::DeviceRadixSort::SortKeys over the same u32 keys,
// and SortPairs over the same keys carrying their indices (as u32, and as u64 values holding the
// index in both halves), each with its temporary storage
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

// SortPairs of `keys` carrying values `value(i)` of type V, timed as SortKeys is; checked against
// the host's order (`want`) and stable sort (`want_index`). Prints one JSON line for `side`;
// returns 1 on a failure (as CHECK does), else 0.
template <typename V, typename F>
static int time_pairs(const char *side, const std::vector<unsigned> &keys, const std::vector<unsigned> &want,
                       const std::vector<unsigned> &want_index, unsigned *in, unsigned *out, int reps, F value) {
  long n = (long)keys.size();
  std::vector<V> values(n), got_values(n);
  std::vector<unsigned> got(n);
  for (long i = 0; i < n; i++) values[i] = value((unsigned)i);
  V *vin, *vout;
  CHECK(cudaMalloc(&vin, n * sizeof(V)));
  CHECK(cudaMalloc(&vout, n * sizeof(V)));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, in, out, vin, vout, (int)n));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  double total = 0;
  for (int r = 0; r < reps + 3; r++) {
    CHECK(cudaMemcpy(in, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(vin, values.data(), n * sizeof(V), cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, in, out, vin, vout, (int)n));
    CHECK(cudaDeviceSynchronize());
    if (r >= 3) total += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_values.data(), vout, n * sizeof(V), cudaMemcpyDeviceToHost));
  bool right = got == want;
  for (long i = 0; right && i < n; i++) right = got_values[i] == value(want_index[i]);
  CHECK(cudaFree(vin));
  CHECK(cudaFree(vout));
  CHECK(cudaFree(temp));
  if (!right) {
    fprintf(stderr, "sort (CUB %s): the order differs from the host's stable sort\n", side);
    return 1;
  }
  double us = total / reps;
  printf("{\"bench\":\"sort\",\"side\":\"%s\",\"keys\":%ld,\"reps\":%d,\"us\":%.1f,\"gkeys_per_s\":%.2f}\n", side, n,
         reps, us, n / (us * 1e-6) / 1e9);
  return 0;
}

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

  // Pairs: each key carries its index; then its index in both halves of an 8-byte value.
  std::vector<unsigned> want_index(n);
  {
    std::vector<std::pair<unsigned, unsigned>> pairs(n);
    for (long i = 0; i < n; i++) pairs[i] = {keys[i], (unsigned)i};
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (long i = 0; i < n; i++) want_index[i] = pairs[i].second;
  }
  if (time_pairs<unsigned>("cuda-pairs", keys, want, want_index, in, out, reps, [](unsigned i) { return i; }))
    return 1;
  if (time_pairs<unsigned long long>("cuda-pairs64", keys, want, want_index, in, out, reps,
                                      [](unsigned i) { return (unsigned long long)i << 32 | i; }))
    return 1;
  return 0;
}
