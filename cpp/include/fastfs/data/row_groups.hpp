// Groups of equal rows within a class ("duplicates"): samples of one class whose rows are equal
// value by value (-0 and +0 are the same value) are one group. Every weighted distance from a
// member of a group to any sample has the same bits as from any other member (the same
// expressions over the same values), so the neighbour searches and G-flip's state need one
// sample per group: a sample's nearest miss is its group's, and its nearest hit is at distance
// 0 exactly when its group has another member.
//
// Found by refining candidate sets column block by column block: the samples of a class start
// as one set; each set is split by a weighted sum of its rows over the next block of columns
// (equal rows give equal sums, bit for bit), and a sample alone in its set is alone in its
// group. The blocks grow (16, 32, 64, ... columns), so data without duplicates costs a read of
// 16 columns, and data whose rows differ only late (bags of words) a read up to the block that
// separates them. The sets left at the end are confirmed value by value.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/types.hpp"
#include "../simd/pair_kernels.hpp"

namespace fastfs {

struct RowGroups {
    std::vector<Index> group;  // sample -> its group; groups numbered by their lowest sample
    std::vector<Index> first;  // group -> its lowest sample index
    std::vector<Index> size;   // group -> number of samples

    Index n_groups() const { return static_cast<Index>(first.size()); }
    Index n_samples() const { return static_cast<Index>(group.size()); }
};

namespace detail {

// A fixed, irregular coefficient per column in [1, 2): different rows rarely get equal sums.
inline double row_key_coefficient(Index f) {
    std::uint64_t h = static_cast<std::uint64_t>(f) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return 1.0 + static_cast<double>(h >> 11) * 0x1.0p-53;
}

// sum over the `count` values x of x_f * c_f in sixteen running sums, as bits (the same for
// equal rows, which take the same path; -0 and +0 give the same sums).
template <class T>
FASTFS_SIMD_CLONES std::uint64_t row_key(const T* __restrict x, const double* __restrict c,
                                         Index count) {
    double s[17] = {};
    kernels::in_sixteen_lanes(count, [&](Index f, int l) { s[l] += static_cast<double>(x[f]) * c[f]; });
    double t = s[16];
    for (int l = 0; l < 16; ++l) t += s[l];
    if (t == 0.0) t = 0.0;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &t, sizeof bits);
    return bits;
}

template <class T>
bool equal_rows(const T* a, const T* b, Index n) {
    for (Index f = 0; f < n; ++f)
        if (!(a[f] == b[f])) return false;
    return true;
}

// The rows of a set compared with its first rows one by one, up to this many different ones.
constexpr std::size_t kMaxHeads = 8;

// A lexicographic order of rows, value by value (-0 and +0 the same value, NaN after every
// number and the same as NaN): equal rows compare 0, and rows that compare 0 are equal unless
// they hold NaN (equal_rows decides).
template <class T>
int compare_rows(const T* a, const T* b, Index n) {
    for (Index f = 0; f < n; ++f) {
        if (a[f] == b[f]) continue;
        const bool na = a[f] != a[f], nb = b[f] != b[f];
        if (na && nb) continue;
        if (na) return 1;
        if (nb) return -1;
        return a[f] < b[f] ? -1 : 1;
    }
    return 0;
}

}  // namespace detail

template <class T>
RowGroups equal_row_groups(const MatrixRef<T>& X, const Labels& codes) {
    const Index m = X.rows(), n = X.cols();
    require(codes.size() == m, "X and y have different numbers of samples");
    // Candidate sets: runs of `order` between consecutive bounds; start with one per class.
    std::vector<Index> order(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) order[static_cast<std::size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return codes[a] < codes[b]; });
    std::vector<std::pair<Index, Index>> sets, next;
    for (Index p = 0; p < m;) {
        Index q = p + 1;
        while (q < m && codes[order[static_cast<std::size_t>(q)]] == codes[order[static_cast<std::size_t>(p)]]) ++q;
        if (q - p > 1) sets.emplace_back(p, q);
        p = q;
    }
    std::vector<std::pair<std::uint64_t, Index>> keyed;
    std::vector<double> coef;
    for (Index f0 = 0, width = 16; f0 < n && !sets.empty(); f0 += width, width *= 2) {
        const Index f1 = std::min(n, f0 + width);
        coef.resize(static_cast<std::size_t>(f1 - f0));
        for (Index f = f0; f < f1; ++f) coef[static_cast<std::size_t>(f - f0)] = detail::row_key_coefficient(f);
        next.clear();
        for (const auto& [p0, p1] : sets) {
            keyed.clear();
            for (Index p = p0; p < p1; ++p) {
                const Index i = order[static_cast<std::size_t>(p)];
                if (p + 4 < p1) {  // rows are far apart: start the read of a later one
                    const T* ahead = X.row(order[static_cast<std::size_t>(p + 4)]).data() + f0;
                    for (Index f = 0; f < f1 - f0; f += 64 / static_cast<Index>(sizeof(T)))
                        __builtin_prefetch(ahead + f);
                }
                keyed.emplace_back(detail::row_key(X.row(i).data() + f0, coef.data(), f1 - f0), i);
            }
            std::sort(keyed.begin(), keyed.end());  // by key, then by sample
            for (Index p = p0; p < p1; ++p) order[static_cast<std::size_t>(p)] = keyed[static_cast<std::size_t>(p - p0)].second;
            for (Index a = 0; a < p1 - p0;) {
                Index b = a + 1;
                while (b < p1 - p0 && keyed[static_cast<std::size_t>(b)].first == keyed[static_cast<std::size_t>(a)].first) ++b;
                if (b - a > 1) next.emplace_back(p0 + a, p0 + b);
                a = b;
            }
        }
        sets.swap(next);
    }
    // Each set left is sorted by sample index; confirm its members value by value against the
    // lowest-indexed members (in practice a set is one group). A set that holds more than a few
    // different rows (sums that collide, as when a huge value in every block swamps the rest)
    // is sorted by its rows instead, so that it costs O(s log s) row comparisons, not O(s^2).
    RowGroups R;
    R.group.assign(static_cast<std::size_t>(m), -1);
    std::vector<Index> leader(static_cast<std::size_t>(m), -1);  // sample -> lowest equal sample
    std::vector<Index> heads;
    for (const auto& [p0, p1] : sets) {
        heads.clear();
        Index p = p0;
        for (; p < p1 && heads.size() <= detail::kMaxHeads; ++p) {
            const Index i = order[static_cast<std::size_t>(p)];
            Index lead = i;
            for (Index h : heads)
                if (detail::equal_rows(X.row(h).data(), X.row(i).data(), n)) {
                    lead = h;
                    break;
                }
            if (lead == i) heads.push_back(i);
            leader[static_cast<std::size_t>(i)] = lead;
        }
        if (p == p1) continue;
        const auto b = order.begin() + p0, e = order.begin() + p1;
        std::sort(b, e, [&](Index a, Index c) {
            const int r = detail::compare_rows(X.row(a).data(), X.row(c).data(), n);
            return r != 0 ? r < 0 : a < c;
        });
        Index lead = -1;
        for (auto it = b; it != e; ++it) {
            if (lead < 0 || !detail::equal_rows(X.row(lead).data(), X.row(*it).data(), n)) lead = *it;
            leader[static_cast<std::size_t>(*it)] = lead;
        }
    }
    for (Index i = 0; i < m; ++i) {
        const Index lead = leader[static_cast<std::size_t>(i)];
        if (lead < 0 || lead == i) {
            R.group[static_cast<std::size_t>(i)] = R.n_groups();
            R.first.push_back(i);
            R.size.push_back(1);
        } else {
            const Index g = R.group[static_cast<std::size_t>(lead)];
            R.group[static_cast<std::size_t>(i)] = g;
            ++R.size[static_cast<std::size_t>(g)];
        }
    }
    return R;
}

}  // namespace fastfs
