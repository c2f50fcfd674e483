// RAJAPerf's types and loop bodies for the tier-1 kernels, as macros (as RAJAPerf writes
// them), shared by the CUDA kernels and the host stand-in that tests the driver.
#ifndef RAJAPERF_BODIES_H
#define RAJAPERF_BODIES_H

#include <math.h>
#include <stddef.h>

typedef double Real_type;
typedef double* Real_ptr;
typedef ptrdiff_t Index_type;

#define RP_BLOCK_SIZE 256

// LTIMES' block for 256 threads: 32 moments in x, then the squarest factor pair of 256/32.
#define LTIMES_M_BLOCK 32
#define LTIMES_G_BLOCK 4
#define LTIMES_Z_BLOCK 2

#define FIR_COEFFLEN (16)

#define COPY_BODY c[i] = a[i];

#define MUL_BODY b[i] = alpha * c[i];

#define ADD_BODY c[i] = a[i] + b[i];

#define TRIAD_BODY a[i] = b[i] + alpha * c[i];

#define DAXPY_BODY y[i] += a * x[i];

#define INIT3_BODY out1[i] = out2[i] = out3[i] = -in1[i] - in2[i];

#define MULADDSUB_BODY      \
  out1[i] = in1[i] * in2[i]; \
  out2[i] = in1[i] + in2[i]; \
  out3[i] = in1[i] - in2[i];

#define IF_QUAD_BODY                          \
  Real_type s = b[i] * b[i] - 4.0 * a[i] * c[i]; \
  if (s >= 0) {                               \
    s = sqrt(s);                              \
    x2[i] = (-b[i] + s) / (2.0 * a[i]);       \
    x1[i] = (-b[i] - s) / (2.0 * a[i]);       \
  } else {                                    \
    x2[i] = 0.0;                              \
    x1[i] = 0.0;                              \
  }

#define HYDRO_1D_BODY x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]);

#define PRESSURE_BODY1 bvc[i] = cls * (compression[i] + 1.0);

#define PRESSURE_BODY2                        \
  p_new[i] = bvc[i] * e_old[i];               \
  if (fabs(p_new[i]) < p_cut) p_new[i] = 0.0; \
  if (vnewc[i] >= eosvmax) p_new[i] = 0.0;    \
  if (p_new[i] < pmin) p_new[i] = pmin;

#define FIR_BODY                                \
  Real_type sum = 0.0;                          \
  for (Index_type j = 0; j < coefflen; ++j) {   \
    sum += coeff[j] * in[i + j];                \
  }                                             \
  out[i] = sum;

#define LTIMES_BODY                                   \
  phidat[m + (g * num_m) + (z * num_m * num_g)] +=    \
      elldat[d + (m * num_d)] * psidat[d + (g * num_d) + (z * num_d * num_g)];

// Tier 1b.

#define EOS_BODY                                              \
  x[i] = u[i] + r * (z[i] + r * y[i]) +                       \
         t * (u[i + 3] + r * (u[i + 2] + r * u[i + 1]) +      \
              t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4])));

#define FIRST_DIFF_BODY x[i] = y[i + 1] - y[i];

#define INT_PREDICT_BODY                                                    \
  px[i] = dm28 * px[i + offset * 12] + dm27 * px[i + offset * 11] +         \
          dm26 * px[i + offset * 10] + dm25 * px[i + offset * 9] +          \
          dm24 * px[i + offset * 8] + dm23 * px[i + offset * 7] +           \
          dm22 * px[i + offset * 6] +                                       \
          c0 * (px[i + offset * 4] + px[i + offset * 5]) + px[i + offset * 2];

#define DIFF_PREDICT_BODY                         \
  Real_type ar, br, cr;                           \
  ar = cx[i + offset * 4];                        \
  br = ar - px[i + offset * 4];                   \
  px[i + offset * 4] = ar;                        \
  cr = br - px[i + offset * 5];                   \
  px[i + offset * 5] = br;                        \
  ar = cr - px[i + offset * 6];                   \
  px[i + offset * 6] = cr;                        \
  br = ar - px[i + offset * 7];                   \
  px[i + offset * 7] = ar;                        \
  cr = br - px[i + offset * 8];                   \
  px[i + offset * 8] = br;                        \
  ar = cr - px[i + offset * 9];                   \
  px[i + offset * 9] = cr;                        \
  br = ar - px[i + offset * 10];                  \
  px[i + offset * 10] = ar;                       \
  cr = br - px[i + offset * 11];                  \
  px[i + offset * 11] = br;                       \
  px[i + offset * 13] = cr - px[i + offset * 12]; \
  px[i + offset * 12] = cr;

#define PLANCKIAN_BODY \
  y[i] = u[i] / v[i];  \
  w[i] = x[i] / (exp(y[i]) - 1.0);

#define INIT_VIEW1D_BODY a[i] = (i + 1) * v;

#define COPY8_BODY \
  y0[i] = x0[i];   \
  y1[i] = x1[i];   \
  y2[i] = x2[i];   \
  y3[i] = x3[i];   \
  y4[i] = x4[i];   \
  y5[i] = x5[i];   \
  y6[i] = x6[i];   \
  y7[i] = x7[i];

#endif
