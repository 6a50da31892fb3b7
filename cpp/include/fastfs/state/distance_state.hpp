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

#include "../data/class_layout.hpp"
#include "../simd/pair_kernels.hpp"
#include "../core/memory.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "row_scan.hpp"

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
          zeros_(static_cast<std::size_t>(m_), T(0)),
          groups_(make_groups(layout_)) {
        d_.setZero();
    }

    // Bytes a state of m samples holds on n_threads threads: D, its zero row and the
    // per-thread scans' scratch (blocks of up to kMaxBlock candidates). What the memory guard
    // of the Python API (fastfs.config.max_memory) compares.
    static double bytes_needed(Index m, int n_threads) {
        const double md = static_cast<double>(m), t = std::max(resolve_threads(n_threads), 1);
        return sizeof(T) * (md * md + md + t * kMaxBlock * 2.0 * md);
    }

    const ClassLayout& layout() const { return layout_; }
    Index n_samples() const { return m_; }
    int threads() const { return threads_; }
    // The threads of a pass over D: one below kParallelMin samples, where a pass takes well under
    // 100 microseconds and waking a thread team costs more than it saves (much more when a core
    // is busy elsewhere and the team waits).
    static constexpr Index kParallelMin = 512;
    int team() const { return m_ >= kParallelMin ? threads_ : 1; }
    T at(Index a, Index b) const {
        require(!pending_, "DistanceState::at: a deferred update is pending");
        return a < b ? d_(a, b) : d_(b, a);
    }

    // D = pairwise squared distances under the features cols[0 .. k-1] (each a column of m
    // values in class order), summed in that order: the same bits as k add_feature() calls
    // from zero (kernels::squares_row). `stop` (optional) is polled between groups of rows; on
    // a stop request D is left incomplete and Interrupted is thrown after the region. Rows are
    // filled from column a0 + 1 of their group of four, so a few entries below the diagonal get
    // their (symmetric) distances too; only the upper triangle is read.
    void assign_columns(int k, const T* const* cols, const StopHook* stop = nullptr) {
        const Index m = m_;
        StopPoll poll(stop);
        mirrored_ = false;
        pending_ = nullptr;  // D is replaced: a deferred update has nothing left to change
        const Index n_groups = (m + 3) / 4;
#pragma omp parallel for schedule(dynamic, 2) num_threads(team())
        for (Index g = 0; g < n_groups; ++g) {
            if (poll.stopped()) continue;
            const Index a0 = 4 * g;
            const int rows = static_cast<int>(std::min<Index>(4, m - a0));
            T* out[4];
            for (int r = 0; r < rows; ++r) out[r] = row(a0 + r);
            kernels::squares_tiled(out, rows, cols, k, a0, a0 + 1, m);
        }
        poll.check();
    }

    // The same from Z = the samples (rows, in class order) x the features, in column order.
    void assign(const RowMatrix<T>& Z, const StopHook* stop = nullptr) {
        require(Z.rows() == m_, "DistanceState::assign: row count differs from the layout");
        const RowMatrix<T> C = Z.transpose();
        std::vector<const T*> cols(static_cast<std::size_t>(C.rows()));
        for (Index f = 0; f < C.rows(); ++f) cols[static_cast<std::size_t>(f)] = C.row(f).data();
        assign_columns(static_cast<int>(cols.size()), cols.data(), stop);
    }

    // D += sign * delta(col), col = one feature in class order. Uses the scans' expression, so
    // a state updated with a candidate holds the very values the candidate was scored with.
    void add_feature(const T* col, T sign) {
        flush();
        const Index m = m_;
#pragma omp parallel for schedule(dynamic, 16) num_threads(team())
        for (Index a = 0; a < m; ++a)
            kernels::update_row(d_.data() + a * m, col, col[a], sign, a + 1, m);
        mirrored_ = false;
    }

    // The same change, deferred: applied by the next nearest_many() as it reads each row (one
    // pass over D for the update and the next candidates instead of two), or by flush(). A
    // searcher that accepts a flip and goes on scoring candidates saves a pass per flip; an
    // assign() before then drops it. `col` must stay valid until it is applied.
    void defer_feature(const T* col, T sign) {
        flush();
        pending_ = col;
        pending_sign_ = sign;
        mirrored_ = false;
    }
    void flush() {
        if (!pending_) return;
        const T* col = pending_;
        pending_ = nullptr;
        add_feature(col, pending_sign_);
    }

    // Row a of D; entries b > a are valid (the upper triangle), all of them after mirror().
    const T* row_data(Index a) const {
        require(!pending_, "DistanceState::row_data: a deferred update is pending");
        return d_.data() + a * m_;
    }

    // D = src's entries rounded to T (a float32 screening copy of a float64 state). Returns
    // the largest entry of src.
    template <class U>
    double assign_rounded(const DistanceState<U>& src) {
        require(src.n_samples() == m_, "DistanceState::assign_rounded: sizes differ");
        const Index m = m_;
        double top = 0.0;
        pending_ = nullptr;  // D is replaced
#pragma omp parallel for schedule(dynamic, 16) num_threads(team()) reduction(max : top)
        for (Index a = 0; a < m; ++a) {
            const U* r = src.row_data(a);
            T* out = d_.data() + a * m;
            for (Index b = a + 1; b < m; ++b) {
                out[b] = static_cast<T>(r[b]);
                top = std::max(top, static_cast<double>(r[b]));
            }
        }
        mirrored_ = false;
        return top;
    }

    // D += signs[k] * delta(cols[k]) for k = 0 .. count-1 in this order, each with
    // add_feature()'s expression (so the same bits as count add_feature() calls), and, when
    // copy is given, copy = the new D rounded to U: one pass over D for all of it (G-flip's
    // float32 screen catches up with its accepted flips this way). Returns the largest entry of
    // the new D (0 without a copy). A deferred update of either state is applied first (D) or
    // dropped (copy: overwritten).
    template <class U>
    double add_features_rounded(int count, const T* const* cols, const T* signs,
                                DistanceState<U>* copy) {
        require(!copy || copy->n_samples() == m_, "DistanceState::add_features_rounded: sizes differ");
        flush();
        const Index m = m_;
        double top = 0.0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(team()) reduction(max : top)
        for (Index a = 0; a < m; ++a) {
            T* r = d_.data() + a * m;
            for (int k = 0; k < count; ++k)
                kernels::update_row(r, cols[k], cols[k][a], signs[k], a + 1, m);
            if (copy)
                top = std::max(top, kernels::round_row(r, copy->d_.data() + a * m, a + 1, m));
        }
        if (count > 0) mirrored_ = false;
        if (copy) {
            copy->mirrored_ = false;
            copy->pending_ = nullptr;
        }
        return top;
    }

    // Criteria that need more than the nearest hit and miss (k nearest, soft kNN) read whole
    // rows. The lower triangle is a copy of the upper one, refreshed once per committed change
    // of the state rather than per candidate; full_row() is valid until the next change.
    void mirror() {
        flush();
        if (mirrored_) return;
        const Index m = m_;
#pragma omp parallel for schedule(dynamic, 16) num_threads(team())
        for (Index a = 1; a < m; ++a)
            for (Index b = 0; b < a; ++b) d_(a, b) = d_(b, a);
        mirrored_ = true;
    }
    const T* full_row(Index a) const {
        require(mirrored_, "DistanceState::full_row: call mirror() after changing the state");
        return d_.data() + a * m_;
    }
    bool mirrored() const { return mirrored_ && !pending_; }

    // add_feature()'s update over whole rows of a mirrored state, which stays mirrored: entry
    // (b, a) takes (x_b - x_a)^2, the same bits as (x_a - x_b)^2, so both triangles keep equal
    // values (and the diagonal its zeros).
    void add_feature_full(const T* col, T sign) {
        require(mirrored(), "DistanceState::add_feature_full: the state is not mirrored");
        const Index m = m_;
#pragma omp parallel for schedule(dynamic, 16) num_threads(team())
        for (Index a = 0; a < m; ++a)
            kernels::update_row(d_.data() + a * m, col, col[a], sign, Index{0}, m);
    }

    // The k nearest other samples of sample a (a position) under D + sign * delta(col), nearest
    // first; ties go to the lower original sample index (SPEC 1.4). Writes min(k, m - 1)
    // positions and distances and returns that count. Needs mirror(); const, so threads may
    // query different rows at once. col == nullptr reads D itself.
    int k_nearest(Index a, const T* col, T sign, int k, Index* pos, T* dist) const {
        return row_k_nearest(layout_, full_row(a), a, col, sign, k, pos, dist);
    }

    // Nearest hit / miss distances of D + sign * delta(col); col == nullptr scores D itself.
    void nearest_with(const T* col, T sign, Nearest<T>& out) {
        nearest_many(1, &col, &sign, &out);
    }

    // Scores `count` candidates (at most kMaxBlock) in one pass over D: each tile of rows is
    // read from memory once and reused from cache for every candidate, which is what makes a
    // block of candidates cheaper than `count` separate passes. min is exact, so every
    // candidate gets bit for bit what nearest_with() alone would give it, whatever the block
    // size or thread count.
    static constexpr int kMaxBlock = 16;
    void nearest_many(int count, const T* const* cols_in, const T* signs_in, Nearest<T>* outs) {
        require(count >= 1 && count <= kMaxBlock, "nearest_many: block size out of range");
        const Index m = m_;
        const T inf = std::numeric_limits<T>::infinity();
        const int nt = team();
        // Scoring D itself = a zero column with sign 0 (adds exactly 0 to every entry).
        const T* cols[kMaxBlock];
        T signs[kMaxBlock];
        for (int k = 0; k < count; ++k) {
            cols[k] = cols_in[k] ? cols_in[k] : zeros_.data();
            signs[k] = cols_in[k] ? signs_in[k] : T(0);
        }
        // A deferred update is applied to each tile of a group's rows just before it is scanned
        // (the scans then read it from L1); the expression of add_feature().
        const T* pend = pending_;
        const T pend_sign = pending_sign_;
        pending_ = nullptr;
        if (pend) mirrored_ = false;
        const std::size_t per_thread = static_cast<std::size_t>(count) * 2 * m;
        if (scratch_.size() < per_thread * nt) scratch_.resize(per_thread * nt);
        std::fill(scratch_.begin(), scratch_.begin() + per_thread * nt, inf);
        for (int k = 0; k < count; ++k) {
            outs[k].hit.assign(static_cast<std::size_t>(m), inf);
            outs[k].miss.assign(static_cast<std::size_t>(m), inf);
        }
        const Index n_groups = static_cast<Index>(groups_.size());
#pragma omp parallel num_threads(nt)
        {
            const int t = thread_index();
            // Column-side minima of this thread: [candidate][hit, miss][sample].
            T* colmin = scratch_.data() + static_cast<std::size_t>(t) * per_thread;
            // Groups are short at the bottom of the triangle: dynamic chunks balance threads.
#pragma omp for schedule(dynamic, 4)
            for (Index g = 0; g < n_groups; ++g) {
                const Index a0 = groups_[static_cast<std::size_t>(g)].first;
                const int rows = groups_[static_cast<std::size_t>(g)].second;
                const Index hit_end = layout_.class_end_of(a0);
                // The pending update goes tile by tile, just before the tile's scans (which
                // then read it from L1), starting with the pairs inside the group.
                if (pend)
                    for (int r = 0; r + 1 < rows; ++r)
                        kernels::update_row(row(a0 + r), pend, pend[a0 + r], pend_sign, a0 + r + 1, a0 + rows);
                T best_hit[kMaxBlock][4], best_miss[kMaxBlock][4];
                for (int k = 0; k < count; ++k)
                    for (int r = 0; r < 4; ++r) best_hit[k][r] = best_miss[k][r] = inf;
                // Pairs inside the group (all hits: a group never spans two classes).
                for (int k = 0; k < count; ++k)
                    scan_inside(a0, rows, cols[k], signs[k], colmin + hit_offset(k), best_hit[k]);
                // The rest of the rows, tile by tile, every candidate per tile.
                for (Index lo = a0 + rows; lo < m; lo += kTile) {
                    const Index hi = std::min(lo + kTile, m);
                    const Index mid = std::clamp(hit_end, lo, hi);
                    // A group of four takes the update inside its first candidate's scan.
                    const bool fuse = pend && rows == 4 && (pend_sign == T(1) || pend_sign == T(-1));
                    if (pend && !fuse)
                        for (int r = 0; r < rows; ++r)
                            kernels::update_row(row(a0 + r), pend, pend[a0 + r], pend_sign, lo, hi);
                    for (int k = 0; k < count; ++k)
                        scan_group(a0, rows, cols[k], signs[k], lo, mid, hi,
                                   colmin + hit_offset(k), colmin + hit_offset(k) + m,
                                   best_hit[k], best_miss[k], k == 0 && fuse ? pend : nullptr,
                                   pend_sign);
                }
                for (int k = 0; k < count; ++k)
                    for (int r = 0; r < rows; ++r) {
                        outs[k].hit[a0 + r] = best_hit[k][r];
                        outs[k].miss[a0 + r] = best_miss[k][r];
                    }
            }
        }
        // Merge the per-thread column minima; min is exact, so the result is thread-count free.
        for (int t = 0; t < nt; ++t) {
            const T* colmin = scratch_.data() + static_cast<std::size_t>(t) * per_thread;
            for (int k = 0; k < count; ++k) {
                const T* ch = colmin + hit_offset(k);
                const T* cm = ch + m;
                for (Index a = 0; a < m; ++a) {
                    outs[k].hit[a] = std::min(outs[k].hit[a], ch[a]);
                    outs[k].miss[a] = std::min(outs[k].miss[a], cm[a]);
                }
            }
        }
    }

private:
    template <class>
    friend class DistanceState;


    T* row(Index a) { return d_.data() + a * m_; }
    std::size_t hit_offset(int k) const { return static_cast<std::size_t>(k) * 2 * m_; }

    // Rows a0 .. a0+rows-1 (one class) against columns [lo, mid) (hits) and [mid, hi) (misses).
    // pend (a group of four only, psign +1 or -1): a deferred update applied to the rows over
    // [lo, hi) in the same pass (kernels::scan_rows4).
    void scan_group(Index a0, int rows, const T* col, T sign, Index lo, Index mid, Index hi,
                    T* col_hit, T* col_miss, T* best_hit, T* best_miss, const T* pend = nullptr,
                    T psign = T(0)) {
        if (pend) {
            if (psign > 0) scan_signs<1>(a0, rows, col, sign, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
            else scan_signs<-1>(a0, rows, col, sign, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
        } else {
            scan_signs<0>(a0, rows, col, sign, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
        }
    }
    template <int P>
    void scan_signs(Index a0, int rows, const T* col, T sign, Index lo, Index mid, Index hi,
                    T* col_hit, T* col_miss, T* best_hit, T* best_miss, const T* pend) {
        if (sign > 0) scan_group<1, P>(a0, rows, col, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
        else if (sign < 0) scan_group<-1, P>(a0, rows, col, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
        else scan_group<0, P>(a0, rows, col, lo, mid, hi, col_hit, col_miss, best_hit, best_miss, pend);
    }
    template <int S, int P>
    void scan_group(Index a0, int rows, const T* col, Index lo, Index mid, Index hi,
                    T* col_hit, T* col_miss, T* best_hit, T* best_miss, const T* pend) {
        if (rows == 4) {
            const T xa[4] = {col[a0], col[a0 + 1], col[a0 + 2], col[a0 + 3]};
            const T* pa = P != 0 ? pend + a0 : nullptr;
            if (lo < mid)
                kernels::scan_rows4<S, P>(row(a0), row(a0 + 1), row(a0 + 2), row(a0 + 3), xa, col,
                                          lo, mid, col_hit, best_hit, pa, pend);
            if (mid < hi)
                kernels::scan_rows4<S, P>(row(a0), row(a0 + 1), row(a0 + 2), row(a0 + 3), xa, col,
                                          mid, hi, col_miss, best_miss, pa, pend);
            return;
        }
        for (int r = 0; r < rows; ++r) {
            const Index a = a0 + r;
            if (lo < mid)
                best_hit[r] = std::min(best_hit[r],
                                       kernels::scan_row<S>(row(a), col, col[a], lo, mid, col_hit));
            if (mid < hi)
                best_miss[r] = std::min(best_miss[r],
                                        kernels::scan_row<S>(row(a), col, col[a], mid, hi, col_miss));
        }
    }
    // The at most 6 pairs inside a group, all hits: best[r] = the minimum of row a0 + r over
    // the later rows of the group. Plain scalar code with the scans' expression: a call into
    // a dispatched vector kernel per row cost about a tenth of a pass for so few pairs.
    void scan_inside(Index a0, int rows, const T* col, T sign, T* col_hit, T* best) {
        if (sign > 0) scan_inside<1>(a0, rows, col, col_hit, best);
        else if (sign < 0) scan_inside<-1>(a0, rows, col, col_hit, best);
        else scan_inside<0>(a0, rows, col, col_hit, best);
    }
    template <int S>
    void scan_inside(Index a0, int rows, const T* col, T* col_hit, T* best) {
        for (int r = 0; r + 1 < rows; ++r) {
            const Index a = a0 + r;
            const T* ra = row(a);
            const T xa = col[a];
            T low = std::numeric_limits<T>::infinity();
            for (Index b = a + 1; b < a0 + rows; ++b) {
                const T diff = xa - col[b];
                const T v = kernels::shifted<S>(ra[b], diff * diff);
                low = kernels::min_of(low, v);
                col_hit[b] = kernels::min_of(col_hit[b], v);
            }
            best[r] = low;
        }
    }

    // Groups of up to 4 consecutive rows of one class (first row, row count).
    static std::vector<std::pair<Index, int>> make_groups(const ClassLayout& L) {
        std::vector<std::pair<Index, int>> groups;
        for (Index c = 0; c < L.n_classes(); ++c) {
            const Index end = L.begin[static_cast<std::size_t>(c) + 1];
            for (Index a = L.begin[static_cast<std::size_t>(c)]; a < end; a += kGroup)
                groups.emplace_back(a, static_cast<int>(std::min<Index>(kGroup, end - a)));
        }
        return groups;
    }

    // Rows scored together by kernels::scan_rows4.
    static constexpr Index kGroup = 4;
    // Column tile kept in L1 while the candidates of a block sweep over it.
    static constexpr Index kTile = 256;

    ClassLayout layout_;
    Index m_;
    int threads_;
    RecycledMatrix<T> d_;
    std::vector<T> zeros_;
    std::vector<std::pair<Index, int>> groups_;
    std::vector<T> scratch_;
    bool mirrored_ = true;  // D starts at zero everywhere
    const T* pending_ = nullptr;  // defer_feature(): the column not yet added, and its sign
    T pending_sign_ = T(0);
};

// Refuses data whose squared distances could overflow float64. Under any subset of features a
// squared distance is at most the sum of the features' squared ranges (rounding is monotone),
// so that sum, with room for rounding, bounds every entry a state can hold; `terms` is how many
// such distances a criterion adds up. An overflowed distance would read as +inf, the "no such
// sample" of Nearest, and D - delta as NaN: every score built on them would be wrong.
inline void require_finite_distances(const std::vector<double>& range2, double terms = 1.0) {
    double total = 0.0;
    for (double r : range2) total += r;
    require(total * terms <= 0.25 * std::numeric_limits<double>::max(),
            "X: values too large for a distance-based method: squared distances between "
            "samples overflow float64; rescale X");
}

// Bytes the state needs for m samples: the guard in Python checks this before building one.
inline double distance_state_bytes(Index m, std::size_t itemsize) {
    return static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(itemsize);
}

}  // namespace fastfs
