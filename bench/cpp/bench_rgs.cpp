// Standalone benchmark of the RGS step and its neighbour query, no Python involved: one RGS
// epoch (n_samples steps over a fixed permutation, eta = 1, default k and beta) on the data of
// bench/compare/compare_rgs.py's kind (X uniform on [-1, 1], y = sin(pi x0) + x1 x2 + noise), what
// the screen did during that epoch (shortlist length, features refreshed, rebuilds), and one
// exhaustive float64 distance row against the screened query at the final weights.
//
//   bench_rgs --samples 1000 --features 500 --threads 1,2 --repeat 5
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "fastfs/weights/rgs.hpp"

using fastfs::bench::median_seconds;

int main(int argc, char** argv) {
    using namespace fastfs;
    bench::SizeArgs args;
    int status = 0;
    if (!bench::parse_size_args(argc, argv, "bench_rgs", 3, args, status)) return status;
    const Index m = args.samples, n = args.features;
    const std::vector<int>& threads = args.threads;
    const int repeat = args.repeat;
    Rng rng(42, 0);
    RowMatrix<double> X(m, n);
    std::vector<double> y(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) {
        for (Index f = 0; f < n; ++f) X(i, f) = 2.0 * rng.uniform() - 1.0;
        const double u1 = rng.uniform(), u2 = rng.uniform();
        const double noise = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
        y[static_cast<std::size_t>(i)] =
            std::sin(3.141592653589793 * X(i, 0)) + X(i, 1) * X(i, 2) + 0.3 * noise;
    }
    MatrixRef<double> Xr(X);
    const int k = static_cast<int>(std::ceil(std::log2(static_cast<double>(m))));
    Rng order_rng(7, 0);
    const std::vector<Index> order = visiting_order(order_rng, m, m);
    RgsOptions base;
    base.n_neighbors = k;
    base.eta.assign(static_cast<std::size_t>(m), 1.0);
    base.sample_order = order;
    base.score = false;
    base.n_threads = 1;
    const double beta = Rgs<double>(Xr, y.data(), base).run().beta;
    base.beta = beta;
    std::printf("bench_rgs: m=%ld samples, n=%ld features, k=%d, beta=%.4g, float64, repeat %d "
                "(median)\n",
                static_cast<long>(m), static_cast<long>(n), k, beta, repeat);
    std::printf("%7s %12s %11s %10s %10s %8s %16s %16s\n", "threads", "epoch [s]", "step [us]",
                "shortlist", "refreshed", "rebuilt", "row exact [us]", "row query [us]");
    for (int t : threads) {
        RgsOptions opt = base;
        opt.n_threads = t;
        const double epoch = median_seconds(repeat, [&] { Rgs<double>(Xr, y.data(), opt).run(); });
        // The same epoch step by step, for what the screen did (per step, averaged).
        Rgs<double> rgs(Xr, y.data(), opt);
        typename Rgs<double>::Workspace ws;
        std::vector<double> w(static_cast<std::size_t>(n), 1.0);
        double kept = 0.0;
        for (Index s : order) {
            rgs.step(s, w, 1.0, ws, t);
            kept += static_cast<double>(ws.scratch.kept);
        }
        // One distance row at the final weights: exhaustive float64 against the query.
        KnnQuery<double> q(Xr);
        typename KnnQuery<double>::Scratch scratch;
        std::vector<double> w2(static_cast<std::size_t>(n));
        for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[static_cast<std::size_t>(f)] * w[static_cast<std::size_t>(f)];
        q.prepare(w2.data(), scratch);
        std::vector<Index> idx(static_cast<std::size_t>(k));
        std::vector<double> dist(static_cast<std::size_t>(k)), row(static_cast<std::size_t>(m));
        const Index rows = std::min<Index>(m, 200);
        volatile double sink = 0.0;
        const double exact = median_seconds(repeat, [&] {
            for (Index i = 0; i < rows; ++i) {
                for (Index j = 0; j < m; ++j) row[static_cast<std::size_t>(j)] = q.exact_distance(i, j, w2.data());
                select_k_nearest(row.data(), m, i, k, idx.data(), dist.data());
                sink = sink + dist[0];
            }
        }) / static_cast<double>(rows);
        const double query = median_seconds(repeat, [&] {
            for (Index i = 0; i < rows; ++i) {
                q.query(i, w2.data(), k, scratch, t, idx.data(), dist.data());
                sink = sink + dist[0];
            }
        }) / static_cast<double>(rows);
        std::printf("%7d %12.4f %11.2f %10.1f %10.2f %8ld %16.2f %16.2f\n", t, epoch,
                    epoch / static_cast<double>(m) * 1e6, kept / static_cast<double>(m),
                    static_cast<double>(ws.scratch.n_refreshed) / static_cast<double>(m),
                    static_cast<long>(ws.scratch.n_rebuilt), exact * 1e6, query * 1e6);
    }
    return 0;
}
