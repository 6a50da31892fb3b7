// The leave-one-out soft kNN regression criterion of RGS (SPEC 3.1): for every sample, the
// kernel-weighted mean target of its k nearest other samples, and e = -(1/2) sum (y - g_hat)^2.
// Two ways to get the neighbours: one weighted distance row per sample (weights, used by RGS,
// knn_regression_score and SKS), or the shared m x m distance state (feature subsets, used by
// forward selection and, later, the generic sequential searches).
//
// KnnQuery is the k nearest reduction of the neighbour engine (engine.hpp) for weights that
// change at every step: it takes the engine's tie rule (keep_smallest), gamma and weight
// exponent, but screens with the Gram expansion below instead of the engine's direct metric
// kernels (one multiply-add per sample and feature instead of three, with the squared norms
// kept across steps), so its bounds are derived for that expansion. Its exact distances are
// summed in feature order (exact_distance()), as RGS's results have always been.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "../state/distance_state.hpp"
#include "../core/errors.hpp"
#include "../simd/pair_kernels.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "engine.hpp"

namespace fastfs {

// Normalised kernel weights p_j of k neighbour distances sorted nearest first:
// p_j = exp(-(d_j - d_0) / beta) / sum. Shifting by the nearest distance leaves the weights
// unchanged and keeps the largest term at exactly 1, so the sum never underflows to 0 however
// far the neighbours are. Equal distances get equal weights, whatever beta; beta == 0 is the
// limit beta -> 0+ (all the weight on the neighbours at the nearest distance).
inline void kernel_weights(const double* d, int k, double beta, double* p) {
    const double d0 = d[0];
    double z = 0.0;
    for (int j = 0; j < k; ++j) {
        const double t = d[j] - d0;
        const double e = t == 0.0 ? 1.0 : (beta > 0.0 ? std::exp(-t / beta) : 0.0);
        p[j] = e;
        z += e;
    }
    for (int j = 0; j < k; ++j) p[j] /= z;
}

// k = min(n_neighbors, m - 1): the neighbour count every function here uses.
inline int effective_k(Index n_neighbors, Index m) {
    require(n_neighbors >= 1, "n_neighbors must be >= 1");
    require(m >= 2, "need at least 2 samples");
    return static_cast<int>(std::min<Index>(n_neighbors, m - 1));
}

// Kernels of the neighbour query below. Columns of the float32 copy are contiguous along
// samples, so every loop vectorises over samples whatever the number of features.
namespace kernels {
// out[j] += sum over the F features q of v[q] c_q[j], added in feature order, for samples j in
// [lo, hi). With Init, out[j] starts from float(scale init[j]) instead of its value.
template <int F, bool Init>
FASTFS_SIMD_CLONES void dot_columns(const float* const* c, const float* v, const double* init,
                                    double scale, Index lo, Index hi, float* __restrict out) {
    const float* col[F];
    float vq[F];
    for (int q = 0; q < F; ++q) {
        col[q] = c[q];
        vq[q] = v[q];
    }
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        float acc = Init ? static_cast<float>(scale * init[j]) : out[j];
        for (int q = 0; q < F; ++q) acc += vq[q] * col[q][j];
        out[j] = acc;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(FASTFS_NO_CLONES)
#define FASTFS_HAVE_FMA_SWEEP 1
// The same sweep with fused multiply-adds (one rounding per term instead of two, inside the
// error the bounds allow for), chosen at run time on CPUs with FMA: the default build keeps
// -ffp-contract=off and no -mfma, so the compiler never fuses on its own.
template <int F, bool Init>
__attribute__((target("avx2,fma"))) void dot_columns_fma(const float* const* c, const float* v,
                                                         const double* init, double scale,
                                                         Index lo, Index hi,
                                                         float* __restrict out) {
    const float* col[F];
    float vq[F];
    for (int q = 0; q < F; ++q) {
        col[q] = c[q];
        vq[q] = v[q];
    }
#pragma omp simd
    for (Index j = lo; j < hi; ++j) {
        float acc = Init ? static_cast<float>(scale * init[j]) : out[j];
        for (int q = 0; q < F; ++q) acc = __builtin_fmaf(vq[q], col[q][j], acc);
        out[j] = acc;
    }
}

inline bool cpu_has_fma() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

// a[j] += d c[j]^2 in float64 for j in [0, m): the square of a float is exact in double, so
// each update rounds twice (the product and the sum).
template <class D>
FASTFS_SIMD_CLONES void add_scaled_squares(const float* __restrict c, D d, Index m,
                                           D* __restrict a) {
#pragma omp simd
    for (Index j = 0; j < m; ++j) {
        const D x = c[j];
        a[j] += d * (x * x);
    }
}

// The same for four columns, a[j] updated by each in turn (the same roundings).
template <class D>
FASTFS_SIMD_CLONES void add_scaled_squares4(const float* __restrict c0, const float* __restrict c1,
                                            const float* __restrict c2, const float* __restrict c3,
                                            D d0, D d1, D d2, D d3, Index m, D* __restrict a) {
#pragma omp simd
    for (Index j = 0; j < m; ++j) {
        const D x0 = c0[j], x1 = c1[j], x2 = c2[j], x3 = c3[j];
        D acc = a[j];
        acc += d0 * (x0 * x0);
        acc += d1 * (x1 * x1);
        acc += d2 * (x2 * x2);
        acc += d3 * (x3 * x3);
        a[j] = acc;
    }
}

// The indices j in [lo, hi) with a[j] <= t, in increasing order, into out (room for
// hi - lo + 8); returns their count. Branch-free: a store per value, kept or not.
inline int gather_at_most(const float* a, Index lo, Index hi, float t, std::uint32_t* out) {
    int c = 0;
    for (Index j = lo; j < hi; ++j) {
        out[c] = static_cast<std::uint32_t>(j);
        c += a[j] <= t ? 1 : 0;
    }
    return c;
}

#ifdef FASTFS_HAVE_FMA_SWEEP
// The positions of the set bits of every 8-bit mask, packed one per byte from the low end.
struct BitPositions {
    std::uint64_t of[256];
    constexpr BitPositions() : of() {
        for (int mask = 0; mask < 256; ++mask) {
            std::uint64_t packed = 0;
            int c = 0;
            for (int b = 0; b < 8; ++b)
                if (mask & (1 << b)) packed |= static_cast<std::uint64_t>(b) << (8 * c++);
            of[mask] = packed;
        }
    }
};
inline constexpr BitPositions kBitPositions{};

// The same with AVX2: eight values per compare, their kept indices written with one store
// from a table of bit positions.
__attribute__((target("avx2"))) inline int gather_at_most_avx2(const float* a, Index n, float t,
                                                              std::uint32_t* out) {
    const __m256 tv = _mm256_set1_ps(t);
    int c = 0;
    const Index full = n & ~Index{7};
    for (Index j = 0; j < full; j += 8) {
        const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(a + j), tv, _CMP_LE_OQ));
        const __m128i pos = _mm_cvtsi64_si128(static_cast<long long>(kBitPositions.of[mask]));
        const __m256i idx = _mm256_add_epi32(_mm256_cvtepu8_epi32(pos),
                                             _mm256_set1_epi32(static_cast<int>(j)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), idx);
        c += __builtin_popcount(static_cast<unsigned>(mask));
    }
    return c + gather_at_most(a, full, n, t, out + c);
}
#endif

// min of a[lo, hi), +inf when empty.
inline float block_min(const float* a, Index lo, Index hi) {
    float best = std::numeric_limits<float>::infinity();
#pragma omp simd reduction(min : best)
    for (Index j = lo; j < hi; ++j) best = a[j] < best ? a[j] : best;
    return best;
}

// out[b] = min of a[b block, (b + 1) block), the last block cut at n.
inline void block_minima(const float* a, Index n, Index block, float* out) {
    for (Index b = 0; b * block < n; ++b) out[b] = block_min(a, b * block, std::min((b + 1) * block, n));
}

#ifdef FASTFS_HAVE_FMA_SWEEP
// The same for blocks of a multiple of 8 values, eight lanes at a time (no NaN here).
__attribute__((target("avx2"))) inline void block_minima_avx2(const float* a, Index n,
                                                             Index block, float* out) {
    const Index full = n / block;
    for (Index b = 0; b < full; ++b) {
        const float* p = a + b * block;
        __m256 v = _mm256_loadu_ps(p);
        for (Index r = 8; r < block; r += 8) v = _mm256_min_ps(v, _mm256_loadu_ps(p + r));
        __m128 h = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        h = _mm_min_ps(h, _mm_movehl_ps(h, h));
        h = _mm_min_ss(h, _mm_shuffle_ps(h, h, 1));
        out[b] = _mm_cvtss_f32(h);
    }
    if (full * block < n) out[full] = block_min(a, full * block, n);
}
#endif
}  // namespace kernels

// Below this many distance terms a row is computed by one thread. A parallel region per step
// costs microseconds on idle cores, but when a core is busy elsewhere every step waits for the
// descheduled thread: on the shared 2-core development machine (load ~4), splitting the rows of
// a 1000 x 500 problem made an RGS epoch 10x slower than one thread (1.6 s against 0.15 s).
// Rows of 4M terms take about a millisecond, long enough for that wait not to dominate.
constexpr Index kRowParallelWork = Index{1} << 22;

// The k nearest other samples of one sample under weights w2, exactly, without an m x m matrix.
//
// The exact distance of a pair is sum_f w2[f] (x_if - x_jf)^2 in float64, summed in feature
// order (exact_distance()); every distance this file returns is that value, bit for bit.
// Computing it for all m samples streams the whole of X per query, so a query first screens
// every sample in float32, keeps only the samples that could belong to the k nearest under
// rigorous error bounds, and takes the exact distance of those. Ties then go to the lower
// index exactly as an exhaustive float64 scan would decide them.
//
// The screen expands the distance of centred float32 coordinates z (z_j = float(x_j - centre)):
//   sum_f w2_f (z_if - z_jf)^2 = a_i + a_j - 2 sum_f w2_f z_if z_jf,   a_j = sum_f w2_f z_jf^2,
// so a query costs one multiply-add per sample and feature (the cross term, from a transposed
// copy contiguous along samples), about half of the direct form. a_j depends on the weights,
// which RGS changes at every step; the scratch keeps a_j in float64 for reference weights rho
// instead, and refreshes a feature's part (m multiply-adds) only when w2_f / rho_f leaves
// [1 - drift, 1 + drift]. For the others, a_j under w2 lies between lo and hi times a_j under
// rho (the smallest and largest ratio), and the bounds carry that interval. The tolerance
// adapts from query to query (Scratch::drift): it only trades refresh work against the exact
// distances that wider bounds let onto the shortlist, never the result.
//
// A query takes the k smallest screen values, computes their exact distances (the k-th
// nearest exact distance is at most their largest), and then the exact distance of every
// other sample whose lower bound does not exceed it.
template <class T>
class KnnQuery {
public:
    struct Scratch {
        std::vector<float> approx, v;  // v: -2 w2_f z_if of the query
        std::vector<Index> heap_idx, cand, rest;
        std::vector<std::uint32_t> shortlist, pool;  // sample indices (m < 2^31)
        std::vector<double> cand_d, rest_d;
        std::vector<float> heap_val, block_min, block_tmp;
        // a_j under the reference weights rho, and what the bounds need of it.
        std::vector<double> rho, inv_rho, a;
        std::vector<Index> moved;
        std::vector<double> delta;
        double drift = 0.02;       // refresh a feature when its weight moves by this fraction
        Index extra = 0;           // exact distances of the last query beyond the k needed
        std::uint64_t owner = 0;   // the id of the query a was built for
        bool built = false;
        Index updates = 0;         // feature refreshes since a was last built
        double a_err = 0.0;        // |computed a_j - sum_f rho_f z_jf^2| <= a_err for every j
        double a_top = 0.0;        // weighted_top(rho): at least sum_f rho_f z_jf^2 for every j
        double lo = 1.0, hi = 1.0;  // w2_f / rho_f lies in [lo, hi] for every feature
        double scale = 1.0;        // the screen starts from scale a_j (see prepare())
        double tiny = 0, top_w = 0;
        // The screen works on w2s = 2^-exp w2 (see prepare()); exp changes only on a rebuild.
        std::vector<double> w2s;
        int exp = 0;
        bool shortlist_ok = false;
        Index n_refreshed = 0, n_rebuilt = 0, kept = 0;  // counters for tests and benchmarks
    };

    explicit KnnQuery(const MatrixRef<T>& X) : X_(X), m_(X.rows()), n_(X.cols()) {
        double top = 0.0;
        centre_.assign(static_cast<std::size_t>(n_), 0.0);
        double* sum = centre_.data();
        for (Index i = 0; i < m_; ++i) {
            const T* xr = X.row(i).data();
#pragma omp simd reduction(max : top)
            for (Index f = 0; f < n_; ++f) {
                const double x = static_cast<double>(xr[f]);
                const double ax = x < 0.0 ? -x : x;
                top = ax > top ? ax : top;
                sum[f] += x;
            }
        }
        // float32 must hold every product and sum of the screen with room to spare, and its
        // relative error g32 must stay small (n < 2^20: below 1/8); with very few features the
        // exact pass is as cheap as the float32 one. Sample indices are 32-bit in the scans.
        usable_ = top <= 1e9 && n_ >= kShortlistMinFeatures && n_ < (Index{1} << 20) &&
                  m_ < (Index{1} << 31);
        if (!usable_) return;
        // The centre of each feature. Any centre leaves distances unchanged, but away from the
        // bulk of the data the expansion's terms grow and cancel: the mean, unless a few
        // outlying samples pulled it away from the bulk (robust_centres()).
        for (double& c : centre_) c /= static_cast<double>(m_);
        robust_centres(X);
        XT_.resize(n_, m_);
        transpose_centred(X);
        for (double v : z2_col_) top_z_ = std::max(top_z_, std::sqrt(v));
        top_z_ *= 1.0 + 0x1.0p-50;  // the square root's rounding
    }

    Index n_samples() const { return m_; }

    // Sets up queries under weights w2 (non-negative, length n_features). A scratch prepared
    // before keeps its a_j and refreshes the features whose weight moved too far.
    void prepare(const double* w2_in, Scratch& s) const {
        double top = 0.0;
        for (Index f = 0; f < n_; ++f) top = w2_in[f] > top ? w2_in[f] : top;
        s.shortlist_ok = usable_ && top > 0.0 && std::isfinite(top);
        if (!s.shortlist_ok) return;
        // The screen works on the weights times a power of two, 2^-exp, chosen at each rebuild
        // so that the largest lies in [1, 2) and kept while it stays within 2^+-16 of that:
        // scaling every weight by a power of two scales every distance by it, which changes no
        // comparison, and keeps the float32 pass and its absolute allowances (tiny, rho0) away
        // from the subnormal range however small the weights are (RGS and SKS weights of 1e-20
        // would otherwise leave every sample on the shortlist). The exact distances use the
        // caller's weights; query() scales them into the screen's units.
        const bool same_owner = s.owner == id_ && s.built;
        if (!same_owner || std::abs(screen::exponent(top) - s.exp) > kExpSlack) {
            s.exp = screen::exponent(top);
            s.built = false;
        }
        s.w2s.resize(static_cast<std::size_t>(n_));
        for (Index f = 0; f < n_; ++f) s.w2s[static_cast<std::size_t>(f)] = std::ldexp(w2_in[f], -s.exp);
        const double* w2 = s.w2s.data();
        top = std::ldexp(top, -s.exp);
        if (s.owner != id_) {
            // Everything a query needs (for any k < m), so that queries do not allocate.
            const std::size_t m = static_cast<std::size_t>(m_);
            s.approx.resize(m);
            s.v.resize(static_cast<std::size_t>(n_));
            s.shortlist.resize(m + 8);
            s.pool.resize(m + 8);
            s.rest.reserve(m);
            s.rest_d.reserve(m);
            s.block_min.reserve(m / 8 + 1);
            s.block_tmp.reserve(m / 8 + 1);
            s.cand.resize(m);
            s.heap_idx.resize(m);
            s.cand_d.resize(m);
            s.heap_val.resize(m);
            s.built = false;
        }
        const double u = screen::kUnit64;
        double lo = 1.0, hi = 1.0;
        if (s.built) {
            // The features whose weight left [1 - drift, 1 + drift] times its reference, and
            // the range of the ratio over the others.
            // Branch-free: a feature with rho = 0 has ratio 0 here (w2 = 0 keeps it, any other
            // weight moves it).
            s.moved.resize(static_cast<std::size_t>(n_));
            Index* mv = s.moved.data();
            const double* ir = s.inv_rho.data();
            const double* rho = s.rho.data();
            const double drift = s.drift;
            Index moved = 0;
            for (Index f = 0; f < n_; ++f) {
                const double q = w2[f] * ir[f];
                const bool zero = rho[f] == 0.0;
                const bool out = zero ? w2[f] != 0.0 : !(std::abs(q - 1.0) <= drift);
                mv[moved] = f;
                moved += out;
                const double qq = out || zero ? 1.0 : q;
                lo = qq < lo ? qq : lo;
                hi = qq > hi ? qq : hi;
            }
            s.moved.resize(static_cast<std::size_t>(moved));
            // The tolerance trades refreshing features (m multiply-adds each, vectorised)
            // against the exact distances of the samples that wider bounds let onto the
            // shortlist (n each): it rises while the refreshes cost more than half the
            // extra exact terms and falls otherwise, a balance measured fastest on the RGS
            // benchmark (1000 x 50, 1000 x 500). Either way the neighbours are exact; only
            // the time depends on it.
            if (2 * moved * m_ > s.extra * n_)
                s.drift = std::min(kDriftMax, s.drift * 1.25);
            else
                s.drift = std::max(kDriftMin, s.drift / 1.25);
            if (2 * moved > n_ || s.updates + moved > kRebuildUpdates * n_) {
                s.built = false;
            } else if (moved > 0) {
                refresh(w2, s);
            }
        }
        if (!s.built) {
            build(w2, s);
            lo = hi = 1.0;
        }
        s.lo = lo * (1.0 - 4.0 * u);  // each ratio rounds twice (1 / rho, then the product)
        s.hi = hi * (1.0 + 4.0 * u);
        s.top_w = top;
        // Absolute slack for results below float32's normal range (tiny weights or products):
        // at most 2^-150 per rounding under IEEE gradual underflow, but the caller's thread may
        // flush subnormal results (FTZ) or read subnormal inputs as 0 (DAZ), as code built
        // with fast-math can leave it. Then an operation may err by 2^-126 times the largest
        // other operand (|v_f| <= 2 top_w top_z, |z| <= top_z, or 1): allowed for, generously.
        s.tiny = static_cast<double>(2 * n_ + 8) * (2.0 + top_z_ + 2.0 * top * top_z_) * 0x1.0p-124;
        // The screen starts a sample from scale a_j rather than a_j, which moves the parts of
        // the allowance that grow with a_j onto the sample's own value (query() derives it):
        // the float32 error of the cross term, |2 sum w2 z_i z_j| <= A_i + A_j, and the
        // conversion radius of z_j, (R + r_j)^2 <= (1 + mu) R^2 + (1 + 1/mu) r_j^2 with
        // r_j^2 <= 4 u32^2 A_j. What is left over is uniform over j.
        s.scale = (s.lo - kappa(s) - g32_ * s.hi) / (1.0 + g32_) * (1.0 - 4.0 * u);
    }

    double exact_distance(Index i, Index j, const double* w2) const {
        const T* a = X_.row(i).data();
        const T* b = X_.row(j).data();
        double d = 0.0;
        for (Index f = 0; f < n_; ++f) {
            const double t = static_cast<double>(a[f]) - static_cast<double>(b[f]);
            d += w2[f] * (t * t);
        }
        return d;
    }

    // The k nearest other samples of i (nearest first, equal distances to the lower index),
    // their exact distances in dist. The float32 pass is split over `threads` when the row is
    // long. Returns min(k, m - 1).
    int query(Index i, const double* w2, int k, Scratch& s, int threads, Index* idx,
              double* dist) const {
        k = static_cast<int>(std::min<Index>(k, m_ - 1));
        if (k <= 0) return 0;
        if (!s.shortlist_ok) {
            int count = 0;
            for (Index j = 0; j < m_; ++j)
                if (j != i) keep_smallest(exact_distance(i, j, w2), j, k, count, dist, idx);
            return count;
        }
        const double u = screen::kUnit64;
        // The query's own term a_i and the multipliers of the cross term, from the sample's
        // own row (a column of XT_ would touch one cache line per feature) through the same
        // conversion as the one that built XT_, so the same values.
        double ai = 0.0;
        {
            const T* xr = X_.row(i).data();
            const double* centre = centre_.data();
            const double* w2s = s.w2s.data();
            float* v = s.v.data();
            // a_i in any order: its bound allows for the rounding of every order.
#pragma omp simd reduction(+ : ai)
            for (Index f = 0; f < n_; ++f) {
                const double z = static_cast<double>(
                    static_cast<float>(static_cast<double>(xr[f]) - centre[f]));
                v[f] = static_cast<float>(-2.0 * w2s[f] * z);
                ai += w2s[f] * (z * z);
            }
        }
        // (n roundings below float64's normal range, flushed or not, allowed for in ai_lo.)
        const double ai_lo = ai * (1.0 - g64_) - static_cast<double>(n_ + 2) * 0x1.0p-1020;
        const double ai_hi = ai * (1.0 + g64_) + static_cast<double>(n_ + 2) * 0x1.0p-1020;
        const int nt = threads > 1 && m_ * n_ >= kRowParallelWork ? threads : 1;
        if (nt == 1) {
            approximate(s, 0, m_);
        } else {
#pragma omp parallel num_threads(nt)
            {
                int t = 0, team = 1;
#ifdef FASTFS_HAVE_OPENMP
                t = omp_get_thread_num();
                team = omp_get_num_threads();
#endif
                auto bound = [&](int v) {
                    return v >= team ? m_ : std::min(m_, (m_ * v / team) & ~Index{7});
                };
                approximate(s, bound(t), bound(t + 1));
            }
        }
        // approx[j] is, up to the allowances below, scale a_j - 2 sum_f w2_f z_if z_jf: a lower
        // bound of the distance minus a_i. The sample itself is set to +inf so that no loop
        // below needs a branch for it.
        float* a = s.approx.data();
        a[i] = std::numeric_limits<float>::infinity();
        float* hv = s.heap_val.data();
        Index* hi = s.heap_idx.data();
        // Each block's minimum, once (vectorised). The k-th smallest block minimum, cap,
        // bounds the k-th smallest value (k blocks each hold a value at most that large), so
        // only the values within it can be among the k smallest: they are gathered first
        // (branch-free), then ranked.
        // Blocks of 32 samples, fewer (down to 8) when m < 64 k, so that there are at least
        // about 2k blocks and cap stays finite.
        const Index block = std::max<Index>(8, std::min<Index>(32, (m_ / (2 * k)) & ~Index{7}));
        const Index n_blocks = (m_ + block - 1) / block;
        s.block_min.resize(static_cast<std::size_t>(n_blocks));
        float* bmin = s.block_min.data();
#ifdef FASTFS_HAVE_FMA_SWEEP
        if (fma_)
            kernels::block_minima_avx2(a, m_, block, bmin);
        else
#endif
            kernels::block_minima(a, m_, block, bmin);
        const float cap = n_blocks >= k ? kth_smallest(bmin, n_blocks, k, s.block_tmp)
                                        : std::numeric_limits<float>::infinity();
        std::uint32_t* pool = s.pool.data();
        const int pooled = gather(a, cap, pool);
        int count = 0;
        for (int r = 0; r < pooled; ++r) keep_smallest(a[pool[r]], pool[r], k, count, hv, hi);
        // The exact distances of these k: the k-th nearest exact distance is at most their
        // largest.
        Index* cand = s.cand.data();
        double* cand_d = s.cand_d.data();
        count = static_cast<int>(std::remove_copy(hi, hi + count, cand, i) - cand);
        std::sort(cand, cand + count);
        exact_distances(i, cand, count, w2, cand_d);
        // (count < k cannot happen with finite values; then every sample is shortlisted.)
        double top_d = count < k ? std::numeric_limits<double>::infinity() : 0.0;
        for (int r = 0; r < count; ++r) top_d = std::max(top_d, cand_d[r]);
        // Every sample whose lower bound may not exceed it. With A_i, A_j the real a_i, a_j of
        // the converted coordinates under w2 (A_j within [lo, hi] (a_j +- a_err)), d~ their
        // real distance, and e the float32 error of a value,
        //   |e| <= g32 (|scale a_j| + A_i + A_j) + tiny, so, by the choice of scale,
        //   d~ - value >= (1 - g32) A_i + kappa a_j - (lo + g32 hi) a_err - tiny
        // (the allowance below also covers a slightly negative computed a_j).
        // A sample belongs to the k nearest only if its exact distance is at most top_d: its
        // real distance is then at most top_d / (1 - g64), and (centring and conversion) the
        // square root of d~ at most that of top_d / (1 - g64) plus r_i + r_j, with
        // r <= 2 u32 sqrt(A) + rho0 (rho0: the absolute error of subnormal coordinates). So
        //   d~ <= (1 + mu) t^2 + kappa (a_j + a_err),  t = sqrt(top_d / (1 - g64)) + r_i + rho0,
        // and its value is at most limit below. Every sum is rounded up on the way.
        const double u32 = screen::kUnit32;
        const double ea = s.a_err * (1.0 + 4.0 * u);
        const double e32 = (g32_ * (ai_hi + (4.0 * s.hi + 3.0 * s.lo) * ea) + s.tiny) * (1.0 + 8.0 * u);
        const double rho0 = std::sqrt(static_cast<double>(n_) * s.top_w) * 0x1.0p-124;
        // (The float64 roundings below the normal range, 2^-1022 each if flushed, are added
        // to top_d.)
        const double d_abs = static_cast<double>(n_ + 4) * 0x1.0p-1020;
        // top_d in the screen's units (rounded up when the power of two is not exact).
        double top_s = top_d + d_abs;
        if (std::isfinite(top_s)) {
            const double scaled = std::ldexp(top_s, -s.exp);
            top_s = std::ldexp(scaled, s.exp) >= top_s
                        ? scaled
                        : std::nextafter(scaled, std::numeric_limits<double>::infinity());
        }
        const double t = (std::sqrt(top_s / (1.0 - g64_)) * (1.0 + 4.0 * u) +
                          2.0 * u32 * std::sqrt(ai_hi) * (1.0 + 4.0 * u) + 2.0 * rho0) *
                         (1.0 + 4.0 * u);
        const double t2 = (1.0 + kMu) * t * t * (1.0 + 4.0 * u);
        const double eb = (s.lo + kappa(s)) * ea;
        double limit = t2 - ai_lo + eb + e32;
        limit += 8.0 * u * (t2 + ai_lo + eb + e32);
        float flimit = static_cast<float>(limit);
        if (static_cast<double>(flimit) < limit)
            flimit = std::nextafter(flimit, std::numeric_limits<float>::infinity());
        std::uint32_t* list = s.shortlist.data();
        const int kept = gather(a, flimit, list);
        // The shortlisted samples that are not candidates, then their exact distances.
        s.rest.clear();
        {
            int c = 0;
            for (int r = 0; r < kept; ++r) {
                const Index j = list[r];
                while (c < count && cand[c] < j) ++c;
                if (c < count && cand[c] == j) continue;
                if (j != i) s.rest.push_back(j);
            }
        }
        const int n_rest = static_cast<int>(s.rest.size());
        s.rest_d.resize(s.rest.size());
        exact_distances(i, s.rest.data(), n_rest, w2, s.rest_d.data());
        s.kept = kept;
        s.extra = n_rest;
        // The k nearest of both lists by (distance, index), which is what offering them in
        // index order gives: the candidates first, then the rest (usually farther).
        const int n_cand = count;
        count = 0;
        for (int c = 0; c < n_cand; ++c) keep_smallest(cand_d[c], cand[c], k, count, dist, idx);
        for (int r = 0; r < n_rest; ++r)
            keep_smallest(s.rest_d[static_cast<std::size_t>(r)], s.rest[static_cast<std::size_t>(r)],
                        k, count, dist, idx);
        return count;
    }

private:
    static constexpr Index kShortlistMinFeatures = 8;
    // The screen's power of two is kept while the largest weight stays within 2^+-kExpSlack of
    // 2^exp (float32 then holds every product and sum with room to spare).
    static constexpr int kExpSlack = 16;

    // Replaces each mean in centre_ by the median of up to 15 evenly spread samples when it
    // lies more than twice their interquartile range from it. The samples, padded to 16 with
    // +inf, are sorted feature by feature with Batcher's odd-even merge network (branch-free,
    // vectorised across features).
    void robust_centres(const MatrixRef<T>& X) {
        constexpr int kNet = 16;
        const Index n_rows = std::min<Index>(m_, kNet - 1);
        std::vector<double> rows(static_cast<std::size_t>(kNet * n_),
                                 std::numeric_limits<double>::infinity());
        for (Index q = 0; q < n_rows; ++q) {
            const T* xr = X.row(q * m_ / n_rows).data();
            for (Index f = 0; f < n_; ++f) rows[static_cast<std::size_t>(q * n_ + f)] = static_cast<double>(xr[f]);
        }
        for (int p = 1; p < kNet; p <<= 1)
            for (int k = p; k >= 1; k >>= 1)
                for (int j = k % p; j + k < kNet; j += 2 * k)
                    for (int i = 0; i < std::min(k, kNet - j - k); ++i) {
                        if ((i + j) / (2 * p) != (i + j + k) / (2 * p)) continue;
                        double* __restrict ra = rows.data() + (i + j) * n_;
                        double* __restrict rb = rows.data() + (i + j + k) * n_;
#pragma omp simd
                        for (Index f = 0; f < n_; ++f) {
                            const double x = ra[f], y = rb[f];
                            ra[f] = y < x ? y : x;
                            rb[f] = y < x ? x : y;
                        }
                    }
        const double* med = rows.data() + (n_rows / 2) * n_;
        const double* q1 = rows.data() + (n_rows / 4) * n_;
        const double* q3 = rows.data() + (3 * n_rows / 4) * n_;
        for (Index f = 0; f < n_; ++f) {
            double& c = centre_[static_cast<std::size_t>(f)];
            if (!(std::abs(c - med[f]) <= 2.0 * (q3[f] - q1[f]))) c = med[f];
        }
    }

    // XT_ = float(x - centre), transposed through blocks of kRows rows (each written column is
    // then a run of kRows floats, not one float per cache line), and z2_col_.
    void transpose_centred(const MatrixRef<T>& X) {
        constexpr Index kRows = 16;
        const double* centre = centre_.data();
        z2_col_.assign(static_cast<std::size_t>(n_), 0.0);
        std::vector<float> rows(static_cast<std::size_t>(kRows * n_));
        for (Index i0 = 0; i0 < m_; i0 += kRows) {
            const Index nr = std::min(kRows, m_ - i0);
            for (Index r = 0; r < nr; ++r) {
                const T* xr = X.row(i0 + r).data();
                float* zr = rows.data() + r * n_;
#pragma omp simd
                for (Index f = 0; f < n_; ++f)
                    zr[f] = static_cast<float>(static_cast<double>(xr[f]) - centre[f]);
            }
            for (Index f = 0; f < n_; ++f) {
                float* out = XT_.row(f).data() + i0;
                double zmax = z2_col_[static_cast<std::size_t>(f)];
#pragma omp simd reduction(max : zmax)
                for (Index r = 0; r < nr; ++r) {
                    const float z = rows[static_cast<std::size_t>(r * n_ + f)];
                    out[r] = z;
                    const double zz = static_cast<double>(z) * static_cast<double>(z);
                    zmax = zz > zmax ? zz : zmax;
                }
                z2_col_[static_cast<std::size_t>(f)] = zmax;
            }
        }
    }
    static constexpr Index kTile = 1024;  // samples per tile: the float32 sums stay in L1
    // The range of the refresh tolerance (Scratch::drift).
    static constexpr double kDriftMin = 0.002, kDriftMax = 0.25;
    // a_j is built afresh after this many refreshes per feature (which keeps a_err small).
    static constexpr Index kRebuildUpdates = 16;
    // The split of the conversion radius in query()'s bound (any mu > 0 is valid).
    static constexpr double kMu = 0x1.0p-20;

    // (1 + 1/mu) 4 u32^2 hi, rounded up: the squared conversion radius of z_j, r_j^2 <=
    // 4 u32^2 A_j <= 4 u32^2 hi (a_j + a_err), weighted by the split.
    static double kappa(const Scratch& s) {
        const double u32 = screen::kUnit32;
        return (1.0 + 1.0 / kMu) * 4.0 * u32 * u32 * s.hi * (1.0 + 0x1.0p-48);
    }

    // a_j = sum_f rho_f z_jf^2 afresh with rho = w2.
    void build(const double* w2, Scratch& s) const {
        const double u = screen::kUnit64;
        s.rho.assign(w2, w2 + n_);
        s.inv_rho.resize(static_cast<std::size_t>(n_));
        for (Index f = 0; f < n_; ++f)
            s.inv_rho[static_cast<std::size_t>(f)] = w2[f] > 0.0 ? 1.0 / w2[f] : 0.0;
        s.a.assign(static_cast<std::size_t>(m_), 0.0);
        s.moved.clear();
        for (Index f = 0; f < n_; ++f)
            if (w2[f] != 0.0) s.moved.push_back(f);
        add_squares(s.moved, w2, s);
        // n products and n sums of non-negative terms, their sum at most weighted_top(rho);
        // plus 2^-1022 per rounding for results below the normal range (flushed or not).
        s.a_err = (static_cast<double>(2 * n_ + 2) * u * 1.01 * weighted_top(s.rho.data()) +
                   static_cast<double>(2 * n_ + 2) * 0x1.0p-1022) *
                  (1.0 + 0x1.0p-50);
        s.a_top = weighted_top(s.rho.data());
        s.updates = 0;
        s.built = true;
        s.owner = id_;
        ++s.n_rebuilt;
    }

    // Moves the reference weight of the features in s.moved to w2 (a_j += (w2_f - rho_f)
    // z_jf^2).
    void refresh(const double* w2, Scratch& s) const {
        const double u = screen::kUnit64;
        s.delta.resize(static_cast<std::size_t>(n_));
        const double top_old = s.a_top;
        double moved = 0.0;  // sum over the moved features of |w2_f - rho_f| max_j z_jf^2
        for (Index f : s.moved) {
            double& r = s.rho[static_cast<std::size_t>(f)];
            moved += std::abs(w2[f] - r) * z2_col_[static_cast<std::size_t>(f)];
            s.delta[static_cast<std::size_t>(f)] = w2[f] - r;
            r = w2[f];
            s.inv_rho[static_cast<std::size_t>(f)] = r > 0.0 ? 1.0 / r : 0.0;
        }
        add_squares(s.moved, s.delta.data(), s);
        // Each of the K updates rounds the difference and the product (together at most
        // 2u |w2_f - rho_f| z_jf^2) and the sum (u |a_j in between|, at most u (top_old +
        // top_new + a_err)); the error so far grows by (1 + u) per update.
        const double K = static_cast<double>(s.moved.size());
        const double top_new = weighted_top(s.rho.data());
        s.a_top = top_new;
        s.a_err = (s.a_err * (1.0 + 1.01 * K * u) + 2.02 * u * moved * (1.0 + 0x1.0p-40) +
                   1.01 * K * u * (top_old + top_new + s.a_err) + 4.0 * K * 0x1.0p-1022) *
                  (1.0 + 0x1.0p-50);
        s.updates += static_cast<Index>(s.moved.size());
        s.n_refreshed += static_cast<Index>(s.moved.size());
    }

    // a_j += d_f z_jf^2 for the features f in `features`, in their order, four per sweep.
    void add_squares(const std::vector<Index>& features, const double* d, Scratch& s) const {
        std::size_t q = 0;
        for (; q + 4 <= features.size(); q += 4) {
            const Index f0 = features[q], f1 = features[q + 1], f2 = features[q + 2],
                        f3 = features[q + 3];
            kernels::add_scaled_squares4(XT_.row(f0).data(), XT_.row(f1).data(),
                                         XT_.row(f2).data(), XT_.row(f3).data(), d[f0], d[f1],
                                         d[f2], d[f3], m_, s.a.data());
        }
        for (; q < features.size(); ++q)
            kernels::add_scaled_squares(XT_.row(features[q]).data(), d[features[q]], m_,
                                        s.a.data());
    }

    // sum_f r_f max_j z_jf^2, rounded up: bounds sum_f r_f z_jf^2 for every j.
    double weighted_top(const double* r) const {
        double top = 0.0;
        for (Index f = 0; f < n_; ++f) top += r[f] * z2_col_[static_cast<std::size_t>(f)];
        return top * (1.0 + static_cast<double>(2 * n_ + 4) * 0x1.0p-53);
    }

    // The samples whose screen value is at most t, in index order.
    int gather(const float* a, float t, std::uint32_t* out) const {
#ifdef FASTFS_HAVE_FMA_SWEEP
        if (fma_) return kernels::gather_at_most_avx2(a, m_, t, out);
#endif
        return kernels::gather_at_most(a, 0, m_, t, out);
    }

    // The k-th smallest of x[0, n), 1 <= k <= n.
    static float kth_smallest(const float* x, Index n, int k, std::vector<float>& tmp) {
        tmp.assign(x, x + n);
        std::nth_element(tmp.begin(), tmp.begin() + (k - 1), tmp.end());
        return tmp[static_cast<std::size_t>(k - 1)];
    }

    // exact_distance() of i to j[0..count), four at a time: each is still summed alone in
    // feature order (the same bits), but four independent chains hide the latency of the
    // additions.
    // A last group of fewer than four repeats its last sample: one group of four costs about
    // what a single chain does.
    void exact_distances(Index i, const Index* j, int count, const double* w2, double* out) const {
        int r = 0;
        for (; r + 4 <= count; r += 4) exact_distances4(i, j + r, w2, out + r);
        if (r < count) {
            Index jj[4];
            double dd[4];
            for (int q = 0; q < 4; ++q) jj[q] = j[std::min(r + q, count - 1)];
            exact_distances4(i, jj, w2, dd);
            for (int q = 0; r + q < count; ++q) out[r + q] = dd[q];
        }
    }

    // exact_distance() of i to j[0..3], each summed in feature order as there.
    void exact_distances4(Index i, const Index* j, const double* w2, double* out) const {
        const T* a = X_.row(i).data();
        const T* b0 = X_.row(j[0]).data();
        const T* b1 = X_.row(j[1]).data();
        const T* b2 = X_.row(j[2]).data();
        const T* b3 = X_.row(j[3]).data();
        double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
        for (Index f = 0; f < n_; ++f) {
            const double af = static_cast<double>(a[f]), wf = w2[f];
            const double t0 = af - static_cast<double>(b0[f]);
            const double t1 = af - static_cast<double>(b1[f]);
            const double t2 = af - static_cast<double>(b2[f]);
            const double t3 = af - static_cast<double>(b3[f]);
            d0 += wf * (t0 * t0);
            d1 += wf * (t1 * t1);
            d2 += wf * (t2 * t2);
            d3 += wf * (t3 * t3);
        }
        out[0] = d0;
        out[1] = d1;
        out[2] = d2;
        out[3] = d3;
    }

    // The screen values of samples [j0, j1): float(scale a_j) plus the cross term, eight features
    // per sweep.
    void approximate(Scratch& s, Index j0, Index j1) const {
        float* out = s.approx.data();
        const float* v = s.v.data();
        const double* init = s.a.data();
        const double scale = s.scale;
        for (Index lo = j0; lo < j1; lo += kTile) {
            const Index hi = std::min(lo + kTile, j1);
            Index f = 0;
            const float* c[8];
            auto sweep = [&](auto width, auto first) {
                constexpr int F = decltype(width)::value;
                constexpr bool Init = decltype(first)::value;
                for (int q = 0; q < F; ++q) c[q] = XT_.row(f + q).data();
#ifdef FASTFS_HAVE_FMA_SWEEP
                if (fma_) {
                    kernels::dot_columns_fma<F, Init>(c, v + f, init, scale, lo, hi, out);
                    f += F;
                    return;
                }
#endif
                kernels::dot_columns<F, Init>(c, v + f, init, scale, lo, hi, out);
                f += F;
            };
            auto rest = [&](auto first) {
                switch (n_ - f) {
                    case 7: sweep(std::integral_constant<int, 7>{}, first); break;
                    case 6: sweep(std::integral_constant<int, 6>{}, first); break;
                    case 5: sweep(std::integral_constant<int, 5>{}, first); break;
                    case 4: sweep(std::integral_constant<int, 4>{}, first); break;
                    case 3: sweep(std::integral_constant<int, 3>{}, first); break;
                    case 2: sweep(std::integral_constant<int, 2>{}, first); break;
                    case 1: sweep(std::integral_constant<int, 1>{}, first); break;
                    default: break;
                }
            };
            // n >= 8 here (kShortlistMinFeatures), so the first sweep is a full one.
            sweep(std::integral_constant<int, 8>{}, std::true_type{});
            while (f + 8 <= n_) sweep(std::integral_constant<int, 8>{}, std::false_type{});
            rest(std::false_type{});
        }
    }

    static std::uint64_t next_id() {
        static std::atomic<std::uint64_t> counter{0};
        return ++counter;
    }

    MatrixRef<T> X_;
    Index m_, n_;
    std::uint64_t id_ = next_id();  // a scratch built for another query starts afresh
    bool usable_ = false;
    std::vector<double> centre_;  // per feature: the centre of the float32 copy (its median)
    RowMatrix<float> XT_;        // centred X transposed, float32: one feature per row
    double top_z_ = 0.0;         // the largest |z_jf|
    // The float32 value of a sample is a sum of n + 1 terms (the converted scale a_j and the
    // products of -2 w2_f z_if, itself rounded, with z_jf), each addition rounding once with
    // FMA and twice without: relative error at most g32 = gamma_{2n+4} of the sum of the
    // terms' magnitudes. The exact distance, against the real one: n + 4 roundings of
    // non-negative terms, g64 = gamma_{n+4} in float64.
    double g32_ = screen::gamma(2 * n_ + 4, screen::kUnit32);
    double g64_ = screen::gamma(n_ + 4, screen::kUnit64);
    std::vector<double> z2_col_;  // max_j z_jf^2 per feature
#ifdef FASTFS_HAVE_FMA_SWEEP
    bool fma_ = kernels::cpu_has_fma();
#endif
};

// Per-sample neighbour lists under weights w2 (k per sample, nearest first), in parallel over
// samples. Each list is computed by one thread, so the lists do not depend on the thread count.
// `stop` is polled between samples by OpenMP thread 0, which must be the thread that holds
// the caller's signal handling: pass an empty hook when calling from inside a parallel region.
template <class T>
void all_k_nearest(const KnnQuery<T>& q, const double* w2, int k, int threads,
                   std::vector<Index>& idx, std::vector<double>& dist,
                   const StopHook& stop = {}) {
    const Index m = q.n_samples();
    idx.assign(static_cast<std::size_t>(m) * k, 0);
    dist.assign(static_cast<std::size_t>(m) * k, 0.0);
    // Small problems on one thread: waking a team costs more than the whole pass.
    const bool small = static_cast<double>(m) * static_cast<double>(m) * 64.0 < 1e7;
    const int nt = small ? 1 : std::max(1, std::min<int>(threads, static_cast<int>(m)));
    // Allocated and prepared before the region (prepare() sizes everything a query uses):
    // nothing inside it may throw.
    std::vector<typename KnnQuery<T>::Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) q.prepare(w2, s);
    std::atomic<bool> halt{false};
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
    for (Index i = 0; i < m; ++i) {
        if (halt.load(std::memory_order_relaxed)) continue;
        int t = 0;
#ifdef FASTFS_HAVE_OPENMP
        t = omp_get_thread_num();
#endif
        if (t == 0 && stop && stop()) {
            halt.store(true);
            continue;
        }
        q.query(i, w2, k, scratch[static_cast<std::size_t>(t)], 1,
                idx.data() + static_cast<std::size_t>(i) * k,
                dist.data() + static_cast<std::size_t>(i) * k);
    }
    if (halt.load()) throw Interrupted();
}

// SPEC 3.3's beta: half the mean squared distance from each sample to its k nearest neighbours.
inline double default_beta(const std::vector<double>& dist) {
    double s = 0.0;
    for (double d : dist) s += d;
    return 0.5 * s / static_cast<double>(dist.size());
}

// g_hat of every sample from its neighbour lists; beta > 0, or 0 for the limit.
inline std::vector<double> soft_knn_estimates(const double* y, Index m, int k,
                                              const std::vector<Index>& idx,
                                              const std::vector<double>& dist, double beta) {
    std::vector<double> g(static_cast<std::size_t>(m));
    std::vector<double> p(static_cast<std::size_t>(k));
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist.data() + o, k, beta, p.data());
        double s = 0.0;
        for (int j = 0; j < k; ++j) s += p[j] * y[idx[o + j]];
        g[static_cast<std::size_t>(i)] = s;
    }
    return g;
}

// e straight from the neighbour lists, with the caller's k-sized buffer p (no allocation, for
// use inside parallel regions); the same sum, in the same order, as the two functions around it.
inline double soft_knn_evaluation(const double* y, Index m, int k, const Index* idx,
                                  const double* dist, double beta, double* p) {
    double s = 0.0;
    for (Index i = 0; i < m; ++i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        kernel_weights(dist + o, k, beta, p);
        double g = 0.0;
        for (int j = 0; j < k; ++j) g += p[j] * y[idx[o + j]];
        const double r = y[i] - g;
        s += r * r;
    }
    return -0.5 * s;
}

// e = -(1/2) sum (y - g_hat)^2, summed in sample order (the same bits for any thread count).
inline double regression_evaluation(const double* y, const std::vector<double>& g) {
    double s = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const double r = y[i] - g[i];
        s += r * r;
    }
    return -0.5 * s;
}

struct KnnRegressionResult {
    std::vector<double> estimates;  // g_hat per sample
    double score = 0.0;             // e
    double beta = 0.0;              // the beta used (the default when asked for one)
    int k = 0;
};

// The criterion under feature weights w (distances sum_f w_f^2 (x_f - z_f)^2). beta <= 0 asks
// for the default of SPEC 3.3 computed under these weights.
template <class T>
KnnRegressionResult knn_regression(const KnnQuery<T>& q, Index n_features, const double* y,
                                   const double* w, Index n_neighbors, double beta,
                                   int threads, const StopHook& stop = {}) {
    const Index m = q.n_samples(), n = n_features;
    KnnRegressionResult r;
    r.k = effective_k(n_neighbors, m);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) w2[static_cast<std::size_t>(f)] = w[f] * w[f];
    std::vector<Index> idx;
    std::vector<double> dist;
    all_k_nearest(q, w2.data(), r.k, resolve_threads(threads), idx, dist, stop);
    r.beta = beta > 0.0 ? beta : default_beta(dist);
    r.estimates = soft_knn_estimates(y, m, r.k, idx, dist, r.beta);
    r.score = regression_evaluation(y, r.estimates);
    return r;
}

template <class T>
KnnRegressionResult knn_regression(const MatrixRef<T>& X, const double* y, const double* w,
                                   Index n_neighbors, double beta, int threads,
                                   const StopHook& stop = {}) {
    const KnnQuery<T> q(X);
    return knn_regression(q, X.cols(), y, w, n_neighbors, beta, threads, stop);
}

// SKS (SPEC 3.4): the criterion on each feature alone, beta <= 0 meaning the default computed
// on that feature. Parallel over features; every feature's score is computed by one thread.
// `stop` is polled by the calling thread between samples; `callback` gets the scores after
// every step (a group of features; NaN for those not reached) and may end the pass there.
template <class T>
std::vector<double> single_feature_scores(const MatrixRef<T>& X, const double* y,
                                          Index n_neighbors, double beta, int threads,
                                          const StopHook& stop = {},
                                          const ProgressHook& callback = {},
                                          PassStatus* status = nullptr) {
    const Index m = X.rows(), n = X.cols();
    const int k = effective_k(n_neighbors, m);
    std::vector<double> scores(static_cast<std::size_t>(n),
                               std::numeric_limits<double>::quiet_NaN());
    const int nt = std::max(1, std::min<int>(resolve_threads(threads), static_cast<int>(n)));
    struct Scratch {
        std::vector<double> row, dist, col, p;
        std::vector<Index> idx;
    };
    // Allocated before the region: nothing inside it may throw.
    std::vector<Scratch> scratch(static_cast<std::size_t>(nt));
    for (auto& s : scratch) {
        s.row.resize(static_cast<std::size_t>(m));
        s.col.resize(static_cast<std::size_t>(m));
        s.dist.resize(static_cast<std::size_t>(m) * k);
        s.idx.resize(static_cast<std::size_t>(m) * k);
        s.p.resize(static_cast<std::size_t>(k));
    }
    StopPoll poll(stop);
    // Features per step: all of them in one region unless a callback wants progress.
    const Index group = callback ? std::max<Index>(nt, (n + 63) / 64) : n;
    PassStatus done;
    for (Index f0 = 0; f0 < n && !done.stopped_early; f0 += group) {
        const Index f1 = std::min(n, f0 + group);
#pragma omp parallel num_threads(nt)
        {
            int t = 0;
#ifdef FASTFS_HAVE_OPENMP
            t = omp_get_thread_num();
#endif
            auto& row = scratch[static_cast<std::size_t>(t)].row;
            auto& dist = scratch[static_cast<std::size_t>(t)].dist;
            auto& col = scratch[static_cast<std::size_t>(t)].col;
            auto& idx = scratch[static_cast<std::size_t>(t)].idx;
            auto& p = scratch[static_cast<std::size_t>(t)].p;
#pragma omp for schedule(dynamic, 1)
            for (Index f = f0; f < f1; ++f) {
                if (poll.stopped()) continue;
                for (Index i = 0; i < m; ++i) col[static_cast<std::size_t>(i)] = static_cast<double>(X(i, f));
                for (Index i = 0; i < m; ++i) {
                    if (i % 64 == 0 && poll.stopped()) break;  // a row costs only O(m)
                    const double xi = col[static_cast<std::size_t>(i)];
                    for (Index j = 0; j < m; ++j) {
                        const double d = xi - col[static_cast<std::size_t>(j)];
                        row[static_cast<std::size_t>(j)] = d * d;
                    }
                    select_k_nearest(row.data(), m, i, k, idx.data() + static_cast<std::size_t>(i) * k,
                                     dist.data() + static_cast<std::size_t>(i) * k);
                }
                if (poll.stopped()) continue;
                const double b = beta > 0.0 ? beta : default_beta(dist);
                scores[static_cast<std::size_t>(f)] =
                    soft_knn_evaluation(y, m, k, idx.data(), dist.data(), b, p.data());
            }
        }
        poll.check();
        done.done = f1;
        if (callback && callback(Progress::pass(f0 / group + 1, f1,
                                              std::numeric_limits<double>::quiet_NaN(), &scores)))
            done.stopped_early = f1 < n;
    }
    if (status) *status = done;
    return scores;
}

// ---------------------------------------------------------------------------------------------
// On the shared distance state (feature subsets).

// e of the subset whose squared distances are D + sign * delta(col) (col == nullptr: D itself).
// The state must be built on a one-class layout (ClassLayout::from_codes of zeros), so
// positions are sample indices, and mirrored (DistanceState::mirror()) after its last change.
// beta <= 0 means the default of SPEC 3.3 recomputed on this subset: half the mean squared
// distance to the k nearest. Parallel over samples; the per-sample values are summed in
// sample order, so the score has the same bits for any thread count. If `estimates` is given it
// receives g_hat per sample.
inline void check_subset_state(const DistanceState<double>& state, int k) {
    require(state.layout().n_classes() == 1,
            "knn_subset_score: the distance state must use a one-class layout");
    require(k >= 1 && k <= state.n_samples() - 1,
            "knn_subset_score: k must be in [1, n_samples - 1]");
    state.full_row(0);  // throws here, not inside a parallel region, when not mirrored
}

namespace detail {
inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates) {
    const Index m = state.n_samples();
    std::vector<Index> idx(static_cast<std::size_t>(m) * k);
    std::vector<double> dist(static_cast<std::size_t>(m) * k);
    const int nt = std::max(1, resolve_threads(threads));
    auto neighbours = [&](Index a) {
        state.k_nearest(a, col, sign, k, idx.data() + static_cast<std::size_t>(a) * k,
                        dist.data() + static_cast<std::size_t>(a) * k);
    };
    if (nt == 1) {
        for (Index a = 0; a < m; ++a) neighbours(a);
    } else {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (Index a = 0; a < m; ++a) neighbours(a);
    }
    // D + delta may round a distance of an identical pair to a tiny negative value under
    // removal; the default beta and the kernel only use differences and the mean, so clamp.
    for (double& d : dist) d = std::max(d, 0.0);
    const double b = beta > 0.0 ? beta : default_beta(dist);
    // Positions are sample indices in a one-class layout (the stable sort keeps the order).
    std::vector<double> g = soft_knn_estimates(y, m, k, idx, dist, b);
    const double e = regression_evaluation(y, g);
    if (estimates) *estimates = std::move(g);
    return e;
}
}  // namespace detail

inline double knn_subset_score(const DistanceState<double>& state, const double* y, int k,
                               double beta, const double* col, double sign, int threads,
                               std::vector<double>* estimates = nullptr) {
    check_subset_state(state, k);
    return detail::knn_subset_score(state, y, k, beta, col, sign, threads, estimates);
}

}  // namespace fastfs
