// Baseline for `examples/gemm.rs bench`: cuBLAS called directly, on the same square sizes and
// data, timed the same way. Prints one JSON line per type and size:
//   "sync":  per call, cublas?gemm + cudaStreamSynchronize timed on the host, median (what
//            offload::blas::gemm does: the result is ready when the call returns);
//   "async": back-to-back calls timed with CUDA events, mean (cuBLAS's throughput alone).
// And one line with the fixed cost of a 1×1×1 call with its synchronisation.
//
// Build: nvcc -O3 -o gemm_cublas gemm_cublas.cu -lcublas
// Usage: gemm_cublas [sizes...]   (default 1024 2048 4096 8192)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <vector>

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)
#define CHECK_CUBLAS(x)                                                                      \
  do {                                                                                       \
    cublasStatus_t s_ = (x);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cublasGetStatusName(s_));   \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

static cublasStatus_t gemm(cublasHandle_t h, int n, const float *a, const float *b, float *c) {
  const float one = 1.0f, zero = 0.0f;
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
}
static cublasStatus_t gemm(cublasHandle_t h, int n, const double *a, const double *b, double *c) {
  const double one = 1.0, zero = 0.0;
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
}

static double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

template <typename T>
static void bench(cublasHandle_t h, cudaStream_t s, const char *type, int n) {
  size_t elems = (size_t)n * n;
  // The same values as the Rust side's `values(n * n, 5)`.
  std::vector<T> host(elems);
  for (size_t i = 0; i < elems; i++) host[i] = (T)((float)((i * 7919 + 5 * 104729) % 2003) / 1001.5f - 1.0f);
  T *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, elems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&b, elems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&c, elems * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(a, host.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, host.data(), elems * sizeof(T), cudaMemcpyHostToDevice));
  auto call = [&] {
    CHECK_CUBLAS(gemm(h, n, a, b, c));
    CHECK_CUDA(cudaStreamSynchronize(s));
  };
  call();
  call();
  auto t = std::chrono::steady_clock::now();
  call();
  double once = seconds_since(t);
  int reps = std::min(200, std::max(5, (int)(0.5 / once)));
  std::vector<double> times(reps);
  for (int r = 0; r < reps; r++) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    times[r] = seconds_since(t0);
  }
  std::sort(times.begin(), times.end());
  double median = times[reps / 2];
  double flop = 2.0 * n * (double)n * n;
  printf("{\"side\":\"cuda\",\"what\":\"gemm\",\"mode\":\"sync\",\"type\":\"%s\",\"n\":%d,\"reps\":%d,\"median_ms\":%.4f,"
         "\"tflops\":%.3f}\n",
         type, n, reps, median * 1e3, flop / median / 1e12);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start, s));
  for (int r = 0; r < reps; r++) CHECK_CUBLAS(gemm(h, n, a, b, c));
  CHECK_CUDA(cudaEventRecord(stop, s));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  double mean = ms / 1e3 / reps;
  printf("{\"side\":\"cuda\",\"what\":\"gemm\",\"mode\":\"async\",\"type\":\"%s\",\"n\":%d,\"reps\":%d,\"median_ms\":%.4f,"
         "\"tflops\":%.3f}\n",
         type, n, reps, mean * 1e3, flop / mean / 1e12);
  fflush(stdout);
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
}

int main(int argc, char **argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; i++) sizes.push_back(atoi(argv[i]));
  if (sizes.empty()) sizes = {1024, 2048, 4096, 8192};
  cublasHandle_t h;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_CUBLAS(cublasCreate(&h));
  CHECK_CUBLAS(cublasSetStream(h, s));
  for (int n : sizes) bench<float>(h, s, "f32", n);
  for (int n : sizes) bench<double>(h, s, "f64", n);
  // The fixed cost of a call: a 1×1×1 product and its synchronisation.
  float *one;
  CHECK_CUDA(cudaMalloc(&one, 3 * sizeof(float)));
  CHECK_CUDA(cudaMemset(one, 0, 3 * sizeof(float)));
  std::vector<double> times(1000);
  for (double &t : times) {
    auto t0 = std::chrono::steady_clock::now();
    CHECK_CUBLAS(gemm(h, 1, one, one + 1, one + 2));
    CHECK_CUDA(cudaStreamSynchronize(s));
    t = seconds_since(t0);
  }
  std::sort(times.begin(), times.end());
  printf("{\"side\":\"cuda\",\"what\":\"latency\",\"gemm_1x1x1_us\":%.3f}\n", times[500] * 1e6);
  cublasDestroy(h);
  return 0;
}
