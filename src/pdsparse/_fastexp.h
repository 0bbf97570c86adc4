/* A deterministic 4-lane logistic sigmoid for primal RCD's column gradient, and the
 * logistic loss's value, phi' and phi'' for prox_newton's line-search pass.
 *
 * Primal RCD with the logistic loss needs phi' (one exp) at every nonzero of a column;
 * four lanes at a time with a table-driven polynomial exp is what makes that loop fast.
 * Only IEEE +, -, *, / and integer bit operations (exp about 1 ulp, the sigmoid at most
 * 3 ulp, measured on 16M values against long double), so the SSE2, AVX2 and AVX-512
 * builds give bit-identical results as long as floating-point contraction is off
 * (-ffp-contract=off: no FMA fusion); glibc's exp, by contrast, picks an FMA or a
 * non-FMA code path at run time.
 *
 * The column gradient's cost is mostly latency: each column's gradient waits for the
 * previous column's update of the same margins, and the out-of-order window holds only a
 * few 4-lane exps. So the exp is built for a short dependency chain (a 128-entry table
 * and a degree-5 polynomial in Estrin-like order rather than a degree-13 Horner chain,
 * no clamping or subnormal scaling unless a lane needs it), and a column's last 1-3
 * entries are gathered without going through the stack.
 */
#ifndef PDSPARSE_FASTEXP_H
#define PDSPARSE_FASTEXP_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#define PD_INLINE static inline __attribute__((always_inline))

PD_INLINE uint64_t pd_asu64(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
PD_INLINE double pd_asf64(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

#define PD_SHIFT 6755399441055744.0         /* 0x1.8p52: rounds to an integer */
#define PD_LN2_HI 6.93147180369123816490e-01 /* 0x3fe62e42fee00000 */
#define PD_LN2_LO 1.90821492927058770002e-10 /* 0x3dea39ef35793c76 */

typedef double pd_v4d __attribute__((vector_size(32)));
typedef long long pd_v4i __attribute__((vector_size(32)));
typedef unsigned long long pd_v4u __attribute__((vector_size(32)));

/* 2^(j/128), j = 0..127: the bits of the nearest double (computed to 80 digits) */
static const uint64_t pd_exp2_tab[128] = {
    0x3ff0000000000000, 0x3ff0163da9fb3335, 0x3ff02c9a3e778061, 0x3ff04315e86e7f85,
    0x3ff059b0d3158574, 0x3ff0706b29ddf6de, 0x3ff0874518759bc8, 0x3ff09e3ecac6f383,
    0x3ff0b5586cf9890f, 0x3ff0cc922b7247f7, 0x3ff0e3ec32d3d1a2, 0x3ff0fb66affed31b,
    0x3ff11301d0125b51, 0x3ff12abdc06c31cc, 0x3ff1429aaea92de0, 0x3ff15a98c8a58e51,
    0x3ff172b83c7d517b, 0x3ff18af9388c8dea, 0x3ff1a35beb6fcb75, 0x3ff1bbe084045cd4,
    0x3ff1d4873168b9aa, 0x3ff1ed5022fcd91d, 0x3ff2063b88628cd6, 0x3ff21f49917ddc96,
    0x3ff2387a6e756238, 0x3ff251ce4fb2a63f, 0x3ff26b4565e27cdd, 0x3ff284dfe1f56381,
    0x3ff29e9df51fdee1, 0x3ff2b87fd0dad990, 0x3ff2d285a6e4030b, 0x3ff2ecafa93e2f56,
    0x3ff306fe0a31b715, 0x3ff32170fc4cd831, 0x3ff33c08b26416ff, 0x3ff356c55f929ff1,
    0x3ff371a7373aa9cb, 0x3ff38cae6d05d866, 0x3ff3a7db34e59ff7, 0x3ff3c32dc313a8e5,
    0x3ff3dea64c123422, 0x3ff3fa4504ac801c, 0x3ff4160a21f72e2a, 0x3ff431f5d950a897,
    0x3ff44e086061892d, 0x3ff46a41ed1d0057, 0x3ff486a2b5c13cd0, 0x3ff4a32af0d7d3de,
    0x3ff4bfdad5362a27, 0x3ff4dcb299fddd0d, 0x3ff4f9b2769d2ca7, 0x3ff516daa2cf6642,
    0x3ff5342b569d4f82, 0x3ff551a4ca5d920f, 0x3ff56f4736b527da, 0x3ff58d12d497c7fd,
    0x3ff5ab07dd485429, 0x3ff5c9268a5946b7, 0x3ff5e76f15ad2148, 0x3ff605e1b976dc09,
    0x3ff6247eb03a5585, 0x3ff6434634ccc320, 0x3ff6623882552225, 0x3ff68155d44ca973,
    0x3ff6a09e667f3bcd, 0x3ff6c012750bdabf, 0x3ff6dfb23c651a2f, 0x3ff6ff7df9519484,
    0x3ff71f75e8ec5f74, 0x3ff73f9a48a58174, 0x3ff75feb564267c9, 0x3ff780694fde5d3f,
    0x3ff7a11473eb0187, 0x3ff7c1ed0130c132, 0x3ff7e2f336cf4e62, 0x3ff80427543e1a12,
    0x3ff82589994cce13, 0x3ff8471a4623c7ad, 0x3ff868d99b4492ed, 0x3ff88ac7d98a6699,
    0x3ff8ace5422aa0db, 0x3ff8cf3216b5448c, 0x3ff8f1ae99157736, 0x3ff9145b0b91ffc6,
    0x3ff93737b0cdc5e5, 0x3ff95a44cbc8520f, 0x3ff97d829fde4e50, 0x3ff9a0f170ca07ba,
    0x3ff9c49182a3f090, 0x3ff9e86319e32323, 0x3ffa0c667b5de565, 0x3ffa309bec4a2d33,
    0x3ffa5503b23e255d, 0x3ffa799e1330b358, 0x3ffa9e6b5579fdbf, 0x3ffac36bbfd3f37a,
    0x3ffae89f995ad3ad, 0x3ffb0e07298db666, 0x3ffb33a2b84f15fb, 0x3ffb59728de5593a,
    0x3ffb7f76f2fb5e47, 0x3ffba5b030a1064a, 0x3ffbcc1e904bc1d2, 0x3ffbf2c25bd71e09,
    0x3ffc199bdd85529c, 0x3ffc40ab5fffd07a, 0x3ffc67f12e57d14b, 0x3ffc8f6d9406e7b5,
    0x3ffcb720dcef9069, 0x3ffcdf0b555dc3fa, 0x3ffd072d4a07897c, 0x3ffd2f87080d89f2,
    0x3ffd5818dcfba487, 0x3ffd80e316c98398, 0x3ffda9e603db3285, 0x3ffdd321f301b460,
    0x3ffdfc97337b9b5f, 0x3ffe264614f5a129, 0x3ffe502ee78b3ff6, 0x3ffe7a51fbc74c83,
    0x3ffea4afa2a490da, 0x3ffecf482d8e67f1, 0x3ffefa1bee615a27, 0x3fff252b376bba97,
    0x3fff50765b6e4540, 0x3fff7bfdad9cbe14, 0x3fffa7c1819e90d8, 0x3fffd3c22b8f71f1
};

#define PD_N_LN2 184.66496523378731         /* 128 / ln 2 (only k's choice depends on it) */
#define PD_LN2_N_HI (PD_LN2_HI / 128.0)      /* exact; 32 significant bits: k * it is exact */
#define PD_LN2_N_LO (PD_LN2_LO / 128.0)
#define PD_EXP_NORMAL (-708.0)              /* exp(x) >= 2^-1021 (normal) for x >= this */

/* exp(x) for x <= 0 on four lanes, as 2^(k >> 7) * 2^((k & 127) / 128) * exp(r):
 * x = (k / 128) ln 2 + r (Cody-Waite, |r| <= ln2 / 256), the middle factor from the table,
 * exp(r) - 1 = r + r^2 (1/2 + r/6 + r^2 (1/24 + r/120)) (Taylor, truncation below 1e-18
 * relative), e = T + T (exp(r) - 1): about 1 ulp (T's rounding and the last addition).
 *
 * pd_exp4_normal: x >= PD_EXP_NORMAL only (normal results), 2^(k >> 7) put straight into
 * T's exponent field. pd_exp4_any: any x <= 0 (or NaN), clamped at -746 (exp is 0 below
 * about -745.2), the power of two applied in two normal factors so that a subnormal
 * result is rounded once; for x >= PD_EXP_NORMAL it takes the lanes of pd_exp4_normal,
 * so a lane's value never depends on its neighbours. */
#define PD_EXP4_REDUCE(x)                                                          \
    pd_v4d kd = (x) * PD_N_LN2 + PD_SHIFT;                                         \
    pd_v4u ki = (pd_v4u)kd;                    /* k in the low bits (2's complement) */ \
    kd = kd - PD_SHIFT;                                                            \
    pd_v4d r = ((x) - kd * PD_LN2_N_HI) - kd * PD_LN2_N_LO;                        \
    pd_v4d r2 = r * r;                                                             \
    pd_v4d q = (r * (1.0 / 6.0) + 0.5) + r2 * (r * (1.0 / 120.0) + 1.0 / 24.0);    \
    pd_v4d em1 = r + r2 * q;                   /* exp(r) - 1 */                    \
    pd_v4u jj = ki & 127u;                     /* k & 127, also for NaN: in range */ \
    pd_v4u tb = {pd_exp2_tab[jj[0]], pd_exp2_tab[jj[1]], pd_exp2_tab[jj[2]],        \
                 pd_exp2_tab[jj[3]]};

PD_INLINE pd_v4d pd_exp4_normal(pd_v4d x)
{
    PD_EXP4_REDUCE(x)
    /* T * 2^(k >> 7): (k >> 7) << 52 is k << 45 without k & 127 (bits 45-51) */
    pd_v4d sc = (pd_v4d)(tb + ((ki << 45) & 0xfff0000000000000ULL));
    return sc + sc * em1;
}

PD_INLINE pd_v4d pd_exp4_any(pd_v4d x)
{
    const pd_v4d lim = {-746.0, -746.0, -746.0, -746.0};
    pd_v4i small = x < lim;
    pd_v4d xc = (pd_v4d)((small & (pd_v4i)lim) | (~small & (pd_v4i)x));
    pd_v4d fast = pd_exp4_normal(xc);
    PD_EXP4_REDUCE(xc)
    pd_v4u u = (ki - pd_asu64(PD_SHIFT) + 1100u * 128u) >> 7;    /* (k >> 7) + 1100 > 0 */
    pd_v4u k1 = u >> 1;
    pd_v4u k2 = u - k1;
    pd_v4d sc = (pd_v4d)tb * (pd_v4d)((k1 - 550u + 1023u) << 52);  /* exact, normal */
    pd_v4d slow = (sc + sc * em1) * (pd_v4d)((k2 - 550u + 1023u) << 52);
    pd_v4i normal = xc >= PD_EXP_NORMAL;
    return (pd_v4d)((normal & (pd_v4i)fast) | (~normal & (pd_v4i)slow));
}

/* exp(-|s|) on four lanes: pd_exp4_normal, or pd_exp4_any for a group with a lane below
 * PD_EXP_NORMAL (|s| > 708, rare), with the same value in every lane where both apply. */
PD_INLINE pd_v4d pd_exp4_neg_abs(pd_v4d s)
{
    const pd_v4u sign = {1ULL << 63, 1ULL << 63, 1ULL << 63, 1ULL << 63};
    pd_v4d a = (pd_v4d)((pd_v4u)s | sign);                       /* -|s| */
    pd_v4i low = ~(a >= PD_EXP_NORMAL);                           /* also NaN */
    if (__builtin_expect((low[0] | low[1]) | (low[2] | low[3]), 0))
        return pd_exp4_any(a);
    return pd_exp4_normal(a);
}

/* 1 / (1 + exp(-s)) on four lanes without overflow for either sign of s: e = exp(-|s|)
 * (pd_exp4_neg_abs: phi' is below 1e-307 where it takes the slow exp), then 1 / (1 + e) or
 * e / (1 + e). */
PD_INLINE pd_v4d pd_sigmoid4(pd_v4d s)
{
    const pd_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    pd_v4d e = pd_exp4_neg_abs(s);
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
    if (t < m) {
        /* the last r = 1-3 entries in lanes 0..r-1; the other lanes repeat the last entry's
         * row with a zero value, so their term is +-0 (sigma is finite), and a lane sum
         * that starts at +0 never becomes -0: the sum is that of zero-padded lanes. Built
         * from clamped indices and a lane mask, not lane by lane through the stack (whose
         * partial stores the vector load cannot forward: a stall on every short column). */
        long long r = m - t, j1 = r > 1 ? 1 : 0, j2 = r - 1;
        int i0 = idx[t], i1 = idx[t + j1], i2 = idx[t + j2];
        const pd_v4i lane = {0, 1, 2, 3};
        pd_v4i keep = lane < (pd_v4i){r, r, r, r};
        pd_v4d bb = {b[i0], b[i1], b[i2], b[i2]};
        pd_v4d s = {-b[i0] * z[i0], -b[i1] * z[i1], -b[i2] * z[i2], -b[i2] * z[i2]};
        pd_v4d v = {val[t], val[t + j1], val[t + j2], val[t + j2]};
        v = (pd_v4d)((pd_v4i)v & keep);
        acc = acc + (-bb * pd_sigmoid4(s)) * v;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* log1p(e) for 0 <= e <= 1 on four lanes: 2 atanh(s) with s = e / (2 + e) in [0, 1/3], the
 * series 2 s (1 + s^2/3 + s^4/5 + ... + s^34/35) by Horner in s^2 (truncated below 2e-18
 * relative at s = 1/3): one division, no table, no branch; about 2 ulp (s's two roundings
 * and the sum's). */
PD_INLINE pd_v4d pd_log1p4_unit(pd_v4d e)
{
    const pd_v4d two = {2.0, 2.0, 2.0, 2.0};
    pd_v4d s = e / (two + e);
    pd_v4d s2 = s * s;
    pd_v4d p = s2 * (1.0 / 35.0) + 1.0 / 33.0;
    p = p * s2 + 1.0 / 31.0;
    p = p * s2 + 1.0 / 29.0;
    p = p * s2 + 1.0 / 27.0;
    p = p * s2 + 1.0 / 25.0;
    p = p * s2 + 1.0 / 23.0;
    p = p * s2 + 1.0 / 21.0;
    p = p * s2 + 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    return two * (s + s * (s2 * p));
}

/* The logistic loss at m = -b z on four lanes, from one exp e = exp(-|m|) and u = 1 + e:
 * phi = log(1 + exp(m)) = max(m, 0) + log1p(e) into *value (pd_log1p4_unit), sigma(m) =
 * 1 / (1 + exp(-m)) into *sig (1 / u or e (1 / u): phi'(z) = -b sigma), and phi''(z) =
 * sigma(m) sigma(-m) = (1 / u) (e / u) into *curv, a product of two
 * accurate factors where sigma (1 - sigma) cancels as sigma -> 1 (thousands of ulps). */
PD_INLINE void pd_softplus4(pd_v4d m, pd_v4d *value, pd_v4d *sig, pd_v4d *curv)
{
    const pd_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    pd_v4d e = pd_exp4_neg_abs(m);
    pd_v4d u = one + e;
    pd_v4d big = one / u, small = e * big;                        /* sigma(|m|), sigma(-|m|) */
    pd_v4i pos = m >= zero;
    *sig = (pd_v4d)((pos & (pd_v4i)big) | (~pos & (pd_v4i)small));
    *curv = big * small;
    pd_v4i up = m > zero;
    *value = (pd_v4d)(up & (pd_v4i)m) + pd_log1p4_unit(e);     /* +0.0 where m <= 0 */
}

/* Run-time dispatch: CPUs with AVX-512 or AVX2 get their own clone (the AVX-512 one has 32
 * vector registers, so no constant is spilled); results are identical. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), noinline))
#endif
static double pd_logistic_dot(const double *val, const int *idx, const double *z,
                              const double *b, long long m)
{
    return pd_logistic_dot4(val, idx, z, b, m);
}

/* prox_newton's line-search pass over the logistic loss (_prox_newton.pn_value_derivs):
 * deriv[i] = s_i phi'(z_i) / n and curv[i] = s_i phi''(z_i) / n (s NULL: no weights), and
 * the returned sum_i s_i phi(z_i) / n, compensated (Neumaier) in four lanes (lane l the
 * examples i = l mod 4, in order: a scalar running sum's latency chain is long)
 * whose sums and corrections are then added in lane order, compensated too;
 * pd_softplus4 four examples at a time, the last 1-3 through a group padded with zeros. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), noinline))
#endif
static double pd_logistic_pass(const double *z, const double *b, const double *s,
                               long long len, double n, double *deriv, double *curv)
{
    const pd_v4u abs_mask = {~(1ULL << 63), ~(1ULL << 63), ~(1ULL << 63), ~(1ULL << 63)};
    const pd_v4i lane = {0, 1, 2, 3};
    pd_v4d tot = {0.0, 0.0, 0.0, 0.0}, cmp = {0.0, 0.0, 0.0, 0.0};
    double inv_n = 1.0 / n;
    for (long long i = 0; i < len; i += 4) {
        long long k = len - i < 4 ? len - i : 4;
        pd_v4d m = {0.0, 0.0, 0.0, 0.0}, bb = {0.0, 0.0, 0.0, 0.0}, w = {1.0, 1.0, 1.0, 1.0};
        pd_v4d v, sg, c;
        for (long long l = 0; l < k; l++) {
            m[l] = -b[i + l] * z[i + l];
            bb[l] = b[i + l];
            if (s)
                w[l] = s[i + l];
        }
        pd_softplus4(m, &v, &sg, &c);
        pd_v4d dv = -bb * sg;
        if (s) {
            v = v * w;
            dv = dv * w;
            c = c * w;
        }
        v = (pd_v4d)((pd_v4i)v & (lane < (pd_v4i){k, k, k, k}));  /* padding adds +0 */
        pd_v4d t = tot + v;
        pd_v4i bigger = (pd_v4d)((pd_v4u)tot & abs_mask) >= (pd_v4d)((pd_v4u)v & abs_mask);
        pd_v4d c1 = (tot - t) + v, c2 = (v - t) + tot;
        cmp = cmp + (pd_v4d)((bigger & (pd_v4i)c1) | (~bigger & (pd_v4i)c2));
        tot = t;
        dv = dv * inv_n;
        c = c * inv_n;
        for (long long l = 0; l < k; l++) {
            deriv[i + l] = dv[l];
            curv[i + l] = c[l];
        }
    }
    double total = 0.0, comp = (cmp[0] + cmp[1]) + (cmp[2] + cmp[3]);
    for (int l = 0; l < 4; l++) {
        double t = total + tot[l];
        comp += fabs(total) >= fabs(tot[l]) ? (total - t) + tot[l] : (tot[l] - t) + total;
        total = t;
    }
    return (total + comp) / n;
}

#endif
