// Nearest hit and miss of every sample under one weight vector from blocked float32 Gram
// products (the scheme of scikit-learn's pairwise-distance reductions), exact all the same.
//
// The data is weighted, centred (a translation changes no distance) and scaled by a power of
// two (which scales every distance alike) into a float32 matrix Y, its rows padded to a multiple
// of 8 with zeros. For a tile of 64 x 64 sample pairs, g = Y_I Y_J^T comes from one float32
// matrix product (FMA on CPUs that have it), and a_ij = |y_i|^2 + |y_j|^2 - 2 g_ij approximates
// the squared distance. Only tiles J >= I are computed: the distance matrix is symmetric, so a
// tile screens its rows against its columns and its columns against its rows.
//
// Sparse data (word counts, one-hot codes: at most a quarter of the values nonzero) is not
// centred, so that Y keeps its zeros: the columns with many nonzeros go to a small dense panel
// whose tiles are matrix products as above, and every other column adds to a tile only the
// products of its nonzeros in the two blocks (about n d^2 per pair of samples instead of n).
// A tile entry is then a float32 sum of the same products in another order: the bounds below
// do not change, only the norms they scale with are those of the uncentred data.
//
// Rigorous bounds (u = 2^-24, float32's unit roundoff; u64 = 2^-53):
//  * Y against the exact weighted, centred, scaled data Z: every entry errs by at most
//    eps |z| + eta (eps = u + 6 u64: sqrt of the weight, the centring subtraction, the product,
//    the conversion to float32; eta = 2^-126 for values that underflow or are flushed to zero),
//    so |y_i - z_i| <= r_i = eps |z_i| + eta sqrt(n) and the distance (not squared) moves by at
//    most r_i + r_j.
//  * Columns whose weight is negligible may be left out of Y altogether (choose_columns():
//    Simba's and RGS's weights decay, and such columns would fill the tiles with products
//    that change no decision): y_i is then 0 there, and r_i also holds the exact float64 norm
//    of z_i's left-out part, so the same bounds hold with fewer products.
//  * The product: a float32 dot product of n terms in any order (with or without FMA) errs by
//    at most gamma_{n+8} sum |y_if y_jf| <= gamma_{n+8} |y_i| |y_j| <= gamma (N_i + N_j) / 2
//    (Cauchy-Schwarz, then 2ab <= a^2 + b^2), plus 2^-126 per operation for underflow. So
//    |a_ij - |y_i - y_j|^2| <= E_ij = Gamma (N_i + N_j) + tau: the error scales with the norms,
//    not with the distance (the cancellation of the Gram form), which is why the data is
//    centred first. Gamma adds 1e-10 to gamma for every float64 rounding of the bookkeeping
//    (norms, a_ij, thresholds: each at most a few u64 (N_i + N_j)).
//  * The exhaustive scan's float64 distances round too (relative gamma_{n+4} in u64): the
//    distance bounds are widened by (1 -+ kappa), kappa = (2 n + 32) u64.
// A sample j is a candidate for sample i's nearest hit (miss) while its lower bound
// sqrt(max(0, a - E)) - (r_i + r_j) is at most the smallest upper bound sqrt(a + E) + r_i + r_j
// seen so far for that class. The smallest true distance is at most every upper bound, so every
// sample at the exhaustive scan's minimum distance (ties included) stays a candidate; the
// candidates then get the exhaustive scan's own float64 distances (kernels::sq_dist4) and
// HitMiss's tie rule (lower index wins), so the answer is the exhaustive scan's, bit for bit.
//
// Each thread keeps, per sample, its own two running bounds and a short candidate list for
// each class (O(m) memory per thread, never m x m; the tiles are O(64 x 64)). A list that
// overflows even after dropping the candidates the running bound has excluded marks its sample
// for the row-scan finder (NeighbourFinder), which also serves data where the screen cannot
// apply (few samples or features, non-finite values, all weights zero).
//
// Threads: one OpenMP region over the tiles, dynamically scheduled one tile at a time, then
// one over the samples; the product is this file's own kernel, not Eigen's (which fastfs builds
// with EIGEN_DONT_PARALLELIZE), so no thread is started anywhere else.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "../simd/pair_kernels.hpp"
#include "finder.hpp"
#include "grouped_rows.hpp"

namespace fastfs {
namespace gram {

constexpr Index kTile = 64;   // samples per tile side (a multiple of 8)
static_assert(kTile % 8 == 0, "screen_rows tests eight flags at once");
static_assert(kTile <= 256, "sparse tiles keep a row within its block in one byte");
constexpr Index kLanes = 8;   // Y's rows are padded to a multiple of this
constexpr Index kDepth = 1024; // inner-dimension block: seven rows of it stay in L1
constexpr int kListCap = 16;  // candidates kept per sample and class, per thread
constexpr double kParallelWork = 0x1.0p26;  // m^2 n below which one thread does it all
// The 16-bit tiles' largest magnitude: a block of kDepth features adds at most kDepth / 8
// products to an int32 lane (see tile_product_vnni).
constexpr int kQuantTop = 4095;
static_assert(static_cast<double>(kDepth / 8) * kQuantTop * kQuantTop < 2147483647.0,
              "a block of 16-bit products must not overflow an int32 lane");

// C[r * ldc + c] = sum_k A[r, k] B[c, k] for r < ra, c < rb (kp a multiple of 8; rows of A and
// B are lda / ldb floats apart). Micro-tiles of 3 x 4 dot products, vectorised along k; the
// four sums of a micro-tile row are reduced together (horizontal adds) and added to C at once.
#if defined(FASTFS_HAVE_AVX2_FMA)
__attribute__((target("avx2,fma"))) inline __m128 sum4_fma(__m256 a, __m256 b, __m256 c,
                                                           __m256 d) {
    const __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d);
    const __m256 abcd = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// The body of both tile kernels: rows of elements E (float, or int16_t), vectors V holding
// STEP of them, accumulators started at ZERO and updated by MADD(acc, x, y) from LOAD(p), then
// converted by F to float32 vectors whose sums sum4_fma reduces; the four sums of a micro-tile
// row are added to C at once. FASTFS_MICRO_COLUMN: one column of a micro-tile, row b's
// features k .. k + STEP - 1 against the three rows' x0, x1, x2.
#define FASTFS_MICRO_COLUMN(LOAD, MADD, b, s0, s1, s2) \
    y = LOAD(b + k);                                   \
    s0 = MADD(s0, x0, y);                              \
    s1 = MADD(s1, x1, y);                              \
    s2 = MADD(s2, x2, y);
#define FASTFS_TILE_PRODUCT_3X4(E, V, STEP, ZERO, LOAD, MADD, F)                                  \
    for (Index r = 0; r < ra; ++r)                                                                \
        for (Index c = 0; c < rb; ++c) C[r * ldc + c] = 0.0f;                                     \
    for (Index k0 = 0; k0 < kp; k0 += kDepth) {                                                   \
        const Index k1 = std::min(kp, k0 + kDepth);                                               \
        for (Index i = 0; i < ra; i += 3) {                                                       \
            const E* a0 = A + std::min(i + 0, ra - 1) * lda;                                      \
            const E* a1 = A + std::min(i + 1, ra - 1) * lda;                                      \
            const E* a2 = A + std::min(i + 2, ra - 1) * lda;                                      \
            for (Index j = upper ? i / 4 * 4 : 0; j < rb; j += 4) {                               \
                const E* b0 = B + std::min(j + 0, rb - 1) * ldb;                                  \
                const E* b1 = B + std::min(j + 1, rb - 1) * ldb;                                  \
                const E* b2 = B + std::min(j + 2, rb - 1) * ldb;                                  \
                const E* b3 = B + std::min(j + 3, rb - 1) * ldb;                                  \
                V c00 = ZERO, c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00,   \
                  c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00;                          \
                for (Index k = k0; k < k1; k += (STEP)) {                                         \
                    const V x0 = LOAD(a0 + k), x1 = LOAD(a1 + k), x2 = LOAD(a2 + k);              \
                    V y;                                                                          \
                    FASTFS_MICRO_COLUMN(LOAD, MADD, b0, c00, c10, c20)                            \
                    FASTFS_MICRO_COLUMN(LOAD, MADD, b1, c01, c11, c21)                            \
                    FASTFS_MICRO_COLUMN(LOAD, MADD, b2, c02, c12, c22)                            \
                    FASTFS_MICRO_COLUMN(LOAD, MADD, b3, c03, c13, c23)                            \
                }                                                                                 \
                const __m128 row[3] = {sum4_fma(F(c00), F(c01), F(c02), F(c03)),                  \
                                       sum4_fma(F(c10), F(c11), F(c12), F(c13)),                  \
                                       sum4_fma(F(c20), F(c21), F(c22), F(c23))};                 \
                for (int q = 0; q < 3 && i + q < ra; ++q) {                                       \
                    float* out = C + (i + q) * ldc + j;                                           \
                    if (j + 4 <= rb) {                                                            \
                        _mm_storeu_ps(out, _mm_add_ps(_mm_loadu_ps(out), row[q]));                \
                    } else {                                                                      \
                        float v[4];                                                               \
                        _mm_storeu_ps(v, row[q]);                                                 \
                        for (Index c = 0; j + c < rb; ++c) out[c] += v[c];                        \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

#define FASTFS_FMADD_PS(c, x, y) _mm256_fmadd_ps(x, y, c)
#define FASTFS_AS_IS(v) (v)
__attribute__((target("avx2,fma"))) inline void tile_product_fma(const float* A, Index lda,
                                                                  Index ra, const float* B,
                                                                  Index ldb, Index rb, Index kp,
                                                                  float* C, Index ldc,
                                                                  bool upper) {
    FASTFS_TILE_PRODUCT_3X4(float, __m256, kLanes, _mm256_setzero_ps(), _mm256_loadu_ps,
                            FASTFS_FMADD_PS, FASTFS_AS_IS)
}
#undef FASTFS_FMADD_PS
#undef FASTFS_AS_IS

#endif

#if defined(FASTFS_HAVE_VNNI)
// The same product of 16-bit integer rows (kp a multiple of 16), on CPUs with AVX-512 VNNI
// (kernels::cpu_has_avx512_vnni): micro-tiles of 3 x 4 dot products, each of 8 int32 lanes
// that vpdpwssd adds two products to per 16 features. With |values| <= kQuantTop (4095) and
// kDepth = 1024 features a block, a lane sums at most 128 products below 2^24: below 2^31, so
// the integer sums are exact; they are converted to float32 and reduced as the float32
// kernel's sums are, once per block.
#define FASTFS_LOAD_EPI16(p) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
__attribute__((target("avx2,fma,avx512f,avx512vl,avx512vnni"))) inline void tile_product_vnni(
    const std::int16_t* A, Index lda, Index ra, const std::int16_t* B, Index ldb, Index rb,
    Index kp, float* C, Index ldc, bool upper) {
    FASTFS_TILE_PRODUCT_3X4(std::int16_t, __m256i, 2 * kLanes, _mm256_setzero_si256(),
                            FASTFS_LOAD_EPI16, _mm256_dpwssd_epi32, _mm256_cvtepi32_ps)
}
#undef FASTFS_LOAD_EPI16
#endif
#if defined(FASTFS_HAVE_AVX2_FMA)
#undef FASTFS_TILE_PRODUCT_3X4
#undef FASTFS_MICRO_COLUMN
#endif

// The same without FMA, for any CPU (the compiler vectorises the k loop for the baseline
// instruction set; the summation order differs, the bound does not).
inline void tile_product_plain(const float* A, Index lda, Index ra, const float* B, Index ldb,
                               Index rb, Index kp, float* C, Index ldc, bool upper = false) {
    for (Index r = 0; r < ra; ++r)
        for (Index c = 0; c < rb; ++c) C[r * ldc + c] = 0.0f;
    for (Index k0 = 0; k0 < kp; k0 += kDepth) {
        const Index k1 = std::min(kp, k0 + kDepth);
        for (Index i = 0; i < ra; ++i) {
            const float* a = A + i * lda;
            for (Index j = upper ? i / 2 * 2 : 0; j < rb; j += 2) {
                const float* b0 = B + j * ldb;
                const float* b1 = B + std::min(j + 1, rb - 1) * ldb;
                float s0[kLanes] = {}, s1[kLanes] = {};
                for (Index k = k0; k < k1; k += kLanes)
                    for (Index l = 0; l < kLanes; ++l) {
                        s0[l] += a[k + l] * b0[k + l];
                        s1[l] += a[k + l] * b1[k + l];
                    }
                float t0 = 0.0f, t1 = 0.0f;
                for (Index l = 0; l < kLanes; ++l) {
                    t0 += s0[l];
                    t1 += s1[l];
                }
                C[i * ldc + j] += t0;
                if (j + 1 < rb) C[i * ldc + j + 1] += t1;
            }
        }
    }
}

// A diagonal tile's lower triangle from its upper one (the kernels' `upper`).
inline void mirror_upper(float* C, Index ldc, Index r) {
    for (Index i = 1; i < r; ++i)
        for (Index c = 0; c < i; ++c) C[i * ldc + c] = C[c * ldc + i];
}

#if defined(FASTFS_HAVE_VNNI)
// tile_product() of 16-bit rows (Screen::Q; only built on CPUs with AVX-512 VNNI).
inline void tile_product16(const std::int16_t* A, Index lda, Index ra, const std::int16_t* B,
                           Index ldb, Index rb, Index kp, float* C, Index ldc, bool upper) {
    tile_product_vnni(A, lda, ra, B, ldb, rb, kp, C, ldc, upper);
    if (upper) mirror_upper(C, ldc, ra);
}
#endif

// upper: A and B are the same rows (a diagonal tile, ra == rb), whose product is symmetric:
// only the micro-tiles reaching the diagonal or above it are computed (about half the work on
// a tile, all of it when the samples fit in one tile), then mirrored, so every C[r, c] is set.
inline void tile_product(const float* A, Index lda, Index ra, const float* B, Index ldb,
                         Index rb, Index kp, float* C, Index ldc, bool upper = false) {
    bool done = false;
#if defined(FASTFS_HAVE_AVX2_FMA)
    if (kernels::cpu_has_avx2_fma()) {
        tile_product_fma(A, lda, ra, B, ldb, rb, kp, C, ldc, upper);
        done = true;
    }
#endif
    if (!done) tile_product_plain(A, lda, ra, B, ldb, rb, kp, C, ldc, upper);
    if (upper) mirror_upper(C, ldc, ra);
}

// The calling thread's buffer for the screened data, kept between calls up to kKeep floats:
// margins and Relief are called again and again on the same data (Simba's e(w), wrappers),
// and fresh pages for each call cost as much as a tenth of the work on wide data.
constexpr std::size_t kKeep = std::size_t{1} << 22;  // 16 MB
inline std::vector<float>& storage() {
    static thread_local std::vector<float> buf;
    return buf;
}
// The same for the 16-bit copy of Y (Screen::Q).
inline std::vector<std::int16_t>& storage16() {
    static thread_local std::vector<std::int16_t> buf;
    return buf;
}
inline void release_storage() {
    std::vector<float>& buf = storage();
    if (buf.capacity() > kKeep) std::vector<float>().swap(buf);
    std::vector<std::int16_t>& b16 = storage16();
    if (b16.capacity() > 2 * kKeep) std::vector<std::int16_t>().swap(b16);
}

// How a tile's products are formed: from the dense float32 rows (a matrix product), from
// 16-bit integer rows (dense16: Y rounded to integers of at most kQuantTop in magnitude after
// one more power-of-two scaling, on CPUs with AVX-512 VNNI, float32 elsewhere), or from the
// nonzeros only (word counts, one-hot data). `automatic` picks by the density of X, and takes
// the 16-bit rows where the CPU has them, there are enough samples for the tiles to outweigh
// the rounding pass, and the rounding stays narrow against the distances between samples
// (narrow_rounding).
enum class TileProduct { automatic, dense, sparse, dense16 };
// Below this fraction of nonzeros (measured on 16-64 rows spread over X), Y is kept sparse and
// uncentred: its tiles then cost about n d^2 per pair against the product's n / 16.
constexpr double kSparseDensity = 0.25;
constexpr double kSparseDensity16 = 0.125;  // with 16-bit dense tiles (build_screen)
constexpr double kDenseColumn = 0.2;

// Sparse Y: the columns with more than kDenseColumn m nonzeros (the few frequent words, which
// hold most of the pairs' products) as a dense panel (Screen::Y, kp wide), the others' nonzeros
// grouped by tile block (kTile rows), then by feature, then by row: block b holds the features
// feat[fp[b] .. fp[b+1]) (increasing), feature k of it the entries [ep[k], ep[k+1]) with their
// rows within the block and their values.
struct SparseBlocks {
    std::vector<std::int64_t> fp, ep;
    std::vector<std::int32_t> feat;
    std::vector<std::uint8_t> row;
    std::vector<float> val;
};

// The screened data and the constants of its bounds (see the top of the file).
struct Screen {
    Index m = 0, n = 0, kp = 0;
    float* Y = nullptr;        // m x kp, row-major, in storage() (dense tiles)
    const float* row(Index i) const { return Y + i * kp; }
    // The 16-bit rows (m x kq, kq a multiple of 16, in storage16()) when the tiles are integer
    // products (round_to_int16): N and r are then those of the rows q_i, in their units, and
    // N32 / r32 keep the float32 rows' (Y is kept), for a return to float32 tiles
    // (drop_int16).
    const std::int16_t* Q = nullptr;
    Index kq = 0;
    const std::int16_t* row16(Index i) const { return Q + i * kq; }
    std::vector<double> N32, r32;
    bool sparse = false;       // Y kept as a panel of its dense columns and `blocks`
    SparseBlocks blocks;
    std::vector<double> N;     // |y_i|^2 (float64 sums of the float32 values; |q_i|^2 with Q)
    std::vector<double> P;     // (1 - Gamma) N_i
    std::vector<float> P32;    // P rounded to float32, for the vectorised prefilters
    std::vector<double> r;     // conversion radius r_i
    std::vector<std::int32_t> code;  // class codes as int32 (vectorised class masks)
    double r_max = 0, N_max = 0;
    double Gamma = 0, tau = 0, kappa = 0;
};

// Adds to the tile of blocks I and J the products of their sparse features: the two blocks'
// feature lists are merged, and each shared feature adds the outer product of its two entry
// lists. With the panel's product before it, every C[r, c] is a float32 sum of at most n
// products, within the bound of a dense float32 product (see the top of the file); on a
// diagonal tile (I == J) C[r, c] and C[c, r] add the same products in the same order, so the
// tile stays exactly symmetric.
inline void tile_product_sparse(const SparseBlocks& b, Index I, Index J, float* C, Index ldc) {
    std::int64_t p = b.fp[static_cast<std::size_t>(I)], q = b.fp[static_cast<std::size_t>(J)];
    const std::int64_t pe = b.fp[static_cast<std::size_t>(I) + 1], qe = b.fp[static_cast<std::size_t>(J) + 1];
    const std::int32_t* feat = b.feat.data();
    const std::int64_t* ep = b.ep.data();
    const std::uint8_t* row = b.row.data();
    const float* val = b.val.data();
    while (p < pe && q < qe) {
        if (feat[p] < feat[q]) {
            ++p;
        } else if (feat[q] < feat[p]) {
            ++q;
        } else {
            for (std::int64_t e = ep[p]; e < ep[p + 1]; ++e) {
                const float a = val[e];
                float* out = C + static_cast<Index>(row[e]) * ldc;
                for (std::int64_t g = ep[q]; g < ep[q + 1]; ++g) out[row[g]] += a * val[g];
            }
            ++p;
            ++q;
        }
    }
}

// Column sums, minima and maxima of one row added in (vectorised across the features).
template <class T>
FASTFS_SIMD_CLONES void column_stats(const T* __restrict x, Index n, double* __restrict sum,
                                     double* __restrict lo, double* __restrict hi) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double v = static_cast<double>(x[f]);
        sum[f] += v;
        lo[f] = kernels::min_of(lo[f], v);
        hi[f] = v > hi[f] ? v : hi[f];
    }
}

// sum[f] += x[f] (column_stats' sums alone, the same values, for the shift from a sample of
// rows, which needs no extremes); returns the number of nonzeros of weighted features (sw_f
// not 0), for the choice between dense and sparse tiles.
template <class T>
FASTFS_SIMD_CLONES Index column_sums(const T* __restrict x, const double* __restrict sw, Index n,
                                     double* __restrict sum) {
    // (Left to the auto-vectoriser, with & rather than &&: GCC makes an omp simd reduction
    // of the count a stack array it reloads every vector, and && a masked load of sw; three
    // times slower, as slow as the tiles' products on gene-expression data.)
    Index nz = 0;
    for (Index f = 0; f < n; ++f) {
        sum[f] += static_cast<double>(x[f]);
        nz += static_cast<Index>((x[f] != T(0)) & (sw[f] != 0.0));
    }
    return nz;
}

// y = float32(sw (x - c)) and *y2 = |y|^2 in float64 (its rounding, a few u64 relative, is
// inside the bounds' margins).
// *top = max |y_f| (meaningful when y2 is finite).
template <class T>
FASTFS_SIMD_CLONES void convert_row(const T* __restrict x, const double* __restrict c,
                                    const double* __restrict sw, Index n, float* __restrict y,
                                    double* y2, double* top) {
    // In lanes, not an omp simd reduction: Clang leaves a NaN-honouring max reduction scalar
    // (see kernels::in_lanes). Sixteen: with eight, Clang 14 kept the lanes on the stack and
    // took 16 times as long as GCC (3.8 against 0.24 ms for 102 x 5966); with sixteen, 0.49.
    constexpr int W = 16;
    double b[W + 1] = {}, t[W + 1] = {};
    kernels::in_lanes<W>(0, n, [&](Index f, int l) {
        const float v = static_cast<float>(sw[f] * (static_cast<double>(x[f]) - c[f]));
        y[f] = v;
        const double d = static_cast<double>(v);
        b[l] += d * d;
        const double a = d < 0.0 ? -d : d;
        t[l] = a > t[l] ? a : t[l];
    });
    double sum = 0.0, most = 0.0;
    for (int l = 0; l <= W; ++l) {
        sum += b[l];
        most = t[l] > most ? t[l] : most;
    }
    *y2 = sum;
    *top = most;
}

// convert_row for the columns keep[0 .. nk) into y[0 .. nk), and *q2 = the float64 sum of
// (sw_f (x_f - c_f))^2 over the columns drop[0 .. nd), which leave Y (see choose_columns()).
template <class T>
void convert_row_split(const T* __restrict x, const double* __restrict c,
                       const double* __restrict sw, const Index* keep, Index nk,
                       const Index* drop, Index nd, float* __restrict y, double* y2,
                       double* top, double* q2) {
    double b = 0.0, t = 0.0, q = 0.0;
    for (Index k = 0; k < nk; ++k) {
        const Index f = keep[k];
        const float v = static_cast<float>(sw[f] * (static_cast<double>(x[f]) - c[f]));
        y[k] = v;
        const double d = static_cast<double>(v);
        b += d * d;
        t = std::max(t, std::abs(d));
    }
    for (Index k = 0; k < nd; ++k) {
        const Index f = drop[k];
        const double d = sw[f] * (static_cast<double>(x[f]) - c[f]);
        q += d * d;
    }
    *y2 = b;
    *top = t;
    *q2 = q;
}

// The columns of Y. A column whose weight is at most 2^-20 of the largest leaves Y while the
// spreads of the columns that left, smallest first (sw_f^2 max (x_f - c_f)^2 over the q rows
// sampled for the shift), add up to at most 2^-20 of all columns': its part of each row is then
// counted in that row's radius r_i (the exact float64 norm of the row's left-out part, from
// the conversion pass), so the bounds hold for any choice, and the choice only trades tile work
// (Simba's and RGS's weights decay: on xor-like labels 4 columns of 300 stay) against wider
// radii. Returns false (every column stays) when fewer than an eighth of them would leave, or
// too few for the tiles saved to pay for the gathering conversion.
template <class T>
bool choose_columns(const MatrixRef<T>& X, const std::vector<double>& c,
                    const std::vector<double>& sw, Index q, std::vector<Index>& keep,
                    std::vector<Index>& drop) {
    const Index m = X.rows(), n = X.cols();
    double swmax = 0.0;
    for (double v : sw) swmax = std::max(swmax, v);
    std::vector<Index> light;
    for (Index f = 0; f < n; ++f)
        if (sw[static_cast<std::size_t>(f)] <= 0x1.0p-10 * swmax) light.push_back(f);
    if (static_cast<Index>(light.size()) * 8 < n) return false;
    std::vector<double> spread(static_cast<std::size_t>(n), 0.0);
    for (Index k = 0; k < q; ++k) {
        const T* x = X.row(k * m / q).data();
        for (Index f = 0; f < n; ++f) {
            const double d = static_cast<double>(x[f]) - c[static_cast<std::size_t>(f)];
            double& sp = spread[static_cast<std::size_t>(f)];
            sp = std::max(sp, d * d);
        }
    }
    double total = 0.0;
    for (Index f = 0; f < n; ++f) {
        const double w = sw[static_cast<std::size_t>(f)];
        spread[static_cast<std::size_t>(f)] *= w * w;
        total += spread[static_cast<std::size_t>(f)];
    }
    if (!std::isfinite(total)) return false;
    std::sort(light.begin(), light.end(), [&](Index a, Index b) {
        return spread[static_cast<std::size_t>(a)] < spread[static_cast<std::size_t>(b)];
    });
    std::vector<char> out(static_cast<std::size_t>(n), 0);
    double cum = 0.0;
    Index dropped = 0;
    for (Index f : light) {
        cum += spread[static_cast<std::size_t>(f)];
        if (cum > 0x1.0p-20 * total) break;
        out[static_cast<std::size_t>(f)] = 1;
        ++dropped;
    }
    // Leaving a column out saves m^2 / 2 products (about 1/16 cycle each, vectorised) and
    // makes the conversion pass gather (about 2.5 cycles more per value, m n values): worth it
    // from m dropped >= 80 n, which few-sample wide data (gene expression) never reaches.
    if (dropped * 8 < n || m * dropped < 80 * n) return false;
    keep.clear();
    drop.clear();
    for (Index f = 0; f < n; ++f) (out[static_cast<std::size_t>(f)] ? drop : keep).push_back(f);
    return !keep.empty();
}

// Whether any of x[0 .. 8) is not zero (NaN included), from the bits without the sign: no
// branch per value, and the compiler vectorises it.
template <class T>
inline bool any_nonzero8(const T* x) {
    using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
    Bits acc = 0;
    for (int k = 0; k < 8; ++k) {
        Bits b;
        std::memcpy(&b, x + k, sizeof b);
        acc |= static_cast<Bits>(b << 1);
    }
    return acc != 0;
}

// Y = float32(sw x) kept sparse (no shift: a shift would fill in the zeros), in s.blocks, with
// s.N; sw is scaled by a power of two when max |sw_f x_if| lies outside [2^-40, 2^40]. False
// when X holds a value that is not finite or Y would be all zeros.
template <class T>
bool convert_sparse(const MatrixRef<T>& X, std::vector<double>& sw, Screen& s) {
    const Index m = X.rows(), n = X.cols();
    std::vector<std::int64_t> rp(static_cast<std::size_t>(m) + 1, 0);
    std::vector<std::int32_t> ci;
    std::vector<float> cv;
    for (int attempt = 0;; ++attempt) {
        ci.clear();
        cv.clear();
        double top = 0.0;
        for (Index i = 0; i < m; ++i) {
            const T* x = X.row(i).data();
            double y2 = 0.0;
            rp[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(ci.size());
            auto take = [&](Index f) {
                if (x[f] == T(0)) return true;
                const double z = sw[static_cast<std::size_t>(f)] * static_cast<double>(x[f]);
                if (!std::isfinite(z)) return false;
                top = std::max(top, std::abs(z));
                const float v = static_cast<float>(z);
                if (v == 0.0f) return true;
                ci.push_back(static_cast<std::int32_t>(f));
                cv.push_back(v);
                y2 += static_cast<double>(v) * static_cast<double>(v);
                return true;
            };
            Index f = 0;
            for (; f + 8 <= n; f += 8)  // eight zeros at once (NaN and -0 are not +0 bits)
                if (any_nonzero8(x + f))
                    for (Index k = f; k < f + 8; ++k)
                        if (!take(k)) return false;
            for (; f < n; ++f)
                if (!take(f)) return false;
            s.N[static_cast<std::size_t>(i)] = y2;
        }
        rp[static_cast<std::size_t>(m)] = static_cast<std::int64_t>(ci.size());
        if (!(top > 0.0)) return false;
        if (top >= 0x1.0p-40 && top <= 0x1.0p40) break;
        if (attempt == 1) return false;
        const int xe = std::ilogb(top);  // now max |sw_f x_if| is in [1, 2)
        for (auto& v : sw) v = std::ldexp(v, -xe);
    }
    // The dense columns' panel, then the other columns (rows increasing in each), then those
    // by block: counts, offsets, then the entries.
    std::vector<std::int64_t> cp(static_cast<std::size_t>(n) + 1, 0);
    for (const std::int32_t f : ci) ++cp[static_cast<std::size_t>(f) + 1];
    std::vector<std::int32_t> slot(static_cast<std::size_t>(n), -1);
    Index panel = 0;
    for (Index f = 0; f < n; ++f)
        if (static_cast<double>(cp[static_cast<std::size_t>(f) + 1]) > kDenseColumn * static_cast<double>(m)) {
            slot[static_cast<std::size_t>(f)] = static_cast<std::int32_t>(panel++);
            cp[static_cast<std::size_t>(f) + 1] = 0;
        }
    s.kp = (panel + kLanes - 1) / kLanes * kLanes;
    if (s.kp > 0) {
        std::vector<float>& buf = storage();
        buf.assign(static_cast<std::size_t>(m * s.kp), 0.0f);
        s.Y = buf.data();
    }
    for (Index f = 0; f < n; ++f) cp[static_cast<std::size_t>(f) + 1] += cp[static_cast<std::size_t>(f)];
    const std::int64_t nnz = cp[static_cast<std::size_t>(n)];
    std::vector<std::int32_t> crow(static_cast<std::size_t>(nnz));
    std::vector<float> cval(static_cast<std::size_t>(nnz));
    {
        std::vector<std::int64_t> at(cp.begin(), cp.end() - 1);
        for (Index i = 0; i < m; ++i)
            for (std::int64_t p = rp[static_cast<std::size_t>(i)]; p < rp[static_cast<std::size_t>(i) + 1]; ++p) {
                const std::size_t f = static_cast<std::size_t>(ci[static_cast<std::size_t>(p)]);
                if (slot[f] >= 0) {
                    s.Y[i * s.kp + slot[f]] = cv[static_cast<std::size_t>(p)];
                    continue;
                }
                const std::int64_t k = at[f]++;
                crow[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(i);
                cval[static_cast<std::size_t>(k)] = cv[static_cast<std::size_t>(p)];
            }
    }
    std::vector<std::int32_t>().swap(ci);
    std::vector<float>().swap(cv);
    const Index blocks = (m + kTile - 1) / kTile;
    SparseBlocks& b = s.blocks;
    b.fp.assign(static_cast<std::size_t>(blocks) + 1, 0);
    std::vector<std::int64_t> eb(static_cast<std::size_t>(blocks) + 1, 0);
    auto each_run = [&](auto&& visit) {  // visit(block, feature, first entry, end) per run
        for (Index f = 0; f < n; ++f)
            for (std::int64_t k = cp[static_cast<std::size_t>(f)]; k < cp[static_cast<std::size_t>(f) + 1];) {
                const Index blk = crow[static_cast<std::size_t>(k)] / kTile;
                std::int64_t e = k;
                while (e < cp[static_cast<std::size_t>(f) + 1] && crow[static_cast<std::size_t>(e)] / kTile == blk) ++e;
                visit(blk, f, k, e);
                k = e;
            }
    };
    each_run([&](Index blk, Index, std::int64_t k, std::int64_t e) {
        ++b.fp[static_cast<std::size_t>(blk) + 1];
        eb[static_cast<std::size_t>(blk) + 1] += e - k;
    });
    for (Index k = 0; k < blocks; ++k) {
        b.fp[static_cast<std::size_t>(k) + 1] += b.fp[static_cast<std::size_t>(k)];
        eb[static_cast<std::size_t>(k) + 1] += eb[static_cast<std::size_t>(k)];
    }
    const std::int64_t total = b.fp[static_cast<std::size_t>(blocks)];
    b.feat.resize(static_cast<std::size_t>(total));
    b.ep.resize(static_cast<std::size_t>(total) + 1);
    b.row.resize(static_cast<std::size_t>(nnz));
    b.val.resize(static_cast<std::size_t>(nnz));
    std::vector<std::int64_t> fcur(b.fp.begin(), b.fp.end() - 1), ecur(eb.begin(), eb.end() - 1);
    each_run([&](Index blk, Index f, std::int64_t k, std::int64_t e) {
        const std::int64_t slot = fcur[static_cast<std::size_t>(blk)]++;
        b.feat[static_cast<std::size_t>(slot)] = static_cast<std::int32_t>(f);
        std::int64_t& at = ecur[static_cast<std::size_t>(blk)];
        b.ep[static_cast<std::size_t>(slot)] = at;
        for (; k < e; ++k, ++at) {
            b.row[static_cast<std::size_t>(at)] =
                static_cast<std::uint8_t>(crow[static_cast<std::size_t>(k)] - blk * kTile);
            b.val[static_cast<std::size_t>(at)] = cval[static_cast<std::size_t>(k)];
        }
    });
    b.ep[static_cast<std::size_t>(total)] = nnz;
    s.sparse = true;
    return true;
}

// The constants of the bounds and the prefilters' values, from N and r (see the top of the
// file); run again when the tiles change (drop_int16).
inline void finish_screen(Screen& s) {
    const double nd = static_cast<double>(s.n);
    const double u = 0x1.0p-24, u64 = 0x1.0p-53;
    const double k = (nd + 8.0) * u;
    const double gamma = k / (1.0 - k);
    s.Gamma = gamma + 1e-10;
    s.tau = 4.0 * (nd + 8.0) * 0x1.0p-126;
    s.kappa = (2.0 * nd + 32.0) * u64;
    s.r_max = 0.0;
    s.N_max = 0.0;
    for (Index i = 0; i < s.m; ++i) {
        const std::size_t q = static_cast<std::size_t>(i);
        s.P[q] = (1.0 - s.Gamma) * s.N[q];
        s.P32[q] = static_cast<float>(s.P[q]);
        s.r_max = std::max(s.r_max, s.r[q]);
        s.N_max = std::max(s.N_max, s.N[q]);
    }
}

// Samples from which `automatic` considers the 16-bit tiles: the rounding pass reads Y once
// (about a cycle a value), the tiles save about m / 64 cycles a value.
constexpr Index kMinInt16Rows = 2 * kTile;

#if defined(FASTFS_HAVE_VNNI)
// One row of round_to_int16: q[f] = clamp(round(scale y[f])) for f < kp (a multiple of 8),
// rounding to nearest even, and, in float64, *e2 = sum (scale y_f - q_f)^2 (each term exact)
// and *q2 = sum q_f^2 (exact). scale y_f is formed in float64, where it is exact.
__attribute__((target("avx2,fma,avx512f,avx512vl"))) inline void round_row_int16(
    const float* y, Index kp, double scale, std::int16_t* q, double* e2, double* q2) {
    const __m256d sd = _mm256_set1_pd(scale);
    const __m256 sf = _mm256_set1_ps(static_cast<float>(scale));
    const __m256i hi = _mm256_set1_epi32(kQuantTop), lo = _mm256_set1_epi32(-kQuantTop);
    __m256d ea = _mm256_setzero_pd(), eb = ea, qa = ea, qb = ea;
    for (Index f = 0; f < kp; f += kLanes) {
        const __m256 v = _mm256_loadu_ps(y + f);
        // float32 scale y rounds only where it is below float32's normal range, so that the
        // integer (0 there) is still the nearest one to the exact product.
        __m256i qi = _mm256_cvtps_epi32(_mm256_mul_ps(v, sf));
        qi = _mm256_min_epi32(_mm256_max_epi32(qi, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + f), _mm256_cvtepi32_epi16(qi));
        const __m256 qf = _mm256_cvtepi32_ps(qi);
        const __m256d q0 = _mm256_cvtps_pd(_mm256_castps256_ps128(qf));
        const __m256d q1 = _mm256_cvtps_pd(_mm256_extractf128_ps(qf, 1));
        const __m256d d0 = _mm256_sub_pd(
            _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), sd), q0);
        const __m256d d1 = _mm256_sub_pd(
            _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), sd), q1);
        ea = _mm256_add_pd(ea, _mm256_mul_pd(d0, d0));
        eb = _mm256_add_pd(eb, _mm256_mul_pd(d1, d1));
        qa = _mm256_add_pd(qa, _mm256_mul_pd(q0, q0));
        qb = _mm256_add_pd(qb, _mm256_mul_pd(q1, q1));
    }
    double t[4], u[4];
    _mm256_storeu_pd(t, _mm256_add_pd(ea, eb));
    _mm256_storeu_pd(u, _mm256_add_pd(qa, qb));
    *e2 = (t[0] + t[1]) + (t[2] + t[3]);
    *q2 = (u[0] + u[1]) + (u[2] + u[3]);
}
#endif

// Whether rounding Y to 16-bit rows (times `scale`) leaves the screen about as selective as
// float32 rows. For 8 samples spread over X: their rounding radius (the largest, times 1.5,
// stands in for every sample's r), their distances to every sample from float32 products of Y,
// and how many samples lie within 4 radii of the nearest: about the candidates the 16-bit
// screen keeps for them (a sample j stays while its lower bound, distance - r_i - r_j, is below
// the nearest's upper bound, distance + r_i + r_nearest). At most 4 on average: yes. Data
// whose scale is set by a few large values or columns (the others then round to a few levels)
// and samples packed closer than the rounding fail it; Gaussian data, images and MADELON pass
// with about 1. Costs 8 m kp float32 products, about 16 / m of the tiles', and no rounding of
// the other rows when the answer is no.
inline bool narrow_rounding(const Screen& s, double scale) {
#if defined(FASTFS_HAVE_VNNI)
    constexpr Index kProbe = 8;
    const Index m = s.m, kp = s.kp;
    if (m < 2 * kProbe) return true;
    std::vector<float> A(static_cast<std::size_t>(kProbe * kp));
    std::vector<std::int16_t> q(static_cast<std::size_t>(kp));
    Index at[kProbe];
    double radius = 0.0;
    for (Index t = 0; t < kProbe; ++t) {
        at[t] = t * m / kProbe;
        std::copy(s.row(at[t]), s.row(at[t]) + kp, A.data() + t * kp);
        double e2 = 0.0, q2 = 0.0;
        round_row_int16(s.row(at[t]), kp, scale, q.data(), &e2, &q2);
        radius = std::max(radius, s.r[static_cast<std::size_t>(at[t])] + std::sqrt(e2) / scale);
    }
    const double window = 4.0 * 1.5 * radius;
    std::vector<double> d(static_cast<std::size_t>(kProbe * m));
    std::vector<float> C(static_cast<std::size_t>(kProbe * kTile));
    for (Index j0 = 0; j0 < m; j0 += kTile) {
        const Index rj = std::min(kTile, m - j0);
        tile_product(A.data(), kp, kProbe, s.row(j0), kp, rj, kp, C.data(), kTile);
        for (Index t = 0; t < kProbe; ++t)
            for (Index b = 0; b < rj; ++b) {
                const double a = s.N[static_cast<std::size_t>(at[t])] + s.N[static_cast<std::size_t>(j0 + b)] -
                                 2.0 * static_cast<double>(C[static_cast<std::size_t>(t * kTile + b)]);
                d[static_cast<std::size_t>(t * m + j0 + b)] = std::sqrt(std::max(0.0, a));
            }
    }
    Index within = 0;
    for (Index t = 0; t < kProbe; ++t) {
        const double* row = d.data() + t * m;
        double nearest = std::numeric_limits<double>::infinity();
        for (Index j = 0; j < m; ++j)
            if (j != at[t]) nearest = std::min(nearest, row[j]);
        for (Index j = 0; j < m; ++j)
            within += static_cast<Index>(j != at[t] && row[j] <= nearest + window);
    }
    return within <= 4 * kProbe;
#else
    (void)s, (void)scale;
    return false;
#endif
}

// The 16-bit rows of a dense screen, on CPUs with AVX-512 VNNI: q_i = round(2^k y_i), clamped
// to +-kQuantTop, with 2^k max |y| in [2048, 4096). Every distance is then scaled by 2^k (a
// power of two: the screen compares only its own bounds, in its own units), N_i = |q_i|^2
// (exact) and r_i = 2^k r_i + |2^k y_i - q_i| (the rounding, exact in float64 but for the
// sum's and the square root's few u64, covered by the factor), so the bounds at the top of
// the file hold with q_i for y_i. The tiles' integer sums are exact, and their float32
// reduction (at most 8 n / kDepth + 1 terms a product) errs within Gamma. Unless `forced`,
// the rows stay float32 when narrow_rounding() says the rounding would keep many more
// candidates.
inline void round_to_int16(Screen& s, double ytop, bool forced) {
    if (!kernels::cpu_has_avx512_vnni() || s.sparse || !s.Y || !(ytop > 0.0) || s.kp == 0)
        return;
    const Index m = s.m;
    const Index kq = (s.kp + 2 * kLanes - 1) / (2 * kLanes) * (2 * kLanes);
    const double scale = std::ldexp(1.0, 11 - std::ilogb(ytop));
    if (!forced && !narrow_rounding(s, scale)) return;
    std::vector<double> N(static_cast<std::size_t>(m)), r(static_cast<std::size_t>(m));
    std::vector<std::int16_t>& buf = storage16();
    buf.resize(static_cast<std::size_t>(m * kq));
    const double slack = 1.0 + (static_cast<double>(s.kp) + 16.0) * 0x1.0p-52;
    double rmax = 0.0;
    for (Index i = 0; i < m; ++i) {
        std::int16_t* q = buf.data() + i * kq;
        double e2 = 0.0, q2 = 0.0;
#if defined(FASTFS_HAVE_VNNI)
        round_row_int16(s.row(i), s.kp, scale, q, &e2, &q2);
#endif
        for (Index f = s.kp; f < kq; ++f) q[f] = 0;
        const std::size_t k = static_cast<std::size_t>(i);
        N[k] = q2;
        r[k] = s.r[k] * scale + std::sqrt(e2) * slack;
        rmax = std::max(rmax, r[k]);
    }
    if (!(rmax < std::numeric_limits<double>::infinity())) return;
    s.Q = buf.data();
    s.kq = kq;
    s.N.swap(N);
    s.r.swap(r);
    s.N32.swap(N);
    s.r32.swap(r);
}

// Builds the screen of X under squared weights w2; false when it cannot apply (the caller then
// uses the row-scan finder).
template <class T>
bool build_screen(const MatrixRef<T>& X, const Labels& codes, const double* w2, Screen& s,
                  TileProduct product = TileProduct::automatic) {
    const Index m = X.rows(), n = X.cols();
    s.code.resize(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) {
        if (codes[i] < 0 || codes[i] > std::numeric_limits<std::int32_t>::max()) return false;
        s.code[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(codes[i]);
    }
    s.m = m;
    s.n = n;
    s.kp = (n + kLanes - 1) / kLanes * kLanes;
    // Weights: their square roots times a power of two bringing the largest into [1, 2).
    double wtop = 0.0;
    for (Index f = 0; f < n; ++f) {
        if (!(w2[f] >= 0.0) || !std::isfinite(w2[f])) return false;
        wtop = std::max(wtop, w2[f]);
    }
    if (!(wtop > 0.0)) return false;
    const int we = std::ilogb(std::sqrt(wtop));
    std::vector<double> sw(static_cast<std::size_t>(n));
    // Times 2^-we, a normal power of two (-537 <= we <= 511, the square root of any double
    // being within 2^-537 and 2^512): one correctly rounded product, the
    // value std::ldexp gives, without a library call per feature.
    const double to_unit = std::ldexp(1.0, -we);
    for (Index f = 0; f < n; ++f) sw[static_cast<std::size_t>(f)] = std::sqrt(w2[f]) * to_unit;
    s.N.assign(static_cast<std::size_t>(m), 0.0);
    s.P.assign(static_cast<std::size_t>(m), 0.0);
    s.P32.assign(static_cast<std::size_t>(m), 0.0f);
    s.r.assign(static_cast<std::size_t>(m), 0.0);
    const double u = 0x1.0p-24, u64 = 0x1.0p-53, eta = 0x1.0p-126;
    const double eps = u * (1.0 + 1e-6) + 6.0 * u64;
    const double nd = static_cast<double>(n);
    const double inf = std::numeric_limits<double>::infinity();
    // One read of q rows spread over X gives the dense tiles' first shift c (their mean) and
    // the density: sparse data (at most kSparseDensity nonzeros there) gets sparse tiles. q is
    // an eighth of the rows, at least 16 and at most 64: with few samples (gene expression,
    // 72 x 7129) 64 rows would be nearly a whole extra pass over X (7% of a Relief call), and
    // the mean of q rows adds on average only a fraction 1/q to the squared centred norms
    // (against the column means' own).
    std::vector<double> c(static_cast<std::size_t>(n), 0.0);
    Index nz = 0;
    const Index q = std::min<Index>(m, std::clamp<Index>(m / 8, 16, 64));
    for (Index k = 0; k < q; ++k) nz += column_sums(X.row(k * m / q).data(), sw.data(), n, c.data());
    for (auto& v : c) v /= static_cast<double>(q);
    // With 16-bit tiles in reach (automatic, enough samples, AVX-512 VNNI) dense tiles cost
    // half as much, and data up to kSparseDensity16 nonzeros goes sparse; between that and
    // kSparseDensity it is tried dense, and goes sparse after all if round_to_int16 declines.
    const bool try16 = product == TileProduct::automatic && m >= kMinInt16Rows &&
                       kernels::cpu_has_avx512_vnni();
    const double nzd = static_cast<double>(nz), sampled = static_cast<double>(q) * nd;
    const bool sparse =
        product == TileProduct::sparse ||
        (product == TileProduct::automatic &&
         nzd <= (try16 ? kSparseDensity16 : kSparseDensity) * sampled);
    const bool sparse_unless_int16 = try16 && !sparse && nzd <= kSparseDensity * sampled;
    // The columns of Y (all, unless some weigh next to nothing: choose_columns()), and the
    // float64 norm of each row's left-out part.
    std::vector<Index> keep, drop;
    std::vector<double> left(static_cast<std::size_t>(m), 0.0);
    double ytop = 0.0;  // max |y| of the dense rows
    auto dense = [&]() -> bool {
        if (choose_columns(X, c, sw, q, keep, drop))
            s.kp = (static_cast<Index>(keep.size()) + kLanes - 1) / kLanes * kLanes;
        const Index nk = drop.empty() ? n : static_cast<Index>(keep.size());
        std::vector<float>& buf = storage();
        buf.resize(static_cast<std::size_t>(m * s.kp));
        s.Y = buf.data();
        // Y = float32(sw (X - c)) row by row; max |y| (0 when some value is not finite). One
        // thread: the pass is bound by memory bandwidth, and a parallel region here would be one
        // more place to wait for a thread whose core is busy elsewhere.
        auto convert = [&](const std::vector<double>& c, const std::vector<double>& sw) {
            double top = 0.0;
            for (Index i = 0; i < m; ++i) {
                float* y = s.Y + i * s.kp;
                double y2 = 0.0, t = 0.0;
                if (drop.empty()) {
                    convert_row(X.row(i).data(), c.data(), sw.data(), n, y, &y2, &t);
                } else {
                    double q2 = 0.0;
                    convert_row_split(X.row(i).data(), c.data(), sw.data(), keep.data(), nk,
                                      drop.data(), static_cast<Index>(drop.size()), y, &y2, &t, &q2);
                    if (!std::isfinite(q2)) return 0.0;
                    left[static_cast<std::size_t>(i)] = q2;
                }
                for (Index f = nk; f < s.kp; ++f) y[f] = 0.0f;
                if (!std::isfinite(y2)) return 0.0;
                top = std::max(top, t);
                s.N[static_cast<std::size_t>(i)] = y2;
            }
            return top;
        };
        // The shift c: any float64 values would do (the same shift for every sample), and the
        // smaller the centred norms, the tighter the bounds. First the mean of the q rows spread
        // over X (above), and no scaling beyond the weights': one pass over X. Y's largest magnitude
        // then only has to lie far from float32's overflow and underflow (the bounds below hold at
        // any scale; their absolute terms, in 2^-126, stay negligible). Otherwise (extreme values
        // or weights, or non-finite values) the column means, minima and maxima of all of X give
        // the power of two bringing max |y| into [1, 2).
        bool ok = true;
        for (double v : c) ok = ok && std::isfinite(v);
        if (ok) {
            ytop = convert(c, sw);
            ok = ytop >= 0x1.0p-40 && ytop <= 0x1.0p40;
        }
        if (!ok) {
            std::vector<double> lo(static_cast<std::size_t>(n), inf), hi(static_cast<std::size_t>(n), -inf);
            std::fill(c.begin(), c.end(), 0.0);
            // In blocks of columns, so that the three running rows stay in L1.
            for (Index f0 = 0; f0 < n; f0 += 512) {
                const Index nb = std::min<Index>(512, n - f0);
                for (Index i = 0; i < m; ++i)
                    column_stats(X.row(i).data() + f0, nb, c.data() + f0, lo.data() + f0, hi.data() + f0);
            }
            double top = 0.0;
            for (Index f = 0; f < n; ++f) {
                const std::size_t k = static_cast<std::size_t>(f);
                if (!std::isfinite(c[k]) || !std::isfinite(lo[k]) || !std::isfinite(hi[k])) return false;
                c[k] /= static_cast<double>(m);
                top = std::max(top, sw[k] * std::max(std::abs(hi[k] - c[k]), std::abs(c[k] - lo[k])));
            }
            if (!std::isfinite(top) || !(top > 0.0)) return false;
            const int xe = std::ilogb(top);
            for (auto& v : sw) v = std::ldexp(v, -xe);  // now max |sw_f (x_if - c_f)| is in [1, 2)
            ytop = convert(c, sw);
            if (!(ytop > 0.0)) return false;
        }
        return true;
    };
    if (!(sparse ? convert_sparse(X, sw, s) : dense())) return false;
    auto radii = [&] {
        for (Index i = 0; i < m; ++i) {
            const double y2 = s.N[static_cast<std::size_t>(i)];
            // |z_i| <= |y_i| + |y_i - z_i| <= |y_i| + eps |z_i| + eta sqrt(n), so
            // |z_i| <= (|y_i| + eta sqrt(n)) / (1 - eps); 1.001 covers that and the rounding of y2.
            s.r[static_cast<std::size_t>(i)] =
                eps * (std::sqrt(y2) + eta * std::sqrt(nd)) * 1.001 + eta * std::sqrt(nd);
            // The columns that left Y: |y_i - z_i| also holds z_i's part there, whose norm is
            // sqrt(left_i) up to the float64 rounding of n terms (relative) and of values below
            // float64's normal range (absolute).
            if (!drop.empty())
                s.r[static_cast<std::size_t>(i)] +=
                    std::sqrt(left[static_cast<std::size_t>(i)]) * (1.0 + (nd + 8.0) * 0x1.0p-52) +
                    std::sqrt(nd) * 0x1.0p-536;
        }
    };
    radii();
    if (!sparse && (product == TileProduct::dense16 || try16))
        round_to_int16(s, ytop, product == TileProduct::dense16);
    if (sparse_unless_int16 && !s.Q) {
        // Float32 tiles at this density cost more than sparse ones: Y again, sparse.
        keep.clear();
        drop.clear();
        s.Y = nullptr;
        if (!convert_sparse(X, sw, s)) return false;
        radii();
    }
    finish_screen(s);
    return true;
}

// Back from 16-bit tiles to the float32 ones (Y, with the radii and norms round_to_int16 kept):
// the screen's answers hold for either. False when the tiles were not 16-bit.
inline bool drop_int16(Screen& s) {
    if (!s.Q) return false;
    s.Q = nullptr;
    s.kq = 0;
    s.N.swap(s.N32);
    s.r.swap(s.r32);
    finish_screen(s);
    return true;
}

// The vectorised prefilters, in float32, over a row of a tile: v_q = P[q] - 2 g[q] for the
// samples q of the same class as the query (code[q] == c) and of the others, the query itself
// (q == skip) left out. class_minima gives the two minima; mark sets flags[q] where v_q is at
// most the threshold of q's class.
template <class F>
FASTFS_SIMD_CLONES void class_minima(const F* __restrict P, const F* __restrict g,
                                     const std::int32_t* __restrict code, std::int32_t c,
                                     Index nb, F* hit, F* miss) {
    const F inf = std::numeric_limits<F>::infinity();
    constexpr int W = kernels::kMinLanes<F>;
    F h[W + 1], o[W + 1];
    std::fill(h, h + W + 1, inf);
    std::fill(o, o + W + 1, inf);
    kernels::in_lanes<W>(0, nb, [&](Index q, int l) {
        const F v = P[q] - F(2) * g[q];
        const bool same = code[q] == c;
        const F vh = same ? v : inf, vo = same ? inf : v;
        h[l] = vh < h[l] ? vh : h[l];
        o[l] = vo < o[l] ? vo : o[l];
    });
    *hit = kernels::fold_min(h);
    *miss = kernels::fold_min(o);
}
template <class F>
FASTFS_SIMD_CLONES void mark(const F* __restrict P, const F* __restrict g,
                             const std::int32_t* __restrict code, std::int32_t c, Index nb,
                             F t_hit, F t_miss, unsigned char* __restrict flags) {
#pragma omp simd
    for (Index q = 0; q < nb; ++q)
        flags[q] = static_cast<unsigned char>(P[q] - F(2) * g[q] <= (code[q] == c ? t_hit : t_miss));
}

// offer(j0 + q, g[q]) for each sample j0 + q of a tile row that mark() flagged, other than
// sample i itself. flags holds kTile bytes: the ones past rj are cleared here, so that eight
// can be tested at once.
template <class Offer>
inline void offer_marked(unsigned char* flags, Index rj, Index i, Index j0, const float* g,
                         Offer&& offer) {
    std::fill(flags + rj, flags + kTile, static_cast<unsigned char>(0));
    for (Index q0 = 0; q0 < rj; q0 += 8) {
        std::uint64_t word;
        std::memcpy(&word, flags + q0, sizeof word);
        if (!word) continue;
        for (Index q = q0; q < q0 + 8; ++q)
            if (flags[q] && j0 + q != i) offer(j0 + q, g[q]);
    }
}

// A candidate that did not fit its sample's list.
struct Spilled {
    std::int32_t row, j;
    std::int32_t cls;
    double lo;
};

// A candidate its sample's full list cannot take: into the spill area while it has room, else
// the sample is marked for the row scan (and counted in `marked`).
inline void spill_candidate(std::vector<Spilled>& spill, std::size_t cap, char& overflow,
                            Index& marked, const Spilled& e) {
    if (spill.size() < cap) {
        spill.push_back(e);
    } else if (!overflow) {
        overflow = 1;
        ++marked;
    }
}

// Adds candidate (j, v) to a sample's list: the parallel arrays idx / val holding cnt of cap
// entries. A full list is first compacted, when prune() says it is worth it, to the entries
// keep(idx[q], val[q]) still admits, in order; if it is still full, full() is called instead
// (the candidate then goes to the spill area or nowhere).
template <class V, class Prune, class Keep, class Full>
inline void push_candidate(std::int32_t* idx, V* val, std::int32_t& cnt, std::int32_t cap,
                           Index j, V v, Prune&& prune, Keep&& keep, Full&& full) {
    if (cnt == cap && prune()) {
        std::int32_t kept = 0;
        for (std::int32_t q = 0; q < cnt; ++q)
            if (keep(idx[q], val[q])) {
                idx[kept] = idx[q];
                val[kept] = val[q];
                ++kept;
            }
        cnt = kept;
    }
    if (cnt == cap) {
        full();
        return;
    }
    idx[cnt] = static_cast<std::int32_t>(j);
    val[cnt] = v;
    ++cnt;
}

// Groups spilled candidates by sample (counting sort): sample i's are then
// spill[first[i] .. first[i+1]).
inline void group_spill(std::vector<Spilled>& spill, std::vector<std::size_t>& first, Index m) {
    first.assign(static_cast<std::size_t>(m) + 1, 0);
    for (const auto& e : spill) ++first[static_cast<std::size_t>(e.row) + 1];
    for (Index i = 0; i < m; ++i) first[static_cast<std::size_t>(i) + 1] += first[static_cast<std::size_t>(i)];
    std::vector<Spilled> sorted(spill.size());
    std::vector<std::size_t> at(first.begin(), first.end() - 1);
    for (const auto& e : spill) sorted[at[static_cast<std::size_t>(e.row)]++] = e;
    spill.swap(sorted);
}

// One thread's running bounds and candidate lists, for every sample and both classes
// (0 = hit, 1 = miss). A full list first drops the candidates its running bound now excludes;
// if none can go, new candidates go to a spill area shared by the thread's samples (exact
// duplicates: every copy is a candidate at distance 0), up to 32 per sample on average; past
// that, the sample is marked for the row scan.
struct Candidates {
    std::vector<double> U;              // m x 2 smallest upper bounds (distances, scaled)
    std::vector<float> T32;             // m x 2 float32 prefilter thresholds from U
    std::vector<std::int32_t> count;    // m x 2
    std::vector<std::int32_t> idx;      // m x 2 x kListCap
    std::vector<double> lo;             // m x 2 x kListCap lower bounds
    std::vector<char> overflow;         // m
    Index marked = 0;                   // samples with overflow set
    std::vector<Spilled> spill;
    std::size_t spill_cap = 0;
    // After the tiles: the spilled candidates of sample i are spill[first[i] .. first[i+1]).
    std::vector<std::size_t> first;
    void init(Index m) {
        U.assign(static_cast<std::size_t>(2 * m), std::numeric_limits<double>::infinity());
        T32.assign(static_cast<std::size_t>(2 * m), std::numeric_limits<float>::infinity());
        count.assign(static_cast<std::size_t>(2 * m), 0);
        idx.resize(static_cast<std::size_t>(2 * m * kListCap));
        lo.resize(static_cast<std::size_t>(2 * m * kListCap));
        overflow.assign(static_cast<std::size_t>(m), 0);
        marked = 0;
        spill.clear();
        spill_cap = 32 * static_cast<std::size_t>(m) + 4096;
        first.assign(static_cast<std::size_t>(m) + 1, 0);
    }
    void index_spill(Index m) { group_spill(spill, first, m); }
};

// Bounds of a float32 value v = P32_j - 2 g_ij against its exact float64 value: evaluating
// it in float32 errs by at most 2.1 u (N_j + |g|) (P32's rounding and the subtraction's),
// and |g| <= (1 + Gamma) (N_i + N_j) / 2 + tau.
inline double v_error(const Screen& s, Index i) {
    return 2.2 * 0x1.0p-24 * (1.0 + s.Gamma) * (s.N[static_cast<std::size_t>(i)] + 2.0 * s.N_max) +
           s.tau;
}

// The largest float32 value v = P32_j - 2 g_ij that may pass for sample i when its running
// bound is U: v_j = (1 - Gamma) N_j - 2 g <= T is implied by lower_j <= U (see the top of the
// file), with rho_ij <= r_i + r_max and a relative slack for the float64 rounding of both
// sides; then v_error, rounded up.
inline float threshold32(const Screen& s, Index i, double U) {
    if (std::isinf(U)) return std::numeric_limits<float>::infinity();
    const double Ni = s.N[static_cast<std::size_t>(i)];
    const double t = U * (1.0 + 2.0 * s.kappa) + s.r[static_cast<std::size_t>(i)] + s.r_max;
    const double T = t * t - (1.0 - s.Gamma) * Ni + s.tau + 1e-9 * (t * t + Ni + s.N_max);
    return screen::round_up_to_float(T + v_error(s, i));
}

// The exact bounds of the distance of samples i and j (scaled, not squared) from their float32
// product g: low <= the exhaustive scan's float64 distance <= up (see the top of the file).
inline void pair_bounds(const Screen& s, Index i, Index j, float g, double& up, double& low) {
    const double gq = static_cast<double>(g);
    const double Ni = s.N[static_cast<std::size_t>(i)], Nj = s.N[static_cast<std::size_t>(j)];
    const double a = Ni + Nj - 2.0 * gq;
    const double E = s.Gamma * (Ni + Nj) + s.tau;
    const double rho = s.r[static_cast<std::size_t>(i)] + s.r[static_cast<std::size_t>(j)];
    up = (std::sqrt(std::max(0.0, a + E)) + rho) * (1.0 + s.kappa);
    low = std::max(0.0, std::sqrt(std::max(0.0, a - E)) - rho) * (1.0 - s.kappa);
}

// Screens samples against samples, given their float32 products g.
class RowScreen {
public:
    RowScreen(const Screen& s, Candidates& st) : s_(s), st_(st) {}

    double v_error(Index i) const { return gram::v_error(s_, i); }

    // Lowers sample i's running bound of class cls with the float32 value v of some sample j
    // of that class: a_ij + E_ij = v_exact + (1 + Gamma) N_i + 2 Gamma N_j + tau, so
    // sqrt(v + v_error + (1 + Gamma) N_i + 2 Gamma N_max + tau) + r_i + r_max bounds j's
    // distance from above (1e-12 (N_i + N_max) and the factor 1 + 1e-12 cover the float64
    // rounding of this sum and of the square root).
    void tighten(Index i, int cls, float v) {
        if (std::isinf(v)) return;
        const double Ni = s_.N[static_cast<std::size_t>(i)];
        const double A = static_cast<double>(v) + v_error(i) + (1.0 + s_.Gamma) * Ni +
                         2.0 * s_.Gamma * s_.N_max + s_.tau + 1e-12 * (Ni + s_.N_max);
        const double f = (1.0 + s_.kappa) * (1.0 + 1e-12);
        const double rr = s_.r[static_cast<std::size_t>(i)] + s_.r_max;
        const double U = st_.U[static_cast<std::size_t>(2 * i + cls)];
        // Most values cannot lower U: told without a square root (skipping an update is safe).
        const double W = U / f - rr;
        if (!std::isinf(U) && (W <= 0.0 || A >= W * W)) return;
        lower(i, cls, (std::sqrt(std::max(0.0, A)) + rr) * f);
    }

    // U = min(U, up), and the prefilter threshold with it.
    void lower(Index i, int cls, double up) {
        const std::size_t slot = static_cast<std::size_t>(2 * i + cls);
        if (!(up < st_.U[slot])) return;
        st_.U[slot] = up;
        st_.T32[slot] = threshold32(i, cls);
    }

    float threshold32(Index i, int cls) const {
        return gram::threshold32(s_, i, st_.U[static_cast<std::size_t>(2 * i + cls)]);
    }

    // Samples i0 .. i0+ri-1 against samples j0 .. j0+rj-1, whose products are the rows of G
    // (row a at G + a * ld). `diag`: the two ranges are the same (sample i0+a skips itself).
    void screen_rows(Index i0, Index ri, const float* G, Index ld, Index j0, Index rj, bool diag,
                     unsigned char* flags) {
        const float* P = s_.P32.data() + j0;
        const std::int32_t* code = s_.code.data() + j0;
        for (Index a = 0; a < ri; ++a) {
            const Index i = i0 + a;
            const float* g = G + a * ld;
            const std::int32_t c = s_.code[static_cast<std::size_t>(i)];
            float h, o;
            if (!diag) {
                class_minima(P, g, code, c, rj, &h, &o);
            } else {  // without the sample itself
                h = o = std::numeric_limits<float>::infinity();
                for (Index q = 0; q < rj; ++q) {
                    if (q == a) continue;
                    const float v = P[q] - 2.0f * g[q];
                    float& best = code[q] == c ? h : o;
                    best = std::min(best, v);
                }
            }
            tighten(i, 0, h);
            tighten(i, 1, o);
            const float th = st_.T32[static_cast<std::size_t>(2 * i)];
            const float tm = st_.T32[static_cast<std::size_t>(2 * i + 1)];
            if (!(h <= th) && !(o <= tm)) continue;
            mark(P, g, code, c, rj, th, tm, flags);
            offer_marked(flags, rj, i, j0, g, [&](Index j, float gj) { offer(i, j, gj); });
        }
    }

    // Sample j, whose product with sample i is g, passed the prefilter: its exact bounds.
    void offer(Index i, Index j, float g) {
        const int cls = s_.code[static_cast<std::size_t>(j)] == s_.code[static_cast<std::size_t>(i)] ? 0 : 1;
        double up, low;
        pair_bounds(s_, i, j, g, up, low);
        lower(i, cls, up);
        if (low <= st_.U[static_cast<std::size_t>(2 * i + cls)]) push(i, cls, j, low);
    }

private:
    void push(Index i, int cls, Index j, double low) {
        const std::size_t slot = static_cast<std::size_t>(2 * i + cls);
        const double U = st_.U[slot];
        push_candidate(
            st_.idx.data() + slot * kListCap, st_.lo.data() + slot * kListCap, st_.count[slot],
            kListCap, j, low, [] { return true; },
            // Drop the candidates the running bound now excludes.
            [U](std::int32_t, double lo) { return lo <= U; },
            [&] {
                spill_candidate(st_.spill, st_.spill_cap, st_.overflow[static_cast<std::size_t>(i)], st_.marked,
                                Spilled{static_cast<std::int32_t>(i), static_cast<std::int32_t>(j),
                                        cls, low});
            });
    }

    const Screen& s_;
    Candidates& st_;
};

// Whether the screen is worth trying on m samples and n features (below, the row scan wins or
// the difference does not matter).
inline bool worth_screening(Index m, Index n) {
    return m >= 32 && n >= 16 && m < (Index{1} << 31) - 1;
}

// The tiles J >= I of m samples, and the threads worth giving them: one below kParallelWork
// (every parallel region waits at its end for its slowest thread, which on a machine with a
// busy core can be a whole time slice).
inline std::vector<std::pair<Index, Index>> upper_tiles(Index m) {
    const Index blocks = (m + kTile - 1) / kTile;
    std::vector<std::pair<Index, Index>> tiles;
    tiles.reserve(static_cast<std::size_t>(blocks * (blocks + 1) / 2));
    for (Index I = 0; I < blocks; ++I)
        for (Index J = I; J < blocks; ++J) tiles.emplace_back(I, J);
    return tiles;
}
inline int tile_threads(const Screen& s, std::size_t n_tiles, int threads) {
    const double m = static_cast<double>(s.m);
    const double work = m * (m * static_cast<double>(s.kp) + static_cast<double>(s.blocks.val.size()));
    return work < kParallelWork ? 1 : std::max(1, std::min<int>(threads, static_cast<int>(n_tiles)));
}

// Tile (I, J) of the products (C, and Ct for its transpose: kTile x kTile each), screened by
// `rows` (RowScreen's screen_rows): the rows of block I against the samples of block J and,
// off the diagonal, those of J against I.
template <class Rows>
void screen_tile(const Screen& s, Index I, Index J, float* C, float* Ct, unsigned char* flags,
                 Rows& rows) {
    const Index m = s.m;
    const Index i0 = I * kTile, j0 = J * kTile;
    const Index ri = std::min(kTile, m - i0), rj = std::min(kTile, m - j0);
#if defined(FASTFS_HAVE_VNNI)
    if (s.Q)
        tile_product16(s.row16(i0), s.kq, ri, s.row16(j0), s.kq, rj, s.kq, C, kTile, I == J);
    else
#endif
    if (s.kp > 0)
        tile_product(s.row(i0), s.kp, ri, s.row(j0), s.kp, rj, s.kp, C, kTile, I == J);
    else
        std::fill(C, C + kTile * kTile, 0.0f);
    if (s.sparse) tile_product_sparse(s.blocks, I, J, C, kTile);
    rows.screen_rows(i0, ri, C, kTile, j0, rj, I == J, flags);
    if (I == J) return;
    // The other half of the symmetric tile: its columns against its rows.
    for (Index a = 0; a < ri; ++a)
        for (Index b = 0; b < rj; ++b)
            Ct[static_cast<std::size_t>(b * kTile + a)] = C[static_cast<std::size_t>(a * kTile + b)];
    rows.screen_rows(j0, rj, Ct, kTile, i0, ri, false, flags);
}

// The screen's parallel region. Each thread screens its share of the tiles (one at a time,
// dynamically) into its own candidate state, state[thread] (set up by init(state)), with a row
// screen Rows(s, state), and groups its spilled candidates by sample; then, after one barrier,
// merge(i, scratch) runs for every sample i (dynamic schedule, with a Scratch of the thread's
// own), skipped once the run is stopped or failed. One thread per state; errors are rethrown
// and a stop reported here.
//
// With 16-bit tiles, a run that sends more than a sixteenth of the samples to the row scan is
// given up and redone with float32 tiles (drop_int16), before any merge: a thread that has
// marked that many alone stops taking tiles, and after the tiles the samples any thread marked
// are counted. The probe (narrow_rounding) sees only 8 samples' final neighbours; a tight group
// of samples that every sample meets early in its tiles, all within the 16-bit radii of each
// other but not within the float32 ones, fills every sample's list and the spill area on the
// way (a reviewer's case: 4096 x 256 Gaussian rows with 12% of them packed within 0.01, 3968
// samples rescanned with 16-bit tiles against 300 with float32 ones).
constexpr Index kRetryShare = 16;
template <class Rows, class Scratch, class State, class Init, class Merge>
void screen_and_merge(Screen& s, const std::vector<std::pair<Index, Index>>& tiles,
                      std::vector<State>& state, Init&& init, StopPoll& poll,
                      RegionErrors& errors, Merge&& merge) {
    for (;;) {
        for (auto& st : state) init(st);
        std::atomic<bool> abandon{false};
#pragma omp parallel num_threads(static_cast<int>(state.size()))
        {
            State& st = state[static_cast<std::size_t>(thread_index())];
            Rows rows(s, st);
            std::vector<float> C, Ct;
            std::vector<unsigned char> flags;
            errors.run([&] {
                C.resize(static_cast<std::size_t>(kTile * kTile));
                Ct.resize(static_cast<std::size_t>(kTile * kTile));
                flags.resize(static_cast<std::size_t>(kTile));
            });
#pragma omp for schedule(dynamic, 1) nowait
            for (Index t = 0; t < static_cast<Index>(tiles.size()); ++t) {
                if (poll.stopped() || abandon.load(std::memory_order_relaxed)) continue;
                errors.run([&] {
                    screen_tile(s, tiles[static_cast<std::size_t>(t)].first,
                                tiles[static_cast<std::size_t>(t)].second, C.data(), Ct.data(),
                                flags.data(), rows);
                });
                if (s.Q && st.marked * kRetryShare > s.m)
                    abandon.store(true, std::memory_order_relaxed);
            }
            errors.run([&] { st.index_spill(s.m); });
#pragma omp barrier
#pragma omp single
            if (s.Q && !abandon.load()) {
                Index marked = 0;
                for (Index i = 0; i < s.m; ++i) {
                    bool over = false;
                    for (const auto& other : state) over = over || other.overflow[static_cast<std::size_t>(i)];
                    marked += over;
                }
                if (marked * kRetryShare > s.m) abandon.store(true);
            }
            Scratch scratch;
            const bool skip = abandon.load();
#pragma omp for schedule(dynamic, 32)
            for (Index i = 0; i < s.m; ++i) {
                if (skip || poll.stopped() || errors.failed()) continue;
                errors.run([&] { merge(i, scratch); });
            }
        }
        errors.rethrow();
        poll.check();
        if (!abandon.load() || !drop_int16(s)) return;
    }
}

// gram_nearest_hit_miss on every sample of X as given (no grouping of equal rows).
template <class T>
bool nearest_hit_miss_of_rows(const MatrixRef<T>& X, const Labels& codes, const double* w2,
                              int threads, std::vector<HitMiss>& out, const StopHook& stop,
                              Index* rescanned, bool distances, TileProduct product) {
    const Index m = X.rows(), n = X.cols();
    if (!worth_screening(m, n)) return false;
    struct Release {
        ~Release() { release_storage(); }
    } release;
    Screen s;
    if (!build_screen(X, codes, w2, s, product)) return false;

    const auto tiles = upper_tiles(m);
    const int nt = tile_threads(s, tiles.size(), threads);
    std::vector<Candidates> state(static_cast<std::size_t>(nt));

    StopPoll poll(stop);
    RegionErrors errors;
    std::vector<HitMiss> res(static_cast<std::size_t>(m));
    std::vector<char> fallback(static_cast<std::size_t>(m), 0);
    // One region: the tiles, then (after one barrier) the merge of the threads' candidates:
    // the exhaustive scan's float64 distances of the candidates left under the smallest bound
    // of all threads.
    struct Pending {
        std::vector<Index> cls[2];
    };
    screen_and_merge<RowScreen, Pending>(
        s, tiles, state, [m](Candidates& st) { st.init(m); }, poll, errors,
        [&](Index i, Pending& p) {
        std::vector<Index>* pending = p.cls;
        bool over = false;
        double U[2] = {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
        for (const auto& st : state) {
            over = over || st.overflow[static_cast<std::size_t>(i)];
            U[0] = std::min(U[0], st.U[static_cast<std::size_t>(2 * i)]);
            U[1] = std::min(U[1], st.U[static_cast<std::size_t>(2 * i + 1)]);
        }
        if (over) {
            fallback[static_cast<std::size_t>(i)] = 1;
            return;
        }
        pending[0].clear();
        pending[1].clear();
        for (const auto& st : state)
            for (int cls = 0; cls < 2; ++cls) {
                const std::size_t slot = static_cast<std::size_t>(2 * i + cls);
                for (std::int32_t q = 0; q < st.count[slot]; ++q)
                    if (st.lo[slot * kListCap + static_cast<std::size_t>(q)] <= U[cls])
                        pending[cls].push_back(st.idx[slot * kListCap + static_cast<std::size_t>(q)]);
            }
        for (const auto& st : state)
            for (std::size_t q = st.first[static_cast<std::size_t>(i)];
                 q < st.first[static_cast<std::size_t>(i) + 1]; ++q)
                if (st.spill[q].lo <= U[st.spill[q].cls])
                    pending[st.spill[q].cls].push_back(st.spill[q].j);
        HitMiss best;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        if (!distances && pending[0].size() == 1) {
            best.hit = pending[0][0];
            best.hit_d = nan;
            pending[0].clear();
        }
        if (!distances && pending[1].size() == 1) {
            best.miss = pending[1][0];
            best.miss_d = nan;
            pending[1].clear();
        }
        // The rest in one list, four rows per kernel call.
        pending[0].insert(pending[0].end(), pending[1].begin(), pending[1].end());
        exact_rows4(X, i, pending[0].data(), pending[0].size(),
                    [&](const T* x, const T* z0, const T* z1, const T* z2, const T* z3,
                        double* d) { kernels::sq_dist4(x, z0, z1, z2, z3, w2, n, d); },
                    [&](Index j, double d) { best.offer(d, j, codes[j] == codes[i]); });
        res[static_cast<std::size_t>(i)] = best;
    });

    // Samples whose lists overflowed (many samples within the bounds' reach): the row scan.
    std::vector<Index> rest;
    for (Index i = 0; i < m; ++i)
        if (fallback[static_cast<std::size_t>(i)]) rest.push_back(i);
    if (rescanned) *rescanned = static_cast<Index>(rest.size());
    if (!rest.empty()) {
        const NeighbourFinder<T> finder(X, codes);
#pragma omp parallel num_threads(nt)
        {
            typename NeighbourFinder<T>::Scratch sc;
            errors.run([&] { finder.prepare(w2, sc); });
#pragma omp for schedule(dynamic, 1)
            for (Index q = 0; q < static_cast<Index>(rest.size()); q += 4) {
                if (poll.stopped()) continue;
                errors.run([&] {
                    const int rows = static_cast<int>(std::min<Index>(4, static_cast<Index>(rest.size()) - q));
                    HitMiss got[4];
                    finder.query_samples(rest.data() + q, rows, w2, sc, got);
                    for (int r = 0; r < rows; ++r) res[static_cast<std::size_t>(rest[static_cast<std::size_t>(q + r)])] = got[r];
                });
            }
        }
        errors.rethrow();
        poll.check();
    }
    out = std::move(res);
    return true;
}

}  // namespace gram

// Nearest hit and miss of every sample (out[i] is sample i's) under squared weights w2,
// identical to the exhaustive float64 scan (all_nearest_hit_miss). Returns false, leaving out
// untouched, when the screen does not apply; the caller then uses all_nearest_hit_miss.
// `stop` is polled by the calling thread between tiles. `rescanned` (optional) receives the
// number of samples whose candidate lists overflowed and went to the row-scan finder.
// `distances` false: the caller reads only the neighbours (Relief), so a class whose bounds
// leave a single candidate takes it without its exact distance (hit_d or miss_d is then NaN);
// that saves two rows of float64 differences per sample, a fifth of Relief on wide data.
//
// When at least an eighth of the samples are copies of another sample of their class, the
// screen runs on one sample per group of equal rows (grouped_rows.hpp), whose answers are its
// members': the pairs, hence the tile products, shrink by the square of the share of distinct
// rows. `rescanned` then counts groups. Where the screen declines the groups' rows (fewer than
// 32, or values or weights it cannot bound) the row scan runs over them instead, so the answer
// is still found once per group, and true is returned.
template <class T>
bool gram_nearest_hit_miss(const GroupedRows<T>& grouped, const MatrixRef<T>& X,
                           const Labels& codes, const double* w2, int threads,
                           std::vector<HitMiss>& out, const StopHook& stop = {},
                           Index* rescanned = nullptr, bool distances = true,
                           gram::TileProduct product = gram::TileProduct::automatic);

template <class T>
bool gram_nearest_hit_miss(const MatrixRef<T>& X, const Labels& codes, const double* w2,
                           int threads, std::vector<HitMiss>& out, const StopHook& stop = {},
                           Index* rescanned = nullptr, bool distances = true,
                           gram::TileProduct product = gram::TileProduct::automatic) {
    require(codes.size() == X.rows(), "X and y have different numbers of samples");
    if (!gram::worth_screening(X.rows(), X.cols())) return false;
    return gram_nearest_hit_miss(GroupedRows<T>(X, codes), X, codes, w2, threads, out, stop,
                                 rescanned, distances, product);
}

// The same with the groups of equal rows of (X, codes) already found (a caller that searches
// X many times, as Simba does, finds them once).
template <class T>
bool gram_nearest_hit_miss(const GroupedRows<T>& grouped, const MatrixRef<T>& X,
                           const Labels& codes, const double* w2, int threads,
                           std::vector<HitMiss>& out, const StopHook& stop, Index* rescanned,
                           bool distances, gram::TileProduct product) {
    const Index m = X.rows();
    require(codes.size() == m, "X and y have different numbers of samples");
    require(grouped.groups.n_samples() == m, "the groups of equal rows are not those of X");
    if (!gram::worth_screening(m, X.cols())) return false;
    if (!grouped.active)
        return gram::nearest_hit_miss_of_rows(X, codes, w2, threads, out, stop, rescanned,
                                              distances, product);
    std::vector<HitMiss> hu;
    if (!gram::nearest_hit_miss_of_rows<T>(grouped.X, grouped.codes, w2, threads, hu, stop,
                                           rescanned, distances, product)) {
        const Index u = grouped.groups.n_groups();
        if (u >= 2)
            all_nearest_hit_miss<T>(grouped.X, grouped.codes, w2, threads, hu, stop);
        else
            hu.assign(static_cast<std::size_t>(u), HitMiss{});  // one group: no other row
        if (rescanned) *rescanned = u;
    }
    std::vector<HitMiss> res(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i)
        res[static_cast<std::size_t>(i)] =
            grouped.lift(hu[static_cast<std::size_t>(grouped.group_of(i))], i, X, w2);
    out = std::move(res);
    return true;
}
}  // namespace fastfs
