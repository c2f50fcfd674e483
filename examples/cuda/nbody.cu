// Baseline for examples/nbody.rs: the same all-pairs n-body step in CUDA C++, written the way a
// CUDA programmer would (GPU Gems 3, ch. 31) — one body per thread, float4 positions staged
// through shared memory in tiles of one body per thread, rsqrtf per pair, fused multiply-adds
// (nvcc contracts a*b+c; the Rust side writes math::fma) — with the same bodies, softening,
// block size and leapfrog integration. Prints one JSON line.
//
// Usage: nbody [BODIES] [STEPS]   (defaults 65536 and 10)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

constexpr float SOFTENING2 = 1e-4f;
constexpr float DT = 1e-3f;
constexpr int BLOCK = 256;

__global__ void accelerations(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n) {
  extern __shared__ float4 tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float ax = 0, ay = 0, az = 0;
  for (int k = 0; k < (n + blockDim.x - 1) / blockDim.x; k++) {
    int j = k * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll 4
    for (int q = 0; q < blockDim.x; q++) {
      float4 p = tile[q];
      float dx = p.x - me.x, dy = p.y - me.y, dz = p.z - me.z;
      float r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
      float inv = rsqrtf(r2);
      float s = p.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i < n) acc[i] = make_float4(ax, ay, az, 0);
}

__global__ void integrate(float dt, const float4 *__restrict__ acc, float4 *vel, float4 *pos, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 a = acc[i], v = vel[i], p = pos[i];
  v = make_float4(a.x * dt + v.x, a.y * dt + v.y, a.z * dt + v.z, 0);
  vel[i] = v;
  pos[i] = make_float4(v.x * dt + p.x, v.y * dt + p.y, v.z * dt + p.z, p.w);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 65536;
  int steps = argc > 2 ? atoi(argv[2]) : 10;
  // The bodies of examples/nbody.rs: the same xorshift sequence.
  std::vector<float4> pos0(n);
  unsigned long long state = 0x2545F4914F6CDD1Dull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (float)(state >> 40) / (float)(1ull << 24);
  };
  for (int i = 0; i < n; i++) {
    float x = next() * 2 - 1, y = next() * 2 - 1, z = next() * 2 - 1;
    pos0[i] = make_float4(x, y, z, (0.5f + next()) / n);
  }
  float4 *pos, *vel, *acc;
  CHECK(cudaMalloc(&pos, n * sizeof(float4)));
  CHECK(cudaMalloc(&vel, n * sizeof(float4)));
  CHECK(cudaMalloc(&acc, n * sizeof(float4)));
  CHECK(cudaMemcpy(pos, pos0.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(vel, 0, n * sizeof(float4)));
  int blocks = (n + BLOCK - 1) / BLOCK;
  size_t shared = BLOCK * sizeof(float4);

  // Check body 0's and the last body's accelerations against the host (double precision).
  accelerations<<<blocks, BLOCK, shared>>>(pos, acc, n);
  CHECK(cudaGetLastError());
  std::vector<float4> got(n);
  CHECK(cudaMemcpy(got.data(), acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
  for (int i : {0, n - 1}) {
    double a[3] = {0, 0, 0};
    for (int j = 0; j < n; j++) {
      double d[3] = {(double)pos0[j].x - pos0[i].x, (double)pos0[j].y - pos0[i].y, (double)pos0[j].z - pos0[i].z};
      double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING2;
      double s = pos0[j].w / (r2 * sqrt(r2));
      for (int k = 0; k < 3; k++) a[k] += d[k] * s;
    }
    double scale = fmax(fabs(a[0]), fmax(fabs(a[1]), fabs(a[2])));
    float g[3] = {got[i].x, got[i].y, got[i].z};
    for (int k = 0; k < 3; k++)
      if (fabs(g[k] - a[k]) > 1e-3 * scale) {
        fprintf(stderr, "nbody (CUDA): body %d's acceleration %d is %g, want %g\n", i, k, g[k], a[k]);
        return 1;
      }
  }

  auto step = [&]() {
    accelerations<<<blocks, BLOCK, shared>>>(pos, acc, n);
    integrate<<<blocks, BLOCK>>>(DT, acc, vel, pos, n);
  };
  step();
  CHECK(cudaDeviceSynchronize());
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; s++) step();
  CHECK(cudaDeviceSynchronize());
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / steps;
  printf("{\"bench\":\"nbody\",\"side\":\"cuda\",\"bodies\":%d,\"steps\":%d,\"us_per_step\":%.2f,\"ginteractions_per_s\":%.1f}\n",
         n, steps, us, (double)n * n / (us * 1e-6) / 1e9);
  return 0;
}
