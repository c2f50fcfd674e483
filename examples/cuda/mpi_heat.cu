// Baseline for examples/mpi_heat.rs: the same Jacobi relaxation of the 2-D heat equation (top
// edge 1, other edges 0), rows decomposed over the MPI ranks with a ghost row above and below,
// in CUDA C++ + MPI as a competent programmer overlaps it: the first and last rows computed on
// one stream and copied into pinned buffers, the interior rows on a second stream meanwhile,
// the halos sent and received with MPI_Isend/MPI_Irecv from pinned memory (the MPI library
// need not be CUDA-aware), then copied into the ghost rows. One GPU per rank (node-local rank
// modulo the GPUs). Rank 0 prints the per-step time, the residual (which the Rust example's
// must match) and one JSON line.
//
// Build: nvcc -O3 -arch=sm_90 -ccbin mpicxx -o mpi_heat_cuda examples/cuda/mpi_heat.cu
// Usage: mpirun -n 4 mpi_heat_cuda [nx] [ny] [steps] [check]   (defaults 512 512 200 50)
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                          \
  do {                                                                       \
    cudaError_t e = (call);                                                  \
    if (e != cudaSuccess) {                                                  \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)

// Rows [row, row + rows) of `fresh` from `old`; local row r is global row g0 + r (g0 = the
// global row of local row 0, -1 for rank 0); the grid's edges keep their values.
__global__ void relax(long nx, long ny, long row, long rows, long g0, const double *__restrict__ old,
                      double *__restrict__ fresh) {
  long c = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long r = row + blockIdx.y * (long)blockDim.y + threadIdx.y;
  if (c >= nx || r >= row + rows) return;
  long at = r * nx + c;
  long g = g0 + r;
  fresh[at] = (g == 0 || g + 1 >= ny || c == 0 || c + 1 >= nx)
                  ? old[at]
                  : 0.25 * (old[at - nx] + old[at + nx] + old[at - 1] + old[at + 1]);
}

// Σ (fresh - old)² over n elements, one atomic add per block.
__global__ void change(const double *__restrict__ old, const double *__restrict__ fresh, long n, double *total) {
  __shared__ double part[256];
  double sum = 0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    double d = fresh[i] - old[i];
    sum += d * d;
  }
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, part[0]);
}

static dim3 grid_for(long nx, long rows, dim3 block) {
  return dim3((unsigned)((nx + block.x - 1) / block.x), (unsigned)((rows + block.y - 1) / block.y));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local;
  MPI_Comm_rank(node, &local);
  int gpus = 0;
  CHECK(cudaGetDeviceCount(&gpus));
  CHECK(cudaSetDevice(local % gpus));

  long nx = argc > 1 ? atol(argv[1]) : 512, ny = argc > 2 ? atol(argv[2]) : 512;
  long steps = argc > 3 ? atol(argv[3]) : 200, check = argc > 4 ? atol(argv[4]) : 50;
  long g_first = rank * ny / size, g_end = (rank + 1) * ny / size, own = g_end - g_first;
  if (nx < 3 || own < 2) {
    if (rank == 0) fprintf(stderr, "the grid needs at least 3 columns and 2 rows per rank\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long g0 = g_first - 1, n = nx * (own + 2);
  std::vector<double> start(n, 0.0);
  if (rank == 0) std::fill(start.begin() + nx, start.begin() + 2 * nx, 1.0);  // global row 0
  double *old, *fresh, *total;
  CHECK(cudaMalloc(&old, n * sizeof(double)));
  CHECK(cudaMalloc(&fresh, n * sizeof(double)));
  CHECK(cudaMalloc(&total, sizeof(double)));
  CHECK(cudaMemcpy(old, start.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(fresh, start.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  double *send_up, *send_down, *recv_up, *recv_down;  // pinned
  CHECK(cudaMallocHost(&send_up, nx * sizeof(double)));
  CHECK(cudaMallocHost(&send_down, nx * sizeof(double)));
  CHECK(cudaMallocHost(&recv_up, nx * sizeof(double)));
  CHECK(cudaMallocHost(&recv_down, nx * sizeof(double)));
  cudaStream_t edge, inner;
  CHECK(cudaStreamCreateWithFlags(&edge, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&inner, cudaStreamNonBlocking));
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  dim3 block(32, 8), row_block(256, 1);

  MPI_Barrier(MPI_COMM_WORLD);
  auto started = std::chrono::steady_clock::now();
  double residual = NAN;
  for (long s = 1; s <= steps; s++) {
    // The two edge rows, copied out as soon as they are done.
    relax<<<grid_for(nx, 1, row_block), row_block, 0, edge>>>(nx, ny, 1, 1, g0, old, fresh);
    relax<<<grid_for(nx, 1, row_block), row_block, 0, edge>>>(nx, ny, own, 1, g0, old, fresh);
    CHECK(cudaMemcpyAsync(send_up, fresh + nx, nx * sizeof(double), cudaMemcpyDeviceToHost, edge));
    CHECK(cudaMemcpyAsync(send_down, fresh + own * nx, nx * sizeof(double), cudaMemcpyDeviceToHost, edge));
    // The interior, overlapping the exchange.
    if (own > 2) relax<<<grid_for(nx, own - 2, block), block, 0, inner>>>(nx, ny, 2, own - 2, g0, old, fresh);
    MPI_Request req[4];
    MPI_Irecv(recv_up, (int)nx, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(recv_down, (int)nx, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[1]);
    CHECK(cudaStreamSynchronize(edge));
    MPI_Isend(send_up, (int)nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(send_down, (int)nx, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    if (up != MPI_PROC_NULL) CHECK(cudaMemcpyAsync(fresh, recv_up, nx * sizeof(double), cudaMemcpyHostToDevice, edge));
    if (down != MPI_PROC_NULL)
      CHECK(cudaMemcpyAsync(fresh + (own + 1) * nx, recv_down, nx * sizeof(double), cudaMemcpyHostToDevice, edge));
    CHECK(cudaStreamSynchronize(edge));
    CHECK(cudaStreamSynchronize(inner));
    if (s % check == 0 || s == steps) {
      double local_sum = 0;
      CHECK(cudaMemsetAsync(total, 0, sizeof(double), inner));
      change<<<264, 256, 0, inner>>>(old + nx, fresh + nx, own * nx, total);
      CHECK(cudaMemcpyAsync(&local_sum, total, sizeof(double), cudaMemcpyDeviceToHost, inner));
      CHECK(cudaStreamSynchronize(inner));
      double sum = 0;
      MPI_Allreduce(&local_sum, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      residual = sqrt(sum);
    }
    std::swap(old, fresh);
  }
  CHECK(cudaDeviceSynchronize());
  MPI_Barrier(MPI_COMM_WORLD);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(cudaGetLastError());
  if (rank == 0) {
    double per_step_us = seconds / steps * 1e6;
    printf("mpi_heat (CUDA): %ld x %ld, %ld steps on %d rank(s), %.1f us per step, residual %.3e\n", nx, ny, steps,
           size, per_step_us, residual);
    printf("{\"bench\":\"mpi_heat\",\"side\":\"cuda\",\"nx\":%ld,\"ny\":%ld,\"steps\":%ld,\"ranks\":%d,\"per_step_us\":%.3f,"
           "\"residual\":%.17g}\n",
           nx, ny, steps, size, per_step_us, residual);
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
