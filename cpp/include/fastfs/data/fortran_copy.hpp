// A C-ordered (row-major) m x n array copied into column-major order, converted to D, with the
// finiteness check folded into the same read. The column algorithms (OMP, backward elimination,
// the LASSO) need X by columns; most users hold it by rows. Tiles of 32 x 32 keep both the rows
// read and the columns written in cache, where a plain strided copy misses on every element
// when m is large.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"

namespace fastfs {

// What a read of an array found: whether every value is finite and, when they are, max |x|.
struct FiniteMaxAbs {
    bool finite = true;
    double max_abs = 0.0;  // max |x| (meaningful when finite)
};

namespace detail {
// True for NaN and infinities. v * 0 is 0 for every finite v and NaN otherwise, which is the
// cheapest test inside the strided copy. -ffinite-math-only (or -ffast-math) lets the compiler
// fold that to 0, so such builds test the exponent bits instead (all ones only for NaN and
// infinities), which no option can remove.
template <class S>
inline double non_finite_mark(S v) {
#if defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__
    using U = std::conditional_t<sizeof(S) == 8, std::uint64_t, std::uint32_t>;
    constexpr U mask = sizeof(S) == 8 ? U(0x7ff0000000000000ULL) : U(0x7f800000U);
    U u;
    std::memcpy(&u, &v, sizeof u);
    return (u & mask) == mask ? 1.0 : 0.0;
#else
    return static_cast<double>(v) * 0.0;
#endif
}
}  // namespace detail

// (Not under -ffinite-math-only, which may fold the v * 0 of the vector test away.)
#if defined(FASTFS_HAVE_AVX2_FMA) && !(defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#define FASTFS_AVX2_TRANSPOSE 1
// The float64 copy of rows [i0, i1) and columns [j0, j1) of a tile, i1 - i0 and j1 - j0
// multiples of four, in 4 x 4 blocks transposed in registers: four row loads and four column
// stores per sixteen values, where the scalar loop reads every value from another row. `bad`
// gathers v * 0 (0 for finite v, NaN otherwise) in four independent sums, `top` max |v| in
// four independent maxima.
__attribute__((target("avx2"))) inline void transpose_tile_avx2(const double* src, Index m,
                                                                Index n, Index i0, Index i1,
                                                                Index j0, Index j1, double* dst,
                                                                __m256d* bad, __m256d* top) {
    const __m256d zero = _mm256_setzero_pd();
    const __m256d sign = _mm256_set1_pd(-0.0);
    for (Index j = j0; j < j1; j += 4) {
        for (Index i = i0; i < i1; i += 4) {
            __m256d r[4];
            for (int q = 0; q < 4; ++q) {
                r[q] = _mm256_loadu_pd(src + (i + q) * n + j);  // row i + q
                bad[q] = _mm256_add_pd(bad[q], _mm256_mul_pd(r[q], zero));
                top[q] = _mm256_max_pd(top[q], _mm256_andnot_pd(sign, r[q]));
            }
            kernels::transpose4(r);
            for (int q = 0; q < 4; ++q) _mm256_storeu_pd(dst + (j + q) * m + i, r[q]);  // column j + q
        }
    }
}

// fortran_copy() for float64 on CPUs with AVX2: tiles of 32 rows x 64 columns, their 4 x 4
// blocks in registers, the edges (rows and columns beyond a multiple of four) by the scalar
// loop. Rows a multiple of 4 KiB long fall in the same cache sets, so their tiles take four
// rows at a time (measured, 1440 x 1024: 1.0 ms against 1.6 ms), and columns of that length
// (the stores) eight (1024 x 1440, fresh output: 1.1 against 1.4 ms).
__attribute__((target("avx2"))) inline FiniteMaxAbs fortran_copy_avx2(const double* src, Index m,
                                                                      Index n, double* dst) {
    constexpr Index kTile = 64;
    const Index tile_rows = n % 512 == 0 ? 4 : m % 512 == 0 ? 8 : 32;
    __m256d bad[4], top[4];
    for (int q = 0; q < 4; ++q) bad[q] = top[q] = _mm256_setzero_pd();
    const Index m4 = m & ~Index{3}, n4 = n & ~Index{3};
    for (Index i0 = 0; i0 < m4; i0 += tile_rows)
        for (Index j0 = 0; j0 < n4; j0 += kTile)
            transpose_tile_avx2(src, m, n, i0, std::min(i0 + tile_rows, m4), j0,
                                std::min(j0 + kTile, n4), dst, bad, top);
    double rest = 0.0, rest_top = 0.0;
    for (Index i = 0; i < m; ++i) {
        for (Index j = i < m4 ? n4 : 0; j < n; ++j) {
            const double v = src[i * n + j];
            dst[j * m + i] = v;
            rest += detail::non_finite_mark(v);
            rest_top = std::max(rest_top, std::abs(v));
        }
    }
    alignas(32) double bads[4], tops[4];
    _mm256_store_pd(bads, _mm256_add_pd(_mm256_add_pd(bad[0], bad[1]),
                                        _mm256_add_pd(bad[2], bad[3])));
    _mm256_store_pd(tops, _mm256_max_pd(_mm256_max_pd(top[0], top[1]),
                                        _mm256_max_pd(top[2], top[3])));
    FiniteMaxAbs out;
    out.finite = rest + bads[0] + bads[1] + bads[2] + bads[3] == 0.0;
    out.max_abs = std::max({rest_top, tops[0], tops[1], tops[2], tops[3]});
    return out;
}
#endif

// dst[j * m + i] = src[i * n + j], and whether every value is finite and max |x| (the copy is
// complete either way).
template <class S, class D>
FiniteMaxAbs fortran_copy(const S* src, Index m, Index n, D* dst) {
#ifdef FASTFS_AVX2_TRANSPOSE
    if constexpr (std::is_same<S, double>::value && std::is_same<D, double>::value) {
        if (kernels::cpu_has_avx2_fma()) return fortran_copy_avx2(src, m, n, dst);
    }
#endif
    constexpr Index kTile = 32;
    // Stay 0 while every value is finite: one sum and one maximum per row of a tile, so that
    // they form independent chains (a single sum would wait for the previous addition at every
    // element: several times slower than the copy itself).
    double bad[kTile] = {}, top[kTile] = {};
    for (Index i0 = 0; i0 < m; i0 += kTile) {
        const Index i1 = std::min(i0 + kTile, m);
        for (Index j0 = 0; j0 < n; j0 += kTile) {
            const Index j1 = std::min(j0 + kTile, n);
            for (Index j = j0; j < j1; ++j) {
                D* col = dst + j * m;
                for (Index i = i0; i < i1; ++i) {
                    const S v = src[i * n + j];
                    col[i] = static_cast<D>(v);
                    bad[i - i0] += detail::non_finite_mark(v);
                    const double a = std::abs(static_cast<double>(v));
                    top[i - i0] = a > top[i - i0] ? a : top[i - i0];
                }
            }
        }
    }
    FiniteMaxAbs out;
    double total = 0.0;
    for (Index l = 0; l < kTile; ++l) {
        total += bad[l];
        out.max_abs = std::max(out.max_abs, top[l]);
    }
    out.finite = total == 0.0;
    return out;
}

}  // namespace fastfs
