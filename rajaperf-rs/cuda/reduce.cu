// Tier 2, reductions and atomics: DOT, REDUCE_SUM, PI_REDUCE, TRAP_INT, PI_ATOMIC,
// DAXPY_ATOMIC, FIRST_MIN — RAJAPerf's Base_CUDA kernels.
//
// The reductions use RAJAPerf's block-atomic algorithm with a direct grid (one thread per
// element, 256 per block): each thread folds its elements (grid-stride loop, one iteration
// here) into a shared-memory slot, the block reduces its slots with RAJAPerf's tree loop, and
// thread 0 adds the block's value to the device result atomically. FIRST_MIN has no atomic
// for (value, location): each block writes its result and the host finishes, as in RAJAPerf.
// Every repetition initialises the device result and copies it back (RAJAPERF_CUDA_REDUCER_*).

#include <cfloat>
#include <climits>

#include "device.cuh"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;

// RAJAPerf's tree reduction of a block's shared slots into slot 0 (sum).
template <size_t block_size>
__device__ void block_sum(Real_type* slots) {
  __syncthreads();
  for (int i = block_size / 2; i > 0; i /= 2) {
    if (threadIdx.x < i) slots[threadIdx.x] += slots[threadIdx.x + i];
    __syncthreads();
  }
}

// A block-atomic sum: every thread folds `term(i)` over its elements into its shared slot,
// the block sums its slots, and thread 0 adds the block's sum to `result`.
template <size_t block_size, typename Term>
__launch_bounds__(block_size) __global__
    void block_atomic_sum(Term term, Real_ptr result, Real_type init, Index_type iend) {
  __shared__ Real_type slots[block_size];
  slots[threadIdx.x] = init;
  for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
    slots[threadIdx.x] += term(i);
  }
  block_sum<block_size>(slots);
  if (threadIdx.x == 0) atomicAdd(result, slots[0]);
}

// One element's term of each sum, written with RAJAPerf's body (from a zero start).
struct DotTerm {
  Real_ptr a, b;
  __device__ Real_type operator()(Index_type i) const {
    Real_type dot = 0.0;
    DOT_BODY
    return dot;
  }
};

struct SumTerm {
  Real_ptr x;
  __device__ Real_type operator()(Index_type i) const {
    Real_type sum = 0.0;
    REDUCE_SUM_BODY
    return sum;
  }
};

struct PiTerm {
  Real_type dx;
  __device__ Real_type operator()(Index_type i) const {
    Real_type pi = 0.0;
    PI_REDUCE_BODY
    return pi;
  }
};

struct TrapTerm {
  Real_type x0, xp, y, yp, h;
  __device__ Real_type operator()(Index_type i) const {
    Real_type sumx = 0.0;
    TRAP_INT_BODY
    return sumx;
  }
};

template <size_t block_size>
__launch_bounds__(block_size) __global__ void pi_atomic(Real_ptr pi, Real_type dx, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    double x = (double(i) + 0.5) * dx;
    atomicAdd(pi, dx / (1.0 + x * x));
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void daxpy_atomic(Real_ptr y, Real_ptr x, Real_type a, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    DAXPY_ATOMIC_RAJA_BODY(atomicAdd)
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void first_min(Real_ptr x, MyMinLoc* dminloc, MyMinLoc init, Index_type iend) {
  __shared__ MyMinLoc minloc[block_size];
  minloc[threadIdx.x] = init;
  for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
    MyMinLoc& mymin = minloc[threadIdx.x];
    FIRST_MIN_BODY
  }
  __syncthreads();
  for (int i = block_size / 2; i > 0; i /= 2) {
    if (threadIdx.x < i) {
      if (minloc[threadIdx.x + i].val < minloc[threadIdx.x].val) {
        minloc[threadIdx.x] = minloc[threadIdx.x + i];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) dminloc[blockIdx.x] = minloc[0];
}

// Atomic minimum and maximum of doubles, with compare-and-swap loops as RAJA's atomics do.
__device__ void atomic_min(Real_type* p, Real_type v) {
  unsigned long long* bits = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *bits, seen;
  do {
    seen = old;
    if (!(v < __longlong_as_double(seen))) return;
    old = atomicCAS(bits, seen, __double_as_longlong(v));
  } while (old != seen);
}

__device__ void atomic_max(Real_type* p, Real_type v) {
  unsigned long long* bits = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *bits, seen;
  do {
    seen = old;
    if (!(v > __longlong_as_double(seen))) return;
    old = atomicCAS(bits, seen, __double_as_longlong(v));
  } while (old != seen);
}

__device__ void atomic_min(Int_type* p, Int_type v) { atomicMin(p, v); }
__device__ void atomic_max(Int_type* p, Int_type v) { atomicMax(p, v); }

// One (sum, min, max) triple of a block: the threads' values in s[0..3], reduced with
// RAJAPerf's tree loop, and added to r[0..3] atomically by thread 0.
template <size_t block_size, typename T>
__device__ void block_sum_min_max(T (&s)[3][block_size], T* r) {
  const unsigned t = threadIdx.x;
  __syncthreads();
  for (unsigned i = block_size / 2; i > 0; i /= 2) {
    if (t < i) {
      s[0][t] += s[0][t + i];
      s[1][t] = RAJA_MIN(s[1][t], s[1][t + i]);
      s[2][t] = RAJA_MAX(s[2][t], s[2][t + i]);
    }
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(&r[0], s[0][0]);
    atomic_min(&r[1], s[1][0]);
    atomic_max(&r[2], s[2][0]);
  }
}

// REDUCE_STRUCT: sum, min and max of x and of y. `r` holds xsum, xmin, xmax, ysum, ymin, ymax.
template <size_t block_size>
__launch_bounds__(block_size) __global__
    void reduce_struct(Real_ptr x, Real_ptr y, Real_ptr r, Real_type init_sum, Real_type init_min,
                       Real_type init_max, Index_type iend) {
  __shared__ Real_type sx[3][block_size];
  __shared__ Real_type sy[3][block_size];
  const unsigned t = threadIdx.x;
  Real_type xsum = init_sum, xmin = init_min, xmax = init_max;
  Real_type ysum = init_sum, ymin = init_min, ymax = init_max;
  for (Index_type i = blockIdx.x * block_size + t; i < iend; i += gridDim.x * block_size) {
    REDUCE_STRUCT_BODY
  }
  sx[0][t] = xsum, sx[1][t] = xmin, sx[2][t] = xmax, sy[0][t] = ysum, sy[1][t] = ymin, sy[2][t] = ymax;
  block_sum_min_max<block_size>(sx, r);
  block_sum_min_max<block_size>(sy, r + 3);
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void multi_reduce(Real_ptr values, Index_ptr bins, Real_ptr data, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    MULTI_REDUCE_RAJA_BODY(atomicAdd)
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void histogram(Count_type* counts, Index_ptr bins, Index_type iend) {
  Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (i < iend) {
    HISTOGRAM_RAJA_BODY(atomicAdd)
  }
}

template <size_t block_size>
__launch_bounds__(block_size) __global__
    void nodal_accumulation_3d(Real_ptr vol, Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3,
                               Real_ptr x4, Real_ptr x5, Real_ptr x6, Real_ptr x7,
                               Index_ptr real_zones, Index_type iend) {
  Index_type ii = blockIdx.x * block_size + threadIdx.x;
  if (ii < iend) {
    ZONES_BODY_INDEX
    NODAL_ACCUMULATION_3D_RAJA_BODY_ATOMIC(atomicAdd)
  }
}

// REDUCE3_INT: the sum, minimum and maximum of integer data.
template <size_t block_size>
__launch_bounds__(block_size) __global__
    void reduce3int(Int_ptr vec, Int_ptr r, Int_type vsum_init, Int_type vmin_init,
                    Int_type vmax_init, Index_type iend) {
  __shared__ Int_type s[3][block_size];
  const unsigned t = threadIdx.x;
  Int_type vsum = vsum_init, vmin = vmin_init, vmax = vmax_init;
  for (Index_type i = blockIdx.x * block_size + t; i < iend; i += gridDim.x * block_size) {
    REDUCE3_INT_BODY
  }
  s[0][t] = vsum, s[1][t] = vmin, s[2][t] = vmax;
  block_sum_min_max<block_size>(s, r);
}

// The repetitions of a block-atomic reduction to one value: initialise, launch, copy back,
// then `fold` the repetition's value into the result.
template <typename Launch, typename Fold>
void reduce_reps(int reps, rp_timing* t, Launch launch, Fold fold) {
  Reducer<Real_type> result(1);
  timed_reps(reps, t, [&] {
    result.initialize(0.0);
    launch(result.device());
    fold(result.copy_back()[0]);
  });
}

}  // namespace

void run_dot(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr a = d.input("a"), b = d.input("b");
  const size_t grid = grid_size(iend, kBlock);
  Real_type m_dot = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr dprod) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(DotTerm{a, b}, dprod, 0.0, iend); },
      [&](Real_type v) { m_dot += v; });
  d.copy_back();
  set_scalar_output(args, "dot", m_dot);
}

void run_reduce_sum(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x");
  const size_t grid = grid_size(iend, kBlock);
  Real_type m_sum = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr dsum) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(SumTerm{x}, dsum, 0.0, iend); },
      [&](Real_type v) { m_sum = v; });
  d.copy_back();
  set_scalar_output(args, "sum", m_sum);
}

void run_pi_reduce(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type dx = scalar(args, "dx");
  DeviceArrays d(args, t);
  const size_t grid = grid_size(iend, kBlock);
  Real_type m_pi = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr dpi) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(PiTerm{dx}, dpi, 0.0, iend); },
      [&](Real_type v) { m_pi = 4.0 * v; });
  d.copy_back();
  set_scalar_output(args, "pi", m_pi);
}

void run_trap_int(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type x0 = scalar(args, "x0"), xp = scalar(args, "xp"), y = scalar(args, "y");
  const Real_type yp = scalar(args, "yp"), h = scalar(args, "h");
  DeviceArrays d(args, t);
  const size_t grid = grid_size(iend, kBlock);
  Real_type m_sumx = 0.0;
  reduce_reps(
      reps, t,
      [&](Real_ptr dsumx) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(TrapTerm{x0, xp, y, yp, h}, dsumx, 0.0, iend); },
      [&](Real_type v) { m_sumx += v * h; });
  d.copy_back();
  set_scalar_output(args, "sumx", m_sumx);
}

void run_pi_atomic(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type dx = scalar(args, "dx");
  DeviceArrays d(args, t);
  const size_t grid = grid_size(iend, kBlock);
  Real_type m_pi_final = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr pi) { if (grid > 0) pi_atomic<kBlock><<<grid, kBlock>>>(pi, dx, iend); },
      [&](Real_type v) { m_pi_final = v * 4.0; });
  d.copy_back();
  set_scalar_output(args, "pi_final", m_pi_final);
}

void run_daxpy_atomic(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type a = scalar(args, "a");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), y = d.output("y");
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) daxpy_atomic<kBlock><<<grid, kBlock>>>(y, x, a, iend);
  });
  d.copy_back();
}

void run_first_min(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x");
  const int k = input_index(args, "x");
  if (args->input_lens[k] == 0) throw Error("FIRST_MIN needs at least one element");
  // RAJAPerf's m_xmin_init = x[0], m_initloc = 0.
  const MyMinLoc init = {args->inputs[k][0], 0};
  const size_t grid = grid_size(iend, kBlock);
  Reducer<MyMinLoc> blocks(grid > 0 ? grid : 1);
  Index_type m_minloc = -1;
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    blocks.initialize(init);
    first_min<kBlock><<<grid, kBlock>>>(x, blocks.device(), init, iend);
    const MyMinLoc* per_block = blocks.copy_back();
    MyMinLoc mymin = init;
    for (size_t b = 0; b < grid; ++b) {
      if (per_block[b].val < mymin.val) mymin = per_block[b];
    }
    m_minloc = mymin.loc;
  });
  d.copy_back();
  set_scalar_output(args, "minloc", static_cast<Real_type>(m_minloc));
}

void run_reduce_struct(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), y = d.input("y");
  const size_t grid = grid_size(iend, kBlock);
  const Real_type init_sum = 0.0, init_min = DBL_MAX, init_max = -DBL_MAX;
  Reducer<Real_type> r(6);
  Real_type result[6] = {};
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    const Real_type init[6] = {init_sum, init_min, init_max, init_sum, init_min, init_max};
    r.initialize(init);
    reduce_struct<kBlock><<<grid, kBlock>>>(x, y, r.device(), init_sum, init_min, init_max, iend);
    const Real_type* h = r.copy_back();
    // points.SetCenter(xsum/N, ysum/N), SetXMin, SetXMax, SetYMin, SetYMax.
    const Real_type values[6] = {h[0] / iend, h[1], h[2], h[3] / iend, h[4], h[5]};
    for (int k = 0; k < 6; ++k) result[k] = values[k];
  });
  d.copy_back();
  for (int k = 0; k < 6; ++k) set_scalar_output(args, kReduceStructOut[k], result[k]);
}

void run_reduce3_int(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Int_ptr vec = d.int_list("vec");
  const size_t grid = grid_size(iend, kBlock);
  const Int_type init[3] = {0, INT_MAX, INT_MIN};
  Reducer<Int_type> r(3);
  Int_type m_vsum = 0, m_vmin = INT_MAX, m_vmax = INT_MIN;
  timed_reps(reps, t, [&] {
    if (grid == 0) return;
    r.initialize(init);
    reduce3int<kBlock><<<grid, kBlock>>>(vec, r.device(), init[0], init[1], init[2], iend);
    const Int_type* h = r.copy_back();
    m_vsum += h[0];
    m_vmin = RAJA_MIN(m_vmin, h[1]);
    m_vmax = RAJA_MAX(m_vmax, h[2]);
  });
  d.copy_back();
  set_scalar_output(args, "vsum", m_vsum);
  set_scalar_output(args, "vmin", m_vmin);
  set_scalar_output(args, "vmax", m_vmax);
}

void run_multi_reduce(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  DeviceArrays d(args, t);
  Real_ptr data = d.input("data");
  Index_ptr bins = d.index_list("bins");
  const size_t grid = grid_size(iend, kBlock);
  Reducer<Real_type> values(static_cast<size_t>(num_bins));
  timed_reps(reps, t, [&] {
    values.initialize(0.0);
    if (grid > 0) multi_reduce<kBlock><<<grid, kBlock>>>(values.device(), bins, data, iend);
    values.copy_back();
  });
  const Real_type* final_values = values.copy_back();
  d.copy_back();
  const int k = output_index(args, "values");
  for (Index_type b = 0; b < num_bins; ++b) args->outputs[k][b] = final_values[b];
}

void run_histogram(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  DeviceArrays d(args, t);
  Index_ptr bins = d.index_list("bins");
  const size_t grid = grid_size(iend, kBlock);
  Reducer<Count_type> counts(static_cast<size_t>(num_bins));
  timed_reps(reps, t, [&] {
    counts.initialize(Count_type{0});
    if (grid > 0) histogram<kBlock><<<grid, kBlock>>>(counts.device(), bins, iend);
    counts.copy_back();
  });
  const Count_type* final_counts = counts.copy_back();
  d.copy_back();
  const int k = output_index(args, "counts");
  for (Index_type b = 0; b < num_bins; ++b) args->outputs[k][b] = static_cast<Real_type>(final_counts[b]);
}

void run_nodal_accumulation_3d(const rp_args* args, int reps, rp_timing* t) {
  DeviceArrays d(args, t);
  NODAL_ACCUMULATION_3D_ARRAYS(d)
  const size_t grid = grid_size(iend, kBlock);
  timed_reps(reps, t, [&] {
    if (grid > 0) {
      nodal_accumulation_3d<kBlock>
          <<<grid, kBlock>>>(vol, x0, x1, x2, x3, x4, x5, x6, x7, real_zones, iend);
    }
  });
  d.copy_back();
}

}  // namespace rp
