// A C-ordered (row-major) m x n array copied into column-major order, converted to D, with the
// finiteness check folded into the same read. The column algorithms (OMP, backward elimination,
// the LASSO) need X by columns; most users hold it by rows. Tiles of 32 x 32 keep both the rows
// read and the columns written in cache, where a plain strided copy misses on every element
// when m is large.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../core/types.hpp"

namespace fastfs {

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

// dst[j * m + i] = src[i * n + j]. Returns false when some value is NaN or infinite (the copy
// is complete either way).
template <class S, class D>
bool fortran_copy(const S* src, Index m, Index n, D* dst) {
    constexpr Index kTile = 32;
    // Stay 0 while every value is finite: one sum per row of a tile, so that the additions
    // form independent chains (a single sum would wait for the previous addition at every
    // element: several times slower than the copy itself).
    double bad[kTile] = {};
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
                }
            }
        }
    }
    double total = 0.0;
    for (double b : bad) total += b;
    return total == 0.0;
}

}  // namespace fastfs
