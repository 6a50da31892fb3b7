// A C-ordered (row-major) m x n array copied into column-major order, converted to D, with the
// finiteness check folded into the same read. The column algorithms (OMP, backward elimination,
// the LASSO) need X by columns; most users hold it by rows. Tiles of 32 x 32 keep both the rows
// read and the columns written in cache, where a plain strided copy misses on every element
// when m is large.
#pragma once
#include <algorithm>
#include <cstddef>

#include "types.hpp"

namespace fastfs {

// dst[j * m + i] = src[i * n + j]. Returns false when some value is NaN or infinite (the copy
// is complete either way).
template <class S, class D>
bool fortran_copy(const S* src, Index m, Index n, D* dst) {
    constexpr Index kTile = 32;
    double bad = 0.0;  // v * 0 is 0 for finite v, NaN otherwise
    for (Index i0 = 0; i0 < m; i0 += kTile) {
        const Index i1 = std::min(i0 + kTile, m);
        for (Index j0 = 0; j0 < n; j0 += kTile) {
            const Index j1 = std::min(j0 + kTile, n);
            for (Index j = j0; j < j1; ++j) {
                D* col = dst + j * m;
                for (Index i = i0; i < i1; ++i) {
                    const S v = src[i * n + j];
                    col[i] = static_cast<D>(v);
                    bad += static_cast<double>(v) * 0.0;
                }
            }
        }
    }
    return bad == 0.0;
}

}  // namespace fastfs
