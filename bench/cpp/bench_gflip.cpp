// Standalone benchmark of the G-flip kernels, no Python involved: one full G-flip epoch, one
// candidate evaluation on the distance state, and a roofline micro-benchmark of this machine's
// attainable rate for the same add-compare-min pass over the pairs of samples.
//
//   bench_gflip --samples 2000 --features 500 --threads 1,2 --repeat 5 [--float] [--cpu]
//
// --cpu times with process CPU time (meaningful on one thread; use it on a loaded machine).
//
// Data: fixed-seed Gaussian features, two balanced classes. Rates are in pairs (a, b), a < b,
// per second. "candidate" scores one candidate per pass over D; "block" scores a block of
// candidates per pass, as G-flip does between flips; the roofline streams the same triangle
// with the same arithmetic but no per-column bookkeeping, and "fraction" = candidate / roofline.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "fastfs/search/gflip.hpp"

namespace {

using fastfs::bench::median_seconds;

struct Args {
    fastfs::Index samples = 2000, features = 500;
    std::vector<int> threads{1, 2};
    int repeat = 5;
    bool single = false;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "missing value for %s\n", k.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (k == "--samples") a.samples = std::stol(value());
        else if (k == "--features") a.features = std::stol(value());
        else if (k == "--repeat") a.repeat = std::stoi(value());
        else if (k == "--float") a.single = true;
        else if (k == "--cpu") fastfs::bench::cpu_clock() = true;
        else if (k == "--threads") a.threads = fastfs::bench::parse_list(value());
        else {
            std::fprintf(stderr,
                         "usage: bench_gflip [--samples M] [--features N] [--threads 1,2] "
                         "[--repeat R] [--float] [--cpu]\n");
            std::exit(k == "--help" ? 0 : 2);
        }
    }
    if (a.samples < 4 || a.features < 1 || a.repeat < 1) {
        std::fprintf(stderr, "sizes must be positive (samples >= 4)\n");
        std::exit(2);
    }
    return a;
}

// The roofline: the same triangle, the same add-square-compare-min, four rows sharing each
// column load (as the real kernel does), but only row minima: no column-side bookkeeping.
template <class T>
T roofline_pass(const fastfs::RowMatrix<T>& D, const T* col, int threads) {
    using fastfs::kernels::min_of;
    const fastfs::Index m = D.rows();
    T total = 0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads) reduction(+ : total)
    for (fastfs::Index a = 0; a < m - 4; a += 4) {
        const T* r0 = D.data() + a * m;
        const T *r1 = r0 + m, *r2 = r1 + m, *r3 = r2 + m;
        const T x0 = col[a], x1 = col[a + 1], x2 = col[a + 2], x3 = col[a + 3];
        T b0 = std::numeric_limits<T>::infinity(), b1 = b0, b2 = b0, b3 = b0;
#pragma omp simd reduction(min : b0, b1, b2, b3)
        for (fastfs::Index b = a + 4; b < m; ++b) {
            const T c = col[b];
            const T d0 = x0 - c, d1 = x1 - c, d2 = x2 - c, d3 = x3 - c;
            b0 = min_of(b0, r0[b] + d0 * d0);
            b1 = min_of(b1, r1[b] + d1 * d1);
            b2 = min_of(b2, r2[b] + d2 * d2);
            b3 = min_of(b3, r3[b] + d3 * d3);
        }
        total += b0 + b1 + b2 + b3;
    }
    return total;
}

// The bandwidth probe: one streaming read of an array as large as the state (m x m values of
// T, so it sits in the same level of the memory hierarchy), on one thread. Bytes per second.
// Sum of p[0 .. n): 16 independent accumulators (4 AVX2 registers of doubles), so the loop is
// bound by loads, not by the latency of one chain of additions.
template <class T>
FASTFS_SIMD_CLONES T stream_sum(const T* __restrict p, std::size_t n) {
    T acc[16] = {};
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += p[i + l];
    for (; i < n; ++i) acc[0] += p[i];
    T total = 0;
    for (int l = 0; l < 16; ++l) total += acc[l];
    return total;
}

template <class T>
double stream_rate(fastfs::Index m, int repeat) {
    const std::size_t size = static_cast<std::size_t>(m) * static_cast<std::size_t>(m);
    std::vector<T> data(size);
    for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<T>(i & 1023);
    volatile double sink = 0;
    const int inner = std::max<int>(1, static_cast<int>(4e8 / static_cast<double>(size)));
    const double seconds = median_seconds(repeat, [&] {
                               for (int k = 0; k < inner; ++k)
                                   sink = sink + static_cast<double>(stream_sum(data.data(), size));
                           }) / inner;
    return static_cast<double>(size * sizeof(T)) / seconds;
}

template <class T>
void run(const Args& args) {
    using namespace fastfs;
    const Index m = args.samples, n = args.features;
    Rng rng(42, 0);
    RowMatrix<T> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index j = 0; j < n; ++j) {
            // Box-Muller: fixed-seed Gaussians independent of the standard library.
            double u1 = rng.uniform(), u2 = rng.uniform();
            X(i, j) = static_cast<T>(std::sqrt(-2.0 * std::log(1.0 - u1)) *
                                     std::cos(6.283185307179586 * u2));
        }
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> codes(m);
    for (Index i = 0; i < m; ++i) codes[i] = i % 2;
    const double pairs = 0.5 * static_cast<double>(m) * static_cast<double>(m - 1);

    std::printf("bench_gflip: m=%ld samples, n=%ld features, %s, repeat %d (median)\n",
                static_cast<long>(m), static_cast<long>(n), sizeof(T) == 8 ? "float64" : "float32",
                args.repeat);
    // One candidate pass reads the upper triangle of the state once: pairs * sizeof(T) bytes.
    // At the probe's streaming rate that takes `stream` seconds, the bandwidth roofline of a
    // pass; "bw frac" = stream / candidate (above 1: faster than streaming the state, which
    // only a block of candidates sharing each read of the state can be).
    const double bandwidth = stream_rate<T>(m, args.repeat);
    const double stream = pairs * sizeof(T) / bandwidth;
    std::printf("bandwidth probe (1 thread, %.0f MB array): %.2f GB/s; one pass over the "
                "triangle streams in %.4f ms\n",
                static_cast<double>(m) * static_cast<double>(m) * sizeof(T) * 1e-6,
                bandwidth * 1e-9, stream * 1e3);
    std::printf("%7s %11s %15s %15s %15s %15s %9s %9s %9s\n", "threads", "epoch [s]",
                "candidate [ms]", "cand [Gpair/s]", "block [Gpair/s]", "roof [Gpair/s]",
                "fraction", "bw frac", "blk frac");
    for (int threads : args.threads) {
        GFlipOptions opt;
        opt.max_epochs = 1;
        opt.n_threads = threads;
        opt.seed = 7;
        MatrixRef<T> Xref(X);
        const double epoch = median_seconds(args.repeat, [&] {
            GFlip<T> g(Xref, codes, opt);
            g.run();
        });

        // A state holding a realistic subset (every 10th feature) to score a candidate on.
        DistanceState<T> state(ClassLayout::from_codes(codes), threads);
        RowMatrix<T> Z(m, (n + 9) / 10);
        for (Index k = 0; k < Z.cols(); ++k)
            for (Index p = 0; p < m; ++p) Z(p, k) = X(state.layout().order[p], 10 * k);
        state.assign(Z);
        std::vector<T> col(static_cast<std::size_t>(m));
        for (Index p = 0; p < m; ++p) col[p] = X(state.layout().order[p], 1);
        Nearest<T> nn(m);
        UtilitySpec u;
        volatile double sink = 0;
        const int inner = std::max<int>(1, static_cast<int>(2e8 / pairs));
        const double cand = median_seconds(args.repeat, [&] {
                                for (int k = 0; k < inner; ++k) {
                                    state.nearest_with(col.data(), T(1), nn);
                                    sink = sink + margin_score(nn, u);
                                }
                            }) / inner;

        // The same candidate scored in a block of kMaxBlock, as G-flip does between flips.
        constexpr int B = DistanceState<T>::kMaxBlock;
        std::vector<Nearest<T>> outs(B, Nearest<T>(m));
        std::vector<const T*> cols(B, col.data());
        std::vector<T> signs(B, T(1));
        const double blocked = median_seconds(args.repeat, [&] {
                                   for (int k = 0; k < inner; ++k) {
                                       state.nearest_many(B, cols.data(), signs.data(), outs.data());
                                       sink = sink + margin_score(outs[0], u);
                                   }
                               }) / (inner * B);

        RowMatrix<T> D(m, m);
        for (Index a = 0; a < m; ++a)
            for (Index b = 0; b < m; ++b) D(a, b) = state.at(a, b);
        const double roof = median_seconds(args.repeat, [&] {
                                for (int k = 0; k < inner; ++k)
                                    sink = sink + roofline_pass(D, col.data(), threads);
                            }) / inner;
        std::printf("%7d %11.4f %15.4f %15.3f %15.3f %15.3f %9.2f %9.2f %9.2f\n", threads,
                    epoch, cand * 1e3, pairs / cand * 1e-9, pairs / blocked * 1e-9,
                    pairs / roof * 1e-9, roof / cand, stream / cand, stream / blocked);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parse(argc, argv);
    if (args.single) run<float>(args);
    else run<double>(args);
    return 0;
}
