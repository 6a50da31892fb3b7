// Each sample's nearest hits and nearest misses of a distance state (about kAim of each, at most
// K), kept with their entries, and a bound on the rest of its row: a candidate D + sign *
// delta(col) is then scored on those pairs instead of a row of the triangle (G-flip's
// candidate pass).
//
// Why the answer stays the exhaustive scan's. Each side (hits, misses) of sample a keeps some of
// its smallest entries and lb, a value no entry outside them is below (+inf when the side keeps
// all its entries). A candidate addition only raises entries (rounding is monotone: fl(d + q) >=
// d for q >= 0), so its entries of the pairs not kept are at least lb too; a removal lowers D_ab
// by (c_a - c_b)^2, at most Delta_a = the larger of the squares at the column's minimum and
// maximum (the same expression, monotone in c_b), so those entries are at least fl(lb - Delta_a)
// (fl is monotone again). Whenever the smallest candidate value of the kept pairs is at most
// that bound, it is the side's minimum, bit for bit: the kept values are D's own and min is
// exact. A sample whose kept minimum exceeds the bound gets its whole row scanned (row_nearest,
// the state's expression), so nothing depends on how good the lists are; only the time does.
//
// An accepted flip updates the whole rows of the (mirrored) state and the kept values with the
// same expression; an addition leaves every bound valid (entries only rise), a removal lowers
// each by its row's largest decrease. The kept entries then drift from the nearest ones, and the
// caller builds the lists afresh once too many samples need their rows.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../data/class_layout.hpp"
#include "../simd/column_kernels.hpp"
#include "distance_state.hpp"
#include "row_scan.hpp"

namespace fastfs {

namespace kernels {
// min over j < n of val[j] + S * (xa - col[idx[j]])^2 (the scans' expression).
template <int S, class T>
FASTFS_SIMD_CLONES T kept_min(const T* __restrict val, const std::int32_t* __restrict idx, int n,
                              const T* __restrict col, T xa) {
    return lane_min<T>(0, n, [&](Index j) {
        const T diff = xa - col[idx[j]];
        return shifted<S>(val[j], diff * diff);
    });
}
// val[j] = val[j] + S * (xa - col[idx[j]])^2: update_row's expression on the kept entries.
template <int S, class T>
FASTFS_SIMD_CLONES void kept_update(T* __restrict val, const std::int32_t* __restrict idx, int n,
                                    const T* __restrict col, T xa) {
#pragma omp simd
    for (int j = 0; j < n; ++j) {
        const T diff = xa - col[idx[j]];
        val[j] = shifted<S>(val[j], diff * diff);
    }
}
}  // namespace kernels

template <class T>
class KeptNeighbours {
public:
    static constexpr int K = 16;     // at most this many entries kept per sample and side
    static constexpr int kAim = 12;  // about this many (see keep())

    explicit KeptNeighbours(ClassLayout layout)
        : layout_(std::move(layout)), m_(layout_.n_samples()) {}

    bool valid() const { return valid_; }
    // Drops the lists (the state was changed by another path).
    void invalidate() { valid_ = false; }

    // Bytes the lists hold for m samples, and the buffers of a build on `threads` threads (the
    // memory guard's figure).
    static double bytes_needed(Index m, int threads) {
        const double md = static_cast<double>(m), t = std::max(resolve_threads(threads), 1);
        return md * (2.0 * K * (sizeof(T) + sizeof(std::int32_t)) + 2.0 * (sizeof(T) + 1.0)) +
               t * ((md + kChunk) * sizeof(std::int32_t) + 2.0 * (md / kChunk + 1.0) * sizeof(T));
    }

    // The lists of a mirrored state (its full rows are D), on the state's team.
    void build(const DistanceState<T>& D) {
        require(D.mirrored(), "KeptNeighbours::build: the state is not mirrored");
        const std::size_t mm = static_cast<std::size_t>(m_);
        val_.resize(mm * 2 * K);
        idx_.resize(mm * 2 * K);
        count_.resize(mm * 2);
        lb_.resize(mm * 2);
        const Index m = m_;
        const int team = D.team();
        // Sized before the region: nothing inside it allocates.
        scratch_.resize(static_cast<std::size_t>(team));
        for (Scratch& w : scratch_) {
            w.mins.resize(static_cast<std::size_t>((m + kChunk - 1) / kChunk));
            w.sorted.reserve(w.mins.size());
            w.found.resize(mm + kChunk);
        }
#pragma omp parallel for schedule(dynamic, 16) num_threads(team) if (team > 1)
        for (Index a = 0; a < m; ++a)
            choose(a, D.full_row(a), scratch_[static_cast<std::size_t>(thread_index())]);
        valid_ = true;
    }

    // The nearest hit and miss of every sample under D + sign * delta(col) (sign +1 or -1),
    // col_lo / col_hi the column's smallest and largest values; returns how many samples
    // needed their whole row. D must be mirrored and the lists current.
    Index nearest_with(const DistanceState<T>& D, const T* col, T sign, T col_lo, T col_hi,
                       Nearest<T>& out) const {
        return sign > 0 ? nearest<1>(D, col, col_lo, col_hi, out)
                        : nearest<-1>(D, col, col_lo, col_hi, out);
    }

    // An accepted flip (col_lo / col_hi: the column's smallest and largest values): D takes
    // it over whole rows (it stays mirrored), the kept values take it with the same
    // expression, and a removal lowers each bound by its row's largest decrease. The kept
    // entries need no longer be the K nearest; the bounds still hold (see the top).
    void accept(DistanceState<T>& D, const T* col, T sign, T col_lo, T col_hi) {
        D.add_feature_full(col, sign);
        if (sign > 0) apply<1>(col, col_lo, col_hi);
        else apply<-1>(col, col_lo, col_hi);
    }

private:
    struct Scratch {  // one thread's buffers for build()
        std::vector<T> mins, sorted;
        std::vector<std::int32_t> found;
    };


    // The row in chunks of kChunk entries (chunk c: [c kChunk, (c + 1) kChunk)).
    static constexpr Index kChunk = 16;

    // Sample a's lists from its full row r: the minimum of every chunk first (one vectorised
    // pass), then each side.
    void choose(Index a, const T* r, Scratch& w) {
        const Index lo = layout_.begin[static_cast<std::size_t>(layout_.cls[static_cast<std::size_t>(a)])];
        const Index hi = layout_.class_end_of(a);
        kernels::block_minima(r, m_, kChunk, w.mins.data());
        const std::pair<Index, Index> hits[2] = {{lo, a}, {a + 1, hi}};
        const std::pair<Index, Index> misses[2] = {{0, lo}, {hi, m_}};
        keep(a, 0, r, hits, w);
        keep(a, 1, r, misses, w);
    }

    // Side s (the entries of two ranges of row r) of sample a keeps the entries at most a
    // limit t, and t as the bound of the others; or, when more than K are, the K smallest and
    // the (K+1)-th as the bound. t: the chunks inside the side come first, and the (kAim+1)-th
    // smallest of their minima is at least the side's (kAim+1)-th smallest entry (each of those
    // chunks holds an entry at most t), so about kAim entries are at most t, found in the
    // chunks whose minimum is at most t and among the few entries of chunks the side shares
    // with the other side or with a itself (+inf when the side has too few chunks: all its
    // entries compete). Every entry not kept is at least the bound.
    void keep(Index a, int s, const T* r, const std::pair<Index, Index> (&ranges)[2], Scratch& w) {
        const std::size_t slot = static_cast<std::size_t>(a) * 2 + static_cast<std::size_t>(s);
        w.sorted.clear();
        for (const auto& [x, y] : ranges)
            for (Index c = (x + kChunk - 1) / kChunk; (c + 1) * kChunk <= y; ++c)
                w.sorted.push_back(w.mins[static_cast<std::size_t>(c)]);
        T t = std::numeric_limits<T>::infinity();
        if (w.sorted.size() > static_cast<std::size_t>(kAim)) {
            std::nth_element(w.sorted.begin(), w.sorted.begin() + kAim, w.sorted.end());
            t = w.sorted[kAim];
        }
        // Branch-free: every position is written, and counted when its entry is at most t.
        std::int32_t* fi = w.found.data();
        std::size_t n = 0;
        auto gather = [&](Index u, Index v) {
            for (Index q = u; q < v; ++q) {
                fi[n] = static_cast<std::int32_t>(q);
                n += r[q] <= t ? 1 : 0;
            }
        };
        for (const auto& [x, y] : ranges) {
            const Index c0 = (x + kChunk - 1) / kChunk, c1 = y / kChunk;  // inner chunks [c0, c1)
            if (c0 >= c1) {
                gather(x, y);
                continue;
            }
            gather(x, c0 * kChunk);
            for (Index c = c0; c < c1; ++c)
                if (w.mins[static_cast<std::size_t>(c)] <= t) gather(c * kChunk, (c + 1) * kChunk);
            gather(c1 * kChunk, y);
        }
        T lb = t;
        if (n > static_cast<std::size_t>(2 * K)) {
            // Many entries equal to t (distances of integer data tie often): only those below t
            // compete, and t bounds the others (every entry not below t is at least t).
            std::size_t below = 0;
            for (std::size_t j = 0; j < n; ++j) {
                fi[below] = fi[j];
                below += r[fi[j]] < t ? 1 : 0;
            }
            n = below;
        }
        if (n > static_cast<std::size_t>(K)) {
            std::nth_element(fi, fi + K, fi + n, [r](std::int32_t p, std::int32_t q) { return r[p] < r[q]; });
            lb = r[fi[K]];
            n = K;
        }
        for (std::size_t j = 0; j < n; ++j) {
            val_[slot * K + j] = r[fi[j]];
            idx_[slot * K + j] = fi[j];
        }
        count_[slot] = static_cast<std::uint8_t>(n);
        lb_[slot] = lb;
    }

    // The largest (c_a - c_b)^2 over the column, as the state computes it.
    static T largest_drop(T xa, T col_lo, T col_hi) {
        const T d1 = xa - col_lo, d2 = xa - col_hi;
        return std::max(d1 * d1, d2 * d2);
    }

    template <int S>
    Index nearest(const DistanceState<T>& D, const T* col, T col_lo, T col_hi,
                  Nearest<T>& out) const {
        const Index m = m_;
        out.hit.resize(static_cast<std::size_t>(m));
        out.miss.resize(static_cast<std::size_t>(m));
        Index rows = 0;
        for (Index a = 0; a < m; ++a) {
            const std::size_t slot = static_cast<std::size_t>(a) * 2;
            const T xa = col[a];
            const T drop = S < 0 ? largest_drop(xa, col_lo, col_hi) : T(0);
            T best[2];
            bool decided = true;
            for (int s = 0; s < 2 && decided; ++s) {
                const std::size_t k = slot + static_cast<std::size_t>(s);
                best[s] = kernels::kept_min<S>(val_.data() + k * K, idx_.data() + k * K,
                                               static_cast<int>(count_[k]), col, xa);
                // The entries not kept are at least lb (additions), fl(lb - drop) (removals).
                const T bound = S < 0 ? lb_[k] - drop : lb_[k];
                decided = best[s] <= bound;
            }
            if (decided) {
                out.hit[static_cast<std::size_t>(a)] = best[0];
                out.miss[static_cast<std::size_t>(a)] = best[1];
                continue;
            }
            ++rows;
            row_nearest<S>(layout_, D.full_row(a), a, col, out.hit[static_cast<std::size_t>(a)],
                           out.miss[static_cast<std::size_t>(a)]);
        }
        return rows;
    }

    template <int S>
    void apply(const T* col, T col_lo, T col_hi) {
        for (Index a = 0; a < m_; ++a) {
            const T xa = col[a];
            const T drop = S < 0 ? largest_drop(xa, col_lo, col_hi) : T(0);
            for (int s = 0; s < 2; ++s) {
                const std::size_t k = static_cast<std::size_t>(a) * 2 + static_cast<std::size_t>(s);
                kernels::kept_update<S>(val_.data() + k * K, idx_.data() + k * K,
                                        static_cast<int>(count_[k]), col, xa);
                if (S < 0) lb_[k] = lb_[k] - drop;
            }
        }
    }

    ClassLayout layout_;
    Index m_;
    bool valid_ = false;
    std::vector<T> val_;              // [sample][hit, miss][K]: the kept entries' values
    std::vector<std::int32_t> idx_;   // and their positions
    std::vector<std::uint8_t> count_; // [sample][side]: entries kept (at most K)
    std::vector<T> lb_;               // [sample][side]: bound on the entries not kept
    std::vector<Scratch> scratch_;    // build()'s, one per thread
};

}  // namespace fastfs
