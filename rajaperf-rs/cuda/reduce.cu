// Tier 2, reductions and atomics: DOT, REDUCE_SUM, PI_REDUCE, TRAP_INT, PI_ATOMIC,
// DAXPY_ATOMIC, FIRST_MIN, REDUCE3_INT, REDUCE_STRUCT, MULTI_REDUCE, HISTOGRAM,
// NODAL_ACCUMULATION_3D — RAJAPerf's Base_CUDA kernels, in each of their v2024.07 tunings
// (runners.h lists them).
//
// The reductions use RAJAPerf's block-atomic algorithm ("blkatm"): each thread folds its
// elements (a grid-stride loop) into a shared-memory slot, the block reduces its slots with
// RAJAPerf's tree loop, and thread 0 adds the block's value to the device result atomically.
// Two mappings onto the grid: "direct", one thread per element (blocks of 256, the loop runs
// once), and "occgs", as many blocks as fit on the device at once (the occupancy calculator's
// blocks per SM times the SMs, if fewer than the direct grid), each thread then folding
// several elements. FIRST_MIN has no atomic for (value, location): each block writes its
// result and the host finishes ("blkhst"), as in RAJAPerf. REDUCE_SUM also has CUB's
// DeviceReduce::Sum. Every repetition initialises the device result and copies it back
// (RAJAPERF_CUDA_REDUCER_*).
//
// MULTI_REDUCE and HISTOGRAM add to bins with atomics on replicated copies of the bins: with
// shared replication s > 0 each block keeps s copies in shared memory (thread t adds to copy
// t mod s), sums them at the end and adds each non-zero bin to global copy (block mod g); with
// s = 0 every element adds to global copy (warp mod g) directly. The host adds the g global
// copies up after each repetition. s = 0, g = 1 is one global atomic per element. HISTOGRAM
// also has CUB's DeviceHistogram::HistogramEven.

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <vector>

#include "device.cuh"
#include "replication.h"
#include "runners.h"

namespace rp {

namespace {

constexpr size_t kBlock = RP_BLOCK_SIZE;

// RAJAPerf's two mappings of a reduction onto the grid (its gpu_mapping helpers).
enum class Mapping { direct, occgs };

// The mapping of a tuning of the reductions to values (kReduceTunings).
Mapping reduce_mapping(int tuning) { return tuning == kBlkatmOccgs ? Mapping::occgs : Mapping::direct; }

// The blocks of a reduction over `iend` elements: one thread per element (direct), or no more
// blocks than fit on the device at once (occgs: blocks per SM from the occupancy calculator,
// for `kernel` with `block` threads and `dynamic_shmem` bytes, times the SMs). Computed once,
// before the timed repetitions, as RAJAPerf does.
template <typename Kernel>
size_t reduce_grid(Mapping mapping, Kernel kernel, size_t block, size_t dynamic_shmem, Index_type iend) {
  const size_t normal = grid_size(iend, block);
  if (mapping == Mapping::direct) return normal;
  int per_sm = 0, device = 0, sms = 0;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block),
                                                              dynamic_shmem));
  RP_CUDA_CHECK(cudaGetDevice(&device));
  RP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(normal, static_cast<size_t>(per_sm) * static_cast<size_t>(sms));
}

// Device memory that a library call uses as scratch space, freed on destruction.
class Scratch {
 public:
  explicit Scratch(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) RP_CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  ~Scratch() { cudaFree(data_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return data_; }
  size_t& bytes() { return bytes_; }

 private:
  size_t bytes_;
  void* data_ = nullptr;
};

// CUB takes the element count as an int, as RAJAPerf passes it.
int cub_count(Index_type iend) {
  if (iend < 0 || iend > INT_MAX) throw Error("the CUB tunings take at most INT_MAX elements");
  return static_cast<int>(iend);
}

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

// MULTI_REDUCE and HISTOGRAM: adds value(i) to bin bins[i] of `global`, which holds
// `global_rep` copies of the `num_bins` bins, through `shared_rep` copies per block in dynamic
// shared memory, or directly when shared_rep is 0 (replication.h).
template <size_t block_size, typename T, typename Value>
__launch_bounds__(block_size) __global__
    void replicated_bins(T* global, Index_ptr bins, Value value, Index_type iend, Index_type num_bins,
                         Index_type shared_rep, Index_type global_rep) {
  const Index_type i = blockIdx.x * block_size + threadIdx.x;
  if (shared_rep > 0) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    T* shared = reinterpret_cast<T*>(shared_bytes);
    for (Index_type k = threadIdx.x; k < num_bins * shared_rep; k += block_size) shared[k] = T(0);
    __syncthreads();
    if (i < iend) atomicAdd(&shared[shared_slot(bins[i], threadIdx.x, shared_rep)], value(i));
    __syncthreads();
    for (Index_type bin = threadIdx.x; bin < num_bins; bin += block_size) {
      T sum = T(0);
      for (Index_type s = 0; s < shared_rep; ++s) sum += shared[shared_slot(bin, s, shared_rep)];
      if (sum != T(0)) atomicAdd(&global[global_slot(bin, blockIdx.x, global_rep, num_bins)], sum);
    }
  } else if (i < iend) {
    atomicAdd(&global[global_slot(bins[i], i / 32, global_rep, num_bins)], value(i));
  }
}

// What an element adds: MULTI_REDUCE's data[i], HISTOGRAM's 1.
struct DataValue {
  Real_ptr data;
  __device__ Real_type operator()(Index_type i) const { return data[i]; }
};

struct UnitValue {
  __device__ Count_type operator()(Index_type) const { return Count_type{1}; }
};

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

// The repetitions of a replicated multi-reduction into `num_bins` bins of T, with RAJAPerf's
// choice of the replications: global = next_pow2(min(preferred, blocks)), shared =
// prev_pow2(min(preferred, the copies that fit the kernel's dynamic shared memory)). Each
// repetition zeroes the copies, launches, copies them back and adds them up into `final`.
template <typename T, typename Value>
void replicated_reps(int reps, rp_timing* t, Replication preferred, Index_ptr bins, Value value,
                     Index_type iend, Index_type num_bins, T* final) {
  if (num_bins <= 0) throw Error("the replicated atomics need at least one bin");
  auto kernel = replicated_bins<kBlock, T, Value>;
  cudaFuncAttributes attr;
  RP_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const Index_type max_shared = attr.maxDynamicSharedSizeBytes / static_cast<Index_type>(sizeof(T)) / num_bins;
  const Index_type grid = static_cast<Index_type>(grid_size(iend, kBlock));
  const Replication r = choose_replication(preferred, grid, max_shared);
  const Index_type shared_rep = r.shared, global_rep = r.global;
  const size_t shmem = static_cast<size_t>(shared_rep * num_bins) * sizeof(T);
  Reducer<T> copies(static_cast<size_t>(num_bins * global_rep));
  timed_reps(reps, t, [&] {
    copies.initialize(T(0));
    if (grid > 0) {
      replicated_bins<kBlock><<<grid, kBlock, shmem>>>(copies.device(), bins, value, iend, num_bins,
                                                        shared_rep, global_rep);
    }
    fold_copies(copies.copy_back(), num_bins, global_rep, final);
  });
}

}  // namespace

void run_dot(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr a = d.input("a"), b = d.input("b");
  const size_t grid = reduce_grid(reduce_mapping(tuning), block_atomic_sum<kBlock, DotTerm>, kBlock, 0, iend);
  Real_type m_dot = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr dprod) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(DotTerm{a, b}, dprod, 0.0, iend); },
      [&](Real_type v) { m_dot += v; });
  d.copy_back();
  set_scalar_output(args, "dot", m_dot);
}

void run_reduce_sum(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x");
  Real_type m_sum = 0.0;
  if (tuning == kSumCub) {
    // RAJAPerf's "cub": the library's reduction straight into the device result (it writes
    // the sum, from an initial 0, so the result needs no initialisation), then the copy back.
    const int len = cub_count(iend);
    Reducer<Real_type> result(1);
    size_t bytes = 0;
    RP_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, x, result.device(), len));
    Scratch scratch(bytes);
    timed_reps(reps, t, [&] {
      RP_CUDA_CHECK(cub::DeviceReduce::Sum(scratch.data(), scratch.bytes(), x, result.device(), len));
      m_sum = result.copy_back()[0];
    });
  } else {
    const Mapping mapping = tuning == kSumBlkatmOccgs ? Mapping::occgs : Mapping::direct;
    const size_t grid = reduce_grid(mapping, block_atomic_sum<kBlock, SumTerm>, kBlock, 0, iend);
    reduce_reps(
        reps, t, [&](Real_ptr dsum) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(SumTerm{x}, dsum, 0.0, iend); },
        [&](Real_type v) { m_sum = v; });
  }
  d.copy_back();
  set_scalar_output(args, "sum", m_sum);
}

void run_pi_reduce(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type dx = scalar(args, "dx");
  DeviceArrays d(args, t);
  const size_t grid = reduce_grid(reduce_mapping(tuning), block_atomic_sum<kBlock, PiTerm>, kBlock, 0, iend);
  Real_type m_pi = 0.0;
  reduce_reps(
      reps, t, [&](Real_ptr dpi) { if (grid > 0) block_atomic_sum<kBlock><<<grid, kBlock>>>(PiTerm{dx}, dpi, 0.0, iend); },
      [&](Real_type v) { m_pi = 4.0 * v; });
  d.copy_back();
  set_scalar_output(args, "pi", m_pi);
}

void run_trap_int(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Real_type x0 = scalar(args, "x0"), xp = scalar(args, "xp"), y = scalar(args, "y");
  const Real_type yp = scalar(args, "yp"), h = scalar(args, "h");
  DeviceArrays d(args, t);
  const size_t grid = reduce_grid(reduce_mapping(tuning), block_atomic_sum<kBlock, TrapTerm>, kBlock, 0, iend);
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

void run_first_min(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x");
  const int k = input_index(args, "x");
  if (args->input_lens[k] == 0) throw Error("FIRST_MIN needs at least one element");
  // RAJAPerf's m_xmin_init = x[0], m_initloc = 0.
  const MyMinLoc init = {args->inputs[k][0], 0};
  const Mapping mapping = tuning == kBlkhstOccgs ? Mapping::occgs : Mapping::direct;
  const size_t grid = reduce_grid(mapping, first_min<kBlock>, kBlock, 0, iend);
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

void run_reduce_struct(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Real_ptr x = d.input("x"), y = d.input("y");
  const size_t grid = reduce_grid(reduce_mapping(tuning), reduce_struct<kBlock>, kBlock, 0, iend);
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

void run_reduce3_int(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  DeviceArrays d(args, t);
  Int_ptr vec = d.int_list("vec");
  const size_t grid = reduce_grid(reduce_mapping(tuning), reduce3int<kBlock>, kBlock, 0, iend);
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

void run_multi_reduce(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  DeviceArrays d(args, t);
  Real_ptr data = d.input("data");
  Index_ptr bins = d.index_list("bins");
  std::vector<Real_type> final_values(static_cast<size_t>(num_bins > 0 ? num_bins : 0));
  replicated_reps<Real_type>(reps, t, kMultiReduceReplication[tuning], bins, DataValue{data}, iend,
                             num_bins, final_values.data());
  d.copy_back();
  const int k = output_index(args, "values");
  for (Index_type b = 0; b < num_bins; ++b) args->outputs[k][b] = final_values[b];
}

void run_histogram(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  DeviceArrays d(args, t);
  Index_ptr bins = d.index_list("bins");
  std::vector<Count_type> final_counts(static_cast<size_t>(num_bins > 0 ? num_bins : 0));
  if (tuning == kHistCub) {
    // RAJAPerf's "cub": num_bins + 1 evenly spaced levels over [0, num_bins), so bin b counts
    // the samples equal to b; the library zeroes the counts itself.
    if (num_bins <= 0 || num_bins >= INT_MAX) throw Error("HISTOGRAM needs 1 to INT_MAX - 1 bins");
    const int len = cub_count(iend), levels = static_cast<int>(num_bins + 1);
    Reducer<Count_type> counts(static_cast<size_t>(num_bins));
    size_t bytes = 0;
    RP_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, bins, counts.device(), levels,
                                                      Index_type{0}, num_bins, len));
    Scratch scratch(bytes);
    timed_reps(reps, t, [&] {
      RP_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(scratch.data(), scratch.bytes(), bins,
                                                        counts.device(), levels, Index_type{0},
                                                        num_bins, len));
      const Count_type* h = counts.copy_back();
      std::copy(h, h + num_bins, final_counts.begin());
    });
  } else {
    replicated_reps<Count_type>(reps, t, kHistogramReplication[tuning], bins, UnitValue{}, iend,
                                num_bins, final_counts.data());
  }
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
