// What the bytes of a reduction's round trip cost: a 2,048-element sum (8 blocks, one atomic
// addition per block into slot b mod SLOTS, slots STRIDE bytes apart), its slots copied in
// from pinned memory, the kernel, the slots copied back, the stream synchronised; for several
// slot layouts. The layouts take turns repetition by repetition, so that whatever state the
// machine is in (the round trip on an H200 switches between about 14 and 20 µs, for CUDA and
// Rust alike) every layout sees it equally. Every result is checked.
//
//   nvcc -O3 -arch=sm_90 -o roundtrip_bytes scripts/probes/roundtrip_bytes.cu
//   ./roundtrip_bytes [REPS]   -> one JSON line per layout (median and p10/p90 in µs)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr long kN = 2048;

__global__ void sum_slots(const double *__restrict__ x, double *slots, int nslots, int stride_doubles) {
  __shared__ double part[256];
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < kN ? x[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(&slots[(blockIdx.x % nslots) * stride_doubles], part[0]);
}

struct Layout {
  int slots, stride;  // stride in bytes
  bool copy_in;       // false: the slots are zeroed on the device by a memset instead
};

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 2000;
  const Layout layouts[] = {{1, 8, true},   {2, 128, true},  {4, 128, true}, {8, 128, true},
                            {8, 128, false}, {8, 8, true},    {8, 32, true},  {16, 32, true},
                            {8, 64, true},   {16, 64, true}};
  const int nl = sizeof(layouts) / sizeof(layouts[0]);
  std::vector<double> ones(kN, 1.0);
  double *dx, *dslots, *hslots;
  cudaMalloc(&dx, kN * sizeof(double));
  cudaMemcpy(dx, ones.data(), kN * sizeof(double), cudaMemcpyHostToDevice);
  cudaMalloc(&dslots, 4096);
  cudaMallocHost(&hslots, 4096);
  std::vector<std::vector<double>> t(nl);
  std::vector<int> wrong(nl);
  for (int r = 0; r < reps + 100; r++) {
    for (int l = 0; l < nl; l++) {
      const Layout &v = layouts[l];
      size_t bytes = (size_t)(v.slots - 1) * v.stride + sizeof(double);
      int sd = v.stride / (int)sizeof(double);
      auto start = std::chrono::steady_clock::now();
      memset(hslots, 0, bytes);
      if (v.copy_in)
        cudaMemcpyAsync(dslots, hslots, bytes, cudaMemcpyHostToDevice, 0);
      else
        cudaMemsetAsync(dslots, 0, bytes, 0);
      sum_slots<<<kN / 256, 256>>>(dx, dslots, v.slots, sd);
      cudaMemcpyAsync(hslots, dslots, bytes, cudaMemcpyDeviceToHost, 0);
      cudaError_t e = cudaStreamSynchronize(0);
      double total = 0;
      for (int s = 0; s < v.slots; s++) total += hslots[s * sd];
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
      wrong[l] += total != (double)kN;
      if (r >= 100) t[l].push_back(us);
    }
  }
  for (int l = 0; l < nl; l++) {
    std::sort(t[l].begin(), t[l].end());
    auto pct = [&](double p) { return t[l][(size_t)((t[l].size() - 1) * p + 0.5)]; };
    const Layout &v = layouts[l];
    printf("{\"slots\":%d,\"stride\":%d,\"bytes\":%zu,\"in\":\"%s\",\"reps\":%d,\"median_us\":%.2f,\"p10_us\":%.2f,\"p90_us\":%.2f,\"wrong\":%d}\n",
           v.slots, v.stride, (size_t)(v.slots - 1) * v.stride + sizeof(double), v.copy_in ? "copy" : "memset",
           reps, pct(0.5), pct(0.1), pct(0.9), wrong[l]);
  }
  return 0;
}
