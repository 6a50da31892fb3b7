// Independent references and test data for the C++ tests: plain loops in long double over the
// stored values, written from the contract (SPEC 1.4), never from the code under test.
//
// The neighbour searches promise the answer of an exhaustive float64 scan. The references
// compute the distances in long double; the two agree exactly whenever distinct distances of
// the data differ by far more than float64's rounding, so the data here either has exact
// distances (dyadic values and weights: every difference, square, product and sum is exact in
// float64, which makes exact ties real ties) or continuous values whose distances are spread
// far apart at float64's resolution (yet may tie in float32, which is what the screens
// must survive).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "fastfs/core/types.hpp"

namespace fastfs_test {

using fastfs::Index;
template <class T>
using Mat = fastfs::RowMatrix<T>;
using Codes = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;

// Deterministic data: the raw output of std::mt19937_64 is fixed by the standard (its
// distributions are not), so values are derived from it by hand.
class Gen {
public:
    explicit Gen(std::uint64_t seed) : e_(seed) {}
    double uniform() { return static_cast<double>(e_() >> 11) * 0x1.0p-53; }  // [0, 1)
    Index below(Index n) { return static_cast<Index>(e_() % static_cast<std::uint64_t>(n)); }
    // Roughly standard normal (sum of 12 uniforms), continuous: distinct values.
    double normal() {
        double s = -6.0;
        for (int q = 0; q < 12; ++q) s += uniform();
        return s;
    }

private:
    std::mt19937_64 e_;
};

// Data families, m x n in float64 (cast to float32 by the caller where needed; every value
// below is exactly representable in float32 unless stated).
enum class Family {
    continuous,  // normal values: distinct distances, no ties
    integers,    // small integers 0..3: exact distances, many exact ties
    duplicates,  // integers with about a third of the rows copies of earlier rows (distance 0)
    near_ties,   // one dyadic centre row plus perturbations of 2^-22 .. 2^-30: exact in
                 // float64, (almost) invisible in float32
    two_clusters,  // near_ties with odd rows shifted by -1/2 in every feature: distances
                   // across clusters are large, their differences as small as within one, so
                   // float32 rounding of the large values swamps the differences that decide
};

inline constexpr Family kAllFamilies[] = {Family::continuous, Family::integers, Family::duplicates,
                                          Family::near_ties, Family::two_clusters};

inline const char* family_name(Family f) {
    switch (f) {
        case Family::continuous: return "continuous";
        case Family::integers: return "integers";
        case Family::duplicates: return "duplicates";
        case Family::near_ties: return "near_ties";
        case Family::two_clusters: return "two_clusters";
    }
    return "?";
}

inline Mat<double> make_data(Family family, Index m, Index n, std::uint64_t seed) {
    Gen g(seed);
    Mat<double> X(m, n);
    std::vector<double> centre(static_cast<std::size_t>(n));
    for (auto& c : centre) c = 0.5 + static_cast<double>(g.below(512)) * 0x1.0p-10;
    for (Index i = 0; i < m; ++i) {
        for (Index f = 0; f < n; ++f) {
            switch (family) {
                case Family::continuous:
                    X(i, f) = static_cast<double>(static_cast<float>(g.normal()));
                    break;
                case Family::integers:
                case Family::duplicates:
                    X(i, f) = static_cast<double>(g.below(4));
                    break;
                case Family::near_ties:
                case Family::two_clusters: {
                    // float64 only: exact there, rounded away in float32.
                    const int shift = 22 + 4 * static_cast<int>(g.below(3));
                    X(i, f) = centre[static_cast<std::size_t>(f)] +
                              std::ldexp(static_cast<double>(g.below(7)) - 3.0, -shift);
                    if (family == Family::two_clusters && i % 2 == 1) X(i, f) -= 0.5;
                    break;
                }
            }
        }
        if (family == Family::duplicates && i > 0 && g.below(3) == 0)
            X.row(i) = X.row(g.below(i));
    }
    return X;
}

// Class codes 0 .. n_classes-1, with the last class holding exactly one sample (no hit).
inline Codes make_codes(Index m, int n_classes, std::uint64_t seed, bool singleton = true) {
    Gen g(seed);
    Codes c(m);
    const int spread = singleton && n_classes > 1 ? n_classes - 1 : n_classes;
    for (Index i = 0; i < m; ++i) c[i] = static_cast<std::int64_t>(g.below(spread));
    if (singleton && n_classes > 1) c[g.below(m)] = n_classes - 1;
    // Every class but the singleton present at least once.
    for (int k = 0; k < spread && k < m; ++k) {
        bool seen = false;
        for (Index i = 0; i < m; ++i) seen = seen || c[i] == k;
        if (!seen) {
            for (Index i = 0; i < m; ++i)
                if (c[i] != n_classes - 1 || !singleton || n_classes == 1) {
                    c[i] = k;
                    break;
                }
        }
    }
    return c;
}

// sum_f w2[f] (x_if - x_jf)^2 in long double.
template <class T>
long double sq_distance(const Mat<T>& X, const std::vector<double>& w2, Index i, Index j) {
    long double d = 0.0L;
    for (Index f = 0; f < X.cols(); ++f) {
        const long double t = static_cast<long double>(X(i, f)) - static_cast<long double>(X(j, f));
        d += static_cast<long double>(w2[static_cast<std::size_t>(f)]) * t * t;
    }
    return d;
}

template <class T>
long double l1_distance(const Mat<T>& X, Index i, Index j) {
    long double d = 0.0L;
    for (Index f = 0; f < X.cols(); ++f)
        d += std::fabs(static_cast<long double>(X(i, f)) - static_cast<long double>(X(j, f)));
    return d;
}

struct RefHitMiss {
    Index hit = -1, miss = -1;
    long double hit_d = std::numeric_limits<long double>::infinity();
    long double miss_d = std::numeric_limits<long double>::infinity();
};

// Nearest other sample of the same class and of another class; scanning j upwards with a
// strict comparison keeps the lowest index among equal distances.
template <class T>
RefHitMiss ref_hit_miss(const Mat<T>& X, const Codes& codes, const std::vector<double>& w2,
                        Index i) {
    RefHitMiss r;
    for (Index j = 0; j < X.rows(); ++j) {
        if (j == i) continue;
        const long double d = sq_distance(X, w2, i, j);
        if (codes[j] == codes[i]) {
            if (r.hit < 0 || d < r.hit_d) { r.hit = j; r.hit_d = d; }
        } else if (r.miss < 0 || d < r.miss_d) {
            r.miss = j;
            r.miss_d = d;
        }
    }
    return r;
}

// The k nearest other samples among `pool` (all samples when empty) by (distance, index).
template <class Dist>
std::vector<std::pair<long double, Index>> ref_k_nearest(Index m, Index i, Index k, Dist&& dist,
                                                         const std::vector<Index>& pool = {}) {
    std::vector<std::pair<long double, Index>> all;
    auto consider = [&](Index j) {
        if (j != i) all.emplace_back(dist(j), j);
    };
    if (pool.empty()) {
        for (Index j = 0; j < m; ++j) consider(j);
    } else {
        for (Index j : pool) consider(j);
    }
    std::sort(all.begin(), all.end());
    if (static_cast<Index>(all.size()) > k) all.resize(static_cast<std::size_t>(k));
    return all;
}

// Weights of the tests: ones, zeros mixed in, tiny (~1e-20, so ~1e-40 squared) mixed in, all
// tiny (distinct values), and powers of two. Returned as squared weights w2 (what the neighbour searches take).
enum class Weights { ones, with_zeros, with_tiny, all_tiny, dyadic };

inline constexpr Weights kAllWeights[] = {Weights::ones, Weights::with_zeros, Weights::with_tiny,
                                          Weights::all_tiny, Weights::dyadic};

inline const char* weights_name(Weights w) {
    switch (w) {
        case Weights::ones: return "ones";
        case Weights::with_zeros: return "with_zeros";
        case Weights::with_tiny: return "with_tiny";
        case Weights::all_tiny: return "all_tiny";
        case Weights::dyadic: return "dyadic";
    }
    return "?";
}

inline std::vector<double> make_w2(Weights kind, Index n, std::uint64_t seed) {
    Gen g(seed);
    std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    for (Index f = 0; f < n; ++f) {
        double w = 1.0;
        switch (kind) {
            case Weights::ones: break;
            case Weights::with_zeros: w = g.below(3) == 0 ? 0.0 : 0.25 + g.uniform(); break;
            // 2^-66 ~ 1.4e-20: a dyadic tiny weight, so features sharing it add exact terms (with
            // one real tiny value, equal sums in different orders would round differently in
            // float64 and in long double: a tie the reference could not decide as float64 does).
            case Weights::with_tiny: w = g.below(2) == 0 ? 0x1.0p-66 : 0.25 + g.uniform(); break;
            case Weights::all_tiny: w = 1e-20 * (1.0 + g.uniform()); break;
            case Weights::dyadic: w = std::ldexp(1.0, -static_cast<int>(g.below(4))); break;
        }
        w2[static_cast<std::size_t>(f)] = w * w;
    }
    return w2;
}

// Binary exponents of the extreme-scale tests: the edge of the range the Python layer leaves
// alone (beyond it, it multiplies X by a power of two first: 200 for float64, 40 for float32)
// and, for float64, about 1e+-150, beyond that range but still handled by the C++ core.
template <class T>
std::vector<int> exponents() {
    if (std::is_same<T, float>::value) return {40, -40};
    return {200, -200, 498, -498};
}

// Whether float64 can hold the weighted squares of data at scale 2^e (tiny weights at
// 2^-498 fall below float64's normal range, where the float64 scan itself loses the digits
// the long double reference keeps).
inline bool weights_fit(int e, Weights w) {
    return !(e < -400 && (w == Weights::with_tiny || w == Weights::all_tiny));
}

// How many samples the leave-one-out 1-nearest-neighbour rule classifies correctly on the
// features S (unweighted squared distance in long double; ties to the lowest index; a sample is
// never its own neighbour).
template <class T>
Index ref_loo_1nn_correct(const Mat<T>& X, const Codes& codes, const std::vector<Index>& S) {
    const Index m = X.rows();
    Index correct = 0;
    for (Index p = 0; p < m; ++p) {
        Index best = -1;
        long double best_d = 0.0L;
        for (Index j = 0; j < m; ++j) {
            if (j == p) continue;
            long double d = 0.0L;
            for (Index f : S) {
                const long double t = static_cast<long double>(X(p, f)) - static_cast<long double>(X(j, f));
                d += t * t;
            }
            if (best < 0 || d < best_d) {
                best = j;
                best_d = d;
            }
        }
        if (codes[best] == codes[p]) ++correct;
    }
    return correct;
}

}  // namespace fastfs_test
