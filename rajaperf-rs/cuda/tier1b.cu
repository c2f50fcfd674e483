// The rest of tier 1b: NESTED_INIT (Basic), FIRST_SUM, TRIDIAG_ELIM, GEN_LIN_RECUR (Lcals),
// ENERGY, VOL3D, DEL_DOT_VEC_2D, ZONAL_ACCUMULATION_3D, MATVEC_3D_STENCIL (Apps): RAJAPerf's
// Base_CUDA kernels.

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;

template <size_t i_block_size, size_t j_block_size, size_t k_block_size>
__launch_bounds__(i_block_size* j_block_size* k_block_size) __global__
    void nested_init(Real_ptr array, Index_type ni, Index_type nj, Index_type nk) {
  Index_type i = blockIdx.x * i_block_size + threadIdx.x;
  Index_type j = blockIdx.y * j_block_size + threadIdx.y;
  Index_type k = blockIdx.z * k_block_size + threadIdx.z;
  if (i < ni && j < nj && k < nk) {
    NESTED_INIT_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__ void first_sum(Real_ptr x, Real_ptr y, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i > 0 && i < iend) {
    FIRST_SUM_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void tridiag_elim(Real_ptr xout, Real_ptr xin, Real_ptr y, Real_ptr z, Index_type N) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i > 0 && i < N) {
    TRIDIAG_ELIM_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void genlinrecur1(Real_ptr b5, Real_ptr stb5, Real_ptr sa, Real_ptr sb, Index_type kb5i,
                      Index_type N) {
  Index_type k = blockIdx.x * block_size + threadIdx.x;
  if (k < N) {
    GEN_LIN_RECUR_BODY1
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void genlinrecur2(Real_ptr b5, Real_ptr stb5, Real_ptr sa, Real_ptr sb, Index_type kb5i,
                      Index_type N) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i > 0 && i < N + 1) {
    GEN_LIN_RECUR_BODY2
  }
}

// ENERGY's six loops, one kernel template: step k runs ENERGY_BODYk (RAJAPerf writes six
// kernels; each reads only the arrays its body names).
template <int step, size_t block_size>
__launch_bounds__(block_size) __global__
    void energycalc(EnergyArrays a, Real_type rho0, Real_type e_cut, Real_type emin,
                    Real_type q_cut, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    ENERGY_UNPACK(a)
    ENERGY_STEP(step)
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void vol3d(Real_ptr vol, const Real_ptr x0, const Real_ptr x1, const Real_ptr x2,
               const Real_ptr x3, const Real_ptr x4, const Real_ptr x5, const Real_ptr x6,
               const Real_ptr x7, const Real_ptr y0, const Real_ptr y1, const Real_ptr y2,
               const Real_ptr y3, const Real_ptr y4, const Real_ptr y5, const Real_ptr y6,
               const Real_ptr y7, const Real_ptr z0, const Real_ptr z1, const Real_ptr z2,
               const Real_ptr z3, const Real_ptr z4, const Real_ptr z5, const Real_ptr z6,
               const Real_ptr z7, const Real_type vnormq, Index_type ibegin, Index_type iend) {
  Index_type ii = blockIdx.x * block_size + threadIdx.x;
  Index_type i = ii + ibegin;
  if (i < iend) {
    VOL3D_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void deldotvec2d(Real_ptr div, const Real_ptr x1, const Real_ptr x2, const Real_ptr x3,
                     const Real_ptr x4, const Real_ptr y1, const Real_ptr y2, const Real_ptr y3,
                     const Real_ptr y4, const Real_ptr fx1, const Real_ptr fx2, const Real_ptr fx3,
                     const Real_ptr fx4, const Real_ptr fy1, const Real_ptr fy2,
                     const Real_ptr fy3, const Real_ptr fy4, const Index_ptr real_zones,
                     const Real_type half, const Real_type ptiny, Index_type iend) {
  Index_type ii = blockIdx.x * block_size + threadIdx.x;
  if (ii < iend) {
    ZONES_BODY_INDEX
    DEL_DOT_VEC_2D_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void zonal_accumulation_3d(Real_ptr vol, Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3,
                               Real_ptr x4, Real_ptr x5, Real_ptr x6, Real_ptr x7,
                               Index_ptr real_zones, Index_type iend) {
  Index_type ii = blockIdx.x * block_size + threadIdx.x;
  if (ii < iend) {
    ZONES_BODY_INDEX
    ZONAL_ACCUMULATION_3D_BODY
  }
}

// MATVEC_3D_STENCIL's 14 allocated coefficient arrays, passed by value.
struct Matrices {
  Real_ptr m[14];
};

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void matvec_3d_stencil(Real_ptr b, Real_ptr x, Matrices mats, Index_type jp, Index_type kp,
                           Index_ptr real_zones, Index_type iend) {
  Index_type ii = blockIdx.x * block_size + threadIdx.x;
  if (ii < iend) {
    MATVEC_3D_STENCIL_POINTERS(x, mats.m, jp, kp)
    ZONES_BODY_INDEX
    MATVEC_3D_STENCIL_BODY
  }
}

}  // namespace

void run_nested_init(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  DeviceArrays d(args, t);
  Real_ptr array = d.output("array");
  const dim3 block(NESTED_INIT_I_BLOCK, NESTED_INIT_J_BLOCK, NESTED_INIT_K_BLOCK);
  const dim3 grid(static_cast<unsigned>(grid_size(ni, NESTED_INIT_I_BLOCK)),
                  static_cast<unsigned>(grid_size(nj, NESTED_INIT_J_BLOCK)),
                  static_cast<unsigned>(grid_size(nk, NESTED_INIT_K_BLOCK)));
  timed_reps(reps, t, [&] {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    nested_init<NESTED_INIT_I_BLOCK, NESTED_INIT_J_BLOCK, NESTED_INIT_K_BLOCK>
        <<<grid, block>>>(array, ni, nj, nk);
  });
  d.copy_back();
}

void run_first_sum(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr y = d.input("y"), x = d.output("x");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) first_sum<kBlock><<<grid, kBlock>>>(x, y, iend);
  });
  d.copy_back();
}

void run_tridiag_elim(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr xin = d.input("xin"), y = d.input("y"), z = d.input("z"), xout = d.output("xout");
  const size_t grid = grid_size(N, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) tridiag_elim<kBlock><<<grid, kBlock>>>(xout, xin, y, z, N);
  });
  d.copy_back();
}

void run_gen_lin_recur(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "iend"), kb5i = 0;
  DeviceArrays d(args, t);
  Real_ptr sa = d.input("sa"), sb = d.input("sb"), b5 = d.output("b5"), stb5 = d.output("stb5");
  const size_t grid1 = grid_size(N, kBlock), grid2 = grid_size(N + 1, kBlock);
  timed_reps(reps, t, [&] {
    if (N == 0) return;
    genlinrecur1<kBlock><<<grid1, kBlock>>>(b5, stb5, sa, sb, kb5i, N);
    genlinrecur2<kBlock><<<grid2, kBlock>>>(b5, stb5, sa, sb, kb5i, N);
  });
  d.copy_back();
}

void run_energy(const rp_args* args, int reps, rp_timing* t) {
  DeviceArrays d(args, t);
  ENERGY_ARRAYS(d)
  const size_t grid = grid_size(iend, kBlock);
  const EnergyArrays a = ENERGY_PACK;
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    energycalc<1, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
    energycalc<2, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
    energycalc<3, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
    energycalc<4, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
    energycalc<5, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
    energycalc<6, kBlock><<<grid, kBlock>>>(a, rho0, e_cut, emin, q_cut, iend);
  });
  d.copy_back();
}

void run_vol3d(const rp_args* args, int reps, rp_timing* t) {
  DeviceArrays d(args, t);
  VOL3D_ARRAYS(d)
  const size_t grid = grid_size(iend - ibegin, kBlock);
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    vol3d<kBlock><<<grid, kBlock>>>(vol, x0, x1, x2, x3, x4, x5, x6, x7, y0, y1, y2, y3, y4, y5, y6,
                                    y7, z0, z1, z2, z3, z4, z5, z6, z7, vnormq, ibegin, iend);
  });
  d.copy_back();
}

void run_del_dot_vec_2d(const rp_args* args, int reps, rp_timing* t) {
  DeviceArrays d(args, t);
  DEL_DOT_VEC_2D_ARRAYS(d)
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    deldotvec2d<kBlock><<<grid, kBlock>>>(div, x1, x2, x3, x4, y1, y2, y3, y4, fx1, fx2, fx3, fx4,
                                          fy1, fy2, fy3, fy4, real_zones, half, ptiny, iend);
  });
  d.copy_back();
}

void run_zonal_accumulation_3d(const rp_args* args, int reps, rp_timing* t) {
  DeviceArrays d(args, t);
  ZONAL_ACCUMULATION_3D_ARRAYS(d)
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    zonal_accumulation_3d<kBlock>
        <<<grid, kBlock>>>(vol, x0, x1, x2, x3, x4, x5, x6, x7, real_zones, iend);
  });
  d.copy_back();
}

void run_matvec_3d_stencil(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Index_type jp = param(args, "jp"), kp = param(args, "kp");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), b = d.output("b");
  Matrices mats;
  for (int k = 0; k < 14; ++k) mats.m[k] = d.input(kMatvecMatrices[k]);
  Index_ptr real_zones = d.index_list("real_zones");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) matvec_3d_stencil<kBlock><<<grid, kBlock>>>(b, x, mats, jp, kp, real_zones, iend);
  });
  d.copy_back();
}

}  // namespace rp
