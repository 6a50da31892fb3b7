// Standalone benchmark of the neighbour-query kernels, no Python involved: one Simba pass
// (n_samples steps, one restart), the final evaluation e(w), and one exhaustive float64
// distance row against the float32-shortlisted query that Simba uses.
//
//   bench_simba --samples 1000 --features 500 --threads 1,2 --repeat 5
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "fastfs/weights/simba.hpp"

using fastfs::bench::median_seconds;

int main(int argc, char** argv) {
    using namespace fastfs;
    bench::SizeArgs args;
    int status = 0;
    if (!bench::parse_size_args(argc, argv, "bench_simba", 1, args, status)) return status;
    const Index m = args.samples, n = args.features;
    const std::vector<int>& threads = args.threads;
    const int repeat = args.repeat;
    Rng rng(42, 0);
    RowMatrix<double> X(m, n);
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> codes(m);
    for (Index i = 0; i < m; ++i) {
        codes[i] = static_cast<std::int64_t>(rng.below(2));
        for (Index f = 0; f < n; ++f) {
            const double u1 = rng.uniform(), u2 = rng.uniform();
            X(i, f) = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
        }
        X(i, 0) += static_cast<double>(codes[i]);
    }
    MatrixRef<double> Xr(X);
    std::printf("bench_simba: m=%ld samples, n=%ld features, float64, repeat %d (median)\n",
                static_cast<long>(m), static_cast<long>(n), repeat);
    std::printf("%7s %12s %12s %14s %16s %16s\n", "threads", "pass [s]", "step [us]", "e(w) [s]",
                "row exact [us]", "row query [us]");
    for (int t : threads) {
        SimbaOptions opt;
        opt.n_restarts = 1;
        opt.n_threads = t;
        opt.seed = 7;
        Simba<double> simba(Xr, codes, opt);
        std::vector<double> w;
        const double pass = median_seconds(repeat, [&] {
            w.assign(static_cast<std::size_t>(n), 1.0);
            Rng order_rng(7, 0);
            for (Index s : visiting_order(order_rng, m, m)) simba.step(s, w);
        });
        const double eval = median_seconds(repeat, [&] { volatile double e = simba.evaluate(w); (void)e; });
        // One distance row: exhaustive float64 against the shortlisted query.
        NeighbourFinder<double> finder(Xr, codes);
        typename NeighbourFinder<double>::Scratch scratch, none;
        std::vector<double> w2(static_cast<std::size_t>(n));
        for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[static_cast<std::size_t>(f)] * w[static_cast<std::size_t>(f)];
        finder.prepare(w2.data(), scratch);
        const int rows = 200;
        volatile Index sink = 0;
        const double exact = median_seconds(repeat, [&] {
            for (Index i = 0; i < rows; ++i) sink = sink + finder.query(i, w2.data(), none).hit;
        }) / rows;
        const double query = median_seconds(repeat, [&] {
            for (Index i = 0; i < rows; ++i) sink = sink + finder.query_parallel(i, w2.data(), scratch, t).hit;
        }) / rows;
        std::printf("%7d %12.4f %12.2f %14.4f %16.2f %16.2f\n", t, pass, pass / m * 1e6, eval,
                    exact * 1e6, query * 1e6);
    }
    return 0;
}
