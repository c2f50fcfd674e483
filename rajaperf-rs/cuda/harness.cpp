#include "harness.h"

#include <cstdio>
#include <cstring>

#include "runners.h"

namespace rp {

namespace {

// A kernel and its runner: `run` for a kernel with one tuning ("default"), `tuned` and the
// names of its tunings for one with several.
struct KernelEntry {
  const char* name;
  Runner run;
  TunedRunner tuned;
  const char* const* tunings;
  int n_tunings;

  KernelEntry(const char* n, Runner r) : name(n), run(r), tuned(nullptr), tunings(nullptr), n_tunings(0) {}
  template <int N>
  KernelEntry(const char* n, TunedRunner r, const char* const (&names)[N])
      : name(n), run(nullptr), tuned(r), tunings(names), n_tunings(N) {}
};

const KernelEntry kKernels[] = {
    {"COPY", run_copy},         {"MUL", run_mul},          {"ADD", run_add},
    {"TRIAD", run_triad},       {"DAXPY", run_daxpy},      {"INIT3", run_init3},
    {"MULADDSUB", run_muladdsub}, {"IF_QUAD", run_if_quad}, {"HYDRO_1D", run_hydro_1d},
    {"PRESSURE", run_pressure}, {"FIR", run_fir},          {"LTIMES", run_ltimes},
    {"EOS", run_eos},           {"FIRST_DIFF", run_first_diff},
    {"INT_PREDICT", run_int_predict}, {"DIFF_PREDICT", run_diff_predict},
    {"PLANCKIAN", run_planckian}, {"INIT_VIEW1D", run_init_view1d}, {"COPY8", run_copy8},
    {"NESTED_INIT", run_nested_init}, {"FIRST_SUM", run_first_sum},
    {"TRIDIAG_ELIM", run_tridiag_elim}, {"GEN_LIN_RECUR", run_gen_lin_recur},
    {"ENERGY", run_energy}, {"VOL3D", run_vol3d}, {"DEL_DOT_VEC_2D", run_del_dot_vec_2d},
    {"ZONAL_ACCUMULATION_3D", run_zonal_accumulation_3d},
    {"MATVEC_3D_STENCIL", run_matvec_3d_stencil},
    {"DOT", run_dot, kReduceTunings}, {"REDUCE_SUM", run_reduce_sum, kReduceSumTunings}, {"PI_REDUCE", run_pi_reduce, kReduceTunings},
    {"TRAP_INT", run_trap_int, kReduceTunings}, {"PI_ATOMIC", run_pi_atomic},
    {"DAXPY_ATOMIC", run_daxpy_atomic}, {"FIRST_MIN", run_first_min, kFirstMinTunings},
    {"REDUCE_STRUCT", run_reduce_struct, kReduceTunings}, {"MULTI_REDUCE", run_multi_reduce, kMultiReduceTunings},
    {"HISTOGRAM", run_histogram, kHistogramTunings}, {"NODAL_ACCUMULATION_3D", run_nodal_accumulation_3d},
    {"HYDRO_2D", run_hydro_2d}, {"JACOBI_1D", run_jacobi_1d}, {"JACOBI_2D", run_jacobi_2d},
    {"HEAT_3D", run_heat_3d}, {"MAT_MAT_SHARED", run_mat_mat_shared}, {"GEMM", run_gemm},
    {"2MM", run_2mm}, {"REDUCE3_INT", run_reduce3_int, kReduceTunings},
    {"MEMCPY_D2D", run_memcpy_d2d},
};

int find(int n, const char* const* names, const char* name, const char* what) {
  for (int k = 0; k < n; ++k) {
    if (names[k] != nullptr && std::strcmp(names[k], name) == 0) return k;
  }
  throw Error(std::string("missing ") + what + " '" + name + "'");
}

}  // namespace

int input_index(const rp_args* a, const char* name) {
  return find(a->n_inputs, a->input_names, name, "input array");
}

int output_index(const rp_args* a, const char* name) {
  return find(a->n_outputs, a->output_names, name, "output array");
}

int index_list_index(const rp_args* a, const char* name) {
  return find(a->n_indices, a->index_names, name, "index list");
}

double scalar(const rp_args* a, const char* name) {
  return a->scalars[find(a->n_scalars, a->scalar_names, name, "scalar")];
}

std::vector<int> narrow_ints(const long long* values, long long len) {
  return std::vector<int>(values, values + len);
}

void set_scalar_output(const rp_args* a, const char* name, double value) {
  const int k = output_index(a, name);
  if (a->output_lens[k] != 1) throw Error(std::string("output '") + name + "' is not a scalar");
  a->outputs[k][0] = value;
}

long long param(const rp_args* a, const char* name) {
  return a->params[find(a->n_params, a->param_names, name, "parameter")];
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int dispatch(const char* kernel, const char* tuning, const rp_args* args, int reps,
             rp_timing* timing, char* err, int err_len) {
  if (err != nullptr && err_len > 0) err[0] = '\0';
  *timing = rp_timing{};
  if (tuning == nullptr) tuning = "";
  std::string text;
  int code = 0;
  try {
    const KernelEntry* entry = nullptr;
    for (const KernelEntry& e : kKernels) {
      if (std::strcmp(e.name, kernel) == 0) entry = &e;
    }
    if (entry == nullptr) {
      text = std::string("unknown kernel '") + kernel + "'";
      code = 2;
    } else if (entry->run != nullptr && std::strcmp(tuning, kDefaultTuning) == 0) {
      entry->run(args, reps, timing);
      return 0;
    } else {
      for (int k = 0; k < entry->n_tunings; ++k) {
        if (std::strcmp(entry->tunings[k], tuning) == 0) {
          entry->tuned(args, k, reps, timing);
          return 0;
        }
      }
      text = std::string("unknown tuning '") + tuning + "' of " + kernel + " (its tunings:";
      if (entry->run != nullptr) text += std::string(" ") + kDefaultTuning;
      for (int k = 0; k < entry->n_tunings; ++k) text += std::string(" ") + entry->tunings[k];
      text += ")";
      code = 3;
    }
  } catch (const std::exception& e) {
    text = e.what();
    code = 1;
  }
  if (err != nullptr && err_len > 0) std::snprintf(err, static_cast<size_t>(err_len), "%s", text.c_str());
  return code;
}

}  // namespace rp

extern "C" int rp_cuda_run(const char* kernel, const char* tuning, const rp_args* args, int reps,
                           rp_timing* timing, char* err, int err_len) {
  return rp::dispatch(kernel, tuning, args, reps, timing, err, err_len);
}
