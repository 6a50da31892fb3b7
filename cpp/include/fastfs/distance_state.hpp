// The shared m x m state of squared (weighted) distances between samples, kept in class-grouped
// order. G-flip, margins and (later) SFS/SBS with distance criteria all read it the same way:
// for every sample, the nearest hit and nearest miss distance of D + sign * delta(feature),
// where delta(feature)_ab = (x_a - x_b)^2. Only the upper triangle is stored and read, so one
// candidate costs one pass over m(m-1)/2 entries; the column side of each pair updates
// per-thread minima that are merged after the pass.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "class_layout.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace fastfs {

// Squared distance to the nearest hit and nearest miss of every sample (positions in class
// order); +inf when the sample has none.
template <class T>
struct Nearest {
    std::vector<T> hit, miss;
    explicit Nearest(Index m = 0)
        : hit(static_cast<std::size_t>(m)), miss(static_cast<std::size_t>(m)) {}
};

template <class T>
class DistanceState {
public:
    DistanceState(ClassLayout layout, int n_threads)
        : layout_(std::move(layout)),
          m_(layout_.n_samples()),
          threads_(resolve_threads(n_threads)),
          d_(m_, m_),
          scratch_(static_cast<std::size_t>(threads_) * 2 * static_cast<std::size_t>(m_)) {
        d_.setZero();
    }

    const ClassLayout& layout() const { return layout_; }
    Index n_samples() const { return m_; }
    int threads() const { return threads_; }
    T at(Index a, Index b) const { return a < b ? d_(a, b) : d_(b, a); }

    // D = pairwise squared distances between the rows of Z (rows already in class order).
    void assign(const RowMatrix<T>& Z) {
        require(Z.rows() == m_, "DistanceState::assign: row count differs from the layout");
        const Index m = m_;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_)
        for (Index a = 0; a < m; ++a) {
            for (Index b = a + 1; b < m; ++b) d_(a, b) = (Z.row(a) - Z.row(b)).squaredNorm();
        }
    }

    void clear() { d_.setZero(); }

    // D += sign * delta(col), col = one feature in class order. The expression matches
    // nearest_with() exactly, so a state updated with a candidate holds the very values the
    // candidate was scored with.
    void add_feature(const T* col, T sign) {
        const Index m = m_;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_)
        for (Index a = 0; a < m; ++a) {
            const T xa = col[a];
            T* row = d_.data() + a * m;
#pragma omp simd
            for (Index b = a + 1; b < m; ++b) {
                const T diff = xa - col[b];
                row[b] = row[b] + sign * (diff * diff);
            }
        }
    }

    // Nearest hit / miss distances of D + sign * delta(col); col == nullptr scores D itself.
    void nearest_with(const T* col, T sign, Nearest<T>& out) {
        const Index m = m_;
        const T inf = std::numeric_limits<T>::infinity();
        const int nt = threads_;
        std::fill(scratch_.begin(), scratch_.end(), inf);
        out.hit.assign(static_cast<std::size_t>(m), inf);
        out.miss.assign(static_cast<std::size_t>(m), inf);
#pragma omp parallel num_threads(nt)
        {
            int t = 0;
#ifdef FASTFS_HAVE_OPENMP
            t = omp_get_thread_num();
#endif
            T* col_hit = scratch_.data() + static_cast<std::size_t>(t) * 2 * m;
            T* col_miss = col_hit + m;
            // Rows are short at the bottom of the triangle: dynamic chunks balance the threads.
#pragma omp for schedule(dynamic, 16)
            for (Index a = 0; a < m; ++a) {
                const T* row = d_.data() + a * m;
                const Index hit_end = layout_.class_end_of(a);
                if (col) {
                    out.hit[a] = scan(row, col, col[a], sign, a + 1, hit_end, col_hit);
                    out.miss[a] = scan(row, col, col[a], sign, hit_end, m, col_miss);
                } else {
                    out.hit[a] = scan_plain(row, a + 1, hit_end, col_hit);
                    out.miss[a] = scan_plain(row, hit_end, m, col_miss);
                }
            }
        }
        // Merge the per-thread column minima; min is exact, so the result is thread-count free.
        for (int t = 0; t < nt; ++t) {
            const T* col_hit = scratch_.data() + static_cast<std::size_t>(t) * 2 * m;
            const T* col_miss = col_hit + m;
            for (Index a = 0; a < m; ++a) {
                out.hit[a] = std::min(out.hit[a], col_hit[a]);
                out.miss[a] = std::min(out.miss[a], col_miss[a]);
            }
        }
    }

private:
    // min over b in [lo, hi) of row[b] + sign * (xa - col[b])^2, also folding each value into
    // colmin[b] (the same pair seen from sample b).
    static T scan(const T* row, const T* col, T xa, T sign, Index lo, Index hi, T* colmin) {
        T best = std::numeric_limits<T>::infinity();
#pragma omp simd reduction(min : best)
        for (Index b = lo; b < hi; ++b) {
            const T diff = xa - col[b];
            const T v = row[b] + sign * (diff * diff);
            best = std::min(best, v);
            colmin[b] = std::min(colmin[b], v);
        }
        return best;
    }
    static T scan_plain(const T* row, Index lo, Index hi, T* colmin) {
        T best = std::numeric_limits<T>::infinity();
#pragma omp simd reduction(min : best)
        for (Index b = lo; b < hi; ++b) {
            const T v = row[b];
            best = std::min(best, v);
            colmin[b] = std::min(colmin[b], v);
        }
        return best;
    }

    ClassLayout layout_;
    Index m_;
    int threads_;
    RowMatrix<T> d_;
    std::vector<T> scratch_;
};

// Bytes the state needs for m samples: the guard in Python checks this before building one.
inline double distance_state_bytes(Index m, std::size_t itemsize) {
    return static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(itemsize);
}

}  // namespace fastfs
