// A host stand-in for the CUDA runners: the same loop bodies (bodies.h), run sequentially on
// the CPU. It lets the driver, the protocol and the C++ transcription of the kernels be
// tested where there is no CUDA (`build.sh --host-stub`). It is not a baseline: its times
// mean nothing for the comparison. A kernel with several CUDA tunings (runners.h) runs the
// same loop for each of them, except MULTI_REDUCE's and HISTOGRAM's atomics on replicated
// bins, which run the CUDA kernel's arithmetic (replication.h) one block after another.

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "bodies.h"
#include "harness.h"
#include "replication.h"
#include "runners.h"

namespace rp {

namespace {

// Private copies of a run's arrays, like DeviceArrays, so that the stand-in also exercises
// the copy in and copy back.
class HostArrays {
 public:
  HostArrays(const rp_args* args, rp_timing* timing) : args_(args), timing_(timing) {
    const Clock::time_point start = Clock::now();
    for (int k = 0; k < args->n_inputs; ++k) {
      in_.emplace_back(args->inputs[k], args->inputs[k] + args->input_lens[k]);
      count_in(static_cast<unsigned long long>(args->input_lens[k]) * sizeof(Real_type));
    }
    for (int k = 0; k < args->n_outputs; ++k) {
      out_.emplace_back(args->outputs[k], args->outputs[k] + args->output_lens[k]);
      count_in(static_cast<unsigned long long>(args->output_lens[k]) * sizeof(Real_type));
    }
    for (int k = 0; k < args->n_indices; ++k) {
      idx_.emplace_back(args->indices[k], args->indices[k] + args->index_lens[k]);
      int_.push_back(narrow_ints(args->indices[k], args->index_lens[k]));
      count_in(static_cast<unsigned long long>(args->index_lens[k]) * args->index_widths[k]);
    }
    timing->h2d_seconds = seconds_since(start);
  }

  Real_ptr input(const char* name) { return in_[input_index(args_, name)].data(); }
  Real_ptr output(const char* name) { return out_[output_index(args_, name)].data(); }
  Index_ptr index_list(const char* name) { return idx_[index_list_index(args_, name)].data(); }
  Int_ptr int_list(const char* name) { return int_[index_list_index(args_, name)].data(); }

  void copy_back() {
    const Clock::time_point start = Clock::now();
    for (int k = 0; k < args_->n_outputs; ++k) {
      std::copy(out_[k].begin(), out_[k].end(), args_->outputs[k]);
      const unsigned long long bytes = out_[k].size() * sizeof(Real_type);
      timing_->d2h_bytes += bytes;
      timing_->d2h_copies += bytes > 0;  // as DeviceArrays: one copy per non-empty array
    }
    timing_->d2h_seconds = seconds_since(start);
  }

 private:
  // One copy of `bytes` to the "device", counted as DeviceArrays counts (empty arrays: none).
  void count_in(unsigned long long bytes) {
    timing_->h2d_bytes += bytes;
    timing_->h2d_copies += bytes > 0;
  }

  const rp_args* args_;
  rp_timing* timing_;
  std::vector<std::vector<Real_type>> in_;
  std::vector<std::vector<Real_type>> out_;
  std::vector<std::vector<Index_type>> idx_;
  std::vector<std::vector<Int_type>> int_;
};

// The host's "atomic" addition: the stand-in runs one thread.
template <typename T>
void host_add(T* p, T v) {
  *p += v;
}

template <typename Body>
void timed_reps(int reps, rp_timing* timing, Body body) {
  const Clock::time_point start = Clock::now();
  for (int rep = 0; rep < reps; ++rep) body();
  timing->kernel_seconds = seconds_since(start);
}

}  // namespace

// MEMCPY_D2D: the copy of the CUDA build (device.cu) with std::memcpy between two host
// arrays of n doubles; the fastest of `reps` copies. Its figure is no device bandwidth.
void run_memcpy_d2d(const rp_args* args, int reps, rp_timing* t) {
  const long long n = param(args, "n");
  if (n <= 0 || reps <= 0) throw Error("MEMCPY_D2D needs n > 0 and reps > 0");
  if (static_cast<unsigned long long>(n) > std::numeric_limits<size_t>::max() / sizeof(Real_type)) {
    throw Error("MEMCPY_D2D: n is too large");
  }
  std::vector<Real_type> src(static_cast<size_t>(n), 1.0), dst(static_cast<size_t>(n), 0.0);
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < reps; ++rep) {
    const Clock::time_point start = Clock::now();
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(Real_type));
    best = std::min(best, seconds_since(start));
  }
  if (dst[static_cast<size_t>(n) - 1] != 1.0) throw Error("MEMCPY_D2D: the copy did not arrive");
  // A copy too fast for the clock still takes some time.
  t->kernel_seconds = std::max(best, 1e-9);
}

// A 1-D kernel: `setup` declares the loop's variables, BODY runs for i in [0, iend).
#define RP_HOST_1D(setup, BODY)                                \
  const Index_type iend = param(args, "iend");                 \
  HostArrays d(args, t);                                       \
  setup;                                                       \
  timed_reps(reps, t, [&] {                                    \
    for (Index_type i = 0; i < iend; ++i) {                    \
      BODY                                                     \
    }                                                          \
  });                                                          \
  d.copy_back();

void run_copy(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr a = d.input("a"); Real_ptr c = d.output("c"), COPY_BODY)
}

void run_mul(const rp_args* args, int reps, rp_timing* t) {
  const Real_type alpha = scalar(args, "alpha");
  RP_HOST_1D(Real_ptr c = d.input("c"); Real_ptr b = d.output("b"), MUL_BODY)
}

void run_add(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr a = d.input("a"); Real_ptr b = d.input("b"); Real_ptr c = d.output("c"),
             ADD_BODY)
}

void run_triad(const rp_args* args, int reps, rp_timing* t) {
  const Real_type alpha = scalar(args, "alpha");
  RP_HOST_1D(Real_ptr b = d.input("b"); Real_ptr c = d.input("c"); Real_ptr a = d.output("a"),
             TRIAD_BODY)
}

void run_daxpy(const rp_args* args, int reps, rp_timing* t) {
  const Real_type a = scalar(args, "a");
  RP_HOST_1D(Real_ptr x = d.input("x"); Real_ptr y = d.output("y"), DAXPY_BODY)
}

void run_init3(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr in1 = d.input("in1"); Real_ptr in2 = d.input("in2");
             Real_ptr out1 = d.output("out1"); Real_ptr out2 = d.output("out2");
             Real_ptr out3 = d.output("out3"), INIT3_BODY)
}

void run_muladdsub(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr in1 = d.input("in1"); Real_ptr in2 = d.input("in2");
             Real_ptr out1 = d.output("out1"); Real_ptr out2 = d.output("out2");
             Real_ptr out3 = d.output("out3"), MULADDSUB_BODY)
}

void run_if_quad(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr a = d.input("a"); Real_ptr b = d.input("b"); Real_ptr c = d.input("c");
             Real_ptr x1 = d.output("x1"); Real_ptr x2 = d.output("x2"), IF_QUAD_BODY)
}

void run_hydro_1d(const rp_args* args, int reps, rp_timing* t) {
  const Real_type q = scalar(args, "q"), r = scalar(args, "r"), tt = scalar(args, "t");
  RP_HOST_1D(Real_ptr y = d.input("y"); Real_ptr z = d.input("z"); Real_ptr x = d.output("x"),
             { const Real_type t = tt; HYDRO_1D_BODY })
}

void run_pressure(const rp_args* args, int reps, rp_timing* t) {
  const Real_type cls = scalar(args, "cls"), p_cut = scalar(args, "p_cut");
  const Real_type pmin = scalar(args, "pmin"), eosvmax = scalar(args, "eosvmax");
  const Index_type iend = param(args, "iend");
  HostArrays d(args, t);
  Real_ptr compression = d.input("compression"), e_old = d.input("e_old"), vnewc = d.input("vnewc");
  Real_ptr bvc = d.output("bvc"), p_new = d.output("p_new");
  timed_reps(reps, t, [&] {
    for (Index_type i = 0; i < iend; ++i) {
      PRESSURE_BODY1
    }
    for (Index_type i = 0; i < iend; ++i) {
      PRESSURE_BODY2
    }
  });
  d.copy_back();
}

void run_fir(const rp_args* args, int reps, rp_timing* t) {
  const Index_type coefflen = param(args, "coefflen");
  RP_HOST_1D(Real_ptr coeff = d.input("coeff"); Real_ptr in = d.input("in");
             Real_ptr out = d.output("out"), FIR_BODY)
}

void run_ltimes(const rp_args* args, int reps, rp_timing* t) {
  const Index_type num_d = param(args, "num_d"), num_m = param(args, "num_m");
  const Index_type num_g = param(args, "num_g"), num_z = param(args, "num_z");
  HostArrays h(args, t);
  Real_ptr elldat = h.input("ell"), psidat = h.input("psi"), phidat = h.output("phi");
  timed_reps(reps, t, [&] {
    for (Index_type z = 0; z < num_z; ++z)
      for (Index_type g = 0; g < num_g; ++g)
        for (Index_type m = 0; m < num_m; ++m)
          for (Index_type d = 0; d < num_d; ++d) {
            LTIMES_BODY
          }
  });
  h.copy_back();
}

void run_eos(const rp_args* args, int reps, rp_timing* t) {
  const Real_type q = scalar(args, "q"), r = scalar(args, "r"), tt = scalar(args, "t");
  RP_HOST_1D(Real_ptr y = d.input("y"); Real_ptr z = d.input("z"); Real_ptr u = d.input("u");
             Real_ptr x = d.output("x"), { const Real_type t = tt; EOS_BODY })
}

void run_first_diff(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr y = d.input("y"); Real_ptr x = d.output("x"), FIRST_DIFF_BODY)
}

void run_int_predict(const rp_args* args, int reps, rp_timing* t) {
  const Index_type offset = param(args, "offset");
  const Real_type dm22 = scalar(args, "dm22"), dm23 = scalar(args, "dm23");
  const Real_type dm24 = scalar(args, "dm24"), dm25 = scalar(args, "dm25");
  const Real_type dm26 = scalar(args, "dm26"), dm27 = scalar(args, "dm27");
  const Real_type dm28 = scalar(args, "dm28"), c0 = scalar(args, "c0");
  RP_HOST_1D(Real_ptr px = d.output("px"), INT_PREDICT_BODY)
}

void run_diff_predict(const rp_args* args, int reps, rp_timing* t) {
  const Index_type offset = param(args, "offset");
  RP_HOST_1D(Real_ptr cx = d.input("cx"); Real_ptr px = d.output("px"), DIFF_PREDICT_BODY)
}

void run_planckian(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr x = d.input("x"); Real_ptr u = d.input("u"); Real_ptr v = d.input("v");
             Real_ptr y = d.output("y"); Real_ptr w = d.output("w"), PLANCKIAN_BODY)
}

void run_init_view1d(const rp_args* args, int reps, rp_timing* t) {
  const Real_type v = scalar(args, "val");
  RP_HOST_1D(Real_ptr a = d.output("a"), INIT_VIEW1D_BODY)
}

void run_copy8(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_1D(Real_ptr x0 = d.input("x0"); Real_ptr x1 = d.input("x1"); Real_ptr x2 = d.input("x2");
             Real_ptr x3 = d.input("x3"); Real_ptr x4 = d.input("x4"); Real_ptr x5 = d.input("x5");
             Real_ptr x6 = d.input("x6"); Real_ptr x7 = d.input("x7"); Real_ptr y0 = d.output("y0");
             Real_ptr y1 = d.output("y1"); Real_ptr y2 = d.output("y2"); Real_ptr y3 = d.output("y3");
             Real_ptr y4 = d.output("y4"); Real_ptr y5 = d.output("y5"); Real_ptr y6 = d.output("y6");
             Real_ptr y7 = d.output("y7"), COPY8_BODY)
}

void run_nested_init(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  HostArrays d(args, t);
  Real_ptr array = d.output("array");
  timed_reps(reps, t, [&] {
    for (Index_type k = 0; k < nk; ++k)
      for (Index_type j = 0; j < nj; ++j)
        for (Index_type i = 0; i < ni; ++i) {
          NESTED_INIT_BODY
        }
  });
  d.copy_back();
}

// A 1-D kernel over [1, iend).
#define RP_HOST_FROM_1(setup, BODY)            \
  const Index_type iend = param(args, "iend"); \
  HostArrays d(args, t);                       \
  setup;                                       \
  timed_reps(reps, t, [&] {                    \
    for (Index_type i = 1; i < iend; ++i) {    \
      BODY                                     \
    }                                          \
  });                                          \
  d.copy_back();

void run_first_sum(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_FROM_1(Real_ptr y = d.input("y"); Real_ptr x = d.output("x"), FIRST_SUM_BODY)
}

void run_tridiag_elim(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_FROM_1(Real_ptr xin = d.input("xin"); Real_ptr y = d.input("y"); Real_ptr z = d.input("z");
                 Real_ptr xout = d.output("xout"), TRIDIAG_ELIM_BODY)
}

void run_gen_lin_recur(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "iend"), kb5i = 0;
  HostArrays d(args, t);
  Real_ptr sa = d.input("sa"), sb = d.input("sb"), b5 = d.output("b5"), stb5 = d.output("stb5");
  timed_reps(reps, t, [&] {
    for (Index_type k = 0; k < N; ++k) {
      GEN_LIN_RECUR_BODY1
    }
    for (Index_type i = 1; i < N + 1; ++i) {
      GEN_LIN_RECUR_BODY2
    }
  });
  d.copy_back();
}

void run_energy(const rp_args* args, int reps, rp_timing* t) {
  HostArrays d(args, t);
  ENERGY_ARRAYS(d)
  timed_reps(reps, t, [&] {
    for (int step = 1; step <= 6; ++step) {
      for (Index_type i = 0; i < iend; ++i) {
        ENERGY_STEP(step)
      }
    }
  });
  d.copy_back();
}

void run_vol3d(const rp_args* args, int reps, rp_timing* t) {
  HostArrays d(args, t);
  VOL3D_ARRAYS(d)
  timed_reps(reps, t, [&] {
    for (Index_type i = ibegin; i < iend; ++i) {
      VOL3D_BODY
    }
  });
  d.copy_back();
}

void run_del_dot_vec_2d(const rp_args* args, int reps, rp_timing* t) {
  HostArrays d(args, t);
  DEL_DOT_VEC_2D_ARRAYS(d)
  timed_reps(reps, t, [&] {
    for (Index_type ii = 0; ii < iend; ++ii) {
      ZONES_BODY_INDEX
      DEL_DOT_VEC_2D_BODY
    }
  });
  d.copy_back();
}

void run_zonal_accumulation_3d(const rp_args* args, int reps, rp_timing* t) {
  HostArrays d(args, t);
  ZONAL_ACCUMULATION_3D_ARRAYS(d)
  timed_reps(reps, t, [&] {
    for (Index_type ii = 0; ii < iend; ++ii) {
      ZONES_BODY_INDEX
      ZONAL_ACCUMULATION_3D_BODY
    }
  });
  d.copy_back();
}

void run_matvec_3d_stencil(const rp_args* args, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  const Index_type jp = param(args, "jp"), kp = param(args, "kp");
  HostArrays d(args, t);
  Real_ptr x = d.input("x"), b = d.output("b");
  Real_ptr m[14];
  for (int k = 0; k < 14; ++k) m[k] = d.input(kMatvecMatrices[k]);
  Index_ptr real_zones = d.index_list("real_zones");
  MATVEC_3D_STENCIL_POINTERS(x, m, jp, kp)
  timed_reps(reps, t, [&] {
    for (Index_type ii = 0; ii < iend; ++ii) {
      ZONES_BODY_INDEX
      MATVEC_3D_STENCIL_BODY
    }
  });
  d.copy_back();
}

// A reduction to one value: `fold` combines each repetition's `value` (computed by BODY over
// [0, iend) from `init`) into the result, which ends in the one-element output `out`.
#define RP_HOST_REDUCE(setup, value, init, BODY, fold, out) \
  const Index_type iend = param(args, "iend");                \
  HostArrays d(args, t);                                      \
  setup;                                                      \
  Real_type result = 0.0;                                     \
  timed_reps(reps, t, [&] {                                   \
    Real_type value = init;                                   \
    for (Index_type i = 0; i < iend; ++i) {                   \
      BODY                                                    \
    }                                                         \
    fold;                                                     \
  });                                                         \
  d.copy_back();                                              \
  set_scalar_output(args, out, result);

void run_dot(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  RP_HOST_REDUCE(Real_ptr a = d.input("a"); Real_ptr b = d.input("b"), dot, 0.0, DOT_BODY,
                 result += dot, "dot")
}

void run_reduce_sum(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  RP_HOST_REDUCE(Real_ptr x = d.input("x"), sum, 0.0, REDUCE_SUM_BODY, result = sum, "sum")
}

void run_pi_reduce(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  const Real_type dx = scalar(args, "dx");
  RP_HOST_REDUCE((void)0, pi, 0.0, PI_REDUCE_BODY, result = 4.0 * pi, "pi")
}

void run_trap_int(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  const Real_type x0 = scalar(args, "x0"), xp = scalar(args, "xp"), y = scalar(args, "y");
  const Real_type yp = scalar(args, "yp"), h = scalar(args, "h");
  RP_HOST_REDUCE((void)0, sumx, 0.0, TRAP_INT_BODY, result += sumx * h, "sumx")
}

void run_pi_atomic(const rp_args* args, int reps, rp_timing* t) {
  const Real_type dx = scalar(args, "dx");
  RP_HOST_REDUCE((void)0, pi, 0.0, PI_REDUCE_BODY, result = pi * 4.0, "pi_final")
}

void run_daxpy_atomic(const rp_args* args, int reps, rp_timing* t) {
  const Real_type a = scalar(args, "a");
  RP_HOST_1D(Real_ptr x = d.input("x"); Real_ptr y = d.output("y"),
             DAXPY_ATOMIC_RAJA_BODY(host_add))
}

void run_first_min(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  HostArrays d(args, t);
  Real_ptr x = d.input("x");
  Index_type m_minloc = -1;
  timed_reps(reps, t, [&] {
    MyMinLoc mymin = {x[0], 0};
    for (Index_type i = 0; i < iend; ++i) {
      FIRST_MIN_BODY
    }
    m_minloc = mymin.loc;
  });
  d.copy_back();
  set_scalar_output(args, "minloc", static_cast<Real_type>(m_minloc));
}

void run_reduce3_int(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  HostArrays d(args, t);
  Int_ptr vec = d.int_list("vec");
  Int_type m_vsum = 0, m_vmin = INT_MAX, m_vmax = INT_MIN;
  timed_reps(reps, t, [&] {
    Int_type vsum = 0, vmin = INT_MAX, vmax = INT_MIN;
    for (Index_type i = 0; i < iend; ++i) {
      REDUCE3_INT_BODY
    }
    m_vsum += vsum;
    m_vmin = RAJA_MIN(m_vmin, vmin);
    m_vmax = RAJA_MAX(m_vmax, vmax);
  });
  d.copy_back();
  set_scalar_output(args, "vsum", m_vsum);
  set_scalar_output(args, "vmin", m_vmin);
  set_scalar_output(args, "vmax", m_vmax);
}

void run_reduce_struct(const rp_args* args, int /*tuning*/, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend");
  HostArrays d(args, t);
  Real_ptr x = d.input("x"), y = d.input("y");
  Real_type result[6] = {};
  timed_reps(reps, t, [&] {
    Real_type xsum = 0.0, xmin = DBL_MAX, xmax = -DBL_MAX;
    Real_type ysum = 0.0, ymin = DBL_MAX, ymax = -DBL_MAX;
    for (Index_type i = 0; i < iend; ++i) {
      REDUCE_STRUCT_BODY
    }
    const Real_type values[6] = {xsum / iend, xmin, xmax, ysum / iend, ymin, ymax};
    for (int k = 0; k < 6; ++k) result[k] = values[k];
  });
  d.copy_back();
  for (int k = 0; k < 6; ++k) set_scalar_output(args, kReduceStructOut[k], result[k]);
}

namespace {

// The CUDA kernel's dynamic shared memory without an opt-in (what cudaFuncGetAttributes
// reports as its maximum), for the choice of the shared replication.
constexpr Index_type kDynamicSharedBytes = 48 * 1024;

// The repetitions of an atomic_shared(s)_global(g) tuning as the CUDA kernel runs them, the
// blocks and their threads one after another: `value(i)` added to bin bins[i] through the
// shared copies of its block (s > 0) or straight into its warp's global copy (s = 0), the
// global copies added up into `final` after each repetition.
template <typename T, typename Value>
void replicated_reps(int reps, rp_timing* t, Replication preferred, Index_ptr bins, Value value,
                     Index_type iend, Index_type num_bins, T* final) {
  if (num_bins <= 0) throw Error("the replicated atomics need at least one bin");
  const Index_type block = RP_BLOCK_SIZE, grid = iend > 0 ? (iend + block - 1) / block : 0;
  const Replication r = choose_replication(
      preferred, grid, kDynamicSharedBytes / static_cast<Index_type>(sizeof(T)) / num_bins);
  std::vector<T> copies(static_cast<size_t>(num_bins * r.global));
  std::vector<T> shared(static_cast<size_t>(num_bins * std::max<Index_type>(r.shared, 1)));
  timed_reps(reps, t, [&] {
    std::fill(copies.begin(), copies.end(), T(0));
    for (Index_type b = 0; b < grid; ++b) {
      if (r.shared > 0) {
        std::fill(shared.begin(), shared.end(), T(0));
        for (Index_type thread = 0; thread < block && b * block + thread < iend; ++thread) {
          const Index_type i = b * block + thread;
          shared[shared_slot(bins[i], thread, r.shared)] += value(i);
        }
        for (Index_type bin = 0; bin < num_bins; ++bin) {
          T sum = T(0);
          for (Index_type s = 0; s < r.shared; ++s) sum += shared[shared_slot(bin, s, r.shared)];
          if (sum != T(0)) copies[global_slot(bin, b, r.global, num_bins)] += sum;
        }
      } else {
        for (Index_type i = b * block; i < std::min(iend, (b + 1) * block); ++i) {
          copies[global_slot(bins[i], i / 32, r.global, num_bins)] += value(i);
        }
      }
    }
    fold_copies(copies.data(), num_bins, r.global, final);
  });
}

}  // namespace

void run_multi_reduce(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  HostArrays d(args, t);
  Real_ptr data = d.input("data"), values = d.output("values");
  Index_ptr bins = d.index_list("bins");
  replicated_reps<Real_type>(reps, t, kMultiReduceReplication[tuning], bins,
                             [&](Index_type i) { return data[i]; }, iend, num_bins, values);
  d.copy_back();
}

void run_histogram(const rp_args* args, int tuning, int reps, rp_timing* t) {
  const Index_type iend = param(args, "iend"), num_bins = param(args, "num_bins");
  HostArrays d(args, t);
  Index_ptr bins = d.index_list("bins");
  std::vector<Count_type> counts(static_cast<size_t>(num_bins > 0 ? num_bins : 0));
  if (tuning == kHistCub) {
    timed_reps(reps, t, [&] {
      std::fill(counts.begin(), counts.end(), 0);
      for (Index_type i = 0; i < iend; ++i) {
        HISTOGRAM_RAJA_BODY(host_add)
      }
    });
  } else {
    replicated_reps<Count_type>(reps, t, kHistogramReplication[tuning], bins,
                                [](Index_type) { return Count_type{1}; }, iend, num_bins, counts.data());
  }
  d.copy_back();
  const int k = output_index(args, "counts");
  for (Index_type b = 0; b < num_bins; ++b) args->outputs[k][b] = static_cast<Real_type>(counts[b]);
}

void run_nodal_accumulation_3d(const rp_args* args, int reps, rp_timing* t) {
  HostArrays d(args, t);
  NODAL_ACCUMULATION_3D_ARRAYS(d)
  timed_reps(reps, t, [&] {
    for (Index_type ii = 0; ii < iend; ++ii) {
      ZONES_BODY_INDEX
      NODAL_ACCUMULATION_3D_RAJA_BODY_ATOMIC(host_add)
    }
  });
  d.copy_back();
}

void run_hydro_2d(const rp_args* args, int reps, rp_timing* t) {
  const Index_type jn = param(args, "jn"), kn = param(args, "kn");
  const Real_type s = scalar(args, "s"), tt = scalar(args, "t");
  HostArrays d(args, t);
  Real_ptr zm = d.input("zm"), zp = d.input("zp"), zq = d.input("zq"), zr = d.input("zr"), zz = d.input("zz");
  Real_ptr zrout = d.output("zrout"), zzout = d.output("zzout"), za = d.output("za"), zb = d.output("zb");
  Real_ptr zu = d.output("zu"), zv = d.output("zv");
  timed_reps(reps, t, [&] {
    for (Index_type k = 1; k < kn - 1; ++k)
      for (Index_type j = 1; j < jn - 1; ++j) {
        HYDRO_2D_BODY1
      }
    for (Index_type k = 1; k < kn - 1; ++k)
      for (Index_type j = 1; j < jn - 1; ++j) {
        HYDRO_2D_BODY2
      }
    for (Index_type k = 1; k < kn - 1; ++k)
      for (Index_type j = 1; j < jn - 1; ++j) {
        const Real_type t = tt;
        HYDRO_2D_BODY3
      }
  });
  d.copy_back();
}

// The Polybench stencils: per repetition, the sweep A to B (step 1), then B to A (step 2).
#define RP_HOST_SWEEPS(LOOPS, BODY1, BODY2)  \
  const Index_type N = param(args, "n");     \
  HostArrays d(args, t);                     \
  Real_ptr A = d.output("A"), B = d.output("B"); \
  timed_reps(reps, t, [&] {                  \
    for (int step = 1; step <= 2; ++step) {  \
      LOOPS {                                \
        if (step == 1) {                     \
          BODY1                              \
        } else {                             \
          BODY2                              \
        }                                    \
      }                                      \
    }                                        \
  });                                        \
  d.copy_back();

#define RP_LOOP_1D for (Index_type i = 1; i < N - 1; ++i)
#define RP_LOOP_2D RP_LOOP_1D for (Index_type j = 1; j < N - 1; ++j)
#define RP_LOOP_3D RP_LOOP_2D for (Index_type k = 1; k < N - 1; ++k)

void run_jacobi_1d(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_SWEEPS(RP_LOOP_1D, POLYBENCH_JACOBI_1D_BODY1, POLYBENCH_JACOBI_1D_BODY2)
}

void run_jacobi_2d(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_SWEEPS(RP_LOOP_2D, POLYBENCH_JACOBI_2D_BODY1, POLYBENCH_JACOBI_2D_BODY2)
}

void run_heat_3d(const rp_args* args, int reps, rp_timing* t) {
  RP_HOST_SWEEPS(RP_LOOP_3D, POLYBENCH_HEAT_3D_BODY1, POLYBENCH_HEAT_3D_BODY2)
}

void run_mat_mat_shared(const rp_args* args, int reps, rp_timing* t) {
  const Index_type N = param(args, "n");
  const Index_type tile_size = MAT_MAT_SHARED_TL_SZ, tiles = (N + tile_size - 1) / tile_size;
  HostArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.output("C");
  static Real_type As[MAT_MAT_SHARED_TL_SZ][MAT_MAT_SHARED_TL_SZ];
  static Real_type Bs[MAT_MAT_SHARED_TL_SZ][MAT_MAT_SHARED_TL_SZ];
  static Real_type Cs[MAT_MAT_SHARED_TL_SZ][MAT_MAT_SHARED_TL_SZ];
  // The blocks one after the other; within a block, each phase for all its threads.
  timed_reps(reps, t, [&] {
    for (Index_type by = 0; by < tiles; ++by)
      for (Index_type bx = 0; bx < tiles; ++bx) {
        for (Index_type ty = 0; ty < tile_size; ++ty)
          for (Index_type tx = 0; tx < tile_size; ++tx) Cs[ty][tx] = 0.0;
        for (Index_type k = 0; k < (tile_size + N - 1) / tile_size; k++) {
          for (Index_type ty = 0; ty < tile_size; ++ty)
            for (Index_type tx = 0; tx < tile_size; ++tx) {
              MAT_MAT_SHARED_BODY_2(tile_size)
            }
          for (Index_type ty = 0; ty < tile_size; ++ty)
            for (Index_type tx = 0; tx < tile_size; ++tx) {
              MAT_MAT_SHARED_BODY_3(tile_size)
            }
        }
        for (Index_type ty = 0; ty < tile_size; ++ty)
          for (Index_type tx = 0; tx < tile_size; ++tx) {
            MAT_MAT_SHARED_BODY_4(tile_size)
          }
      }
  });
  d.copy_back();
}

void run_gemm(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  const Real_type alpha = scalar(args, "alpha"), beta = scalar(args, "beta");
  HostArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.output("C");
  timed_reps(reps, t, [&] {
    for (Index_type i = 0; i < ni; ++i)
      for (Index_type j = 0; j < nj; ++j) {
        POLYBENCH_GEMM_BODY1
        POLYBENCH_GEMM_BODY2
        for (Index_type k = 0; k < nk; ++k) {
          POLYBENCH_GEMM_BODY3
        }
        POLYBENCH_GEMM_BODY4
      }
  });
  d.copy_back();
}

void run_2mm(const rp_args* args, int reps, rp_timing* t) {
  const Index_type ni = param(args, "ni"), nj = param(args, "nj"), nk = param(args, "nk");
  const Index_type nl = param(args, "nl");
  const Real_type alpha = scalar(args, "alpha"), beta = scalar(args, "beta");
  HostArrays d(args, t);
  Real_ptr A = d.input("A"), B = d.input("B"), C = d.input("C");
  Real_ptr tmp = d.output("tmp"), D = d.output("D");
  timed_reps(reps, t, [&] {
    for (Index_type i = 0; i < ni; ++i)
      for (Index_type j = 0; j < nj; ++j) {
        POLYBENCH_2MM_BODY1
        for (Index_type k = 0; k < nk; ++k) {
          POLYBENCH_2MM_BODY2
        }
        POLYBENCH_2MM_BODY3
      }
    for (Index_type i = 0; i < ni; ++i)
      for (Index_type l = 0; l < nl; ++l) {
        POLYBENCH_2MM_BODY4
        for (Index_type j = 0; j < nj; ++j) {
          POLYBENCH_2MM_BODY5
        }
        POLYBENCH_2MM_BODY6
      }
  });
  d.copy_back();
}

}  // namespace rp

extern "C" int rp_cuda_device_name(char* name, int len) {
  std::snprintf(name, static_cast<size_t>(len), "host stand-in, not a GPU");
  return 0;
}
