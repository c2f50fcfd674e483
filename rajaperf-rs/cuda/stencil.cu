// Tier 3 stencils: HYDRO_2D (Lcals), JACOBI_1D, JACOBI_2D, HEAT_3D (Polybench) — RAJAPerf's
// Base_CUDA kernels. The 2-D and 3-D ones use blocks of 32 threads along the fastest index
// and 8 along the next, launched over the interior (thread position + 1).

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;
constexpr size_t kFast = STENCIL_FAST_BLOCK, kSlow = STENCIL_SLOW_BLOCK;

template <size_t j_block_size, size_t k_block_size>
__launch_bounds__(j_block_size* k_block_size) __global__
    void hydro_2d1(Real_ptr za, Real_ptr zb, Real_ptr zp, Real_ptr zq, Real_ptr zr, Real_ptr zm,
                   Index_type jn, Index_type kn) {
  Index_type k = 1 + blockIdx.y * k_block_size + threadIdx.y;
  Index_type j = 1 + blockIdx.x * j_block_size + threadIdx.x;
  if (k < kn - 1 && j < jn - 1) {
    HYDRO_2D_BODY1
  }
}

template <size_t j_block_size, size_t k_block_size>
__launch_bounds__(j_block_size* k_block_size) __global__
    void hydro_2d2(Real_ptr zu, Real_ptr zv, Real_ptr za, Real_ptr zb, Real_ptr zz, Real_ptr zr,
                   Real_type s, Index_type jn, Index_type kn) {
  Index_type k = 1 + blockIdx.y * k_block_size + threadIdx.y;
  Index_type j = 1 + blockIdx.x * j_block_size + threadIdx.x;
  if (k < kn - 1 && j < jn - 1) {
    HYDRO_2D_BODY2
  }
}

template <size_t j_block_size, size_t k_block_size>
__launch_bounds__(j_block_size* k_block_size) __global__
    void hydro_2d3(Real_ptr zrout, Real_ptr zzout, Real_ptr zr, Real_ptr zz, Real_ptr zu,
                   Real_ptr zv, Real_type t, Index_type jn, Index_type kn) {
  Index_type k = 1 + blockIdx.y * k_block_size + threadIdx.y;
  Index_type j = 1 + blockIdx.x * j_block_size + threadIdx.x;
  if (k < kn - 1 && j < jn - 1) {
    HYDRO_2D_BODY3
  }
}

// Each Polybench stencil is two sweeps per repetition, A to B (step 1) and B to A (step 2);
// one template serves both.
template <int step, size_t block_size>
__launch_bounds__(block_size) __global__ void poly_jacobi_1D(Real_ptr A, Real_ptr B, Index_type N) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i > 0 && i < N - 1) {
    if (step == 1) {
      POLYBENCH_JACOBI_1D_BODY1
    } else {
      POLYBENCH_JACOBI_1D_BODY2
    }
  }
}

template <int step, size_t j_block_size, size_t i_block_size>
__launch_bounds__(j_block_size* i_block_size) __global__
    void poly_jacobi_2D(Real_ptr A, Real_ptr B, Index_type N) {
  Index_type i = 1 + blockIdx.y * i_block_size + threadIdx.y;
  Index_type j = 1 + blockIdx.x * j_block_size + threadIdx.x;
  if (i < N - 1 && j < N - 1) {
    if (step == 1) {
      POLYBENCH_JACOBI_2D_BODY1
    } else {
      POLYBENCH_JACOBI_2D_BODY2
    }
  }
}

template <int step, size_t k_block_size, size_t j_block_size>
__launch_bounds__(k_block_size* j_block_size) __global__
    void poly_heat_3D(Real_ptr A, Real_ptr B, Index_type N) {
  Index_type i = 1 + blockIdx.z;
  Index_type j = 1 + blockIdx.y * j_block_size + threadIdx.y;
  Index_type k = 1 + blockIdx.x * k_block_size + threadIdx.x;
  if (i < N - 1 && j < N - 1 && k < N - 1) {
    if (step == 1) {
      POLYBENCH_HEAT_3D_BODY1
    } else {
      POLYBENCH_HEAT_3D_BODY2
    }
  }
}

// Blocks covering the interior of n points along the fastest and the next index.
dim3 interior_grid(Index_type fast, Index_type slow, Index_type slowest = 1) {
  return dim3(static_cast<unsigned>(grid_size(fast > 2 ? fast - 2 : 0, kFast)),
              static_cast<unsigned>(grid_size(slow > 2 ? slow - 2 : 0, kSlow)),
              static_cast<unsigned>(slowest));
}

}  // namespace

void run_hydro_2d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type jn = param(args, "jn"), kn = param(args, "kn");
  const Real_type s = scalar(args, "s"), tt = scalar(args, "t");
  DeviceArrays d(args, t);
  Real_ptr zm = d.input("zm"), zp = d.input("zp"), zq = d.input("zq"), zr = d.input("zr"), zz = d.input("zz");
  Real_ptr zrout = d.output("zrout"), zzout = d.output("zzout"), za = d.output("za"), zb = d.output("zb");
  Real_ptr zu = d.output("zu"), zv = d.output("zv");
  const dim3 block(kFast, kSlow), grid = interior_grid(jn, kn);
  timed_reps(reps, t, [&] {
    if (grid.x == 0 || grid.y == 0) return;
    hydro_2d1<kFast, kSlow><<<grid, block>>>(za, zb, zp, zq, zr, zm, jn, kn);
    hydro_2d2<kFast, kSlow><<<grid, block>>>(zu, zv, za, zb, zz, zr, s, jn, kn);
    hydro_2d3<kFast, kSlow><<<grid, block>>>(zrout, zzout, zr, zz, zu, zv, tt, jn, kn);
  });
  d.copy_back();
}

void run_jacobi_1d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "n");
  DeviceArrays d(args, t);
  Real_ptr A = d.output("A"), B = d.output("B");
  const size_t grid = grid_size(N, kBlock);
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    poly_jacobi_1D<1, kBlock><<<grid, kBlock>>>(A, B, N);
    poly_jacobi_1D<2, kBlock><<<grid, kBlock>>>(A, B, N);
  });
  d.copy_back();
}

void run_jacobi_2d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "n");
  DeviceArrays d(args, t);
  Real_ptr A = d.output("A"), B = d.output("B");
  const dim3 block(kFast, kSlow), grid = interior_grid(N, N);
  timed_reps(reps, t, [&] {
    if (grid.x == 0 || grid.y == 0) return;
    poly_jacobi_2D<1, kFast, kSlow><<<grid, block>>>(A, B, N);
    poly_jacobi_2D<2, kFast, kSlow><<<grid, block>>>(A, B, N);
  });
  d.copy_back();
}

void run_heat_3d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "n");
  DeviceArrays d(args, t);
  Real_ptr A = d.output("A"), B = d.output("B");
  const dim3 block(kFast, kSlow, 1), grid = interior_grid(N, N, N > 2 ? N - 2 : 0);
  timed_reps(reps, t, [&] {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    poly_heat_3D<1, kFast, kSlow><<<grid, block>>>(A, B, N);
    poly_heat_3D<2, kFast, kSlow><<<grid, block>>>(A, B, N);
  });
  d.copy_back();
}

}  // namespace rp
