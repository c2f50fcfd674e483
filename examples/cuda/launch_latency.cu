// Baseline for examples/launch_latency.rs: launch + synchronise an empty kernel with the CUDA
// runtime, the same number of times, and report the same percentiles; the same queued launches;
// and the same reduction round trip, done as RAJAPerf's CUDA reducers do it (pinned host value
// copied in, kernel, copied back, stream synchronised).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void empty(unsigned token) { (void)token; }

__global__ void copy_one(const double *__restrict__ x, double *__restrict__ y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

__global__ void wide_one(long n, double q, double r, double t, const double *__restrict__ a,
                         const double *__restrict__ b, const double *__restrict__ c,
                         const double *__restrict__ d, double *__restrict__ y) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + q * b[i] + r * c[i] + t * d[i];
}

// `total += x[i]`, one atomic addition per block (RAJAPerf's block-atomic sum).
__global__ void sum_all(const double *__restrict__ x, double *total, long n) {
  __shared__ double part[256];
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, part[0]);
}

// Microseconds per launch of `batch` queued launches, the median of five batches (-1 on error).
template <typename Launch>
double queued(int batch, Launch launch) {
  std::vector<double> per(5);
  for (int r = 0; r < 5; r++) {
    cudaDeviceSynchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; i++) launch();
    cudaError_t e = cudaDeviceSynchronize();
    per[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / batch;
    if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return -1; }
  }
  std::sort(per.begin(), per.end());
  return per[2];
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1000;
  for (int i = 0; i < 100; i++) { empty<<<1, 1>>>(i); cudaDeviceSynchronize(); }
  std::vector<double> t(reps);
  for (int i = 0; i < reps; i++) {
    auto start = std::chrono::steady_clock::now();
    empty<<<1, 1>>>(i);
    cudaError_t e = cudaDeviceSynchronize();
    t[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
  }
  std::sort(t.begin(), t.end());
  auto pct = [&](double p) { return t[(size_t)((reps - 1) * p + 0.5)]; };
  printf("{\"bench\":\"launch_latency\",\"side\":\"cuda\",\"reps\":%d,\"median_us\":%.2f,\"p10_us\":%.2f,\"p90_us\":%.2f}\n",
         reps, pct(0.5), pct(0.1), pct(0.9));

  // Throughput: back-to-back launches of a two-buffer kernel, one synchronisation.
  double *x, *y;
  cudaMalloc(&x, 256 * sizeof(double));
  cudaMalloc(&y, 256 * sizeof(double));
  int batch = 10 * reps;
  double per = queued(batch, [&] { copy_one<<<1, 256>>>(x, y, 256); });
  if (per < 0) return 1;
  printf("{\"bench\":\"launch_throughput\",\"side\":\"cuda\",\"launches\":%d,\"per_launch_us\":%.3f}\n", batch, per);

  // The same with the argument shape of RAJAPerf's EOS: four inputs, an output, four scalars.
  double *in[4];
  for (auto &p : in) cudaMalloc(&p, 256 * sizeof(double));
  per = queued(batch, [&] { wide_one<<<1, 256>>>(256, 0.5, 0.25, 0.125, in[0], in[1], in[2], in[3], y); });
  if (per < 0) return 1;
  printf("{\"bench\":\"launch_throughput_wide\",\"side\":\"cuda\",\"launches\":%d,\"per_launch_us\":%.3f}\n", batch, per);

  // The reduction round trip, one launch at a time, every result checked: as RAJAPerf does it
  // (one value, the legacy default stream), then with what the Rust runtime's path does
  // differently, to tell its costs apart: the 1 KiB it copies each way (a sum spread over 8
  // slots 128 bytes apart) and a non-blocking stream of its own (liboffload's queues).
  const long sum_n = 2048;
  std::vector<double> ones(sum_n, 1.0);
  double *dx, *dtotal, *htotal;
  cudaMalloc(&dx, sum_n * sizeof(double));
  cudaMemcpy(dx, ones.data(), sum_n * sizeof(double), cudaMemcpyHostToDevice);
  cudaMalloc(&dtotal, 1024);
  cudaMallocHost(&htotal, 1024);
  cudaStream_t own;
  cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  struct Variant { const char *name; size_t bytes; cudaStream_t stream; };
  const Variant variants[] = {{"reduce_roundtrip", sizeof(double), 0},
                              {"reduce_roundtrip_1k", 1024, 0},
                              {"reduce_roundtrip_stream", sizeof(double), own},
                              {"reduce_roundtrip_1k_stream", 1024, own}};
  for (const Variant &v : variants) {
    t.clear();
    int wrong = 0;
    for (int r = 0; r < reps + 100; r++) {
      auto start = std::chrono::steady_clock::now();
      memset(htotal, 0, v.bytes);
      cudaMemcpyAsync(dtotal, htotal, v.bytes, cudaMemcpyHostToDevice, v.stream);
      sum_all<<<sum_n / 256, 256, 0, v.stream>>>(dx, dtotal, sum_n);
      cudaMemcpyAsync(htotal, dtotal, v.bytes, cudaMemcpyDeviceToHost, v.stream);
      cudaError_t e = cudaStreamSynchronize(v.stream);
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
      wrong += *htotal != (double)sum_n;
      if (r >= 100) t.push_back(us);  // the first 100 are warm-up
    }
    std::sort(t.begin(), t.end());
    printf("{\"bench\":\"%s\",\"side\":\"cuda\",\"n\":%ld,\"bytes\":%zu,\"reps\":%d,\"median_us\":%.2f,\"p10_us\":%.2f,\"p90_us\":%.2f,\"wrong\":%d}\n",
           v.name, sum_n, v.bytes, reps, pct(0.5), pct(0.1), pct(0.9), wrong);
  }
  return 0;
}
