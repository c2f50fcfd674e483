/* C ABI of the CUDA baselines (librajaperf_cuda.so): RAJAPerf's Base_CUDA variants of the
 * tier-1, 1b, 2 and 3 kernels, run on host data, in each of their v2024.07 tunings.
 *
 * One call runs `reps` repetitions of one tuning of one kernel: the inputs and the outputs'
 * initial contents are copied to the GPU, the device is synchronised, the repetitions are
 * timed up to a final synchronisation (RAJAPerf's startTimer/stopTimer), and the outputs are
 * copied back.
 *
 * Tunings are named as RAJAPerf names them (runners.h lists them, block size 256); a kernel
 * with one has "default":
 *
 *   DOT PI_REDUCE TRAP_INT REDUCE3_INT REDUCE_STRUCT  blkatm_direct_256 blkatm_occgs_256
 *   REDUCE_SUM    cub blkatm_direct_256 blkatm_occgs_256
 *   FIRST_MIN     blkhst_direct_256 blkhst_occgs_256
 *   MULTI_REDUCE  atomic_shared(0)_global(1)_256 atomic_shared(16)_global(2)_256
 *   HISTOGRAM     cub atomic_shared(0)_global(1)_256 atomic_shared(16)_global(2)_256
 *
 * blkatm: block reduction, one atomic per block into the result; blkhst: per-block results
 * finished on the host; direct: one thread per element; occgs: an occupancy-sized grid,
 * grid-stride; cub: CUB's device-wide reduction or histogram; atomic_shared(s)_global(g):
 * atomics on s copies of the bins per block in shared memory (0: none) and g in global
 * memory. The runner times every tuning and compares with the fastest.
 *
 * Arrays, scalars and integer parameters are passed by name, so that a caller with another
 * order, or a missing array, gets an error instead of a wrong result. The names and sizes
 * are RAJAPerf's (see rajaperf-rs/src/setup.rs, which produces them):
 *
 *   kernel     inputs                   outputs          scalars                   params
 *   COPY       a                        c                -                         iend
 *   MUL        c                        b                alpha                     iend
 *   ADD        a b                      c                -                         iend
 *   TRIAD      b c                      a                alpha                     iend
 *   DAXPY      x                        y                a                         iend
 *   INIT3      in1 in2                  out1 out2 out3   -                         iend
 *   MULADDSUB  in1 in2                  out1 out2 out3   -                         iend
 *   IF_QUAD    a b c                    x1 x2            -                         iend
 *   HYDRO_1D   y z (iend+12 each)       x (iend+12)      q r t                     iend
 *   PRESSURE   compression e_old vnewc  bvc p_new        cls p_cut pmin eosvmax    iend
 *   FIR        coeff (16) in            out              -                         iend coefflen
 *   LTIMES     ell psi                  phi              -                         num_d num_m num_g num_z
 *   EOS        y z u (iend+7 each)      x (iend+7)       q r t                     iend
 *   FIRST_DIFF y (iend+1)               x (iend+1)       -                         iend
 *   INT_PREDICT -                       px (13*offset)   dm22..dm28 c0             iend offset
 *   DIFF_PREDICT cx (14*offset)         px (14*offset)   -                         iend offset
 *   PLANCKIAN  x u v                    y w              -                         iend
 *   INIT_VIEW1D -                       a                val                       iend
 *   COPY8      x0 .. x7                 y0 .. y7         -                         iend
 *   NESTED_INIT -                       array            -                         ni nj nk
 *   FIRST_SUM  y                        x                -                         iend
 *   TRIDIAG_ELIM xin y z                xout             -                         iend
 *   GEN_LIN_RECUR sa sb                 b5 stb5          -                         iend
 *   ENERGY     e_old delvc p_new p_old q_old work compHalfStep pHalfStep bvc pbvc ql_old
 *              qq_old vnewc             e_new q_new      rho0 e_cut emin q_cut     iend
 *   VOL3D      x y z (nnalls)           vol (nnalls)     vnormq                    ibegin iend jp kp
 *   DEL_DOT_VEC_2D x y xdot ydot        div              ptiny half                iend jp
 *   ZONAL_ACCUMULATION_3D x             vol              -                         iend jp kp
 *   MATVEC_3D_STENCIL x dbl dbc dbr dcl dcc dcr dfl dfc dfr cbl cbc cbr ccl ccc
 *                                       b                -                         iend jp kp
 *
 *   DOT        a b                      dot (1)          -                         iend
 *   REDUCE_SUM x                        sum (1)          -                         iend
 *   PI_REDUCE  -                        pi (1)           dx                        iend
 *   TRAP_INT   -                        sumx (1)         x0 xp y yp h              iend
 *   PI_ATOMIC  -                        pi_final (1)     dx                        iend
 *   DAXPY_ATOMIC x                      y                a                         iend
 *   FIRST_MIN  x                        minloc (1)       -                         iend
 *   REDUCE3_INT (int data vec)          vsum vmin vmax (1 each) -                  iend
 *   REDUCE_STRUCT x y                   xcenter xmin xmax ycenter ymin ymax (1 each) iend
 *   MULTI_REDUCE data                   values (num_bins) -                        iend num_bins
 *   HISTOGRAM  -                        counts (num_bins) -                        iend num_bins
 *   NODAL_ACCUMULATION_3D vol           x (nnalls)       -                         iend jp kp
 *   HYDRO_2D   zm zp zq zr zz           zrout zzout za zb zu zv  s t               jn kn
 *   JACOBI_1D  -                        A B (n)          -                         n
 *   JACOBI_2D  -                        A B (n*n)        -                         n
 *   HEAT_3D    -                        A B (n*n*n)      -                         n
 *   MAT_MAT_SHARED A B (n*n)            C (n*n)          -                         n
 *   GEMM       A (ni*nk) B (nk*nj)      C (ni*nj)        alpha beta                ni nj nk
 *   2MM        A (ni*nk) B (nk*nj) C (nj*nl)  tmp (ni*nj) D (ni*nl)  alpha beta    ni nj nk nl
 *
 *
 *   MEMCPY_D2D (not a RAJAPerf kernel: the device copy bandwidth) -  -  -     n
 *              two device arrays of n doubles, `reps` cudaMemcpy copies device to device, each
 *              timed alone with events; kernel_seconds is the fastest copy (no other timing)
 *
 * DEL_DOT_VEC_2D, ZONAL_ACCUMULATION_3D, MATVEC_3D_STENCIL and NODAL_ACCUMULATION_3D also
 * take the index list real_zones (iend entries); MULTI_REDUCE and HISTOGRAM take bins. Outputs of one element hold a reduction's result after the
 * repetitions (RAJAPerf's m_dot, m_sum, m_pi, m_sumx, m_pi_final, m_minloc).
 */
#ifndef RAJAPERF_CUDA_H
#define RAJAPERF_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rp_args {
  int n_params;
  const char* const* param_names;
  const long long* params;

  int n_scalars;
  const char* const* scalar_names;
  const double* scalars;

  int n_inputs;
  const char* const* input_names;
  const double* const* inputs;
  const long long* input_lens;

  int n_outputs;
  const char* const* output_names;
  double* const* outputs;
  const long long* output_lens;

  /* Read-only integer arrays, passed as 64-bit values: index lists (RAJAPerf's Index_type,
   * width 8) and integer data (Int_type, width 4: the kernels read them as int). */
  int n_indices;
  const char* const* index_names;
  const long long* const* indices;
  const long long* index_lens;
  const int* index_widths;

  /* MiB of device memory that nothing uses, allocated before each array (the runner's
   * --pad-mib: the arrays lie at other addresses); 0: none. */
  unsigned pad_mib;
} rp_args;

typedef struct rp_timing {
  double kernel_seconds; /* all repetitions, synchronised start to synchronised end */
  double h2d_seconds;    /* inputs and initial outputs to the device */
  double d2h_seconds;    /* outputs back */
  unsigned long long h2d_bytes;
  unsigned long long d2h_bytes;
  unsigned long long h2d_copies; /* cudaMemcpy calls to the device */
  unsigned long long d2h_copies; /* and back */
} rp_timing;

/* Runs `reps` repetitions of tuning `tuning` of `kernel` (RAJAPerf's names, e.g. "TRIAD" and
 * "default", "REDUCE_SUM" and "cub"). Returns 0 on success; otherwise a non-zero code (2: unknown
 * kernel, 3: a tuning the kernel does not have) and a message in `err` (at most `err_len` bytes,
 * NUL-terminated). */
int rp_cuda_run(const char* kernel, const char* tuning, const rp_args* args, int reps,
                rp_timing* timing, char* err, int err_len);

/* Writes the name of the device the kernels run on. Returns 0 on success. */
int rp_cuda_device_name(char* name, int len);

#ifdef __cplusplus
}
#endif

#endif
