// Baseline for examples/spmv.rs: the same CSR sparse matrix-vector product of the 2-D
// five-point Laplacian, f64, in CUDA C++ with the same scheme — four lanes per row striding
// through its nonzeros, two __shfl_down_sync to combine them, the group's first lane writing
// the row — and the same x. Verified against the host; prints one JSON line.
//
// Usage: spmv [N] [REPS]   (defaults 2048 and 50)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.h"

constexpr int LANES = 4;

__global__ void spmv(const unsigned *__restrict__ row_ptr, const unsigned *__restrict__ cols,
                     const double *__restrict__ vals, const double *__restrict__ x, double *__restrict__ y,
                     long rows) {
  long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long row = t / LANES;
  int rank = t % LANES;
  double sum = 0;
  if (row < rows) {
    for (unsigned k = row_ptr[row] + rank; k < row_ptr[row + 1]; k += LANES) sum = fma(vals[k], x[cols[k]], sum);
  }
  sum += __shfl_down_sync(0xffffffff, sum, 2);
  sum += __shfl_down_sync(0xffffffff, sum, 1);
  if (row < rows && rank == 0) y[row] = sum;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2048;
  int reps = argc > 2 ? atoi(argv[2]) : 50;
  long rows = n * n;
  std::vector<unsigned> row_ptr{0}, cols;
  std::vector<double> vals, x(rows), y(rows);
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      auto push = [&](long c, double v) {
        cols.push_back((unsigned)c);
        vals.push_back(v);
      };
      if (i > 0) push((i - 1) * n + j, -1);
      if (j > 0) push(i * n + j - 1, -1);
      push(i * n + j, 4);
      if (j + 1 < n) push(i * n + j + 1, -1);
      if (i + 1 < n) push((i + 1) * n + j, -1);
      row_ptr.push_back((unsigned)cols.size());
    }
  for (long i = 0; i < rows; i++) x[i] = (double)(((unsigned long long)i * 2654435761ull) % 1000) / 1000.0;
  unsigned *dp, *dc;
  double *dv, *dx, *dy;
  CHECK(cudaMalloc(&dp, row_ptr.size() * sizeof(unsigned)));
  CHECK(cudaMalloc(&dc, cols.size() * sizeof(unsigned)));
  CHECK(cudaMalloc(&dv, vals.size() * sizeof(double)));
  CHECK(cudaMalloc(&dx, rows * sizeof(double)));
  CHECK(cudaMalloc(&dy, rows * sizeof(double)));
  CHECK(cudaMemcpy(dp, row_ptr.data(), row_ptr.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, cols.data(), cols.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, vals.data(), vals.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x.data(), rows * sizeof(double), cudaMemcpyHostToDevice));
  long threads = rows * LANES;
  int blocks = (int)((threads + 255) / 256);
  for (int r = 0; r < 3; r++) spmv<<<blocks, 256>>>(dp, dc, dv, dx, dy, rows);
  CHECK(cudaDeviceSynchronize());
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; r++) spmv<<<blocks, 256>>>(dp, dc, dv, dx, dy, rows);
  CHECK(cudaDeviceSynchronize());
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / reps;
  CHECK(cudaMemcpy(y.data(), dy, rows * sizeof(double), cudaMemcpyDeviceToHost));
  for (long r = 0; r < rows; r++) {
    double want = 0;
    for (unsigned k = row_ptr[r]; k < row_ptr[r + 1]; k++) want += vals[k] * x[cols[k]];
    if (fabs(y[r] - want) > 1e-12 * fmax(fabs(want), 1.0)) {
      fprintf(stderr, "spmv (CUDA): row %ld is %g, want %g\n", r, y[r], want);
      return 1;
    }
  }
  printf("{\"bench\":\"spmv\",\"side\":\"cuda\",\"rows\":%ld,\"nonzeros\":%zu,\"reps\":%d,\"us\":%.2f}\n", rows, vals.size(),
         reps, us);
  return 0;
}
