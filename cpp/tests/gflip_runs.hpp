// Shared by the tests that compare two ways of running G-flip (the float32 screen, the kept
// lists): the data variants they run on, a run that records the support after every epoch, and
// the comparison of two runs, which must agree bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "fastfs/search/gflip.hpp"
#include "reference.hpp"

namespace fastfs_test {

struct GFlipVariant {
    Family fam;
    double scale;  // every value times this
    bool mixed;    // columns at scales 1e-3 .. 1e3 and one at 1e5
};

inline Mat<double> variant_data(const GFlipVariant& v, Index m, Index n, std::uint64_t seed) {
    Mat<double> X = make_data(v.fam, m, n, seed) * v.scale;
    if (v.mixed) {
        for (Index f = 0; f < n; ++f) X.col(f) *= std::pow(10.0, static_cast<double>(f % 7) - 3.0);
        X.col(n - 1) *= 1e5;
    }
    return X;
}

inline constexpr fastfs::UtilitySpec kGFlipUtilities[] = {{fastfs::Utility::linear, 1.0},
                                                          {fastfs::Utility::zero_one, 1.0},
                                                          {fastfs::Utility::sigmoid, 3.0}};

// Six epochs, two restarts (from the empty set, then from the full set), seed `seed`.
inline fastfs::GFlipOptions gflip_options(const fastfs::UtilitySpec& u, int threads,
                                          std::uint64_t seed) {
    fastfs::GFlipOptions opt;
    opt.utility = u;
    opt.seed = seed;
    opt.max_epochs = 6;
    opt.n_restarts = 2;
    opt.n_threads = threads;
    return opt;
}

// f(X, codes, opt) for every variant, utility and thread count (1, 2), traced: the data of the
// variant (m x n, seed data_seed), three classes with a one-sample class (seed data_seed + 1)
// and gflip_options(u, threads, opt_seed).
template <std::size_t N, class F>
void for_each_gflip_case(const GFlipVariant (&variants)[N], Index m, Index n,
                         std::uint64_t data_seed, std::uint64_t opt_seed, F&& f) {
    for (const GFlipVariant& v : variants) {
        const Mat<double> X = variant_data(v, m, n, data_seed);
        const Codes codes = make_codes(m, 3, data_seed + 1);
        for (const auto& u : kGFlipUtilities)
            for (int threads : {1, 2}) {
                SCOPED_TRACE(::testing::Message() << "family " << static_cast<int>(v.fam) << " scale "
                                                  << v.scale << " mixed " << v.mixed << " utility "
                                                  << static_cast<int>(u.kind) << " threads " << threads);
                f(X, codes, gflip_options(u, threads, opt_seed));
            }
    }
}

// A run, with the support after every epoch in `supports`.
inline fastfs::GFlipResult run_gflip(const Mat<double>& X, const Codes& codes,
                                     const fastfs::GFlipOptions& opt,
                                     std::vector<std::vector<std::uint8_t>>& supports) {
    fastfs::GFlip<double> g(X, codes, opt);
    return g.run({}, [&](const fastfs::Progress& p) {
        supports.push_back(*p.support);
        return false;
    });
}

inline void expect_same_run(const fastfs::GFlipResult& got, const fastfs::GFlipResult& ref,
                            const std::vector<std::vector<std::uint8_t>>& got_supports,
                            const std::vector<std::vector<std::uint8_t>>& ref_supports) {
    EXPECT_EQ(got.support, ref.support);
    EXPECT_EQ(got.selected, ref.selected);
    EXPECT_EQ(got.score, ref.score);
    EXPECT_EQ(got.history, ref.history);
    EXPECT_EQ(got.restart_scores, ref.restart_scores);
    EXPECT_EQ(got.n_flips, ref.n_flips);
    EXPECT_EQ(got.n_epochs, ref.n_epochs);
    EXPECT_EQ(got.best_restart, ref.best_restart);
    EXPECT_EQ(got_supports, ref_supports);
}

}  // namespace fastfs_test
