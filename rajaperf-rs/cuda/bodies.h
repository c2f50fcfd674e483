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

// Tier 1b, continued.

typedef Index_type* Index_ptr;
typedef int Int_type;
typedef Int_type* Int_ptr;

// NESTED_INIT's block for 256 threads: 32 along i, the rest along j.
#define NESTED_INIT_I_BLOCK 32
#define NESTED_INIT_J_BLOCK 8
#define NESTED_INIT_K_BLOCK 1

#define NESTED_INIT_BODY array[i + ni * (j + nj * k)] = 0.00000001 * i * j * k;

#define FIRST_SUM_BODY x[i] = y[i - 1] + y[i];

#define TRIDIAG_ELIM_BODY xout[i] = z[i] * (y[i] - xin[i - 1]);

#define GEN_LIN_RECUR_BODY1            \
  b5[k + kb5i] = sa[k] + stb5[k] * sb[k]; \
  stb5[k] = b5[k + kb5i] - stb5[k];

#define GEN_LIN_RECUR_BODY2            \
  Index_type k = N - i;                \
  b5[k + kb5i] = sa[k] + stb5[k] * sb[k]; \
  stb5[k] = b5[k + kb5i] - stb5[k];

// ENERGY's artificial viscosity from `ssc` (RAJAPerf repeats these lines in three bodies).
#define ENERGY_VISCOSITY(ssc_value, result)     \
  Real_type ssc = (ssc_value);                  \
  if (ssc <= 0.1111111e-36) {                   \
    ssc = 0.3333333e-18;                        \
  } else {                                      \
    ssc = sqrt(ssc);                            \
  }                                             \
  result = (ssc * ql_old[i] + qq_old[i]);

#define ENERGY_BODY1 \
  e_new[i] = e_old[i] - 0.5 * delvc[i] * (p_old[i] + q_old[i]) + 0.5 * work[i];

#define ENERGY_BODY2                                                               \
  if (delvc[i] > 0.0) {                                                            \
    q_new[i] = 0.0;                                                                \
  } else {                                                                         \
    Real_type vhalf = 1.0 / (1.0 + compHalfStep[i]);                               \
    ENERGY_VISCOSITY((pbvc[i] * e_new[i] + vhalf * vhalf * bvc[i] * pHalfStep[i]) / rho0, \
                     q_new[i])                                                     \
  }

#define ENERGY_BODY3 \
  e_new[i] = e_new[i] + 0.5 * delvc[i] * (3.0 * (p_old[i] + q_old[i]) - 4.0 * (pHalfStep[i] + q_new[i]));

#define ENERGY_BODY4                        \
  e_new[i] += 0.5 * work[i];                \
  if (fabs(e_new[i]) < e_cut) {             \
    e_new[i] = 0.0;                         \
  }                                         \
  if (e_new[i] < emin) {                    \
    e_new[i] = emin;                        \
  }

#define ENERGY_BODY5                                                                       \
  Real_type q_tilde;                                                                       \
  if (delvc[i] > 0.0) {                                                                    \
    q_tilde = 0.;                                                                          \
  } else {                                                                                 \
    ENERGY_VISCOSITY((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0, \
                     q_tilde)                                                              \
  }                                                                                        \
  e_new[i] = e_new[i] - (7.0 * (p_old[i] + q_old[i]) - 8.0 * (pHalfStep[i] + q_new[i]) +   \
                         (p_new[i] + q_tilde)) * delvc[i] / 6.0;                           \
  if (fabs(e_new[i]) < e_cut) {                                                            \
    e_new[i] = 0.0;                                                                        \
  }                                                                                        \
  if (e_new[i] < emin) {                                                                   \
    e_new[i] = emin;                                                                       \
  }

#define ENERGY_BODY6                                                                       \
  if (delvc[i] <= 0.0) {                                                                   \
    ENERGY_VISCOSITY((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0, \
                     q_new[i])                                                             \
    if (fabs(q_new[i]) < q_cut) q_new[i] = 0.0;                                            \
  }

// ENERGY's fifteen arrays, passed to its kernels as one value.
struct EnergyArrays {
  Real_ptr e_new, e_old, delvc, p_new, p_old, q_new, q_old, work, compHalfStep, pHalfStep, bvc,
      pbvc, ql_old, qq_old, vnewc;
};

#define ENERGY_PACK                                                                          \
  EnergyArrays { e_new, e_old, delvc, p_new, p_old, q_new, q_old, work, compHalfStep,       \
                 pHalfStep, bvc, pbvc, ql_old, qq_old, vnewc }

#define ENERGY_UNPACK(a)                                                                     \
  Real_ptr e_new = a.e_new, e_old = a.e_old, delvc = a.delvc, p_new = a.p_new;              \
  Real_ptr p_old = a.p_old, q_new = a.q_new, q_old = a.q_old, work = a.work;                \
  Real_ptr compHalfStep = a.compHalfStep, pHalfStep = a.pHalfStep, bvc = a.bvc;             \
  Real_ptr pbvc = a.pbvc, ql_old = a.ql_old, qq_old = a.qq_old, vnewc = a.vnewc;

// Loop `step` (1 to 6) of ENERGY for element i.
#define ENERGY_STEP(step) \
  switch (step) {         \
    case 1: {             \
      ENERGY_BODY1        \
    } break;              \
    case 2: {             \
      ENERGY_BODY2        \
    } break;              \
    case 3: {             \
      ENERGY_BODY3        \
    } break;              \
    case 4: {             \
      ENERGY_BODY4        \
    } break;              \
    case 5: {             \
      ENERGY_BODY5        \
    } break;              \
    default: {            \
      ENERGY_BODY6        \
    } break;              \
  }

// ENERGY's arguments and arrays, from DeviceArrays or HostArrays `d`.
#define ENERGY_ARRAYS(d)                                                                      \
  const Index_type iend = param(args, "iend");                                                \
  const Real_type rho0 = scalar(args, "rho0"), e_cut = scalar(args, "e_cut");                 \
  const Real_type emin = scalar(args, "emin"), q_cut = scalar(args, "q_cut");                 \
  Real_ptr e_old = d.input("e_old"), delvc = d.input("delvc"), p_new = d.input("p_new");      \
  Real_ptr p_old = d.input("p_old"), q_old = d.input("q_old"), work = d.input("work");        \
  Real_ptr compHalfStep = d.input("compHalfStep"), pHalfStep = d.input("pHalfStep");          \
  Real_ptr bvc = d.input("bvc"), pbvc = d.input("pbvc"), ql_old = d.input("ql_old");          \
  Real_ptr qq_old = d.input("qq_old"), vnewc = d.input("vnewc");                              \
  Real_ptr e_new = d.output("e_new"), q_new = d.output("q_new");

// RAJAPerf's AppsData.hpp: a zone's corner pointers in 3-D and 2-D.
#define NDPTRSET(jp, kp, v, v0, v1, v2, v3, v4, v5, v6, v7) \
  v0 = v;                                                  \
  v1 = v0 + 1;                                             \
  v2 = v0 + jp;                                            \
  v3 = v1 + jp;                                            \
  v4 = v0 + kp;                                            \
  v5 = v1 + kp;                                            \
  v6 = v2 + kp;                                            \
  v7 = v3 + kp;

#define NDSET2D(jp, v, v1, v2, v3, v4) \
  v4 = v;                              \
  v1 = v4 + 1;                         \
  v2 = v1 + jp;                        \
  v3 = v4 + jp;

// VOL3D's arguments and corner pointers, from DeviceArrays or HostArrays `d`.
#define VOL3D_ARRAYS(d)                                                                 \
  const Index_type ibegin = param(args, "ibegin"), iend = param(args, "iend");          \
  const Index_type jp = param(args, "jp"), kp = param(args, "kp");                      \
  const Real_type vnormq = scalar(args, "vnormq");                                      \
  Real_ptr x = d.input("x"), y = d.input("y"), z = d.input("z"), vol = d.output("vol"); \
  Real_ptr x0, x1, x2, x3, x4, x5, x6, x7;                                              \
  Real_ptr y0, y1, y2, y3, y4, y5, y6, y7;                                              \
  Real_ptr z0, z1, z2, z3, z4, z5, z6, z7;                                              \
  NDPTRSET(jp, kp, x, x0, x1, x2, x3, x4, x5, x6, x7)                                   \
  NDPTRSET(jp, kp, y, y0, y1, y2, y3, y4, y5, y6, y7)                                   \
  NDPTRSET(jp, kp, z, z0, z1, z2, z3, z4, z5, z6, z7)

// DEL_DOT_VEC_2D's arguments and corner pointers.
#define DEL_DOT_VEC_2D_ARRAYS(d)                                                              \
  const Index_type iend = param(args, "iend"), jp = param(args, "jp");                        \
  const Real_type ptiny = scalar(args, "ptiny"), half = scalar(args, "half");                 \
  Real_ptr x = d.input("x"), y = d.input("y"), xdot = d.input("xdot"), ydot = d.input("ydot"); \
  Real_ptr div = d.output("div");                                                             \
  Index_ptr real_zones = d.index_list("real_zones");                                          \
  Real_ptr x1, x2, x3, x4, y1, y2, y3, y4, fx1, fx2, fx3, fx4, fy1, fy2, fy3, fy4;            \
  NDSET2D(jp, x, x1, x2, x3, x4)                                                              \
  NDSET2D(jp, y, y1, y2, y3, y4)                                                              \
  NDSET2D(jp, xdot, fx1, fx2, fx3, fx4)                                                       \
  NDSET2D(jp, ydot, fy1, fy2, fy3, fy4)

// ZONAL_ACCUMULATION_3D's arguments and corner pointers.
#define ZONAL_ACCUMULATION_3D_ARRAYS(d)                                \
  const Index_type iend = param(args, "iend");                         \
  const Index_type jp = param(args, "jp"), kp = param(args, "kp");     \
  Real_ptr x = d.input("x"), vol = d.output("vol");                    \
  Index_ptr real_zones = d.index_list("real_zones");                   \
  Real_ptr x0, x1, x2, x3, x4, x5, x6, x7;                             \
  NDPTRSET(jp, kp, x, x0, x1, x2, x3, x4, x5, x6, x7)

// NODAL_ACCUMULATION_3D's arguments and corner pointers.
#define NODAL_ACCUMULATION_3D_ARRAYS(d)                                \
  const Index_type iend = param(args, "iend");                         \
  const Index_type jp = param(args, "jp"), kp = param(args, "kp");     \
  Real_ptr vol = d.input("vol"), x = d.output("x");                    \
  Index_ptr real_zones = d.index_list("real_zones");                   \
  Real_ptr x0, x1, x2, x3, x4, x5, x6, x7;                             \
  NDPTRSET(jp, kp, x, x0, x1, x2, x3, x4, x5, x6, x7)

#define VOL3D_BODY                                \
  Real_type x71 = x7[i] - x1[i];                  \
  Real_type x72 = x7[i] - x2[i];                  \
  Real_type x74 = x7[i] - x4[i];                  \
  Real_type x30 = x3[i] - x0[i];                  \
  Real_type x50 = x5[i] - x0[i];                  \
  Real_type x60 = x6[i] - x0[i];                  \
                                                  \
  Real_type y71 = y7[i] - y1[i];                  \
  Real_type y72 = y7[i] - y2[i];                  \
  Real_type y74 = y7[i] - y4[i];                  \
  Real_type y30 = y3[i] - y0[i];                  \
  Real_type y50 = y5[i] - y0[i];                  \
  Real_type y60 = y6[i] - y0[i];                  \
                                                  \
  Real_type z71 = z7[i] - z1[i];                  \
  Real_type z72 = z7[i] - z2[i];                  \
  Real_type z74 = z7[i] - z4[i];                  \
  Real_type z30 = z3[i] - z0[i];                  \
  Real_type z50 = z5[i] - z0[i];                  \
  Real_type z60 = z6[i] - z0[i];                  \
                                                  \
  Real_type xps = x71 + x60;                      \
  Real_type yps = y71 + y60;                      \
  Real_type zps = z71 + z60;                      \
                                                  \
  Real_type cyz = y72 * z30 - z72 * y30;          \
  Real_type czx = z72 * x30 - x72 * z30;          \
  Real_type cxy = x72 * y30 - y72 * x30;          \
  vol[i] = xps * cyz + yps * czx + zps * cxy;     \
                                                  \
  xps = x72 + x50;                                \
  yps = y72 + y50;                                \
  zps = z72 + z50;                                \
                                                  \
  cyz = y74 * z60 - z74 * y60;                    \
  czx = z74 * x60 - x74 * z60;                    \
  cxy = x74 * y60 - y74 * x60;                    \
  vol[i] += xps * cyz + yps * czx + zps * cxy;    \
                                                  \
  xps = x74 + x30;                                \
  yps = y74 + y30;                                \
  zps = z74 + z30;                                \
                                                  \
  cyz = y71 * z50 - z71 * y50;                    \
  czx = z71 * x50 - x71 * z50;                    \
  cxy = x71 * y50 - y71 * x50;                    \
  vol[i] += xps * cyz + yps * czx + zps * cxy;    \
                                                  \
  vol[i] *= vnormq;

#define ZONES_BODY_INDEX Index_type i = real_zones[ii];

#define DEL_DOT_VEC_2D_BODY                                             \
  Real_type xi = half * (x1[i] + x2[i] - x3[i] - x4[i]);                \
  Real_type xj = half * (x2[i] + x3[i] - x4[i] - x1[i]);                \
                                                                        \
  Real_type yi = half * (y1[i] + y2[i] - y3[i] - y4[i]);                \
  Real_type yj = half * (y2[i] + y3[i] - y4[i] - y1[i]);                \
                                                                        \
  Real_type fxi = half * (fx1[i] + fx2[i] - fx3[i] - fx4[i]);           \
  Real_type fxj = half * (fx2[i] + fx3[i] - fx4[i] - fx1[i]);           \
                                                                        \
  Real_type fyi = half * (fy1[i] + fy2[i] - fy3[i] - fy4[i]);           \
  Real_type fyj = half * (fy2[i] + fy3[i] - fy4[i] - fy1[i]);           \
                                                                        \
  Real_type rarea = 1.0 / (xi * yj - xj * yi + ptiny);                  \
                                                                        \
  Real_type dfxdx = rarea * (fxi * yj - fxj * yi);                      \
                                                                        \
  Real_type dfydy = rarea * (fyj * xi - fyi * xj);                      \
                                                                        \
  Real_type affine = (fy1[i] + fy2[i] + fy3[i] + fy4[i]) /              \
                     (y1[i] + y2[i] + y3[i] + y4[i]);                   \
                                                                        \
  div[i] = dfxdx + dfydy + affine;

#define ZONAL_ACCUMULATION_3D_BODY \
  vol[i] = 0.125 * (x0[i] + x1[i] + x2[i] + x3[i] + x4[i] + x5[i] + x6[i] + x7[i]);

// MATVEC_3D_STENCIL: x at the 27 neighbours (d/c/u = k-1/k/k+1, b/c/f = j-1/j/j+1,
// l/c/r = i-1/i/i+1), and the 27 coefficient arrays, 13 of them aliases of the 14 allocated.
#define MATVEC_3D_STENCIL_POINTERS(x, m, jp, kp) \
  Real_ptr xdbl = x - kp - jp - 1;  \
  Real_ptr xdbc = x - kp - jp;      \
  Real_ptr xdbr = x - kp - jp + 1;  \
  Real_ptr xdcl = x - kp - 1;       \
  Real_ptr xdcc = x - kp;           \
  Real_ptr xdcr = x - kp + 1;       \
  Real_ptr xdfl = x - kp + jp - 1;  \
  Real_ptr xdfc = x - kp + jp;      \
  Real_ptr xdfr = x - kp + jp + 1;  \
  Real_ptr xcbl = x - jp - 1;       \
  Real_ptr xcbc = x - jp;           \
  Real_ptr xcbr = x - jp + 1;       \
  Real_ptr xccl = x - 1;            \
  Real_ptr xccc = x;                \
  Real_ptr xccr = x + 1;            \
  Real_ptr xcfl = x + jp - 1;       \
  Real_ptr xcfc = x + jp;           \
  Real_ptr xcfr = x + jp + 1;       \
  Real_ptr xubl = x + kp - jp - 1;  \
  Real_ptr xubc = x + kp - jp;      \
  Real_ptr xubr = x + kp - jp + 1;  \
  Real_ptr xucl = x + kp - 1;       \
  Real_ptr xucc = x + kp;           \
  Real_ptr xucr = x + kp + 1;       \
  Real_ptr xufl = x + kp + jp - 1;  \
  Real_ptr xufc = x + kp + jp;      \
  Real_ptr xufr = x + kp + jp + 1;  \
  Real_ptr dbl = m[0], dbc = m[1], dbr = m[2], dcl = m[3], dcc = m[4], dcr = m[5]; \
  Real_ptr dfl = m[6], dfc = m[7], dfr = m[8], cbl = m[9], cbc = m[10], cbr = m[11]; \
  Real_ptr ccl = m[12], ccc = m[13];                \
  Real_ptr ccr = ccl + 1;                           \
  Real_ptr cfl = cbr - 1 + jp;                      \
  Real_ptr cfc = cbc + jp;                          \
  Real_ptr cfr = cbl + 1 + jp;                      \
  Real_ptr ubl = dfr - 1 - jp + kp;                 \
  Real_ptr ubc = dfc - jp + kp;                     \
  Real_ptr ubr = dfl + 1 - jp + kp;                 \
  Real_ptr ucl = dcr - 1 + kp;                      \
  Real_ptr ucc = dcc + kp;                          \
  Real_ptr ucr = dcl + 1 + kp;                      \
  Real_ptr ufl = dbr - 1 + jp + kp;                 \
  Real_ptr ufc = dbc + jp + kp;                     \
  Real_ptr ufr = dbl + 1 + jp + kp;

// The 14 allocated coefficient arrays, in RAJAPerf's order.
static const char* const kMatvecMatrices[14] = {"dbl", "dbc", "dbr", "dcl", "dcc", "dcr", "dfl",
                                                "dfc", "dfr", "cbl", "cbc", "cbr", "ccl", "ccc"};

#define MATVEC_3D_STENCIL_BODY                                         \
  b[i] = dbl[i] * xdbl[i] + dbc[i] * xdbc[i] + dbr[i] * xdbr[i] +      \
         dcl[i] * xdcl[i] + dcc[i] * xdcc[i] + dcr[i] * xdcr[i] +      \
         dfl[i] * xdfl[i] + dfc[i] * xdfc[i] + dfr[i] * xdfr[i] +      \
                                                                       \
         cbl[i] * xcbl[i] + cbc[i] * xcbc[i] + cbr[i] * xcbr[i] +      \
         ccl[i] * xccl[i] + ccc[i] * xccc[i] + ccr[i] * xccr[i] +      \
         cfl[i] * xcfl[i] + cfc[i] * xcfc[i] + cfr[i] * xcfr[i] +      \
                                                                       \
         ubl[i] * xubl[i] + ubc[i] * xubc[i] + ubr[i] * xubr[i] +      \
         ucl[i] * xucl[i] + ucc[i] * xucc[i] + ucr[i] * xucr[i] +      \
         ufl[i] * xufl[i] + ufc[i] * xufc[i] + ufr[i] * xufr[i];

// Tier 3: stencils.

// The 2-D/3-D stencils' block for 256 threads: 32 along the fastest index, 8 along the next.
#define STENCIL_FAST_BLOCK 32
#define STENCIL_SLOW_BLOCK 8

#define HYDRO_2D_BODY1                                                                           \
  za[j + k * jn] = (zp[j - 1 + (k + 1) * jn] + zq[j - 1 + (k + 1) * jn] - zp[j - 1 + k * jn] -   \
                    zq[j - 1 + k * jn]) *                                                        \
                   (zr[j + k * jn] + zr[j - 1 + k * jn]) /                                       \
                   (zm[j - 1 + k * jn] + zm[j - 1 + (k + 1) * jn]);                              \
  zb[j + k * jn] = (zp[j - 1 + k * jn] + zq[j - 1 + k * jn] - zp[j + k * jn] - zq[j + k * jn]) * \
                   (zr[j + k * jn] + zr[j + (k - 1) * jn]) /                                     \
                   (zm[j + k * jn] + zm[j - 1 + k * jn]);

#define HYDRO_2D_BODY2                                                          \
  zu[j + k * jn] += s * (za[j + k * jn] * (zz[j + k * jn] - zz[j + 1 + k * jn]) -  \
                         za[j - 1 + k * jn] * (zz[j + k * jn] - zz[j - 1 + k * jn]) - \
                         zb[j + k * jn] * (zz[j + k * jn] - zz[j + (k - 1) * jn]) +   \
                         zb[j + (k + 1) * jn] * (zz[j + k * jn] - zz[j + (k + 1) * jn])); \
  zv[j + k * jn] += s * (za[j + k * jn] * (zr[j + k * jn] - zr[j + 1 + k * jn]) -  \
                         za[j - 1 + k * jn] * (zr[j + k * jn] - zr[j - 1 + k * jn]) - \
                         zb[j + k * jn] * (zr[j + k * jn] - zr[j + (k - 1) * jn]) +   \
                         zb[j + (k + 1) * jn] * (zr[j + k * jn] - zr[j + (k + 1) * jn]));

#define HYDRO_2D_BODY3                          \
  zrout[j + k * jn] = zr[j + k * jn] + t * zu[j + k * jn]; \
  zzout[j + k * jn] = zz[j + k * jn] + t * zv[j + k * jn];

#define POLYBENCH_JACOBI_1D_BODY1 B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
#define POLYBENCH_JACOBI_1D_BODY2 A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);

#define POLYBENCH_JACOBI_2D_BODY1 \
  B[j + i * N] = 0.2 * (A[j + i * N] + A[j - 1 + i * N] + A[j + 1 + i * N] + A[j + (i + 1) * N] + A[j + (i - 1) * N]);
#define POLYBENCH_JACOBI_2D_BODY2 \
  A[j + i * N] = 0.2 * (B[j + i * N] + B[j - 1 + i * N] + B[j + 1 + i * N] + B[j + (i + 1) * N] + B[j + (i - 1) * N]);

#define POLYBENCH_HEAT_3D_STEP(to, from)                                                  \
  to[k + N * (j + N * i)] =                                                               \
      0.125 * (from[k + N * (j + N * (i + 1))] - 2.0 * from[k + N * (j + N * i)] +        \
               from[k + N * (j + N * (i - 1))]) +                                         \
      0.125 * (from[k + N * (j + 1 + N * i)] - 2.0 * from[k + N * (j + N * i)] +          \
               from[k + N * (j - 1 + N * i)]) +                                           \
      0.125 * (from[k + 1 + N * (j + N * i)] - 2.0 * from[k + N * (j + N * i)] +          \
               from[k - 1 + N * (j + N * i)]) +                                           \
      from[k + N * (j + N * i)];
#define POLYBENCH_HEAT_3D_BODY1 POLYBENCH_HEAT_3D_STEP(B, A)
#define POLYBENCH_HEAT_3D_BODY2 POLYBENCH_HEAT_3D_STEP(A, B)

// Tier 3: dense matrix products.

#define MAT_MAT_SHARED_TL_SZ 16

// One tile step of MAT_MAT_SHARED for the thread at (tx, ty) of block (bx, by): load the
// k-th tiles of A and B (zero outside the matrix) ...
#define MAT_MAT_SHARED_BODY_2(tile_size)                          \
  const Index_type Row = by * tile_size + ty;                     \
  const Index_type Col = bx * tile_size + tx;                     \
  if (k * tile_size + tx < N && Row < N) {                        \
    As[ty][tx] = A[Row * N + k * tile_size + tx];                 \
  } else {                                                        \
    As[ty][tx] = 0.0;                                             \
  }                                                               \
  if (k * tile_size + ty < N && Col < N) {                        \
    Bs[ty][tx] = B[(k * tile_size + ty) * N + Col];               \
  } else {                                                        \
    Bs[ty][tx] = 0.0;                                             \
  }

// ... and, once the block has loaded them, add the tile's products.
#define MAT_MAT_SHARED_BODY_3(tile_size)          \
  for (Index_type n = 0; n < tile_size; ++n) {    \
    Cs[ty][tx] += As[ty][n] * Bs[n][tx];          \
  }

#define MAT_MAT_SHARED_BODY_4(tile_size)                 \
  const Index_type Row = by * tile_size + ty;            \
  const Index_type Col = bx * tile_size + tx;            \
  if (Row < N && Col < N) {                              \
    C[Col + N * Row] = Cs[ty][tx];                       \
  }

#define POLYBENCH_GEMM_BODY1 Real_type dot = 0.0;
#define POLYBENCH_GEMM_BODY2 C[j + i * nj] *= beta;
#define POLYBENCH_GEMM_BODY3 dot += alpha * A[k + i * nk] * B[j + k * nj];
#define POLYBENCH_GEMM_BODY4 C[j + i * nj] = dot;

#define POLYBENCH_2MM_BODY1 Real_type dot = 0.0;
#define POLYBENCH_2MM_BODY2 dot += alpha * A[k + i * nk] * B[j + k * nj];
#define POLYBENCH_2MM_BODY3 tmp[j + i * nj] = dot;
#define POLYBENCH_2MM_BODY4 Real_type dot = beta;
#define POLYBENCH_2MM_BODY5 dot += tmp[j + i * nj] * C[l + j * nl];
#define POLYBENCH_2MM_BODY6 D[l + i * nl] = dot;

// Tier 2: reductions and atomics.

#define REDUCE3_INT_BODY     \
  vsum += vec[i];             \
  vmin = RAJA_MIN(vmin, vec[i]); \
  vmax = RAJA_MAX(vmax, vec[i]);

#define DOT_BODY dot += a[i] * b[i];

#define REDUCE_SUM_BODY sum += x[i];

#define PI_REDUCE_BODY                \
  double x = (double(i) + 0.5) * dx; \
  pi += dx / (1.0 + x * x);

// TRAP_INT's integrand.
static inline
#ifdef __CUDACC__
    __host__ __device__
#endif
    Real_type
    trap_int_func(Real_type x, Real_type y, Real_type xp, Real_type yp) {
  Real_type denom = (x - xp) * (x - xp) + (y - yp) * (y - yp);
  denom = 1.0 / sqrt(denom);
  return denom;
}

#define TRAP_INT_BODY       \
  Real_type x = x0 + i * h; \
  sumx += trap_int_func(x, y, xp, yp);

#define DAXPY_ATOMIC_RAJA_BODY(atomicAdd) atomicAdd(&y[i], a * x[i]);

// REDUCE_STRUCT's results, in the order RAJAPerf adds them to the checksum.
static const char* const kReduceStructOut[6] = {"xcenter", "xmin", "xmax", "ycenter", "ymin", "ymax"};

// FIRST_MIN's value with its location.
struct MyMinLoc {
  Real_type val;
  Index_type loc;
};

#define REDUCE_STRUCT_BODY         \
  xsum += x[i];                    \
  xmin = RAJA_MIN(xmin, x[i]);     \
  xmax = RAJA_MAX(xmax, x[i]);     \
  ysum += y[i];                    \
  ymin = RAJA_MIN(ymin, y[i]);     \
  ymax = RAJA_MAX(ymax, y[i]);

#define RAJA_MIN(a, b) (((b) < (a)) ? (b) : (a))
#define RAJA_MAX(a, b) (((b) > (a)) ? (b) : (a))

#define MULTI_REDUCE_RAJA_BODY(atomicAdd) atomicAdd(&values[bins[i]], data[i]);

#define HISTOGRAM_RAJA_BODY(atomicAdd) atomicAdd(&counts[bins[i]], static_cast<Count_type>(1));

typedef unsigned long long Count_type;

#define NODAL_ACCUMULATION_3D_RAJA_BODY_ATOMIC(atomicAdd) \
  Real_type val = 0.125 * vol[i];                          \
  atomicAdd(&x0[i], val);                                  \
  atomicAdd(&x1[i], val);                                  \
  atomicAdd(&x2[i], val);                                  \
  atomicAdd(&x3[i], val);                                  \
  atomicAdd(&x4[i], val);                                  \
  atomicAdd(&x5[i], val);                                  \
  atomicAdd(&x6[i], val);                                  \
  atomicAdd(&x7[i], val);

#define FIRST_MIN_BODY     \
  if (x[i] < mymin.val) {  \
    mymin.val = x[i];      \
    mymin.loc = i;         \
  }

#endif
