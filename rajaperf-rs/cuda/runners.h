// The per-kernel runners. The CUDA build defines them in the .cu files; the host stand-in
// (host_stub.cpp) defines the same names with plain loops.
#ifndef RAJAPERF_RUNNERS_H
#define RAJAPERF_RUNNERS_H

#include "rajaperf_cuda.h"

namespace rp {

// The Base_CUDA tunings of the kernels that have several, in RAJAPerf v2024.07's names and
// order (its setCudaTuningDefinitions, at its default block size 256); the tuned runners below
// get the index of one in their kernel's list. rajaperf-rs/src/problem.rs
// (KernelId::cuda_tunings) lists the same names.
//
// The reductions to values (DOT, PI_REDUCE, TRAP_INT, REDUCE3_INT, REDUCE_STRUCT): the
// block-atomic algorithm, on a direct grid or an occupancy-sized grid-stride one.
inline constexpr const char* kReduceTunings[] = {"blkatm_direct_256", "blkatm_occgs_256"};
enum ReduceTuning { kBlkatmDirect, kBlkatmOccgs };
// REDUCE_SUM: also CUB's DeviceReduce::Sum, first.
inline constexpr const char* kReduceSumTunings[] = {"cub", "blkatm_direct_256", "blkatm_occgs_256"};
enum ReduceSumTuning { kSumCub, kSumBlkatmDirect, kSumBlkatmOccgs };
// FIRST_MIN: per-block results finished on the host, on either grid.
inline constexpr const char* kFirstMinTunings[] = {"blkhst_direct_256", "blkhst_occgs_256"};
enum FirstMinTuning { kBlkhstDirect, kBlkhstOccgs };
// MULTI_REDUCE: atomics on replicated bins, without shared-memory copies (one global atomic
// per element) and with 16 shared copies per block and 2 global copies.
inline constexpr const char* kMultiReduceTunings[] = {"atomic_shared(0)_global(1)_256",
                                                      "atomic_shared(16)_global(2)_256"};
// HISTOGRAM: CUB's DeviceHistogram::HistogramEven first, then the same atomics.
inline constexpr const char* kHistogramTunings[] = {"cub", "atomic_shared(0)_global(1)_256",
                                                    "atomic_shared(16)_global(2)_256"};
enum HistogramTuning { kHistCub, kHistAtomicGlobal, kHistAtomicShared };

void run_copy(const rp_args* args, int reps, rp_timing* timing);
void run_mul(const rp_args* args, int reps, rp_timing* timing);
void run_add(const rp_args* args, int reps, rp_timing* timing);
void run_triad(const rp_args* args, int reps, rp_timing* timing);
void run_daxpy(const rp_args* args, int reps, rp_timing* timing);
void run_init3(const rp_args* args, int reps, rp_timing* timing);
void run_muladdsub(const rp_args* args, int reps, rp_timing* timing);
void run_if_quad(const rp_args* args, int reps, rp_timing* timing);
void run_hydro_1d(const rp_args* args, int reps, rp_timing* timing);
void run_pressure(const rp_args* args, int reps, rp_timing* timing);
void run_fir(const rp_args* args, int reps, rp_timing* timing);
void run_ltimes(const rp_args* args, int reps, rp_timing* timing);
void run_eos(const rp_args* args, int reps, rp_timing* timing);
void run_first_diff(const rp_args* args, int reps, rp_timing* timing);
void run_int_predict(const rp_args* args, int reps, rp_timing* timing);
void run_diff_predict(const rp_args* args, int reps, rp_timing* timing);
void run_planckian(const rp_args* args, int reps, rp_timing* timing);
void run_init_view1d(const rp_args* args, int reps, rp_timing* timing);
void run_copy8(const rp_args* args, int reps, rp_timing* timing);
void run_nested_init(const rp_args* args, int reps, rp_timing* timing);
void run_first_sum(const rp_args* args, int reps, rp_timing* timing);
void run_tridiag_elim(const rp_args* args, int reps, rp_timing* timing);
void run_gen_lin_recur(const rp_args* args, int reps, rp_timing* timing);
void run_energy(const rp_args* args, int reps, rp_timing* timing);
void run_vol3d(const rp_args* args, int reps, rp_timing* timing);
void run_del_dot_vec_2d(const rp_args* args, int reps, rp_timing* timing);
void run_zonal_accumulation_3d(const rp_args* args, int reps, rp_timing* timing);
void run_matvec_3d_stencil(const rp_args* args, int reps, rp_timing* timing);
void run_dot(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_reduce_sum(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_pi_reduce(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_trap_int(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_pi_atomic(const rp_args* args, int reps, rp_timing* timing);
void run_daxpy_atomic(const rp_args* args, int reps, rp_timing* timing);
void run_first_min(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_reduce_struct(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_multi_reduce(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_histogram(const rp_args* args, int tuning, int reps, rp_timing* timing);
void run_nodal_accumulation_3d(const rp_args* args, int reps, rp_timing* timing);
void run_hydro_2d(const rp_args* args, int reps, rp_timing* timing);
void run_jacobi_1d(const rp_args* args, int reps, rp_timing* timing);
void run_jacobi_2d(const rp_args* args, int reps, rp_timing* timing);
void run_heat_3d(const rp_args* args, int reps, rp_timing* timing);
void run_mat_mat_shared(const rp_args* args, int reps, rp_timing* timing);
void run_gemm(const rp_args* args, int reps, rp_timing* timing);
void run_2mm(const rp_args* args, int reps, rp_timing* timing);
void run_reduce3_int(const rp_args* args, int tuning, int reps, rp_timing* timing);
// Not a RAJAPerf kernel: the device copy bandwidth (device.cu; host_stub.cpp copies on the host).
void run_memcpy_d2d(const rp_args* args, int reps, rp_timing* timing);

}  // namespace rp

#endif
