// The distance kernels sum in one documented order on every CPU: term f of a row goes to lane
// f % L (L = 4 for double, 8 for float accumulators), the lanes are combined pairwise. The
// reference below adds the terms in exactly that order with scalars, so bit equality here
// means the clone this CPU runs (AVX2 or baseline) rounds as every other CPU does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fastfs/simd/column_kernels.hpp"
#include "fastfs/simd/pair_kernels.hpp"
#include "fastfs/state/kept_neighbours.hpp"
#include "fastfs/state/row_scan.hpp"

using fastfs::Index;

namespace {

template <class Acc, class Term>
Acc lane_order_sum(Index n, Term term) {
    constexpr int L = sizeof(Acc) == 4 ? 8 : 4;
    Acc lane[8] = {};
    for (Index f = 0; f < n; ++f) lane[f % L] += term(f);
    if (L == 8)
        return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
               ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

template <class Acc, class T>
void check_sq_dist4(Index n, unsigned seed) {
    std::mt19937_64 gen(seed);
    // Values spread over many binades, so that another order of the additions would round
    // differently.
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-12, 12);
    auto draw = [&] { return static_cast<T>(std::ldexp(mant(gen), expo(gen))); };
    std::vector<T> x(static_cast<std::size_t>(n)), z(static_cast<std::size_t>(4 * n));
    std::vector<Acc> w2(static_cast<std::size_t>(n));
    for (auto& v : x) v = draw();
    for (auto& v : z) v = draw();
    for (auto& v : w2) v = static_cast<Acc>(std::ldexp(std::abs(mant(gen)), expo(gen)));
    Acc out[4];
    fastfs::kernels::sq_dist4<Acc, T>(x.data(), z.data(), z.data() + n, z.data() + 2 * n,
                                      z.data() + 3 * n, w2.data(), n, out);
    for (int r = 0; r < 4; ++r) {
        const T* zr = z.data() + r * n;
        const Acc expected = lane_order_sum<Acc>(n, [&](Index f) {
            const Acc d = static_cast<Acc>(x[f]) - static_cast<Acc>(zr[f]);
            return w2[f] * (d * d);
        });
        EXPECT_EQ(out[r], expected) << "row " << r << ", n = " << n;
    }
}

// A row x and four rows z (one array of 4 n) of values spread over many binades.
template <class T>
struct ManhattanRows {
    std::vector<T> x, z;
    ManhattanRows(Index n, std::mt19937_64& gen)
        : x(static_cast<std::size_t>(n)), z(static_cast<std::size_t>(4 * n)) {
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        std::uniform_int_distribution<int> expo(-12, 12);
        for (auto& v : x) v = static_cast<T>(std::ldexp(u(gen), expo(gen)));
        for (auto& v : z) v = static_cast<T>(std::ldexp(u(gen), expo(gen)));
    }
};

template <class T>
void check_l1_dist4(Index n, unsigned seed) {
    std::mt19937_64 gen(seed);
    ManhattanRows<T> rows(n, gen);
    const std::vector<T>& x = rows.x;
    const std::vector<T>& z = rows.z;
    T out[4];
    fastfs::kernels::l1_dist4<T>(x.data(), z.data(), z.data() + n, z.data() + 2 * n,
                                 z.data() + 3 * n, n, out);
    for (int r = 0; r < 4; ++r) {
        const T* zr = z.data() + r * n;
        const T expected = lane_order_sum<T>(n, [&](Index f) { return std::abs(x[f] - zr[f]); });
        EXPECT_EQ(out[r], expected) << "row " << r << ", n = " << n;
    }
}

// Lengths below one lane group, at its multiples and with every tail length.
const Index kLengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 64, 67, 250, 1001};

}  // namespace

TEST(DistanceKernels, SquaredDistancesSumInTheFixedLaneOrder) {
    unsigned seed = 1;
    for (Index n : kLengths) {
        check_sq_dist4<double, double>(n, seed++);
        check_sq_dist4<double, float>(n, seed++);
        check_sq_dist4<float, float>(n, seed++);
    }
}

TEST(DistanceKernels, ManhattanDistancesSumInTheFixedLaneOrder) {
    unsigned seed = 100;
    for (Index n : kLengths) {
        check_l1_dist4<double>(n, seed++);
        check_l1_dist4<float>(n, seed++);
    }
}

// The lane sums of the Manhattan kernel over a range of features, from sums already under way:
// every build this CPU can run (the cloned loop and, with AVX2 + FMA, the version that forms
// x - z on the FMA units) leaves each lane the scalar sum of its terms in feature order.
template <class T>
void check_l1_lanes4(Index n, Index f0, unsigned seed) {
    constexpr int L = fastfs::kernels::kLanes<T>;
    std::mt19937_64 gen(seed);
    ManhattanRows<T> rows(n, gen);
    std::vector<T>& x = rows.x;
    const std::vector<T>& z = rows.z;
    if (n > 2) x[1] = rows.z[1] = T(0);  // |0 - 0|
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-12, 12);
    const Index f1 = f0 + (n - f0) / L * L;
    T start[4][L];
    for (auto& row : start)
        for (auto& v : row) v = static_cast<T>(std::ldexp(std::abs(u(gen)), expo(gen)));
    T expected[4][L];
    std::memcpy(expected, start, sizeof start);
    for (int r = 0; r < 4; ++r)
        for (Index f = f0; f < f1; ++f)
            expected[r][(f - f0) % L] += std::abs(x[f] - z[r * n + f]);
    auto check = [&](auto kernel, const char* name) {
        T s[4][L];
        std::memcpy(s, start, sizeof s);
        kernel(x.data(), z.data(), z.data() + n, z.data() + 2 * n, z.data() + 3 * n, f0, f1, s);
        for (int r = 0; r < 4; ++r)
            for (int l = 0; l < L; ++l)
                EXPECT_EQ(s[r][l], expected[r][l]) << name << ", n = " << n << ", lane " << l;
    };
    check([](auto... a) { fastfs::kernels::l1_lanes4_any<T>(a...); }, "cloned loop");
#ifdef FASTFS_HAVE_AVX2_FMA
    if (fastfs::kernels::cpu_has_avx2_fma())
        check([](auto... a) { fastfs::kernels::l1_lanes4_fma(a...); }, "FMA version");
#endif
    // Two rows against the same four (l1_rows' kernel): each row's lanes as above, bit for bit.
    std::vector<T> x1(x.size());
    for (Index f = 0; f < n; ++f) x1[f] = f % 3 == 0 ? z[2 * n + f] : static_cast<T>(u(gen));
    T expected1[4][L];
    std::memcpy(expected1, start, sizeof start);
    for (int r = 0; r < 4; ++r)
        for (Index f = f0; f < f1; ++f)
            expected1[r][(f - f0) % L] += std::abs(x1[f] - z[r * n + f]);
    auto check2 = [&](auto kernel, const char* name) {
        T s0[4][L], s1[4][L];
        std::memcpy(s0, start, sizeof s0);
        std::memcpy(s1, start, sizeof s1);
        kernel(x.data(), x1.data(), z.data(), z.data() + n, z.data() + 2 * n, z.data() + 3 * n,
               f0, f1, s0, s1);
        for (int r = 0; r < 4; ++r)
            for (int l = 0; l < L; ++l) {
                EXPECT_EQ(s0[r][l], expected[r][l]) << name << ", n = " << n << ", lane " << l;
                EXPECT_EQ(s1[r][l], expected1[r][l]) << name << ", n = " << n << ", lane " << l;
            }
    };
    check2([](auto... a) { fastfs::kernels::l1_lanes2x4_any<T>(a...); }, "2x4 cloned loop");
#ifdef FASTFS_HAVE_AVX2_FMA
    if (fastfs::kernels::cpu_has_avx2_fma())
        check2([](auto... a) { fastfs::kernels::l1_lanes2x4_fma<T>(a...); }, "2x4 FMA version");
#endif
}

TEST(DistanceKernels, ManhattanLaneSumsAreTheSameInEveryBuild) {
    unsigned seed = 200;
    for (Index n : kLengths) {
        check_l1_lanes4<double>(n, 0, seed++);
        check_l1_lanes4<float>(n, 0, seed++);
        if (n > 8) {
            check_l1_lanes4<double>(n, 4, seed++);
            check_l1_lanes4<float>(n, 8, seed++);
        }
    }
}

// weighted_l1_lists: per feature, the entries at even positions of each row's list chain into
// one fused sum and those at odd positions into another (in row, then list order), and out
// gains their sum. The reference below does exactly that with scalars; lists of every length
// (empty, odd, even), feature counts around the 16-lane body, weights of both signs and values
// over many binades, so that another grouping or order would round differently.
TEST(DistanceKernels, WeightedListSumsFollowTheDocumentedOrder) {
    std::mt19937_64 gen(77);
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-20, 20), len(0, 9);
    auto draw = [&] { return std::ldexp(mant(gen), expo(gen)); };
    for (Index n : {1, 3, 11, 12, 13, 15, 16, 17, 31, 32, 33, 44, 70, 77}) {
        const Index count = 7, rows = 12, ld = n + 3;  // row strides wider than n
        std::vector<double> z(static_cast<std::size_t>(count * ld)),
            q(static_cast<std::size_t>(rows * ld));
        for (auto& v : z) v = draw();
        for (auto& v : q) v = draw();
        q[3] = z[3 % static_cast<std::size_t>(n)];  // a zero difference
        std::vector<Index> start{0};
        std::vector<std::uint8_t> use;
        std::vector<double> c;
        for (Index k = 0; k < count; ++k) {
            const int entries = k == 2 ? 0 : len(gen);
            for (int e = 0; e < entries; ++e) {
                use.push_back(static_cast<std::uint8_t>(gen() % rows));
                c.push_back(draw());
            }
            start.push_back(static_cast<Index>(use.size()));
        }
        std::vector<double> init(static_cast<std::size_t>(n));
        for (auto& v : init) v = draw();
        std::vector<double> expected = init;
        for (Index f = 0; f < n; ++f) {
            double even = 0.0, odd = 0.0;
            for (Index k = 0; k < count; ++k)
                for (Index t = start[k]; t < start[k + 1]; ++t) {
                    const double d = std::abs(q[use[t] * ld + f] - z[k * ld + f]);
                    double& a = (t - start[k]) % 2 == 0 ? even : odd;
                    a = std::fma(c[t], d, a);
                }
            expected[f] += even + odd;
        }
        auto check = [&](auto kernel, const char* name) {
            std::vector<double> out = init;
            kernel(z.data(), ld, count, start.data(), use.data(), c.data(), q.data(), ld, n,
                   out.data());
            for (Index f = 0; f < n; ++f)
                EXPECT_EQ(out[f], expected[f]) << name << ", n = " << n << ", feature " << f;
        };
        check([](auto... a) { fastfs::kernels::weighted_l1_lists_any(a...); }, "portable");
        check([](auto... a) { fastfs::kernels::weighted_l1_lists(a...); }, "dispatched");
#ifdef FASTFS_HAVE_AVX2_FMA
        if (fastfs::kernels::cpu_has_avx2_fma())
            check([](auto... a) { fastfs::kernels::weighted_l1_lists_fma(a...); }, "AVX2 + FMA");
        if (fastfs::kernels::cpu_has_avx512f())
            check([](auto... a) { fastfs::kernels::weighted_l1_lists_avx512(a...); }, "AVX-512");
#endif
    }
}

// The column version of the Manhattan kernel (one query against the samples of a transposed
// copy, eight samples at a time and a scalar tail) gives every distance the bits of l1_dist4's
// fixed lane order, for every feature count's tail and every sample range, including ranges
// that start at an odd sample and end inside a group of eight.
TEST(DistanceKernels, ColumnManhattanDistancesEqualTheRowKernel) {
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-12, 12);
    const Index m = 37;
    for (Index n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 40, 67}) {
        std::vector<double> Zt(static_cast<std::size_t>(n * m)), q(static_cast<std::size_t>(n));
        for (auto& v : Zt) v = std::ldexp(u(gen), expo(gen));
        for (auto& v : q) v = std::ldexp(u(gen), expo(gen));
        Zt[0] = q[0];  // |q_0 - z_0| = 0 for sample 0
        for (const auto& [lo, hi] : {std::pair<Index, Index>{0, m}, {3, 30}, {5, 12}, {9, 9}}) {
            std::vector<double> out(static_cast<std::size_t>(m), -1.0);
            fastfs::kernels::l1_columns(q.data(), Zt.data(), m, n, lo, hi, out.data());
            for (Index j = 0; j < m; ++j) {
                if (j < lo || j >= hi) {
                    EXPECT_EQ(out[static_cast<std::size_t>(j)], -1.0) << "wrote outside the range";
                    continue;
                }
                std::vector<double> zj(static_cast<std::size_t>(n));
                for (Index f = 0; f < n; ++f) zj[f] = Zt[static_cast<std::size_t>(f * m + j)];
                double row[4];
                fastfs::kernels::l1_dist4<double>(q.data(), zj.data(), zj.data(), zj.data(),
                                                  zj.data(), n, row);
                EXPECT_EQ(out[static_cast<std::size_t>(j)], row[0])
                    << "n = " << n << ", sample " << j << ", range " << lo << " .. " << hi;
            }
        }
    }
}

// The mask of the values at most a threshold, for every length up to 64 (the vector body and
// the tail), with ties at the threshold, NaN and infinities: bit l is a[l] <= t.
TEST(DistanceKernels, AtMostMaskMarksEveryValueAtMostTheThreshold) {
    std::mt19937_64 gen(11);
    std::uniform_int_distribution<int> pick(0, 5);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const double values[] = {0.25, 0.5, 0.75, nan, inf, -0.0};
    for (int len = 0; len <= 64; ++len) {
        std::vector<double> a(64);
        for (auto& v : a) v = values[pick(gen)];
        for (double t : {0.5, 0.0, inf, nan}) {
            std::uint64_t expected = 0;
            for (int l = 0; l < len; ++l)
                if (a[static_cast<std::size_t>(l)] <= t) expected |= std::uint64_t{1} << l;
            EXPECT_EQ(fastfs::kernels::at_most_mask(a.data(), len, t), expected)
                << "len = " << len << ", t = " << t;
            EXPECT_EQ(fastfs::kernels::at_most_mask_plain(a.data(), len, t), expected);
        }
    }
}

// The minima of the 16 groups a[16 j + l] over the whole blocks of 16, lowered from the values
// given, the last len % 16 values left out.
TEST(DistanceKernels, LaneMinimaTakeEveryWholeBlockOnly) {
    std::mt19937_64 gen(13);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (Index len : {0, 5, 16, 17, 40, 48, 100}) {
        std::vector<double> a(static_cast<std::size_t>(len));
        for (auto& v : a) v = u(gen);
        double mins[16], expected[16];
        for (int l = 0; l < 16; ++l) mins[l] = expected[l] = l == 3 ? -1.0 : 2.0;
        for (Index j = 0; j + 16 <= len; j += 16)
            for (int l = 0; l < 16; ++l)
                expected[l] = std::min(expected[l], a[static_cast<std::size_t>(j + l)]);
        fastfs::kernels::lane_minima16(a.data(), len, mins);
        for (int l = 0; l < 16; ++l) EXPECT_EQ(mins[l], expected[l]) << "len " << len << " lane " << l;
    }
}

// class_minima: the smallest value of the query's class and of the others (NaN skipped, +inf
// for an empty side); gather_not_above: every index whose value is at most t or NaN, in
// order, by the dispatched kernel, the plain loop and (where the CPU has it) the AVX2 one;
// lengths around the eight-wide vectors.
TEST(DistanceKernels, ClassMinimaAndGatherTakeEveryValue) {
    std::mt19937_64 gen(19);
    std::uniform_int_distribution<int> pick(0, 6), cls(0, 2);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const float values[] = {0.25f, 0.5f, 0.75f, nan, inf, -0.0f, 3e-39f};
    for (Index len = 0; len <= 41; ++len) {
        std::vector<float> a(static_cast<std::size_t>(len) + 8);
        std::vector<std::int64_t> codes(static_cast<std::size_t>(len) + 1);
        for (Index j = 0; j < len; ++j) {
            a[static_cast<std::size_t>(j)] = values[pick(gen)];
            codes[static_cast<std::size_t>(j)] = cls(gen);
        }
        for (std::int64_t own : {0, 1, 5}) {
            float want_same = inf, want_other = inf;
            for (Index j = 0; j < len; ++j) {
                const float v = a[static_cast<std::size_t>(j)];
                float& w = codes[static_cast<std::size_t>(j)] == own ? want_same : want_other;
                if (v < w) w = v;
            }
            float same = 1.0f, other = 1.0f;
            fastfs::kernels::class_minima(a.data(), codes.data(), len, own, same, other);
            EXPECT_EQ(same, want_same) << "len " << len << ", own " << own;
            EXPECT_EQ(other, want_other) << "len " << len << ", own " << own;
        }
        for (float t : {0.5f, 0.0f, inf, -inf}) {
            std::vector<std::uint32_t> want;
            for (Index j = 0; j < len; ++j) {
                const float v = a[static_cast<std::size_t>(j)];
                if (v <= t || std::isnan(v)) want.push_back(static_cast<std::uint32_t>(j));
            }
            auto check = [&](auto&& gather, const char* which) {
                std::vector<std::uint32_t> got(static_cast<std::size_t>(len) + 8);
                got.resize(static_cast<std::size_t>(gather(got.data())));
                EXPECT_EQ(got, want) << which << ", len " << len << ", t " << t;
            };
            check([&](std::uint32_t* out) { return fastfs::kernels::gather_not_above(a.data(), len, t, out); },
                  "dispatched");
            check([&](std::uint32_t* out) {
                return fastfs::kernels::gather_not_above_plain(a.data(), 0, len, t, out); }, "plain");
#ifdef FASTFS_HAVE_AVX2_FMA
            if (fastfs::kernels::cpu_has_avx2_fma())
                check([&](std::uint32_t* out) {
                    return fastfs::kernels::gather_not_above_avx2(a.data(), len, t, out); }, "avx2");
#endif
        }
    }
}

// A minimum over nothing, or over infinities only, is +inf in every kernel that folds one
// (callers read +inf as "no neighbour"; an OpenMP min reduction under Clang starts at the
// largest finite value, which these kernels must never return, whether they reduce in lanes or
// with FASTFS_MIN).
template <class T>
void check_infinite_minima() {
    const T inf = std::numeric_limits<T>::infinity();
    for (Index n = 0; n <= 19; ++n) {
        std::vector<T> row(static_cast<std::size_t>(n) + 4, inf), col(row.size(), T(1));
        std::vector<T> r1 = row, r2 = row, r3 = row, colmin(row.size(), inf);
        std::vector<std::int32_t> idx(row.size());
        for (std::size_t j = 0; j < idx.size(); ++j) idx[j] = static_cast<std::int32_t>(j);
        EXPECT_EQ(fastfs::kernels::block_min(row.data(), 0, n), inf) << n;
        EXPECT_EQ((fastfs::kernels::row_min<1, T>(row.data(), col.data(), T(0.5), 0, n)), inf) << n;
        EXPECT_EQ((fastfs::kernels::row_min<0, T>(row.data(), col.data(), T(0.5), 0, n)), inf) << n;
        EXPECT_EQ((fastfs::kernels::kept_min<1, T>(row.data(), idx.data(), static_cast<int>(n),
                                                   col.data(), T(0.5))),
                  inf) << n;
        EXPECT_EQ((fastfs::kernels::scan_row<1, T>(row.data(), col.data(), T(0.5), 0, n,
                                                   colmin.data())),
                  inf) << n;
        T best[4] = {inf, inf, inf, inf};
        const T xa[4] = {T(0.5), T(0.5), T(0.5), T(0.5)};
        fastfs::kernels::scan_rows4<0, 0, T>(row.data(), r1.data(), r2.data(), r3.data(), xa,
                                             col.data(), 0, n, colmin.data(), best);
        for (T v : best) EXPECT_EQ(v, inf) << n;
        for (Index b = 0; b < n; ++b) EXPECT_EQ(colmin[static_cast<std::size_t>(b)], inf) << n;
    }
}

TEST(DistanceKernels, MinimaOfNothingOrInfinitiesAreInfinite) {
    check_infinite_minima<double>();
    check_infinite_minima<float>();
}

// The minima kept in lanes (kernels::in_lanes) against one scalar loop of min_of in index
// order: a minimum is exact, so every kernel must give the loop's bits whatever its lanes,
// with NaN skipped, infinities, zeros and subnormal values, from offsets that leave partial
// blocks at both ends; scan_rows4 also from finite starting minima and with its deferred
// update (P = +1 and -1), whose rows must hold update_row's values afterwards.
template <class T>
T mixed_value(std::mt19937_64& gen) {
    std::uniform_real_distribution<double> u(0.0, 4.0);
    switch (static_cast<int>(u(gen) * 4.0)) {
    case 0: return std::numeric_limits<T>::quiet_NaN();
    case 1: return std::numeric_limits<T>::infinity();
    case 2: return T(0);
    case 3: return std::numeric_limits<T>::denorm_min() * T(3);
    default: return static_cast<T>(u(gen));
    }
}

template <int S, int P, class T>
void check_lane_minima(unsigned seed) {
    using fastfs::kernels::min_of;
    using fastfs::kernels::shifted;
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.0, 2.0);
    const T inf = std::numeric_limits<T>::infinity();
    for (Index len = 0; len <= 75; len += (len < 40 ? 1 : 7)) {
        for (Index lo : {Index{0}, Index{3}}) {
            const Index hi = lo + len;
            const std::size_t size = static_cast<std::size_t>(hi) + 5;
            std::vector<T> rows[4], col(size), pcol(size), colmin(size);
            for (auto& r : rows) {
                r.resize(size);
                for (auto& v : r) v = u(gen) < 0.3 ? mixed_value<T>(gen) : static_cast<T>(u(gen));
            }
            for (auto& v : col) v = static_cast<T>(u(gen));
            for (auto& v : pcol) v = static_cast<T>(u(gen));
            for (auto& v : colmin) v = u(gen) < 0.2 ? mixed_value<T>(gen) : static_cast<T>(u(gen) + 1.0);
            const T xa[4] = {T(0.25), T(1.5), T(0.75), T(1)};
            const T pa[4] = {T(1), T(0.5), T(0), T(2)};
            const std::string where = "len " + std::to_string(len) + " lo " + std::to_string(lo);

            // row_min, block_min, scan_row and kept_min on row 0.
            T want_row = inf, want_block = inf, want_kept = inf;
            std::vector<T> want_col = colmin;
            std::vector<std::int32_t> idx(static_cast<std::size_t>(len));
            std::vector<T> kept(idx.size());
            for (Index b = lo; b < hi; ++b) {
                const std::size_t i = static_cast<std::size_t>(b);
                const T d = xa[0] - col[i];
                const T v = shifted<S>(rows[0][i], d * d);
                want_row = min_of(want_row, v);
                want_col[i] = min_of(want_col[i], v);
                want_block = min_of(want_block, rows[0][i]);
                const std::size_t j = static_cast<std::size_t>(b - lo);
                idx[j] = static_cast<std::int32_t>(hi - 1 - (b - lo));  // read backwards
                kept[j] = rows[1][j];
                const T e = xa[0] - col[static_cast<std::size_t>(idx[j])];
                want_kept = min_of(want_kept, shifted<S>(kept[j], e * e));
            }
            EXPECT_EQ((fastfs::kernels::row_min<S, T>(rows[0].data(), col.data(), xa[0], lo, hi)),
                      want_row) << where;
            EXPECT_EQ(fastfs::kernels::block_min(rows[0].data(), lo, hi), want_block) << where;
            EXPECT_EQ((fastfs::kernels::kept_min<S, T>(kept.data(), idx.data(),
                                                       static_cast<int>(len), col.data(), xa[0])),
                      want_kept) << where;
            std::vector<T> got_col = colmin;
            EXPECT_EQ((fastfs::kernels::scan_row<S, T>(rows[0].data(), col.data(), xa[0], lo, hi,
                                                       got_col.data())),
                      want_row) << where;
            for (std::size_t i = 0; i < size; ++i)
                EXPECT_EQ(std::memcmp(&got_col[i], &want_col[i], sizeof(T)), 0) << where << " b " << i;

            // scan_rows4, starting minima inf, a finite value, 0 and inf.
            T want_best[4] = {inf, T(0.5), T(0), inf};
            std::vector<T> want_rows[4] = {rows[0], rows[1], rows[2], rows[3]};
            want_col = colmin;
            for (Index b = lo; b < hi; ++b) {
                const std::size_t i = static_cast<std::size_t>(b);
                T v[4];
                for (int r = 0; r < 4; ++r) {
                    T w = want_rows[r][i];
                    if (P != 0) {
                        const T e = pa[r] - pcol[i];
                        w = shifted<P>(w, e * e);
                        want_rows[r][i] = w;
                    }
                    const T d = xa[r] - col[i];
                    v[r] = shifted<S>(w, d * d);
                    want_best[r] = min_of(want_best[r], v[r]);
                }
                want_col[i] = min_of(want_col[i], min_of(min_of(v[0], v[1]), min_of(v[2], v[3])));
            }
            T best[4] = {inf, T(0.5), T(0), inf};
            got_col = colmin;
            std::vector<T> got_rows[4] = {rows[0], rows[1], rows[2], rows[3]};
            fastfs::kernels::scan_rows4<S, P, T>(got_rows[0].data(), got_rows[1].data(),
                                                 got_rows[2].data(), got_rows[3].data(), xa,
                                                 col.data(), lo, hi, got_col.data(), best, pa,
                                                 pcol.data());
            for (int r = 0; r < 4; ++r) {
                EXPECT_EQ(best[r], want_best[r]) << where << " row " << r;
                EXPECT_EQ(std::memcmp(got_rows[r].data(), want_rows[r].data(), size * sizeof(T)), 0)
                    << where << " row " << r;
            }
            for (std::size_t i = 0; i < size; ++i)
                EXPECT_EQ(std::memcmp(&got_col[i], &want_col[i], sizeof(T)), 0) << where << " b " << i;
        }
    }
}

TEST(DistanceKernels, LaneMinimaEqualTheScalarLoop) {
    check_lane_minima<1, 0, double>(31);
    check_lane_minima<-1, 0, double>(32);
    check_lane_minima<0, 0, double>(33);
    check_lane_minima<1, 1, double>(34);
    check_lane_minima<-1, -1, double>(35);
    check_lane_minima<1, 0, float>(36);
    check_lane_minima<-1, 1, float>(37);
    check_lane_minima<1, -1, float>(38);
}

// round_row (the float32 copy of a state row and max(0, its largest entry), NaN skipped) and
// max_abs_difference (max_f |x_f - c_f|, its maxima kept in lanes), against scalar loops.
TEST(DistanceKernels, LaneMaximaEqualTheScalarLoop) {
    std::mt19937_64 gen(41);
    std::uniform_real_distribution<double> u(-3.0, 1.0);
    for (Index len = 0; len <= 75; len += (len < 40 ? 1 : 7)) {
        for (Index lo : {Index{0}, Index{5}}) {
            const Index hi = lo + len;
            const std::size_t size = static_cast<std::size_t>(hi) + 3;
            std::vector<double> src(size), c(size);
            for (auto& v : src) v = u(gen) < -2.6 ? mixed_value<double>(gen) : u(gen);
            for (auto& v : c) v = u(gen);
            std::vector<float> out(size, -1.0f), want_out = out;
            double want_top = 0.0;
            for (Index b = lo; b < hi; ++b) {
                const std::size_t i = static_cast<std::size_t>(b);
                want_out[i] = static_cast<float>(src[i]);
                want_top = want_top < src[i] ? src[i] : want_top;
            }
            const std::string where = "len " + std::to_string(len) + " lo " + std::to_string(lo);
            EXPECT_EQ((fastfs::kernels::round_row<double, float>(src.data(), out.data(), lo, hi)),
                      want_top) << where;
            EXPECT_EQ(std::memcmp(out.data(), want_out.data(), size * sizeof(float)), 0) << where;
            EXPECT_EQ(fastfs::kernels::lane_max0(lo, hi, [&](Index b) {
                          return src[static_cast<std::size_t>(b)];
                      }),
                      want_top)
                << where;

            std::vector<float> x(static_cast<std::size_t>(len));
            double want_abs = 0.0;
            for (std::size_t f = 0; f < x.size(); ++f) {
                x[f] = static_cast<float>(u(gen) * 100.0);
                want_abs = std::max(want_abs, std::abs(static_cast<double>(x[f]) - c[f]));
            }
            EXPECT_EQ(fastfs::kernels::max_abs_difference(x.data(), c.data(), len), want_abs) << where;
        }
    }
}

TEST(DistanceKernels, LowestBitIsThePlaceOfTheLowestSetBit) {
    for (int place = 0; place < 64; ++place) {
        const std::uint64_t bit = std::uint64_t{1} << place;
        EXPECT_EQ(fastfs::kernels::lowest_bit(bit), place);
        EXPECT_EQ(fastfs::kernels::lowest_bit(bit | (bit << 1) | (std::uint64_t{1} << 63)), place);
    }
}

// The features the Gram expansion must refresh (neighbours/gram_state.hpp): every feature whose
// ratio w2 / rho left [1 - drift, 1 + drift], and every feature of reference 0 whose weight is
// not 0, in increasing order; lo and hi span the ratios of the others (1 for rho = w2 = 0).
// Lengths around the kernel's blocks of 256, blocks where nothing moved, ratios on the edges.
TEST(GramKernels, DriftedFeaturesAreExactlyTheFeaturesOutsideTheTolerance) {
    std::mt19937_64 gen(17);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double drift = 0.02;
    for (Index n : {1, 7, 8, 255, 256, 257, 700, 1031}) {
        for (int trial = 0; trial < 6; ++trial) {
            std::vector<double> w2(static_cast<std::size_t>(n)), rho(w2.size()), inv(w2.size());
            for (std::size_t f = 0; f < w2.size(); ++f) {
                const int kind = static_cast<int>(u(gen) * 6.0);
                rho[f] = kind == 0 ? 0.0 : 0.5 + u(gen);
                inv[f] = rho[f] > 0.0 ? 1.0 / rho[f] : 0.0;
                // Unmoved, at most 2% off, on the edge, moved, zero; trial 0 moves nothing.
                const double r = trial == 0 ? 1.0 + drift * (2.0 * u(gen) - 1.0)
                                 : kind == 1 ? 1.0
                                 : kind == 2 ? 1.0 + drift * (2.0 * u(gen) - 1.0)
                                 : kind == 3 ? 1.0 - drift
                                 : kind == 4 ? 1.0 + 4.0 * drift * (u(gen) - 0.5) : 0.0;
                w2[f] = (kind == 0 && trial % 2 == 0) ? 0.0 : rho[f] == 0.0 ? u(gen) : rho[f] * r;
                if (trial == 0 && kind == 0) w2[f] = 0.0;
            }
            std::vector<Index> expected;
            double elo = 1.0, ehi = 1.0;
            for (std::size_t f = 0; f < w2.size(); ++f) {
                const double q = w2[f] * inv[f];
                const bool out = rho[f] == 0.0 ? w2[f] != 0.0 : !(std::abs(q - 1.0) <= drift);
                if (out) expected.push_back(static_cast<Index>(f));
                if (!out && rho[f] != 0.0) elo = std::min(elo, q), ehi = std::max(ehi, q);
            }
            std::vector<Index> moved(w2.size(), -1);
            double lo = 1.0, hi = 1.0;
            const Index count = fastfs::kernels::drifted_features(
                w2.data(), inv.data(), rho.data(), n, drift, moved.data(), lo, hi);
            moved.resize(static_cast<std::size_t>(count));
            EXPECT_EQ(moved, expected) << "n " << n << " trial " << trial;
            EXPECT_EQ(lo, elo) << "n " << n << " trial " << trial;
            EXPECT_EQ(hi, ehi) << "n " << n << " trial " << trial;
            if (trial == 0) {
                EXPECT_EQ(count, 0);
            }
        }
    }
}

// A query's multipliers v_f = float(-2 w2_f z_f) of z_f = float(x_f - centre_f), bit for bit,
// and its own term sum_f w2_f z_f^2 within the rounding of any order of the sum.
TEST(GramKernels, CentredQueryTermsConvertEachFeatureAsTheScreenDoes) {
    std::mt19937_64 gen(19);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (Index n : {1, 9, 64, 1001}) {
        std::vector<double> x(static_cast<std::size_t>(n)), c(x.size()), w2(x.size());
        for (std::size_t f = 0; f < x.size(); ++f) {
            x[f] = std::ldexp(u(gen), static_cast<int>(u(gen) * 10.0));
            c[f] = 0.3 * u(gen);
            w2[f] = std::abs(u(gen));
        }
        std::vector<float> v(x.size());
        const double ai = fastfs::kernels::centred_query_terms(x.data(), c.data(), w2.data(), n,
                                                               v.data());
        double sum = 0.0, abs_sum = 0.0;
        for (std::size_t f = 0; f < x.size(); ++f) {
            const double z = static_cast<double>(static_cast<float>(x[f] - c[f]));
            EXPECT_EQ(v[f], static_cast<float>(-2.0 * w2[f] * z)) << "feature " << f;
            sum += w2[f] * (z * z);
            abs_sum += w2[f] * (z * z);
        }
        EXPECT_NEAR(ai, sum, 2.0 * static_cast<double>(n) * 0x1.0p-53 * abs_sum) << "n " << n;
    }
}

#ifdef FASTFS_HAVE_AVX2_FMA
namespace {

// The value of IEEE half-precision bits h (finite), decoded by hand.
double half_value(std::uint16_t h) {
    const int e = (h >> 10) & 31, mant = h & 1023;
    const double v = e == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, e - 25);
    return (h >> 15) ? -v : v;
}

// y rounded to the nearest half-precision value, ties to even (|y| < 65520): the spacing of
// the halves is 2^-24 below 2^-14 and 2^(floor(log2 |y|) - 10) above.
double nearest_half(double y) {
    const double a = std::abs(y);
    const double ulp = a < 0x1.0p-14 ? 0x1.0p-24 : std::ldexp(1.0, std::ilogb(a) - 10);
    return std::nearbyint(y / ulp) * ulp;
}

// Random halves spread over the whole range (normal and subnormal), as bits.
std::vector<std::uint16_t> random_halves(std::size_t count, std::mt19937_64& gen) {
    std::uniform_int_distribution<int> bits(0, 0xffff);
    std::vector<std::uint16_t> h(count);
    for (auto& v : h) {
        do v = static_cast<std::uint16_t>(bits(gen));
        while (((v >> 10) & 31) == 31);  // no inf or NaN
    }
    return h;
}

}  // namespace

// Sweeps over columns of halves give, bit for bit, what the same sweeps give over the same
// values in float32, and both the plain definition (start float(scale init_j), then one fused
// multiply-add per column in order), for every tail of the sixteen-sample loop.
TEST(GramKernels, HalfColumnsSweepAsTheirFloatValues) {
    if (!fastfs::kernels::cpu_has_f16c()) GTEST_SKIP() << "no F16C";
    std::mt19937_64 gen(23);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const Index m = 53;
    constexpr int F = 8;
    const auto h = random_halves(static_cast<std::size_t>(F * m), gen);
    std::vector<float> c32(h.size());
    for (std::size_t r = 0; r < h.size(); ++r) c32[r] = static_cast<float>(half_value(h[r]));
    std::vector<float> v(F), vq(4 * F);
    for (auto& x : v) x = static_cast<float>(std::ldexp(u(gen), -8));
    for (auto& x : vq) x = static_cast<float>(std::ldexp(u(gen), -8));
    std::vector<double> init(static_cast<std::size_t>(m));
    for (auto& x : init) x = 1e3 * u(gen);
    const double scale = 0.75;
    const std::uint16_t* hc[F];
    const float* fc[F];
    for (int q = 0; q < F; ++q) {
        hc[q] = h.data() + q * m;
        fc[q] = c32.data() + q * m;
    }
    for (Index lo : {0, 3}) {
        for (Index hi = lo; hi <= m; ++hi) {
            std::vector<float> a(static_cast<std::size_t>(m), 7.0f), b = a, want = a;
            fastfs::kernels::dot_columns_fma<F, true>(hc, v.data(), init.data(), scale, lo, hi, a.data());
            fastfs::kernels::dot_columns_fma<3, false>(hc, v.data(), init.data(), scale, lo, hi, a.data());
            fastfs::kernels::dot_columns_fma<F, true>(fc, v.data(), init.data(), scale, lo, hi, b.data());
            fastfs::kernels::dot_columns_fma<3, false>(fc, v.data(), init.data(), scale, lo, hi, b.data());
            for (Index j = lo; j < hi; ++j) {
                float acc = static_cast<float>(scale * init[static_cast<std::size_t>(j)]);
                for (int q = 0; q < F; ++q) acc = std::fma(v[q], c32[static_cast<std::size_t>(q * m + j)], acc);
                for (int q = 0; q < 3; ++q) acc = std::fma(v[q], c32[static_cast<std::size_t>(q * m + j)], acc);
                want[static_cast<std::size_t>(j)] = acc;
            }
            EXPECT_EQ(a, want) << "samples " << lo << " to " << hi;
            EXPECT_EQ(b, want) << "samples " << lo << " to " << hi;

            // Four queries at once, features [0, 5) then [5, 8).
            std::vector<float> o(static_cast<std::size_t>(4 * m), 7.0f), o32 = o, w4 = o;
            float* op[4];
            float* op32[4];
            for (int q = 0; q < 4; ++q) {
                op[q] = o.data() + q * m;
                op32[q] = o32.data() + q * m;
            }
            fastfs::kernels::dot_columns_xq_fma<4, true>(h.data(), m, 0, 5, vq.data(), init.data(), scale, lo, hi, op);
            fastfs::kernels::dot_columns_xq_fma<4, false>(h.data(), m, 5, F, vq.data(), init.data(), scale, lo, hi, op);
            fastfs::kernels::dot_columns_xq_fma<4, true>(c32.data(), m, 0, 5, vq.data(), init.data(), scale, lo, hi, op32);
            fastfs::kernels::dot_columns_xq_fma<4, false>(c32.data(), m, 5, F, vq.data(), init.data(), scale, lo, hi, op32);
            for (int q = 0; q < 4; ++q)
                for (Index j = lo; j < hi; ++j) {
                    float acc = static_cast<float>(scale * init[static_cast<std::size_t>(j)]);
                    for (int f = 0; f < F; ++f)
                        acc = std::fma(vq[static_cast<std::size_t>(4 * f + q)], c32[static_cast<std::size_t>(f * m + j)], acc);
                    w4[static_cast<std::size_t>(q * m + j)] = acc;
                }
            EXPECT_EQ(o, w4) << "four queries, samples " << lo << " to " << hi;
            EXPECT_EQ(o32, w4) << "four queries, samples " << lo << " to " << hi;
        }
    }
}

// The conversion of the half-precision copy: float((x - centre) scale) rounded to the nearest
// half (ties to even), the bits and the value consistent, for float and double rows, on values
// that are ties, subnormal halves, and every tail of the vector loop.
TEST(GramKernels, CentredHalvesRoundToTheNearestHalf) {
    if (!fastfs::kernels::cpu_has_f16c()) GTEST_SKIP() << "no F16C";
    std::mt19937_64 gen(29);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-30, 14);
    for (Index n : {1, 7, 8, 9, 16, 77}) {
        std::vector<double> x(static_cast<std::size_t>(n)), c(x.size());
        for (std::size_t f = 0; f < x.size(); ++f) {
            c[f] = f % 3 == 0 ? 0.0 : 0.25 * u(gen);
            switch (f % 4) {
                case 0: x[f] = std::ldexp(u(gen), expo(gen)); break;
                // Exactly halfway between two halves (after the scaling by 2^-2 below).
                case 1: x[f] = c[f] + std::ldexp(2049.0 + 2.0 * (f % 8 == 1), -9); break;
                case 2: x[f] = c[f] + std::ldexp(u(gen), -22); break;  // subnormal halves
                default: x[f] = c[f] - 1.0 - std::ldexp(1.0, -12); break;
            }
        }
        const double scale = 0.25;
        std::vector<std::uint16_t> bits(x.size());
        std::vector<float> out(x.size()), outf(x.size());
        fastfs::kernels::centred_halves(x.data(), c.data(), scale, n, bits.data(), out.data());
        std::vector<float> xf(x.begin(), x.end());
        fastfs::kernels::centred_halves(xf.data(), c.data(), scale, n, nullptr, outf.data());
        for (std::size_t f = 0; f < x.size(); ++f) {
            const double y = static_cast<float>((x[f] - c[f]) * scale);
            EXPECT_EQ(static_cast<double>(out[f]), nearest_half(y)) << "n " << n << ", feature " << f;
            EXPECT_EQ(half_value(bits[f]), static_cast<double>(out[f])) << "n " << n << ", feature " << f;
            const double yf = static_cast<float>((static_cast<double>(xf[f]) - c[f]) * scale);
            EXPECT_EQ(static_cast<double>(outf[f]), nearest_half(yf)) << "float row, n " << n << ", feature " << f;
        }
    }
}

// a_j += d h_j^2 from halves: add_scaled_squares' (and add_scaled_squares4's) values on the
// same values in float32, bit for bit.
TEST(GramKernels, HalfSquaresAddAsTheirFloatValues) {
    if (!fastfs::kernels::cpu_has_f16c()) GTEST_SKIP() << "no F16C";
    std::mt19937_64 gen(31);
    for (Index m : {1, 3, 4, 5, 38}) {
        const auto h = random_halves(static_cast<std::size_t>(4 * m), gen);
        std::vector<float> c(h.size());
        for (std::size_t r = 0; r < h.size(); ++r) c[r] = static_cast<float>(half_value(h[r]));
        const double d[4] = {0.3, -1e-3, 7.5, 1e-9};
        std::vector<double> a(static_cast<std::size_t>(m), 0.1), b = a, a4 = a, b4 = a;
        fastfs::kernels::add_scaled_squares(h.data(), d[0], m, a.data());
        fastfs::kernels::add_scaled_squares(c.data(), d[0], m, b.data());
        EXPECT_EQ(a, b) << "m " << m;
        fastfs::kernels::add_scaled_squares4(h.data(), h.data() + m, h.data() + 2 * m, h.data() + 3 * m,
                                                  d[0], d[1], d[2], d[3], m, a4.data());
        fastfs::kernels::add_scaled_squares4(c.data(), c.data() + m, c.data() + 2 * m, c.data() + 3 * m,
                                             d[0], d[1], d[2], d[3], m, b4.data());
        EXPECT_EQ(a4, b4) << "m " << m;
    }
}
#endif
