// relief_mixed.hpp, the Relief family on discrete / mixed features, missing values and
// continuous targets: its distance forms and scores against brute force written here from the
// definitions in the header, and the thread-count invariance of the sums.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fastfs/weights/relief_mixed.hpp"

using fastfs::Index;
using fastfs::MixedOptions;
using fastfs::MixedRule;
using Mat = fastfs::RowMatrix<double>;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Mat small_data() {
    // features 0, 1 discrete (0/1/2), 2 and 3 continuous
    Mat X(6, 4);
    X << 0, 1, 0.5, 3.0,
         1, 1, 1.5, 2.0,
         2, 0, 0.0, 7.0,
         0, 2, 2.0, 1.0,
         1, 0, 1.0, 4.0,
         2, 2, 0.25, 5.0;
    return X;
}

MixedOptions options(MixedRule rule, std::vector<std::int64_t> codes) {
    MixedOptions o;
    o.rule = rule;
    o.discrete = {1, 1, 0, 0};
    o.codes = std::move(codes);
    o.k = 100;
    return o;
}

// The distance of the header, written out.
double brute_distance(const Mat& X, Index a, Index b, bool missing) {
    const double range2 = 2.0, range3 = 6.0;  // of small_data's continuous columns
    double mism = 0.0, cont = 0.0, present = 0.0;
    for (Index f = 0; f < 4; ++f) {
        const double u = X(a, f), v = X(b, f);
        if (std::isnan(u) || std::isnan(v)) continue;
        present += 1.0;
        if (f < 2) mism += u != v ? 1.0 : 0.0;
        else cont += std::abs(u - v) / (f == 2 ? range2 : range3);
    }
    if (missing) return (mism + cont) / present;
    return mism / 2.0 * 4.0 + cont;
}

}  // namespace

TEST(ReliefMixed, DistanceFormsMatchTheDefinition) {
    Mat X = small_data();
    const MixedOptions o = options(MixedRule::relieff, {0, 0, 0, 1, 1, 1});
    const fastfs::MatrixRef<double> ref(X);
    const fastfs::MixedRelief<double> D(ref, o);
    for (Index a = 0; a < 6; ++a)
        for (Index b = 0; b < 6; ++b)
            if (a != b) {
                EXPECT_NEAR(D.distance(a, b), brute_distance(X, a, b, false), 1e-15);
            }
    Mat Xm = X;
    Xm(1, 0) = kNaN;
    Xm(4, 2) = kNaN;
    const fastfs::MatrixRef<double> refm(Xm);
    const fastfs::MixedRelief<double> Dm(refm, o);
    ASSERT_TRUE(Dm.missing());
    for (Index a = 0; a < 6; ++a)
        for (Index b = 0; b < 6; ++b)
            if (a != b) {
                EXPECT_NEAR(Dm.distance(a, b), brute_distance(Xm, a, b, true), 1e-15);
            }
}

TEST(ReliefMixed, ReliefFWithEveryNeighbourMatchesBruteForce) {
    // k larger than every class: each sample's neighbours are all others; two classes, so the
    // contribution is -mean hit diff + mean miss diff (ramp: |x - z| > sd gives 1)
    const Mat X = small_data();
    const std::vector<std::int64_t> codes = {0, 0, 0, 1, 1, 1};
    const MixedOptions o = options(MixedRule::relieff, codes);
    const std::vector<double> w = fastfs::relief_mixed(fastfs::MatrixRef<double>(X), o, 1);
    std::vector<double> sd(4, 0.0), range = {0, 0, 2.0, 6.0};
    for (Index f = 2; f < 4; ++f) {
        double mean = 0.0, var = 0.0;
        for (Index i = 0; i < 6; ++i) mean += X(i, f) / 6.0;
        for (Index i = 0; i < 6; ++i) var += (X(i, f) - mean) * (X(i, f) - mean) / 6.0;
        sd[static_cast<std::size_t>(f)] = std::sqrt(var);
    }
    for (Index f = 0; f < 4; ++f) {
        double expected = 0.0;
        for (Index i = 0; i < 6; ++i) {
            double hit = 0.0, miss = 0.0, h = 0.0, mm = 0.0;
            for (Index j = 0; j < 6; ++j) {
                if (j == i) continue;
                double d;
                const double raw = std::abs(X(i, f) - X(j, f));
                if (f < 2) d = raw != 0.0 ? 1.0 : 0.0;
                else d = raw > sd[static_cast<std::size_t>(f)] ? 1.0 : raw / range[static_cast<std::size_t>(f)];
                if (codes[static_cast<std::size_t>(j)] == codes[static_cast<std::size_t>(i)]) { hit += d; h += 1.0; }
                else { miss += d; mm += 1.0; }
            }
            expected += (-hit / h + miss / mm) / 6.0;
        }
        EXPECT_NEAR(w[static_cast<std::size_t>(f)], expected, 1e-14) << "feature " << f;
    }
}

TEST(ReliefMixed, SumsDoNotDependOnTheThreadCount) {
    Mat X(40, 5);
    std::vector<std::int64_t> codes(40);
    for (Index i = 0; i < 40; ++i) {
        for (Index f = 0; f < 5; ++f) X(i, f) = static_cast<double>((i * 7 + f * 3) % (f < 3 ? 3 : 11));
        codes[static_cast<std::size_t>(i)] = (i * 5) % 3;
    }
    X(3, 1) = kNaN;
    X(17, 4) = kNaN;
    for (MixedRule rule : {MixedRule::relieff, MixedRule::surf, MixedRule::surf_star,
                           MixedRule::multisurf, MixedRule::multisurf_star}) {
        MixedOptions o;
        o.rule = rule;
        o.k = 3;
        o.discrete = {1, 1, 1, 0, 0};
        o.codes = codes;
        const fastfs::MatrixRef<double> ref(X);
        const auto a = fastfs::relief_mixed(ref, o, 1);
        const auto b = fastfs::relief_mixed(ref, o, 3);
        for (std::size_t f = 0; f < a.size(); ++f) {
            EXPECT_TRUE(std::isfinite(a[f]));
            EXPECT_EQ(a[f], b[f]);
        }
        // over every sample the pass reads the kept pair distances; a range of queries
        // computes them (the same values, so the same sums up to the order of the additions)
        const auto whole = fastfs::relief_mixed_sums(ref, o, 0, 40, 2);
        const auto head = fastfs::relief_mixed_sums(ref, o, 0, 13, 1);
        const auto tail = fastfs::relief_mixed_sums(ref, o, 13, 40, 2);
        for (std::size_t f = 0; f < whole.size(); ++f)
            EXPECT_NEAR(whole[f], head[f] + tail[f], 1e-12 * (1.0 + std::abs(whole[f])));
    }
}

// The radius rules on data without missing values take the cached pass (every pair's distance
// once, a pair's two contributions as one) unless a callback asks for the per-sample pass: the
// two agree to rounding, every distance equals distance() bit for bit whichever way the rows
// are batched, and the cached pass does not depend on the thread count. Mixed, discrete-only
// and continuous-only features, class labels and a continuous target, distance weights, sample
// counts across the pass's block of 64 and rows wider than l1_rows' feature block.
TEST(ReliefMixed, CachedPairPassEqualsTheSampleBySamplePass) {
    int cases = 0;
    for (Index m : {70, 131}) {
        for (Index n : {7, 1100}) {
            Mat X(m, n);
            std::vector<std::int64_t> codes(static_cast<std::size_t>(m));
            std::vector<double> y(static_cast<std::size_t>(m));
            std::uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(m + 3 * n);
            auto uniform = [&] {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                return static_cast<double>(state >> 11) * 0x1.0p-53;
            };
            for (Index i = 0; i < m; ++i) {
                for (Index f = 0; f < n; ++f) X(i, f) = f % 3 == 0 ? std::floor(3.0 * uniform()) : uniform() * 5.0 - 1.0;
                codes[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(std::floor(3.0 * uniform()));
                y[static_cast<std::size_t>(i)] = std::floor(10.0 * uniform());  // ties
            }
            for (int kinds = 0; kinds < 3; ++kinds) {  // mixed, discrete only, continuous only
                for (bool continuous_target : {false, true}) {
                    for (bool weighted : {false, true}) {
                        if (kinds == 2 && !continuous_target) continue;  // relief_radius.hpp's case
                        MixedOptions o;
                        o.discrete.resize(static_cast<std::size_t>(n));
                        for (Index f = 0; f < n; ++f)
                            o.discrete[static_cast<std::size_t>(f)] = kinds == 1 || (kinds == 0 && f % 3 == 0);
                        if (continuous_target) {
                            o.y = y;
                            o.radius = 2.5;
                        } else {
                            o.codes = codes;
                        }
                        if (weighted)
                            for (Index f = 0; f < n; ++f) o.distance_weights.push_back(0.5 + static_cast<double>(f % 4));
                        const fastfs::MatrixRef<double> ref(X);
                        const fastfs::MixedRelief<double> D(ref, o);
                        Mat rows(16, m);
                        D.row_distances(5, 16, rows, 2);
                        for (Index r = 0; r < 16; ++r)
                            for (Index j = 2; j < m; ++j) ASSERT_EQ(rows(r, j), D.distance(5 + r, j));
                        for (MixedRule rule : {MixedRule::surf, MixedRule::surf_star, MixedRule::multisurf,
                                               MixedRule::multisurf_star}) {
                            o.rule = rule;
                            SCOPED_TRACE("m " + std::to_string(m) + ", n " + std::to_string(n) + ", kinds " +
                                         std::to_string(kinds) + ", continuous target " +
                                         std::to_string(continuous_target) + ", weighted " +
                                         std::to_string(weighted) + ", rule " + std::to_string(static_cast<int>(rule)));
                            const auto cached = fastfs::relief_mixed(ref, o, 1);
                            const auto cached3 = fastfs::relief_mixed(ref, o, 3);
                            Index seen = 0;
                            const fastfs::ProgressHook each = [&](const fastfs::Progress& p) {
                                seen = p.done;
                                return false;  // go on
                            };
                            const auto plain = fastfs::relief_mixed(ref, o, 2, {}, each);
                            ASSERT_EQ(seen, m);  // the per-sample pass ran
                            double top = 0.0;
                            for (double v : plain) top = std::max(top, std::abs(v));
                            ASSERT_GT(top, 0.0);
                            for (Index f = 0; f < n; ++f) {
                                const std::size_t k = static_cast<std::size_t>(f);
                                ASSERT_NEAR(cached[k], plain[k], 1e-12 * top) << "feature " << f;
                                ASSERT_EQ(cached[k], cached3[k]) << "feature " << f;
                            }
                            ++cases;
                        }
                        // ReliefF reads the kept distances over every sample; a range of
                        // queries computes its own (the Dask split): the same sets, so the
                        // same sums up to the order of the additions.
                        o.rule = MixedRule::relieff;
                        o.k = 5;
                        const auto whole = fastfs::relief_mixed_sums(ref, o, 0, m, 2);
                        const auto head = fastfs::relief_mixed_sums(ref, o, 0, 33, 1);
                        const auto tail = fastfs::relief_mixed_sums(ref, o, 33, m, 2);
                        double top = 0.0;
                        for (double v : whole) top = std::max(top, std::abs(v));
                        ASSERT_GT(top, 0.0);
                        for (Index f = 0; f < n; ++f) {
                            const std::size_t k = static_cast<std::size_t>(f);
                            ASSERT_NEAR(whole[k], head[k] + tail[k], 1e-12 * top) << "ReliefF, feature " << f;
                        }
                    }
                }
            }
        }
    }
    EXPECT_EQ(cases, 4 * 4 * 10);
}

TEST(ReliefMixed, DistinctValuesAreCountedUpToTheCap) {
    Mat X(6, 3);
    X << 0, 1.5, 0, 1, 2.5, 0, 2, 3.5, kNaN, 0, 4.5, 0, 1, 5.5, 0, 2, 6.5, 0;
    const auto c = fastfs::distinct_upto(fastfs::MatrixRef<double>(X), 4);
    EXPECT_EQ(c[0], 3);
    EXPECT_EQ(c[1], 5);  // more than the cap: cap + 1
    EXPECT_EQ(c[2], 1);  // NaN is not a value
}

// The weighted mismatches and the continuous sum with missing values add their terms in the
// documented order (feature f in lane f % 4, the lanes as (0 + 1) + (2 + 3)), written out here
// with scalars: equal bits mean every CPU and compiler gets them (a sum left to the compiler's
// vectors took another order under Clang and broke exact ties between neighbours).
TEST(ReliefMixed, PairSumsTakeTheFixedLaneOrder) {
    std::mt19937_64 gen(23);
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> expo(-20, 20), val(0, 2), miss(0, 5);
    auto lanes = [](auto term, Index n) {
        double s[4] = {};
        for (Index f = 0; f < n; ++f) s[f % 4] += term(f);
        return (s[0] + s[1]) + (s[2] + s[3]);
    };
    for (Index n = 0; n <= 41; ++n) {
        std::vector<std::int32_t> a(static_cast<std::size_t>(n)), b(a.size());
        std::vector<double> w(a.size()), x(a.size()), z(a.size());
        for (std::size_t f = 0; f < a.size(); ++f) {
            a[f] = val(gen);
            b[f] = val(gen);
            w[f] = std::ldexp(std::abs(mant(gen)), expo(gen));  // over many binades
            x[f] = miss(gen) == 0 ? std::numeric_limits<double>::quiet_NaN()
                                  : std::ldexp(mant(gen), expo(gen));
            z[f] = std::ldexp(mant(gen), expo(gen));
        }
        const double want_m = lanes([&](Index f) {
            const std::size_t k = static_cast<std::size_t>(f);
            return a[k] != b[k] ? w[k] : 0.0;
        }, n);
        const double got_m = fastfs::detail::mismatches(a.data(), b.data(), w.data(), n);
        EXPECT_EQ(std::memcmp(&got_m, &want_m, sizeof(double)), 0) << n << " " << got_m;
        double present = 0.0, want_p = 0.0;
        const double want_c = lanes([&](Index f) {
            const double t = std::abs(x[static_cast<std::size_t>(f)] - z[static_cast<std::size_t>(f)]);
            return t == t ? t : 0.0;
        }, n);
        for (std::size_t f = 0; f < a.size(); ++f) want_p += std::isnan(x[f]) ? 0.0 : 1.0;
        const double got_c = fastfs::detail::cont_l1_missing(x.data(), z.data(), n, present);
        EXPECT_EQ(std::memcmp(&got_c, &want_c, sizeof(double)), 0) << n << " " << got_c;
        EXPECT_EQ(present, want_p) << n;
    }
}
