// Lcals (HYDRO_1D, EOS, FIRST_DIFF, INT_PREDICT, DIFF_PREDICT, PLANCKIAN) and Apps (PRESSURE,
// FIR, LTIMES): RAJAPerf's Base_CUDA kernels.

#include <string>

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;

// FIR reads its filter from constant memory (RAJAPerf's USE_CUDA_CONSTANT_MEMORY, the default).
__constant__ Real_type coeff[FIR_COEFFLEN];

template <size_t block_size>
__launch_bounds__(block_size) __global__ void hydro_1d(Real_ptr x, Real_ptr y, Real_ptr z, Real_type q,
                                                       Real_type r, Real_type t, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    HYDRO_1D_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void eos(Real_ptr x, Real_ptr y, Real_ptr z, Real_ptr u, Real_type q, Real_type r, Real_type t,
             Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    EOS_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__ void first_diff(Real_ptr x, Real_ptr y, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    FIRST_DIFF_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void int_predict(Real_ptr px, Real_type dm22, Real_type dm23, Real_type dm24, Real_type dm25,
                     Real_type dm26, Real_type dm27, Real_type dm28, Real_type c0,
                     const Index_type offset, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    INT_PREDICT_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void diff_predict(Real_ptr px, Real_ptr cx, const Index_type offset, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    DIFF_PREDICT_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__ void planckian(Real_ptr x, Real_ptr y, Real_ptr u,
                                                        Real_ptr v, Real_ptr w, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    PLANCKIAN_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void pressurecalc1(Real_ptr bvc, Real_ptr compression, const Real_type cls, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    PRESSURE_BODY1
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void pressurecalc2(Real_ptr p_new, Real_ptr bvc, Real_ptr e_old, Real_ptr vnewc,
                       const Real_type p_cut, const Real_type eosvmax, const Real_type pmin,
                       Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    PRESSURE_BODY2
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void fir(Real_ptr out, Real_ptr in, const Index_type coefflen, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    FIR_BODY
  }
}

template <size_t m_block_size, size_t g_block_size, size_t z_block_size>
__launch_bounds__(m_block_size* g_block_size* z_block_size) __global__
    void ltimes(Real_ptr phidat, Real_ptr elldat, Real_ptr psidat, Index_type num_d,
                Index_type num_m, Index_type num_g, Index_type num_z) {
  Index_type m = blockIdx.x * m_block_size + threadIdx.x;
  Index_type g = blockIdx.y * g_block_size + threadIdx.y;
  Index_type z = blockIdx.z * z_block_size + threadIdx.z;
  if (m < num_m && g < num_g && z < num_z) {
    for (Index_type d = 0; d < num_d; ++d) {
      LTIMES_BODY
    }
  }
}

}  // namespace

void run_hydro_1d(const rp_args* args, int reps, rp_timing* timing) {
  const Index_type iend = param(args, "iend");
  const Real_type q = scalar(args, "q"), r = scalar(args, "r"), t = scalar(args, "t");
  DeviceArrays d(args, timing);
  Real_ptr y = d.input("y"), z = d.input("z"), x = d.output("x");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, timing, [&] {
    if (grid > 0) hydro_1d<kBlock><<<grid, kBlock>>>(x, y, z, q, r, t, iend);
  });
  d.copy_back();
}

void run_eos(const rp_args* args, int reps, rp_timing* timing) {
  const Index_type iend = param(args, "iend");
  const Real_type q = scalar(args, "q"), r = scalar(args, "r"), t = scalar(args, "t");
  DeviceArrays d(args, timing);
  Real_ptr y = d.input("y"), z = d.input("z"), u = d.input("u"), x = d.output("x");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, timing, [&] {
    if (grid > 0) eos<kBlock><<<grid, kBlock>>>(x, y, z, u, q, r, t, iend);
  });
  d.copy_back();
}

void run_first_diff(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr y = d.input("y"), x = d.output("x");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) first_diff<kBlock><<<grid, kBlock>>>(x, y, iend);
  });
  d.copy_back();
}

void run_int_predict(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), offset = param(args, "offset");
  const Real_type dm22 = scalar(args, "dm22"), dm23 = scalar(args, "dm23");
  const Real_type dm24 = scalar(args, "dm24"), dm25 = scalar(args, "dm25");
  const Real_type dm26 = scalar(args, "dm26"), dm27 = scalar(args, "dm27");
  const Real_type dm28 = scalar(args, "dm28"), c0 = scalar(args, "c0");
  DeviceArrays d(args, t);
  Real_ptr px = d.output("px");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) {
      int_predict<kBlock>
          <<<grid, kBlock>>>(px, dm22, dm23, dm24, dm25, dm26, dm27, dm28, c0, offset, iend);
    }
  });
  d.copy_back();
}

void run_diff_predict(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), offset = param(args, "offset");
  DeviceArrays d(args, t);
  Real_ptr cx = d.input("cx"), px = d.output("px");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) diff_predict<kBlock><<<grid, kBlock>>>(px, cx, offset, iend);
  });
  d.copy_back();
}

void run_planckian(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), u = d.input("u"), v = d.input("v");
  Real_ptr y = d.output("y"), w = d.output("w");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) planckian<kBlock><<<grid, kBlock>>>(x, y, u, v, w, iend);
  });
  d.copy_back();
}

void run_pressure(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type cls = scalar(args, "cls"), p_cut = scalar(args, "p_cut");
  const Real_type pmin = scalar(args, "pmin"), eosvmax = scalar(args, "eosvmax");
  DeviceArrays d(args, t);
  Real_ptr compression = d.input("compression"), e_old = d.input("e_old"), vnewc = d.input("vnewc");
  Real_ptr bvc = d.output("bvc"), p_new = d.output("p_new");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    pressurecalc1<kBlock><<<grid, kBlock>>>(bvc, compression, cls, iend);
    pressurecalc2<kBlock><<<grid, kBlock>>>(p_new, bvc, e_old, vnewc, p_cut, eosvmax, pmin, iend);
  });
  d.copy_back();
}

void run_fir(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Index_type coefflen = param(args, "coefflen");
  const int k = input_index(args, "coeff");
  if (coefflen != FIR_COEFFLEN || args->input_lens[k] != FIR_COEFFLEN) {
    throw Error("FIR needs " + std::to_string(FIR_COEFFLEN) + " coefficients");
  }
  DeviceArrays d(args, t);
  RP_CUDA_CHECK(cudaMemcpyToSymbol(coeff, args->inputs[k], FIR_COEFFLEN * sizeof(Real_type)));
  Real_ptr in = d.input("in"), out = d.output("out");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) fir<kBlock><<<grid, kBlock>>>(out, in, coefflen, iend);
  });
  d.copy_back();
}

void run_ltimes(const rp_args* args, int reps, rp_timing* t) {
  const Index_type num_d = param(args, "num_d"), num_m = param(args, "num_m");
  const Index_type num_g = param(args, "num_g"), num_z = param(args, "num_z");
  DeviceArrays d(args, t);
  Real_ptr elldat = d.input("ell"), psidat = d.input("psi"), phidat = d.output("phi");
  const dim3 block(LTIMES_M_BLOCK, LTIMES_G_BLOCK, LTIMES_Z_BLOCK);
  const dim3 grid(static_cast<unsigned>(grid_size(num_m, LTIMES_M_BLOCK)),
                  static_cast<unsigned>(grid_size(num_g, LTIMES_G_BLOCK)),
                  static_cast<unsigned>(grid_size(num_z, LTIMES_Z_BLOCK)));
  timed_reps(reps, t, [&] {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    ltimes<LTIMES_M_BLOCK, LTIMES_G_BLOCK, LTIMES_Z_BLOCK>
        <<<grid, block>>>(phidat, elldat, psidat, num_d, num_m, num_g, num_z);
  });
  d.copy_back();
}

}  // namespace rp
