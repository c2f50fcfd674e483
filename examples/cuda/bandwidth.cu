// Baseline for examples/bandwidth.rs: cudaMemcpy of 1 GiB between cudaMallocHost (pinned)
// memory and the device, median of 5 after a warm-up, same JSON output.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double timed(void *dst, const void *src, size_t n, cudaMemcpyKind kind) {
  std::vector<double> t;
  cudaMemcpy(dst, src, n, kind);
  for (int r = 0; r < 5; r++) {
    auto start = std::chrono::steady_clock::now();
    if (cudaMemcpy(dst, src, n, kind) != cudaSuccess) { fprintf(stderr, "cudaMemcpy failed\n"); exit(1); }
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20;
  unsigned char *host, *dev;
  if (cudaMallocHost(&host, n) != cudaSuccess || cudaMalloc(&dev, n) != cudaSuccess) { fprintf(stderr, "allocation failed\n"); return 1; }
  for (size_t i = 0; i < n; i++) host[i] = (unsigned char)i;
  double h2d = timed(dev, host, n, cudaMemcpyHostToDevice), d2h = timed(host, dev, n, cudaMemcpyDeviceToHost);
  printf("{\"bench\":\"bandwidth\",\"side\":\"cuda\",\"dir\":\"h2d\",\"memory\":\"pinned\",\"bytes\":%zu,\"median_s\":%.6f,\"gb_per_s\":%.2f}\n", n, h2d, n / h2d / 1e9);
  printf("{\"bench\":\"bandwidth\",\"side\":\"cuda\",\"dir\":\"d2h\",\"memory\":\"pinned\",\"bytes\":%zu,\"median_s\":%.6f,\"gb_per_s\":%.2f}\n", n, d2h, n / d2h / 1e9);
  return 0;
}
