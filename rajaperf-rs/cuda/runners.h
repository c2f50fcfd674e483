// The per-kernel runners. The CUDA build defines them in the .cu files; the host stand-in
// (host_stub.cpp) defines the same names with plain loops.
#ifndef RAJAPERF_RUNNERS_H
#define RAJAPERF_RUNNERS_H

#include "rajaperf_cuda.h"

namespace rp {

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
void run_dot(const rp_args* args, int reps, rp_timing* timing);
void run_reduce_sum(const rp_args* args, int reps, rp_timing* timing);
void run_pi_reduce(const rp_args* args, int reps, rp_timing* timing);
void run_trap_int(const rp_args* args, int reps, rp_timing* timing);
void run_pi_atomic(const rp_args* args, int reps, rp_timing* timing);
void run_daxpy_atomic(const rp_args* args, int reps, rp_timing* timing);
void run_first_min(const rp_args* args, int reps, rp_timing* timing);
void run_reduce_struct(const rp_args* args, int reps, rp_timing* timing);
void run_multi_reduce(const rp_args* args, int reps, rp_timing* timing);
void run_histogram(const rp_args* args, int reps, rp_timing* timing);
void run_nodal_accumulation_3d(const rp_args* args, int reps, rp_timing* timing);
void run_hydro_2d(const rp_args* args, int reps, rp_timing* timing);
void run_jacobi_1d(const rp_args* args, int reps, rp_timing* timing);
void run_jacobi_2d(const rp_args* args, int reps, rp_timing* timing);
void run_heat_3d(const rp_args* args, int reps, rp_timing* timing);
void run_mat_mat_shared(const rp_args* args, int reps, rp_timing* timing);
void run_gemm(const rp_args* args, int reps, rp_timing* timing);
void run_2mm(const rp_args* args, int reps, rp_timing* timing);
void run_reduce3_int(const rp_args* args, int reps, rp_timing* timing);
// Not a RAJAPerf kernel: the device copy bandwidth (device.cu; host_stub.cpp copies on the host).
void run_memcpy_d2d(const rp_args* args, int reps, rp_timing* timing);

}  // namespace rp

#endif
