/* A deterministic 4-lane logistic sigmoid for primal RCD's column gradient.
 *
 * Primal RCD with the logistic loss needs phi' (one exp) at every nonzero of a column;
 * four lanes at a time with a polynomial exp is what makes that loop fast. Only IEEE
 * +, -, *, / and integer bit operations (about 1 ulp), so the SSE2 and the AVX2 builds
 * give bit-identical results as long as floating-point contraction is off
 * (-ffp-contract=off: no FMA fusion); glibc's exp, by contrast, picks an FMA or a
 * non-FMA code path at run time.
 */
#ifndef PDSPARSE_FASTEXP_H
#define PDSPARSE_FASTEXP_H

#include <stdint.h>
#include <string.h>

#define PD_INLINE static inline __attribute__((always_inline))

PD_INLINE uint64_t pd_asu64(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
PD_INLINE double pd_asf64(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

#define PD_INV_LN2 1.4426950408889634
#define PD_SHIFT 6755399441055744.0         /* 0x1.8p52: rounds to an integer */
#define PD_LN2_HI 6.93147180369123816490e-01 /* 0x3fe62e42fee00000 */
#define PD_LN2_LO 1.90821492927058770002e-10 /* 0x3dea39ef35793c76 */

typedef double pd_v4d __attribute__((vector_size(32)));
typedef long long pd_v4i __attribute__((vector_size(32)));
typedef unsigned long long pd_v4u __attribute__((vector_size(32)));

/* 1 / (1 + exp(-s)) on four lanes without overflow for either sign of s; exp(x) for
 * x = -|s| <= 0 by Cody-Waite reduction and a degree-13 Taylor polynomial (|r| <= ln2/2),
 * 0 below about -745.2. */
PD_INLINE pd_v4d pd_sigmoid4(pd_v4d s)
{
    const pd_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    const pd_v4d lim = {-746.0, -746.0, -746.0, -746.0};
    const pd_v4u sign = {1ULL << 63, 1ULL << 63, 1ULL << 63, 1ULL << 63};
    pd_v4d a = (pd_v4d)((pd_v4u)s | sign);                       /* -|s| */
    pd_v4i small = a < lim;
    pd_v4d xc = (pd_v4d)((small & (pd_v4i)lim) | (~small & (pd_v4i)a));
    pd_v4d kd = xc * PD_INV_LN2 + PD_SHIFT;
    pd_v4u ki = (pd_v4u)kd;
    kd = kd - PD_SHIFT;
    pd_v4d r = (xc - kd * PD_LN2_HI) - kd * PD_LN2_LO;
    pd_v4d p = one * (1.0 / 6227020800.0);
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    pd_v4u u = ki - pd_asu64(PD_SHIFT) + 1100u;
    pd_v4u k1 = u >> 1;
    pd_v4u k2 = u - k1;
    pd_v4d e = (p * (pd_v4d)((k1 - 550u + 1023u) << 52)) * (pd_v4d)((k2 - 550u + 1023u) << 52);
    pd_v4i pos = s >= zero;
    pd_v4d num = (pd_v4d)((pos & (pd_v4i)one) | (~pos & (pd_v4i)e));
    return num / (one + e);
}

/* sum_t phi'(z[idx[t]]) * val[t] for the logistic loss, phi'(z) = -b sigma(-b z):
 * lane l sums the entries t = l (mod 4) in order, then (l0 + l1) + (l2 + l3). */
PD_INLINE double pd_logistic_dot4(const double *val, const int *idx, const double *z,
                                  const double *b, long long m)
{
    pd_v4d acc = {0.0, 0.0, 0.0, 0.0};
    long long t = 0;
    for (; t + 4 <= m; t += 4) {
        int i0 = idx[t], i1 = idx[t + 1], i2 = idx[t + 2], i3 = idx[t + 3];
        pd_v4d bb = {b[i0], b[i1], b[i2], b[i3]};
        pd_v4d s = {-b[i0] * z[i0], -b[i1] * z[i1], -b[i2] * z[i2], -b[i3] * z[i3]};
        pd_v4d v = {val[t], val[t + 1], val[t + 2], val[t + 3]};
        acc = acc + (-bb * pd_sigmoid4(s)) * v;
    }
    if (t < m) {  /* the last 1-3 entries, zero-padded: a zero value adds an exact zero */
        pd_v4d bb = {0.0, 0.0, 0.0, 0.0}, s = {0.0, 0.0, 0.0, 0.0}, v = {0.0, 0.0, 0.0, 0.0};
        for (int l = 0; t + l < m; l++) {
            int i = idx[t + l];
            bb[l] = b[i];
            s[l] = -b[i] * z[i];
            v[l] = val[t + l];
        }
        acc = acc + (-bb * pd_sigmoid4(s)) * v;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* Run-time dispatch: CPUs with AVX2 get a 256-bit clone; results are identical. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default"), noinline))
#endif
static double pd_logistic_dot(const double *val, const int *idx, const double *z,
                              const double *b, long long m)
{
    return pd_logistic_dot4(val, idx, z, b, m);
}

#endif
