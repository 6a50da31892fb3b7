// relief_pass.hpp, the block pass every Relief-family algorithm runs: every query visited once
// in batches that stay inside their block, the sums merged in block order (so the weights have
// the same bits for any thread count, equal to a serial loop written here from the definition),
// progress steps with the running mean, stopping by callback and by the stop hook, and errors
// thrown inside the region rethrown after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "fastfs/weights/relief_pass.hpp"

using fastfs::Index;

namespace {

// A contribution whose sums depend on the order of the additions: query i adds
// value(i, f) = sin(i * 0.7 + f) * 10^(i mod 7) to weight f.
double value(Index i, Index f) {
    return std::sin(static_cast<double>(i) * 0.7 + static_cast<double>(f)) *
           std::pow(10.0, static_cast<double>(i % 7));
}

// The definition: blocks of max(16, ceil(queries / 64)) queries; each block's row sums its
// queries in order; the rows are added to the weights in block order.
std::vector<double> serial(Index q0, Index q1, Index n) {
    const Index queries = q1 - q0, block = std::max<Index>(16, (queries + 63) / 64);
    std::vector<double> w(static_cast<std::size_t>(n), 0.0);
    for (Index b0 = 0; b0 < queries; b0 += block) {
        std::vector<double> row(static_cast<std::size_t>(n), 0.0);
        for (Index i = q0 + b0; i < q0 + std::min(queries, b0 + block); ++i)
            for (Index f = 0; f < n; ++f) row[static_cast<std::size_t>(f)] += value(i, f);
        for (Index f = 0; f < n; ++f) w[static_cast<std::size_t>(f)] += row[static_cast<std::size_t>(f)];
    }
    return w;
}

struct Scratch {
    std::vector<double> tmp;
};

std::vector<double> run(Index q0, Index q1, Index n, int threads, Index batch,
                        std::vector<int>* visits = nullptr,
                        const fastfs::ProgressHook& callback = {},
                        fastfs::PassStatus* status = nullptr,
                        const fastfs::StopHook& stop = {}) {
    fastfs::StopPoll poll(stop);
    fastfs::ReliefPass pass{q0, q1, n, threads, batch};
    const Index block = pass.block();
    auto scratch = [&] {
        Scratch s;
        s.tmp.resize(static_cast<std::size_t>(n));
        return s;
    };
    auto rows = [&](Scratch& s, Index i0, Index count, double* acc, Index) {
        if (count < 1 || count > batch) throw std::logic_error("batch size out of range");
        if ((i0 - q0) / block != (i0 + count - 1 - q0) / block)
            throw std::logic_error("batch crosses a block boundary");
        for (Index i = i0; i < i0 + count; ++i) {
            if (visits) {
#pragma omp atomic
                ++(*visits)[static_cast<std::size_t>(i)];
            }
            for (Index f = 0; f < n; ++f) s.tmp[static_cast<std::size_t>(f)] = value(i, f);
            for (Index f = 0; f < n; ++f) acc[f] += s.tmp[static_cast<std::size_t>(f)];
        }
    };
    return fastfs::relief_block_pass(pass, poll, callback, status, scratch, rows);
}

}  // namespace

TEST(ReliefBlockPass, EqualsTheSerialDefinitionBitForBitForAnyThreadsAndBatch) {
    const Index n = 5;
    for (Index q1 : {Index{1}, Index{17}, Index{300}, Index{2000}}) {
        const std::vector<double> expected = serial(0, q1, n);
        for (int threads : {1, 2, 3})
            for (Index batch : {Index{1}, Index{4}, Index{7}}) {
                std::vector<int> visits(static_cast<std::size_t>(q1), 0);
                const auto w = run(0, q1, n, threads, batch, &visits);
                for (Index f = 0; f < n; ++f)
                    EXPECT_EQ(w[static_cast<std::size_t>(f)], expected[static_cast<std::size_t>(f)])
                        << "q1 " << q1 << " threads " << threads << " batch " << batch;
                for (int v : visits) EXPECT_EQ(v, 1);
            }
    }
}

TEST(ReliefBlockPass, QueryRangeOffsetAndEmptyRange) {
    const Index n = 3;
    const auto w = run(100, 437, n, 2, 4);
    const auto expected = serial(100, 437, n);
    for (Index f = 0; f < n; ++f) EXPECT_EQ(w[static_cast<std::size_t>(f)], expected[static_cast<std::size_t>(f)]);
    fastfs::PassStatus st;
    const auto none = run(5, 5, n, 2, 4, nullptr, {}, &st);
    for (double v : none) EXPECT_EQ(v, 0.0);
    EXPECT_EQ(st.done, 0);
}

TEST(ReliefBlockPass, CallbackSeesRunningMeanAndMayStop) {
    const Index n = 2, q1 = 2000;  // blocks of 32 samples
    std::vector<Index> seen;
    bool mean_ok = true;
    auto cb = [&](const fastfs::Progress& p) {
        seen.push_back(p.done);
        // the running mean of the samples done so far
        const auto sums = serial(0, p.done, n);
        for (Index f = 0; f < n; ++f) {
            const double want = sums[static_cast<std::size_t>(f)] / static_cast<double>(p.done);
            const double got = (*p.values)[static_cast<std::size_t>(f)];
            if (std::abs(got - want) > 1e-9 * (1.0 + std::abs(want))) mean_ok = false;
        }
        return seen.size() == 3;  // stop after the third step
    };
    fastfs::PassStatus st;
    run(0, q1, n, 2, 4, nullptr, cb, &st);
    EXPECT_TRUE(mean_ok);
    ASSERT_EQ(seen.size(), 3u);
    // one block per thread per step: 2 blocks of 32 samples
    EXPECT_EQ(seen[0], 64);
    EXPECT_EQ(seen[2], 192);
    EXPECT_EQ(st.done, 192);
    EXPECT_TRUE(st.stopped_early);
}

TEST(ReliefBlockPass, StopHookThrowsInterruptedAfterTheRegion) {
    // One thread: the calling thread polls between every batch (with two, a loaded machine may
    // let the other thread take every block first).
    int calls = 0;
    auto stop = [&] { return ++calls > 3; };
    EXPECT_THROW(run(0, 2000, 2, 1, 4, nullptr, {}, nullptr, stop), fastfs::Interrupted);
}

TEST(ReliefBlockPass, ErrorsInsideTheRegionAreRethrown) {
    fastfs::StopPoll poll(fastfs::StopHook{});
    fastfs::ReliefPass pass{0, 500, 3, 2, 4};
    auto scratch = [] { return 0; };
    auto rows = [](int&, Index i0, Index, double*, Index) {
        if (i0 >= 300) throw std::invalid_argument("bad query");
    };
    EXPECT_THROW(fastfs::relief_block_pass(pass, poll, {}, nullptr, scratch, rows),
                 std::invalid_argument);
    auto bad_scratch = []() -> int { throw std::runtime_error("no memory"); };
    auto fine = [](int&, Index, Index, double*, Index) {};
    EXPECT_THROW(fastfs::relief_block_pass(pass, poll, {}, nullptr, bad_scratch, fine),
                 std::runtime_error);
}

// The radius rules on the driver (batches of 16 queries, each row of the data read once per
// batch): equal to a brute-force scan written here from relief_radius.hpp's definitions, for
// sizes whose last batch and last group of four are short, and bit-identical across thread
// counts.
#include "fastfs/weights/relief.hpp"
#include "fastfs/weights/relief_radius.hpp"

namespace {

std::vector<double> radius_brute(const fastfs::RowMatrix<double>& X, const std::vector<int>& y,
                                 fastfs::RadiusRule rule) {
    const Index m = X.rows(), n = X.cols();
    fastfs::RowMatrix<double> Z(m, n);
    for (Index f = 0; f < n; ++f) {
        const double lo = X.col(f).minCoeff(), hi = X.col(f).maxCoeff();
        for (Index i = 0; i < m; ++i) Z(i, f) = hi > lo ? (X(i, f) - lo) / (hi - lo) : 0.0;
    }
    auto d = [&](Index i, Index j) { return (Z.row(i) - Z.row(j)).cwiseAbs().sum(); };
    int C = 0;
    for (int c : y) C = std::max(C, c + 1);
    double T = 0.0;
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < m; ++j) T += d(i, j);
    T /= static_cast<double>(m * m);
    using R = fastfs::RadiusRule;
    std::vector<double> w(static_cast<std::size_t>(n), 0.0);
    for (Index i = 0; i < m; ++i) {
        double near_t = T, far_t = T;
        if (rule == R::multisurf || rule == R::multisurf_star) {
            double mu = 0.0, v = 0.0;
            for (Index j = 0; j < m; ++j) if (j != i) mu += d(i, j);
            mu /= static_cast<double>(m - 1);
            for (Index j = 0; j < m; ++j) if (j != i) v += (d(i, j) - mu) * (d(i, j) - mu);
            const double sigma = std::sqrt(v / static_cast<double>(m - 1));
            near_t = mu - sigma / 2;
            far_t = mu + sigma / 2;
        }
        const bool with_far = rule == R::surf_star || rule == R::multisurf_star;
        // set 0: near, set 1: far; score(S) per the header
        for (int set = 0; set < (with_far ? 2 : 1); ++set) {
            std::vector<std::vector<Index>> members(static_cast<std::size_t>(C));
            for (Index j = 0; j < m; ++j) {
                if (j == i) continue;
                const double dj = d(i, j);
                const bool in = set == 0 ? dj < near_t : (!(dj < near_t) && dj > far_t);
                if (in) members[static_cast<std::size_t>(y[static_cast<std::size_t>(j)])].push_back(j);
            }
            const int own = y[static_cast<std::size_t>(i)];
            double M = 0.0;
            for (int c = 0; c < C; ++c) if (c != own) M += static_cast<double>(members[static_cast<std::size_t>(c)].size());
            const bool complement = set == 1 && rule == R::multisurf_star;
            const double sign = set == 1 && rule == R::surf_star ? -1.0 : 1.0;
            for (Index f = 0; f < n; ++f) {
                double v = 0.0;
                for (int c = 0; c < C; ++c) {
                    const auto& S = members[static_cast<std::size_t>(c)];
                    double sum = 0.0;
                    for (Index j : S) {
                        const double diff = std::abs(Z(i, f) - Z(j, f));
                        sum += complement ? 1.0 - diff : diff;
                    }
                    if (c == own) { if (!S.empty()) v -= sum / static_cast<double>(S.size()); }
                    else if (M > 0) v += sum * static_cast<double>(S.size()) * (C - 1) / (M * M);
                }
                w[static_cast<std::size_t>(f)] += sign * v;
            }
        }
    }
    for (Index f = 0; f < n; ++f) {
        if (X.col(f).minCoeff() == X.col(f).maxCoeff()) w[static_cast<std::size_t>(f)] = 0.0;
        w[static_cast<std::size_t>(f)] /= static_cast<double>(m);
    }
    return w;
}

}  // namespace

// Two passes: without a callback every pair distance is kept and each pair's two contributions
// go in as one (detail::radius_pair_sums, blocks of 64 samples); with one, sample by sample in
// steps. Both equal the
// brute force on narrow data and on data wide enough for SURF's float32 screen (n >= 64), with
// values at mixed scales (each row's scale 10^(i mod 7)); each is bit-identical across thread
// counts.
TEST(ReliefBlockPass, RadiusRulesInBatchesEqualBruteForceAndAnyThreadCount) {
    using R = fastfs::RadiusRule;
    const fastfs::ProgressHook go_on = [](const fastfs::Progress&) { return false; };
    for (Index n : {Index{7}, Index{70}}) {
        // 150: three blocks of the pair pass, the last one short
        for (Index m : {Index{21}, Index{53}, Index{150}}) {
            fastfs::RowMatrix<double> X(m, n);
            std::vector<int> y(static_cast<std::size_t>(m));
            Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> codes(m);
            for (Index i = 0; i < m; ++i) {
                for (Index f = 0; f < n; ++f) X(i, f) = value(i * 3 + 1, f);
                X(i, 6) = 2.0;  // a constant feature scores 0
                y[static_cast<std::size_t>(i)] = static_cast<int>((i * 7) % 3);
                codes[i] = y[static_cast<std::size_t>(i)];
            }
            for (R rule : {R::surf, R::surf_star, R::multisurf, R::multisurf_star}) {
                const auto want = radius_brute(X, y, rule);
                const fastfs::MatrixRef<double> XR(X);
                const auto one = fastfs::relief_radius<double>(XR, codes, rule, 1);
                const auto three = fastfs::relief_radius<double>(XR, codes, rule, 3);
                const auto steps1 = fastfs::relief_radius<double>(XR, codes, rule, 1, {}, go_on);
                const auto steps3 = fastfs::relief_radius<double>(XR, codes, rule, 3, {}, go_on);
                double scale = 0.0;
                for (double v : want) scale = std::max(scale, std::abs(v));
                for (Index f = 0; f < n; ++f) {
                    const auto k = static_cast<std::size_t>(f);
                    EXPECT_NEAR(one[k], want[k], 1e-12 * scale)
                        << "n " << n << " m " << m << " rule " << static_cast<int>(rule)
                        << " f " << f;
                    EXPECT_NEAR(steps1[k], want[k], 1e-12 * scale)
                        << "n " << n << " m " << m << " rule " << static_cast<int>(rule)
                        << " f " << f << " (with a callback)";
                    EXPECT_EQ(one[k], three[k]);
                    EXPECT_EQ(steps1[k], steps3[k]);
                }
            }
        }
    }
}

// SURF's threshold sorts every column (detail::sort_values: a radix sort from 256 values on):
// the same order as std::sort for values of both signs and many scales, zeros of both signs,
// repeats, and columns whose values share their top bits (min-max scaled data).
TEST(ReliefBlockPass, RadixSortOfColumnValuesEqualsStdSort) {
    std::mt19937_64 gen(7);
    std::normal_distribution<double> normal;
    std::uniform_int_distribution<int> scale(-300, 300), pick(0, 9);
    for (std::size_t m : {std::size_t{3}, std::size_t{255}, std::size_t{256}, std::size_t{1000},
                          std::size_t{4099}}) {
        for (int kind = 0; kind < 3; ++kind) {
            std::vector<double> v(m);
            for (double& x : v) {
                if (kind == 0) x = std::ldexp(normal(gen), scale(gen));   // every scale and sign
                else if (kind == 1) x = std::abs(normal(gen)) / 10.0;      // [0, 1)-like, top bits shared
                else x = pick(gen) < 3 ? (pick(gen) < 5 ? 0.0 : -0.0) : std::round(normal(gen));
            }
            std::vector<double> want = v;
            std::sort(want.begin(), want.end());
            fastfs::detail::sort_values(v);
            for (std::size_t i = 0; i < m; ++i)
                ASSERT_EQ(v[i], want[i]) << "m " << m << " kind " << kind << " at " << i;
        }
    }
}

// ReliefF over every sample keeps the matrix of pair distances (float32 for the shortlist when
// n >= 64, exact float64 below) and reads each sample's row from it; a range of queries
// computes its rows itself. Each sample's contribution must be the same either way: the pass
// over all samples equals the sum of one-sample passes (to rounding: the sums go in another
// order), with a class smaller than k (every member a neighbour), at 1 and 3 threads.
TEST(ReliefBlockPass, ReliefFWithKeptPairDistancesEqualsSampleBySample) {
    const Index m = 150, k = 10;
    for (Index n : {Index{9}, Index{80}}) {
        fastfs::RowMatrix<double> X(m, n);
        Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> codes(m);
        for (Index i = 0; i < m; ++i) {
            for (Index f = 0; f < n; ++f) X(i, f) = value(i * 5 + 2, f) + 0.01 * value(i, f + 3);
            codes[i] = i < 6 ? 2 : (i * 7) % 2;  // class 2: six samples, fewer than k others
        }
        const fastfs::MatrixRef<double> XR(X);
        std::vector<double> want(static_cast<std::size_t>(n), 0.0);
        for (Index i = 0; i < m; ++i) {
            const auto one = fastfs::relieff_sums<double>(XR, codes, k, i, i + 1, 1);
            for (Index f = 0; f < n; ++f) want[static_cast<std::size_t>(f)] += one[static_cast<std::size_t>(f)];
        }
        double scale = 0.0;
        for (double v : want) scale = std::max(scale, std::abs(v));
        const auto all1 = fastfs::relieff_sums<double>(XR, codes, k, 0, m, 1);
        const auto all3 = fastfs::relieff_sums<double>(XR, codes, k, 0, m, 3);
        for (Index f = 0; f < n; ++f) {
            const auto c = static_cast<std::size_t>(f);
            EXPECT_NEAR(all1[c], want[c], 1e-12 * scale) << "n " << n << " f " << f;
            EXPECT_EQ(all1[c], all3[c]);
        }
    }
}
