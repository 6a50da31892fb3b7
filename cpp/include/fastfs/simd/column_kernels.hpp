// Column kernels: loops over the samples of one or a few feature columns of a transposed
// float32 or half-precision copy (contiguous along samples, so every loop vectorises over samples whatever the
// number of features), with AVX2 + FMA builds chosen at run time (cpu_has_avx2_fma, in
// pair_kernels.hpp). Used by the Gram expansion of the k nearest query
// (neighbours/gram_state.hpp, neighbours/knn_query.hpp) and the blocked Gram screen
// (neighbours/gram_screen.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../core/types.hpp"
#if defined(_MSC_VER)
#include <intrin.h>
#endif
#include "pair_kernels.hpp"
#ifdef FASTFS_HAVE_AVX2_FMA
#include <cpuid.h>
#endif

namespace fastfs {
namespace kernels {

// sq_dist4_in_order() below as a plain loop (CPUs without AVX2, and the reference of the
// tests): four independent chains hide the latency of the additions.
template <class T>
inline void sq_dist4_in_order_plain(const T* x, const T* z0, const T* z1, const T* z2,
                                    const T* z3, const double* w2, Index n, double* out) {
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
    for (Index f = 0; f < n; ++f) {
        const double af = static_cast<double>(x[f]), wf = w2[f];
        const double t0 = af - static_cast<double>(z0[f]);
        const double t1 = af - static_cast<double>(z1[f]);
        const double t2 = af - static_cast<double>(z2[f]);
        const double t3 = af - static_cast<double>(z3[f]);
        d0 += wf * (t0 * t0);
        d1 += wf * (t1 * t1);
        d2 += wf * (t2 * t2);
        d3 += wf * (t3 * t3);
    }
    out[0] = d0;
    out[1] = d1;
    out[2] = d2;
    out[3] = d3;
}

#ifdef FASTFS_HAVE_AVX2_FMA
// Four values of a row as doubles.
__attribute__((target("avx2"))) inline __m256d load4_as_double(const double* p) {
    return _mm256_loadu_pd(p);
}
__attribute__((target("avx2"))) inline __m256d load4_as_double(const float* p) {
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

// w (x - z)^2 lane by lane, rounded as the plain loop rounds it.
__attribute__((target("avx2"))) inline __m256d weighted_square4(__m256d x, __m256d z, __m256d w) {
    const __m256d t = _mm256_sub_pd(x, z);
    return _mm256_mul_pd(w, _mm256_mul_pd(t, t));
}

// sq_dist4_in_order() with AVX2 (no FMA: each term rounds as the plain loop's does), for G
// groups of four rows z[4 g .. 4 g + 3]. The terms of four features are formed for each row
// (one register per row, a lane per feature), the 4 x 4 block is transposed (one register per
// feature, a lane per row), and the four registers are added to the group's accumulator one
// after the other: lane r then adds the terms of row r in feature order, the plain loop's sums
// bit for bit, without a scalar chain per row. The additions of a group form one dependent
// chain, so two groups (eight rows) take about the time of one.
template <int G, class T>
__attribute__((target("avx2"))) void sq_dist_in_order_avx2(const T* x, const T* const* z,
                                                           const double* w2, Index n,
                                                           double* out) {
    __m256d acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_pd();
    Index f = 0;
    for (; f + 4 <= n; f += 4) {
        const __m256d xv = load4_as_double(x + f), wv = _mm256_loadu_pd(w2 + f);
        for (int g = 0; g < G; ++g) {
            __m256d t[4];
            for (int r = 0; r < 4; ++r)
                t[r] = weighted_square4(xv, load4_as_double(z[4 * g + r] + f), wv);
            transpose4(t);  // t[q]: feature f + q of the four rows
            __m256d sum = acc[g];
            for (int q = 0; q < 4; ++q) sum = _mm256_add_pd(sum, t[q]);
            acc[g] = sum;
        }
    }
    alignas(32) double d[4 * G];
    for (int g = 0; g < G; ++g) _mm256_store_pd(d + 4 * g, acc[g]);
    for (; f < n; ++f) {
        const double af = static_cast<double>(x[f]), wf = w2[f];
        for (int r = 0; r < 4 * G; ++r) {
            const double t = af - static_cast<double>(z[r][f]);
            d[r] += wf * (t * t);
        }
    }
    for (int r = 0; r < 4 * G; ++r) out[r] = d[r];
}
#endif

// Weighted squared distances from row x to rows z0..z3, each summed alone in feature order:
// out[r] = sum_f w2[f] (x_f - z_r,f)^2, term f added after term f - 1 (the order of RGS's and
// SKS's results; kernels::sq_dist4 sums lane-wise instead): each value is that of a plain loop
// over f, on CPUs with AVX2 from sq_dist_in_order_avx2 (the same terms in the same order).
template <class T>
inline void sq_dist4_in_order(const T* x, const T* z0, const T* z1, const T* z2, const T* z3,
                              const double* w2, Index n, double* out) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) {
        const T* z[4] = {z0, z1, z2, z3};
        sq_dist_in_order_avx2<1>(x, z, w2, n, out);
        return;
    }
#endif
    sq_dist4_in_order_plain(x, z0, z1, z2, z3, w2, n, out);
}

// The same for the eight rows z[0 .. 8): out[r] as sq_dist4_in_order() gives it, bit for bit.
template <class T>
inline void sq_dist8_in_order(const T* x, const T* const* z, const double* w2, Index n,
                              double* out) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) {
        sq_dist_in_order_avx2<2>(x, z, w2, n, out);
        return;
    }
#endif
    sq_dist4_in_order_plain(x, z[0], z[1], z[2], z[3], w2, n, out);
    sq_dist4_in_order_plain(x, z[4], z[5], z[6], z[7], w2, n, out + 4);
}

// out[j] += sum over the F features q of v[q] c_q[j], added in feature order, for samples j in
// [lo, hi). With Init, out[j] starts from float(scale init[j]) instead of its value.
template <int F, bool Init>
FASTFS_SIMD_CLONES void dot_columns(const float* const* c, const float* v, const double* init,
                                    double scale, Index lo, Index hi, float* __restrict out) {
    const float* col[F];
    float vq[F];
    for (int q = 0; q < F; ++q) {
        col[q] = c[q];
        vq[q] = v[q];
    }
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        float acc = Init ? static_cast<float>(scale * init[j]) : out[j];
        for (int q = 0; q < F; ++q) acc += vq[q] * col[q][j];
        out[j] = acc;
    }
}

// Whether this CPU has AVX2 and FMA and also converts half-precision floats (F16C; every CPU
// with AVX2 has it so far, but it is a flag of its own), checked once; false where the AVX2
// kernels are not built (other architectures, other compilers).
inline bool cpu_has_f16c() {
#ifdef FASTFS_HAVE_AVX2_FMA
    // From CPUID (leaf 1, ECX bit 29): __builtin_cpu_supports("f16c") is missing from Clang
    // before 18 (AppleClang among them).
    static const bool ok = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return cpu_has_avx2_fma() && __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1u);
    }();
    return ok;
#else
    return false;
#endif
}

// Whether this CPU has AVX-512 VNNI with 256-bit forms (AVX512VL; the OS saving the AVX-512
// state comes with cpu_has_avx512f), for the 16-bit integer products of the Gram screen's
// tiles (vpdpwssd: 16 products summed in pairs into 8 int32 lanes an instruction, twice the
// float32 FMA's rate where both run two a cycle); read from CPUID (leaf 7: EBX bit 31 is
// AVX512VL, ECX bit 11 AVX512_VNNI), which every compiler here can ask. False where the
// VNNI kernels are not built (FASTFS_HAVE_VNNI: the AVX2 kernels and a compiler that knows
// the target).
inline bool cpu_has_avx512_vnni() {
#ifdef FASTFS_HAVE_VNNI
    static const bool ok = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return cpu_has_avx2_fma() && cpu_has_avx512f() && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
               ((b >> 31) & 1u) && ((c >> 11) & 1u);
    }();
    return ok;
#else
    return false;
#endif
}

#ifdef FASTFS_HAVE_AVX2_FMA

// The columns of the sweeps below hold float32 values or IEEE half-precision bits (uint16);
// a half converts to float exactly, so a sweep over halves rounds as one over the same values
// in float32, with half the bytes to read.
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((target("avx2,fma,f16c"))) inline float value_of(float x) { return x; }
__attribute__((target("avx2,fma,f16c"))) inline float value_of(std::uint16_t h) {
    return _cvtsh_ss(h);
}

// float(scale x[r]) for the eight doubles x[0 .. 8).
__attribute__((target("avx2,fma,f16c"))) inline __m256 scaled_floats8(const double* x,
                                                                       double scale) {
    const __m256d sc = _mm256_set1_pd(scale);
    const __m128 a = _mm256_cvtpd_ps(_mm256_mul_pd(sc, _mm256_loadu_pd(x)));
    const __m128 b = _mm256_cvtpd_ps(_mm256_mul_pd(sc, _mm256_loadu_pd(x + 4)));
    return _mm256_set_m128(b, a);
}

// The same sweep with fused multiply-adds (one rounding per term instead of two, inside the
// error the bounds allow for), chosen at run time on CPUs with FMA (and F16C, which every
// column type here may need): the default build keeps -ffp-contract=off and no -mfma, so the
// compiler never fuses on its own. Sixteen samples per iteration, in two independent sums.
template <int F, bool Init, class C>
__attribute__((target("avx2,fma,f16c"))) void dot_columns_fma(const C* const* c, const float* v,
                                                              const double* init, double scale,
                                                              Index lo, Index hi,
                                                              float* __restrict out) {
    __m256 vq[F];
    for (int q = 0; q < F; ++q) vq[q] = _mm256_set1_ps(v[q]);
    Index j = lo;
    for (; j + 16 <= hi; j += 16) {
        __m256 a = Init ? scaled_floats8(init + j, scale) : _mm256_loadu_ps(out + j);
        __m256 b = Init ? scaled_floats8(init + j + 8, scale) : _mm256_loadu_ps(out + j + 8);
        for (int q = 0; q < F; ++q) {
            a = _mm256_fmadd_ps(vq[q], load8(c[q] + j), a);
            b = _mm256_fmadd_ps(vq[q], load8(c[q] + j + 8), b);
        }
        _mm256_storeu_ps(out + j, a);
        _mm256_storeu_ps(out + j + 8, b);
    }
    for (; j + 8 <= hi; j += 8) {
        __m256 a = Init ? scaled_floats8(init + j, scale) : _mm256_loadu_ps(out + j);
        for (int q = 0; q < F; ++q) a = _mm256_fmadd_ps(vq[q], load8(c[q] + j), a);
        _mm256_storeu_ps(out + j, a);
    }
    for (; j < hi; ++j) {
        float acc = Init ? static_cast<float>(scale * init[j]) : out[j];
        for (int q = 0; q < F; ++q) acc = __builtin_fmaf(v[q], value_of(c[q][j]), acc);
        out[j] = acc;
    }
}

// Q queries (1 or 4) in one sweep: out[q][j] = start plus sum_f v[Q f + q] c_f[j] over the
// features f in [f0, f1), for q < Q and samples j in [lo, hi), column f at c + f ld, with one
// fused multiply-add per term in feature order; start is float(scale init[j]) when First, else
// out[q][j]. Called for consecutive feature ranges from f = 0, it gives the values
// dot_columns_fma's sweeps give for each query alone. Sixteen samples of every query stay in
// registers across the range, so each column is read once per Q queries; short ranges keep the
// columns in use within a few pages.
template <int Q, bool First, class C>
__attribute__((target("avx2,fma,f16c"))) void dot_columns_xq_fma(const C* c, Index ld, Index f0,
                                                                 Index f1, const float* v,
                                                                 const double* init,
                                                                 double scale, Index lo,
                                                                 Index hi, float* const* out) {
    Index j = lo;
    for (; j + 16 <= hi; j += 16) {
        __m256 a[Q], b[Q];
        if (First) {
            a[0] = scaled_floats8(init + j, scale);
            b[0] = scaled_floats8(init + j + 8, scale);
            for (int q = 1; q < Q; ++q) {
                a[q] = a[0];
                b[q] = b[0];
            }
        } else {
            for (int q = 0; q < Q; ++q) {
                a[q] = _mm256_loadu_ps(out[q] + j);
                b[q] = _mm256_loadu_ps(out[q] + j + 8);
            }
        }
        const C* col = c + f0 * ld + j;
        const float* vf = v + Q * f0;
        for (Index f = f0; f < f1; ++f, col += ld, vf += Q) {
            const __m256 x = load8(col), y = load8(col + 8);
            for (int q = 0; q < Q; ++q) {
                const __m256 w = _mm256_broadcast_ss(vf + q);
                a[q] = _mm256_fmadd_ps(w, x, a[q]);
                b[q] = _mm256_fmadd_ps(w, y, b[q]);
            }
        }
        for (int q = 0; q < Q; ++q) {
            _mm256_storeu_ps(out[q] + j, a[q]);
            _mm256_storeu_ps(out[q] + j + 8, b[q]);
        }
    }
    for (; j + 8 <= hi; j += 8) {
        __m256 a[Q];
        for (int q = 0; q < Q; ++q)
            a[q] = First ? scaled_floats8(init + j, scale) : _mm256_loadu_ps(out[q] + j);
        const C* col = c + f0 * ld + j;
        const float* vf = v + Q * f0;
        for (Index f = f0; f < f1; ++f, col += ld, vf += Q) {
            const __m256 x = load8(col);
            for (int q = 0; q < Q; ++q) a[q] = _mm256_fmadd_ps(_mm256_broadcast_ss(vf + q), x, a[q]);
        }
        for (int q = 0; q < Q; ++q) _mm256_storeu_ps(out[q] + j, a[q]);
    }
    for (; j < hi; ++j)
        for (int q = 0; q < Q; ++q) {
            float acc = First ? static_cast<float>(scale * init[j]) : out[q][j];
            for (Index f = f0; f < f1; ++f)
                acc = __builtin_fmaf(v[Q * f + q], value_of(c[f * ld + j]), acc);
            out[q][j] = acc;
        }
}

// y_f = float((x_f - centre_f) scale) rounded to the nearest half-precision value (ties to
// even, at both roundings): its bits into out16 (when not null) and its value into out (a
// float, exactly). The vector loop and the tail take the same steps, so a value does not
// depend on where it falls.
template <class T>
__attribute__((target("avx2,fma,f16c"))) void centred_halves(const T* x, const double* centre,
                                                             double scale, Index n,
                                                             std::uint16_t* out16, float* out) {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m256d sc = _mm256_set1_pd(scale);
    Index f = 0;
    for (; f + 8 <= n; f += 8) {
        __m256d d0, d1;
        if constexpr (std::is_same_v<T, double>) {
            d0 = _mm256_loadu_pd(x + f);
            d1 = _mm256_loadu_pd(x + f + 4);
        } else {
            d0 = _mm256_cvtps_pd(_mm_loadu_ps(x + f));
            d1 = _mm256_cvtps_pd(_mm_loadu_ps(x + f + 4));
        }
        d0 = _mm256_mul_pd(_mm256_sub_pd(d0, _mm256_loadu_pd(centre + f)), sc);
        d1 = _mm256_mul_pd(_mm256_sub_pd(d1, _mm256_loadu_pd(centre + f + 4)), sc);
        const __m256 y = _mm256_set_m128(_mm256_cvtpd_ps(d1), _mm256_cvtpd_ps(d0));
        const __m128i h = _mm256_cvtps_ph(y, kRound);
        if (out16) _mm_storeu_si128(reinterpret_cast<__m128i*>(out16 + f), h);
        _mm256_storeu_ps(out + f, _mm256_cvtph_ps(h));
    }
    for (; f < n; ++f) {
        const float y = static_cast<float>((static_cast<double>(x[f]) - centre[f]) * scale);
        const std::uint16_t h = static_cast<std::uint16_t>(_cvtss_sh(y, kRound));
        if (out16) out16[f] = h;
        out[f] = _cvtsh_ss(h);
    }
}

// add_scaled_squares (below) on halves: a[j] += d h[j]^2 in float64 for h[0 .. m), the same
// roundings.
__attribute__((target("avx2,fma,f16c"))) inline void add_scaled_squares(
    const std::uint16_t* c, double d, Index m, double* a) {
    const __m256d dd = _mm256_set1_pd(d);
    Index j = 0;
    for (; j + 4 <= m; j += 4) {
        const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + j));
        const __m256d x = _mm256_cvtps_pd(_mm_cvtph_ps(h));
        _mm256_storeu_pd(a + j, _mm256_add_pd(_mm256_loadu_pd(a + j),
                                              _mm256_mul_pd(dd, _mm256_mul_pd(x, x))));
    }
    for (; j < m; ++j) {
        const double x = static_cast<double>(_cvtsh_ss(c[j]));
        a[j] += d * (x * x);
    }
}

// add_scaled_squares4 on halves: four columns, a[j] updated by each in turn.
__attribute__((target("avx2,fma,f16c"))) inline void add_scaled_squares4(
    const std::uint16_t* c0, const std::uint16_t* c1, const std::uint16_t* c2,
    const std::uint16_t* c3, double d0, double d1, double d2, double d3, Index m, double* a) {
    const std::uint16_t* c[4] = {c0, c1, c2, c3};
    const __m256d dd[4] = {_mm256_set1_pd(d0), _mm256_set1_pd(d1), _mm256_set1_pd(d2),
                           _mm256_set1_pd(d3)};
    const double ds[4] = {d0, d1, d2, d3};
    Index j = 0;
    for (; j + 4 <= m; j += 4) {
        __m256d acc = _mm256_loadu_pd(a + j);
        for (int q = 0; q < 4; ++q) {
            const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c[q] + j));
            const __m256d x = _mm256_cvtps_pd(_mm_cvtph_ps(h));
            acc = _mm256_add_pd(acc, _mm256_mul_pd(dd[q], _mm256_mul_pd(x, x)));
        }
        _mm256_storeu_pd(a + j, acc);
    }
    for (; j < m; ++j) {
        double acc = a[j];
        for (int q = 0; q < 4; ++q) {
            const double x = static_cast<double>(_cvtsh_ss(c[q][j]));
            acc += ds[q] * (x * x);
        }
        a[j] = acc;
    }
}
#endif

// a[f], b[f] = min, max of the two for f in [0, n) (a compare-exchange of a sorting network,
// one feature per lane; no NaN here).
FASTFS_SIMD_CLONES inline void compare_exchange(double* __restrict a, double* __restrict b,
                                                Index n) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double x = a[f], y = b[f];
        a[f] = y < x ? y : x;
        b[f] = y < x ? x : y;
    }
}

// a[j] += d c[j]^2 in float64 for j in [0, m): the square of a float is exact in double, so
// each update rounds twice (the product and the sum).
template <class D>
FASTFS_SIMD_CLONES void add_scaled_squares(const float* __restrict c, D d, Index m,
                                           D* __restrict a) {
#pragma omp simd
    for (Index j = 0; j < m; ++j) {
        const D x = c[j];
        a[j] += d * (x * x);
    }
}

// The same for four columns, a[j] updated by each in turn (the same roundings).
template <class D>
FASTFS_SIMD_CLONES void add_scaled_squares4(const float* __restrict c0, const float* __restrict c1,
                                            const float* __restrict c2, const float* __restrict c3,
                                            D d0, D d1, D d2, D d3, Index m, D* __restrict a) {
#pragma omp simd
    for (Index j = 0; j < m; ++j) {
        const D x0 = c0[j], x1 = c1[j], x2 = c2[j], x3 = c3[j];
        D acc = a[j];
        acc += d0 * (x0 * x0);
        acc += d1 * (x1 * x1);
        acc += d2 * (x2 * x2);
        acc += d3 * (x3 * x3);
        a[j] = acc;
    }
}

// The indices j in [lo, hi) with a[j] <= t (KeepNaN: or a[j] NaN, i.e. a[j] not above t), in
// increasing order, into out (room for hi - lo + 8); returns their count. Branch-free: a store
// per value, kept or not.
template <bool KeepNaN>
inline int gather_plain(const float* a, Index lo, Index hi, float t, std::uint32_t* out) {
    int c = 0;
    for (Index j = lo; j < hi; ++j) {
        out[c] = static_cast<std::uint32_t>(j);
        c += (KeepNaN ? !(a[j] > t) : a[j] <= t) ? 1 : 0;
    }
    return c;
}
inline int gather_at_most(const float* a, Index lo, Index hi, float t, std::uint32_t* out) {
    return gather_plain<false>(a, lo, hi, t, out);
}

#ifdef FASTFS_HAVE_AVX2_FMA
// The positions of the set bits of every 8-bit mask, packed one per byte from the low end.
struct BitPositions {
    std::uint64_t of[256];
    constexpr BitPositions() : of() {
        for (int mask = 0; mask < 256; ++mask) {
            std::uint64_t packed = 0;
            int c = 0;
            for (int b = 0; b < 8; ++b)
                if (mask & (1 << b)) packed |= static_cast<std::uint64_t>(b) << (8 * c++);
            of[mask] = packed;
        }
    }
};
inline constexpr BitPositions kBitPositions{};

// The same with AVX2: eight values per compare, their kept indices written with one store
// from a table of bit positions.
template <bool KeepNaN>
__attribute__((target("avx2"))) inline int gather_avx2(const float* a, Index n, float t,
                                                      std::uint32_t* out) {
    const __m256 tv = _mm256_set1_ps(t);
    int c = 0;
    const Index full = n & ~Index{7};
    for (Index j = 0; j < full; j += 8) {
        const __m256 v = _mm256_loadu_ps(a + j);
        const int mask = _mm256_movemask_ps(KeepNaN ? _mm256_cmp_ps(v, tv, _CMP_NGT_UQ)
                                                    : _mm256_cmp_ps(v, tv, _CMP_LE_OQ));
        const __m128i pos = _mm_cvtsi64_si128(static_cast<long long>(kBitPositions.of[mask]));
        const __m256i idx = _mm256_add_epi32(_mm256_cvtepu8_epi32(pos),
                                             _mm256_set1_epi32(static_cast<int>(j)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), idx);
        c += __builtin_popcount(static_cast<unsigned>(mask));
    }
    return c + gather_plain<KeepNaN>(a, full, n, t, out + c);
}
__attribute__((target("avx2"))) inline int gather_at_most_avx2(const float* a, Index n, float t,
                                                              std::uint32_t* out) {
    return gather_avx2<false>(a, n, t, out);
}
#endif

// The smallest a[j] over the j with codes[j] == own (same_min) and over the others
// (other_min); +inf where there is none, NaN values skipped.
FASTFS_SIMD_CLONES inline void class_minima(const float* __restrict a,
                                            const std::int64_t* __restrict codes, Index n,
                                            std::int64_t own, float& same_min,
                                            float& other_min) {
    float s = std::numeric_limits<float>::infinity(), o = s;
FASTFS_SIMD_REDUCE(reduction(FASTFS_MIN : s, o))
    for (Index j = 0; j < n; ++j) {
        const bool mine = codes[j] == own;
        const float v = a[j];
        s = mine && v < s ? v : s;
        o = !mine && v < o ? v : o;
    }
    same_min = s;
    other_min = o;
}

// The j (increasing) with a[j] not above t: a[j] <= t or a[j] NaN (a screen keeps a value it
// cannot compare), with AVX2 where the CPU has it.
inline int gather_not_above_plain(const float* a, Index lo, Index hi, float t,
                                  std::uint32_t* out) {
    return gather_plain<true>(a, lo, hi, t, out);
}

#ifdef FASTFS_HAVE_AVX2_FMA
__attribute__((target("avx2"))) inline int gather_not_above_avx2(const float* a, Index n,
                                                                float t, std::uint32_t* out) {
    return gather_avx2<true>(a, n, t, out);
}
#endif

// out needs n + 8 entries.
inline int gather_not_above(const float* a, Index n, float t, std::uint32_t* out) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) return gather_not_above_avx2(a, n, t, out);
#endif
    return gather_not_above_plain(a, 0, n, t, out);
}

// min of a[lo, hi), +inf when empty.
template <class T>
inline T block_min(const T* a, Index lo, Index hi) {
    return lane_min<T>(lo, hi, [&](Index j) { return a[j]; });
}

// out[b] = min of a[b block, (b + 1) block), the last block cut at n.
template <class T>
inline void block_minima(const T* a, Index n, Index block, T* out) {
    for (Index b = 0; b * block < n; ++b) out[b] = block_min(a, b * block, std::min((b + 1) * block, n));
}

#ifdef FASTFS_HAVE_AVX2_FMA
// The same for blocks of a multiple of 8 values, eight lanes at a time (no NaN here).
__attribute__((target("avx2"))) inline void block_minima_avx2(const float* a, Index n,
                                                             Index block, float* out) {
    const Index full = n / block;
    for (Index b = 0; b < full; ++b) {
        const float* p = a + b * block;
        __m256 v = _mm256_loadu_ps(p);
        for (Index r = 8; r < block; r += 8) v = _mm256_min_ps(v, _mm256_loadu_ps(p + r));
        __m128 h = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        h = _mm_min_ps(h, _mm_movehl_ps(h, h));
        h = _mm_min_ss(h, _mm_shuffle_ps(h, h, 1));
        out[b] = _mm_cvtss_f32(h);
    }
    if (full * block < n) out[full] = block_min(a, full * block, n);
}
#endif

// Manhattan distances from the query q (n values) to the samples j in [lo, hi) of a transposed
// copy Zt (n rows of `ld` samples, one feature a row): out[j] = sum_f |q_f - Zt(f, j)| with
// term f added to lane f % 4 in feature order and the lanes combined as (l0 + l1) + (l2 + l3),
// which is kernels::l1_dist4's order for doubles, so every value equals that kernel's bit for
// bit. One lane sum per sample, vectorised over samples (eight at a time): for a few features
// this is several times faster than l1_dist4, whose lane finish then dominates.
FASTFS_SIMD_CLONES inline void l1_columns(const double* __restrict q,
                                          const double* __restrict Zt, Index ld, Index n,
                                          Index lo, Index hi, double* __restrict out) {
    Index j = lo;
#ifdef FASTFS_VECTOR_LANES
    using V = LaneVector<double>::type;
    // acc += |q_f - Zt(f, j .. j+3)| and the same for j+4 .. j+7
    auto add = [&](Index f, V& acc, V& acc2) {
        const double* p = Zt + f * ld + j;
        V z, z2;
        std::memcpy(&z, p, sizeof z);
        std::memcpy(&z2, p + 4, sizeof z2);
        add_abs_lanes(acc, q[f] - z);
        add_abs_lanes(acc2, q[f] - z2);
    };
    const Index body = n - n % 4;
    for (; j + 8 <= hi; j += 8) {
        V a0 = {}, a1 = {}, a2 = {}, a3 = {}, b0 = {}, b1 = {}, b2 = {}, b3 = {};
        Index f = 0;
        for (; f < body; f += 4) {
            add(f, a0, b0);
            add(f + 1, a1, b1);
            add(f + 2, a2, b2);
            add(f + 3, a3, b3);
        }
        if (f < n) add(f, a0, b0);
        if (f + 1 < n) add(f + 1, a1, b1);
        if (f + 2 < n) add(f + 2, a2, b2);
        const V da = (a0 + a1) + (a2 + a3), db = (b0 + b1) + (b2 + b3);
        std::memcpy(out + j, &da, sizeof da);
        std::memcpy(out + j + 4, &db, sizeof db);
    }
#endif
    for (; j < hi; ++j) {
        double s[4] = {};
        for (Index f = 0; f < n; ++f) s[f & 3] += std::abs(q[f] - Zt[f * ld + j]);
        out[j] = (s[0] + s[1]) + (s[2] + s[3]);
    }
}

// Bit l set for each l < len (len <= 64) with a[l] <= t; a NaN never sets its bit.
inline std::uint64_t at_most_mask_plain(const double* a, int len, double t) {
    std::uint64_t mask = 0;
    for (int l = 0; l < len; ++l) mask |= static_cast<std::uint64_t>(a[l] <= t) << l;
    return mask;
}

#ifdef FASTFS_HAVE_AVX2_FMA
__attribute__((target("avx2"))) inline std::uint64_t at_most_mask_avx2(const double* a, int len,
                                                                     double t) {
    const __m256d tv = _mm256_set1_pd(t);
    std::uint64_t mask = 0;
    int l = 0;
    for (; l + 4 <= len; l += 4) {
        const int bits = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(a + l), tv, _CMP_LE_OQ));
        mask |= static_cast<std::uint64_t>(bits) << l;
    }
    return l < len ? mask | (at_most_mask_plain(a + l, len - l, t) << l) : mask;
}
#endif

// The place of the lowest set bit of x (x != 0).
inline int lowest_bit(std::uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#elif defined(_MSC_VER) && defined(_M_X64)
    unsigned long place;
    _BitScanForward64(&place, x);
    return static_cast<int>(place);
#else
    int place = 0;
    for (; !(x & 1); x >>= 1) ++place;
    return place;
#endif
}

inline std::uint64_t at_most_mask(const double* a, int len, double t) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) return at_most_mask_avx2(a, len, t);
#endif
    return at_most_mask_plain(a, len, t);
}

// mins[l] lowered to the smallest a[16 j + l] over the whole blocks of 16 in a[0, len) (the
// last len % 16 values are left out): sixteen disjoint groups, each minimum one of the values.
FASTFS_SIMD_CLONES inline void lane_minima16(const double* __restrict a, Index len,
                                             double* __restrict mins) {
    double m[16];
    for (int l = 0; l < 16; ++l) m[l] = mins[l];
    for (Index j = 0; j + 16 <= len; j += 16)
        for (int l = 0; l < 16; ++l) m[l] = min_of(m[l], a[j + l]);
    for (int l = 0; l < 16; ++l) mins[l] = m[l];
}

// The features whose weight ratio q_f = w2[f] inv_rho[f] left [1 - drift, 1 + drift], and those
// with a reference rho[f] of 0 and w2[f] != 0: their indices in increasing order into moved
// (room for n), their count returned. lo and hi are lowered and raised to the smallest and
// largest ratio of the others (a feature with rho = w2 = 0 counts as ratio 1). A block of
// features takes one vectorised pass (flags as 64-bit integers beside the doubles, so that
// the loop vectorises) and, only if some of them moved, a branch-free pass collecting them.
FASTFS_SIMD_CLONES inline Index drifted_features(const double* __restrict w2,
                                                 const double* __restrict inv_rho,
                                                 const double* __restrict rho, Index n,
                                                 double drift, Index* __restrict moved,
                                                 double& lo, double& hi) {
    constexpr Index kBlock = 256;
    std::int64_t out[kBlock];
    double l = lo, h = hi;
    Index count = 0;
    for (Index f0 = 0; f0 < n; f0 += kBlock) {
        const Index len = std::min(kBlock, n - f0);
        const double* w = w2 + f0;
        const double* ir = inv_rho + f0;
        const double* r = rho + f0;
        std::int64_t block = 0;
FASTFS_SIMD_REDUCE(reduction(FASTFS_MIN : l) reduction(FASTFS_MAX : h) reduction(+ : block))
        for (Index i = 0; i < len; ++i) {
            const double q = w[i] * ir[i];
            const std::int64_t zero = r[i] == 0.0;
            const std::int64_t o = (zero & std::int64_t{w[i] != 0.0}) |
                                   ((1 - zero) & std::int64_t{!(std::abs(q - 1.0) <= drift)});
            out[i] = o;
            block += o;
            const double qq = (o | zero) != 0 ? 1.0 : q;
            l = qq < l ? qq : l;
            h = qq > h ? qq : h;
        }
        if (block == 0) continue;
        for (Index i = 0; i < len; ++i) {
            moved[count] = f0 + i;
            count += out[i];
        }
    }
    lo = l;
    hi = h;
    return count;
}

// out[f] = x[f] * scale.
FASTFS_SIMD_CLONES inline void scaled_values(const double* __restrict x, Index n, double scale,
                                             double* __restrict out) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) out[f] = x[f] * scale;
}

// The cross-term multipliers of a query whose coordinates are already converted (v holds z
// on entry):
// v_f = float(-2 w2s_f z_f); returns sum_f w2s_f z_f^2 summed in lanes.
FASTFS_SIMD_CLONES inline double query_terms_of(const double* __restrict w2s, Index n,
                                                float* __restrict v) {
    double ai = 0.0;
#pragma omp simd reduction(+ : ai)
    for (Index f = 0; f < n; ++f) {
        const double z = static_cast<double>(v[f]);
        v[f] = static_cast<float>(-2.0 * w2s[f] * z);
        ai += w2s[f] * (z * z);
    }
    return ai;
}

// The cross-term multipliers of a query of the Gram expansion (neighbours/gram_state.hpp):
// z_f = float(x_f - centre_f), v_f = float(-2 w2s_f z_f); returns sum_f w2s_f z_f^2 summed in
// lanes (its bound holds for any order).
template <class T>
FASTFS_SIMD_CLONES double centred_query_terms(const T* __restrict x,
                                              const double* __restrict centre,
                                              const double* __restrict w2s, Index n,
                                              float* __restrict v) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) v[f] = static_cast<float>(static_cast<double>(x[f]) - centre[f]);
    return query_terms_of(w2s, n, v);
}

// max_f |x_f - c_f| (computed in float64; NaN-free input).
template <class T>
FASTFS_SIMD_CLONES double max_abs_difference(const T* __restrict x, const double* __restrict c,
                                             Index n) {
    return lane_max0(0, n, [&](Index f) { return std::abs(static_cast<double>(x[f]) - c[f]); });
}


}  // namespace kernels
}  // namespace fastfs
