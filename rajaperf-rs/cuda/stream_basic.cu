// Stream (COPY, MUL, ADD, TRIAD) and Basic (DAXPY, INIT3, MULADDSUB, IF_QUAD, INIT_VIEW1D,
// COPY8): RAJAPerf's
// Base_CUDA kernels, one thread per iteration in blocks of 256, default stream.

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;

template <size_t block_size>
__launch_bounds__(block_size) __global__ void copy(Real_ptr c, Real_ptr a, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    COPY_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void mul(Real_ptr b, Real_ptr c, Real_type alpha, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    MUL_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void add(Real_ptr c, Real_ptr a, Real_ptr b, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    ADD_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void triad(Real_ptr a, Real_ptr b, Real_ptr c, Real_type alpha, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    TRIAD_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void daxpy(Real_ptr y, Real_ptr x, Real_type a, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    DAXPY_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__ void init3(Real_ptr out1, Real_ptr out2, Real_ptr out3,
                                                    Real_ptr in1, Real_ptr in2, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    INIT3_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void muladdsub(Real_ptr out1, Real_ptr out2, Real_ptr out3, Real_ptr in1, Real_ptr in2,
                   Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    MULADDSUB_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__ void ifquad(Real_ptr x1, Real_ptr x2, Real_ptr a,
                                                     Real_ptr b, Real_ptr c, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    IF_QUAD_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void initview1d(Real_ptr a, Real_type v, const Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    INIT_VIEW1D_BODY
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void copy8(Real_ptr y0, Real_ptr y1, Real_ptr y2, Real_ptr y3, Real_ptr y4, Real_ptr y5,
               Real_ptr y6, Real_ptr y7, Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3,
               Real_ptr x4, Real_ptr x5, Real_ptr x6, Real_ptr x7, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    COPY8_BODY
  }
}

}  // namespace

void run_copy(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr a = d.input("a"), c = d.output("c");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) copy<kBlock><<<grid, kBlock>>>(c, a, iend);
  });
  d.copy_back();
}

void run_mul(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type alpha = scalar(args, "alpha");
  DeviceArrays d(args, t);
  Real_ptr c = d.input("c"), b = d.output("b");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) mul<kBlock><<<grid, kBlock>>>(b, c, alpha, iend);
  });
  d.copy_back();
}

void run_add(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr a = d.input("a"), b = d.input("b"), c = d.output("c");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) add<kBlock><<<grid, kBlock>>>(c, a, b, iend);
  });
  d.copy_back();
}

void run_triad(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type alpha = scalar(args, "alpha");
  DeviceArrays d(args, t);
  Real_ptr b = d.input("b"), c = d.input("c"), a = d.output("a");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) triad<kBlock><<<grid, kBlock>>>(a, b, c, alpha, iend);
  });
  d.copy_back();
}

void run_daxpy(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type a = scalar(args, "a");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), y = d.output("y");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) daxpy<kBlock><<<grid, kBlock>>>(y, x, a, iend);
  });
  d.copy_back();
}

void run_init3(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr in1 = d.input("in1"), in2 = d.input("in2");
  Real_ptr out1 = d.output("out1"), out2 = d.output("out2"), out3 = d.output("out3");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) init3<kBlock><<<grid, kBlock>>>(out1, out2, out3, in1, in2, iend);
  });
  d.copy_back();
}

void run_muladdsub(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr in1 = d.input("in1"), in2 = d.input("in2");
  Real_ptr out1 = d.output("out1"), out2 = d.output("out2"), out3 = d.output("out3");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) muladdsub<kBlock><<<grid, kBlock>>>(out1, out2, out3, in1, in2, iend);
  });
  d.copy_back();
}

void run_if_quad(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr a = d.input("a"), b = d.input("b"), c = d.input("c");
  Real_ptr x1 = d.output("x1"), x2 = d.output("x2");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) ifquad<kBlock><<<grid, kBlock>>>(x1, x2, a, b, c, iend);
  });
  d.copy_back();
}

void run_init_view1d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type v = scalar(args, "val");
  DeviceArrays d(args, t);
  Real_ptr a = d.output("a");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) initview1d<kBlock><<<grid, kBlock>>>(a, v, iend);
  });
  d.copy_back();
}

void run_copy8(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x0 = d.input("x0"), x1 = d.input("x1"), x2 = d.input("x2"), x3 = d.input("x3");
  Real_ptr x4 = d.input("x4"), x5 = d.input("x5"), x6 = d.input("x6"), x7 = d.input("x7");
  Real_ptr y0 = d.output("y0"), y1 = d.output("y1"), y2 = d.output("y2"), y3 = d.output("y3");
  Real_ptr y4 = d.output("y4"), y5 = d.output("y5"), y6 = d.output("y6"), y7 = d.output("y7");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) {
      copy8<kBlock><<<grid, kBlock>>>(y0, y1, y2, y3, y4, y5, y6, y7, x0, x1, x2, x3, x4, x5, x6, x7,
                                      iend);
    }
  });
  d.copy_back();
}

}  // namespace rp
