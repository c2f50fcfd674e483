// Tier 3 dense products: MAT_MAT_SHARED (Basic), GEMM, 2MM (Polybench) — RAJAPerf's
// Base_CUDA kernels. MAT_MAT_SHARED tiles A and B through shared memory in 16×16 blocks;
// GEMM and 2MM give each thread of a 32×8 block one output element.

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kTile = MAT_MAT_SHARED_TL_SZ;
constexpr size_t kFast = STENCIL_FAST_BLOCK, kSlow = STENCIL_SLOW_BLOCK;

template <Index_type tile_size>
__launch_bounds__(tile_size* tile_size) __global__
    void mat_mat_shared(Index_type N, Real_ptr C, Real_ptr A, Real_ptr B) {
  const Index_type tx = threadIdx.x, ty = threadIdx.y, bx = blockIdx.x, by = blockIdx.y;
  __shared__ Real_type As[tile_size][tile_size];
  __shared__ Real_type Bs[tile_size][tile_size];
  __shared__ Real_type Cs[tile_size][tile_size];
  Cs[ty][tx] = 0.0;
  for (Index_type k = 0; k < (tile_size + N - 1) / tile_size; k++) {
    {
      MAT_MAT_SHARED_BODY_2(tile_size)
    }
    __syncthreads();
    MAT_MAT_SHARED_BODY_3(tile_size)
    __syncthreads();
  }
  MAT_MAT_SHARED_BODY_4(tile_size)
}

template <size_t j_block_size, size_t i_block_size>
__launch_bounds__(j_block_size* i_block_size) __global__
    void poly_gemm(Real_ptr C, Real_ptr A, Real_ptr B, Real_type alpha, Real_type beta,
                   Index_type ni, Index_type nj, Index_type nk) {
  Index_type i = blockIdx.y * i_block_size + threadIdx.y;
  Index_type j = blockIdx.x * j_block_size + threadIdx.x;
  if (i < ni && j < nj) {
    POLYBENCH_GEMM_BODY1
    POLYBENCH_GEMM_BODY2
    for (Index_type k = 0; k < nk; ++k) {
      POLYBENCH_GEMM_BODY3
    }
    POLYBENCH_GEMM_BODY4
  }
}

template <size_t j_block_size, size_t i_block_size>
__launch_bounds__(j_block_size* i_block_size) __global__
    void poly_2mm_1(Real_ptr tmp, Real_ptr A, Real_ptr B, Real_type alpha, Index_type ni,
                    Index_type nj, Index_type nk) {
  Index_type i = blockIdx.y * i_block_size + threadIdx.y;
  Index_type j = blockIdx.x * j_block_size + threadIdx.x;
  if (i < ni && j < nj) {
    POLYBENCH_2MM_BODY1
    for (Index_type k = 0; k < nk; ++k) {
      POLYBENCH_2MM_BODY2
    }
    POLYBENCH_2MM_BODY3
  }
}

template <size_t l_block_size, size_t i_block_size>
__launch_bounds__(l_block_size* i_block_size) __global__
    void poly_2mm_2(Real_ptr tmp, Real_ptr C, Real_ptr D, Real_type beta, Index_type ni,
                    Index_type nl, Index_type nj) {
  Index_type i = blockIdx.y * i_block_size + threadIdx.y;
  Index_type l = blockIdx.x * l_block_size + threadIdx.x;
  if (i < ni && l < nl) {
    POLYBENCH_2MM_BODY4
    for (Index_type j = 0; j < nj; ++j) {
      POLYBENCH_2MM_BODY5
    }
    POLYBENCH_2MM_BODY6
  }
}

// Blocks of 32×8 threads covering cols × rows.
dim3 blocks_for(Index_type cols, Index_type rows) {
  return dim3(static_cast<unsigned>(grid_size(cols, kFast)), static_cast<unsigned>(grid_size(rows, kSlow)));
}

}  // namespace

void run_mat_mat_shared(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "n");
  DeviceArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.output("C");
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>(grid_size(N, kTile)), static_cast<unsigned>(grid_size(N, kTile)));
  timed_reps(reps, t, [&] {
    if (grid.x > 0) mat_mat_shared<kTile><<<grid, block>>>(N, C, A, B);
  });
  d.copy_back();
}

void run_gemm(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  const Real_type alpha = scalar(args, "alpha"), beta = scalar(args, "beta");
  DeviceArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.output("C");
  const dim3 block(kFast, kSlow), grid = blocks_for(nj, ni);
  timed_reps(reps, t, [&] {
    if (grid.x > 0 && grid.y > 0) poly_gemm<kFast, kSlow><<<grid, block>>>(C, A, B, alpha, beta, ni, nj, nk);
  });
  d.copy_back();
}

void run_2mm(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  const Index_type nl = param(args, "nl");
  const Real_type alpha = scalar(args, "alpha"), beta = scalar(args, "beta");
  DeviceArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.input("C");
  Real_ptr tmp = d.output("tmp"), D = d.output("D");
  const dim3 block(kFast, kSlow), grid1 = blocks_for(nj, ni), grid2 = blocks_for(nl, ni);
  timed_reps(reps, t, [&] {
    if (grid1.x == 0 || grid1.y == 0 || grid2.x == 0) return;
    poly_2mm_1<kFast, kSlow><<<grid1, block>>>(tmp, A, B, alpha, ni, nj, nk);
    poly_2mm_2<kFast, kSlow><<<grid2, block>>>(tmp, C, D, beta, ni, nl, nj);
  });
  d.copy_back();
}

}  // namespace rp
