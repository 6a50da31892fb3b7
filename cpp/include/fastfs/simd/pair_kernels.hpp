// The inner loops of the distance state: for rows a of D (upper triangle) and a column range,
// v = D[a, b] + sign * (x_a - x_b)^2, folded into a per-row minimum and a per-column minimum.
// On x86-64 each kernel is compiled twice, for AVX2 and the baseline, and the loader picks one
// per CPU (function multi-versioning), so wheels stay portable without -march=native. A kernel
// bound by the floating-point units can also have an AVX2 + FMA version with the same bits,
// chosen at run time by cpu_has_avx2_fma().
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../core/types.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(FASTFS_NO_CLONES)
#include <immintrin.h>
#if defined(__clang__)
// Clang (Apple's included) does not multiversion function templates, which most kernels here
// are: its builds run the baseline version of these loops, and the explicit AVX2 kernels below.
#define FASTFS_SIMD_CLONES
#else
#define FASTFS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#define FASTFS_HAVE_CLONES 1
#endif
// Kernels with __attribute__((target("avx2,fma"))) exist; cpu_has_avx2_fma() says whether the
// CPU runs them. The default build keeps -ffp-contract=off and no -mfma, so the compiler never
// fuses on its own.
#define FASTFS_HAVE_AVX2_FMA 1
// And kernels with AVX-512 VNNI (the 16-bit tiles of gram_screen.hpp), which GCC names from 8.
#if defined(__clang__) || __GNUC__ >= 8
#define FASTFS_HAVE_VNNI 1
#endif
#else
#define FASTFS_SIMD_CLONES
#endif

// "omp simd" with min and max reductions whose result may stay at +inf (-inf): OpenMP starts
// each lane's private copy at the operation's identity, which GCC takes as +inf (-inf) but
// Clang as the largest (lowest) finite value, so that under Clang an empty or all-infinite
// minimum came out as FLT_MAX or DBL_MAX. Under Clang these reductions are declared anew, each
// private copy starting from the variable's own value (min and max are idempotent, so the
// results are the same). FASTFS_SIMD_REDUCE(clauses) writes the pragma, with FASTFS_MIN and
// FASTFS_MAX as the reductions' names: FASTFS_SIMD_REDUCE(reduction(FASTFS_MIN : best)).
#if defined(_MSC_VER) && !defined(__clang__)
#define FASTFS_PRAGMA(...) __pragma(__VA_ARGS__)
#else
#define FASTFS_PRAGMA_TEXT(...) _Pragma(#__VA_ARGS__)
#define FASTFS_PRAGMA(...) FASTFS_PRAGMA_TEXT(__VA_ARGS__)
#endif
#define FASTFS_SIMD_REDUCE(...) FASTFS_PRAGMA(omp simd __VA_ARGS__)
#if defined(__clang__)
#define FASTFS_MIN fastfs_min
#define FASTFS_MAX fastfs_max
#ifdef _OPENMP
#pragma omp declare reduction(fastfs_min : float : omp_out = omp_in < omp_out ? omp_in : omp_out) \
    initializer(omp_priv = omp_orig)
#pragma omp declare reduction(fastfs_min : double : omp_out = omp_in < omp_out ? omp_in : omp_out) \
    initializer(omp_priv = omp_orig)
#pragma omp declare reduction(fastfs_max : float : omp_out = omp_in > omp_out ? omp_in : omp_out) \
    initializer(omp_priv = omp_orig)
#pragma omp declare reduction(fastfs_max : double : omp_out = omp_in > omp_out ? omp_in : omp_out) \
    initializer(omp_priv = omp_orig)
#endif
#else
#define FASTFS_MIN min
#define FASTFS_MAX max
#endif

namespace fastfs::kernels {

// Whether this CPU has AVX2 and FMA (checked once).
inline bool cpu_has_avx2_fma() {
#ifdef FASTFS_HAVE_AVX2_FMA
    static const bool ok = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    return ok;
#else
    return false;
#endif
}

// By value: std::min returns a reference, and nesting it over temporaries makes GCC fall back
// to a scalar loop. Same result as std::min for the finite-or-inf values used here.
template <class T>
inline T min_of(T a, T b) {
    return b < a ? b : a;
}

// D[a, b] + S * q with the sign known at compile time (S in {-1, 0, 1}) saves a multiply per
// pair and gives exactly what the generic sign * q gives: x + (-1 * q) == x - q and x + 0 == x
// in IEEE arithmetic.
template <int S, class T>
inline T shifted(T d, T q) {
    if constexpr (S > 0) return d + q;
    else if constexpr (S < 0) return d - q;
    else return d;
}

// visit(b, l) for every b in [lo, hi), l naming one of W + 1 accumulators the caller keeps:
// l = (b - lo) % W in the blocks of W (vectorised), l = W for the tail. W running
// accumulators, where one would make every vector wait for the previous one's result (a chain
// of dependent additions or compares, at their latency per vector). The caller folds its
// W + 1 accumulators at the end.
//
// Minima are written this way too, with min_of on the accumulators: a minimum is exact, so the
// lanes change no bit, and the loop needs no reduction clause. Clang vectorises a
// `best = v < best ? v : best` reduction only when NaN need not be honoured, and so left every
// such loop scalar under `omp simd`; lane-wise selects it vectorises.
template <int W, class Visit>
inline __attribute__((always_inline)) void in_lanes(Index lo, Index hi, Visit&& visit) {
    Index b = lo;
    for (; b + W <= hi; b += W) {
#pragma omp simd
        for (int l = 0; l < W; ++l) visit(b + l, l);
    }
    for (; b < hi; ++b) visit(b, W);
}

// Sixteen lanes over [0, n): four AVX2 registers of doubles.
template <class Visit>
inline __attribute__((always_inline)) void in_sixteen_lanes(Index n, Visit&& visit) {
    in_lanes<16>(0, n, visit);
}

// Lanes of T filling two AVX2 registers: the minima's accumulators.
template <class T>
inline constexpr int kMinLanes = static_cast<int>(64 / sizeof(T));

// The smallest of lane[0 .. N) (NaN never enters a minimum's lanes: v < best is false for it).
template <class T, int N>
inline T fold_min(const T (&lane)[N]) {
    T best = lane[0];
    for (int l = 1; l < N; ++l) best = min_of(best, lane[l]);
    return best;
}

// min over b in [lo, hi) of value(b) (+inf when empty, NaN skipped), in kMinLanes<T> lanes.
template <class T, class Value>
inline __attribute__((always_inline)) T lane_min(Index lo, Index hi, Value&& value) {
    constexpr int W = kMinLanes<T>;
    T best[W + 1];
    std::fill(best, best + W + 1, std::numeric_limits<T>::infinity());
    in_lanes<W>(lo, hi, [&](Index b, int l) { best[l] = min_of(best[l], value(b)); });
    return fold_min(best);
}

// max(0, max over b in [lo, hi) of value(b)) in sixteen float64 lanes (0 when empty; NaN
// skipped, as a loop of std::max(top, v) from 0 skips it). A maximum is exact: no bit depends
// on the lanes' order.
template <class Value>
inline __attribute__((always_inline)) double lane_max0(Index lo, Index hi, Value&& value) {
    double lane[17] = {};
    in_lanes<16>(lo, hi, [&](Index b, int l) {
        const double v = value(b);
        lane[l] = lane[l] < v ? v : lane[l];
    });
    double top = 0.0;
    for (double v : lane) top = top < v ? v : top;
    return top;
}

#ifdef FASTFS_HAVE_AVX2_FMA
// The 4 x 4 block r[0 .. 4) (a register per row, a lane per column) transposed in place (a
// register per column, a lane per row).
__attribute__((target("avx2"))) inline void transpose4(__m256d* r) {
    const __m256d a = _mm256_unpacklo_pd(r[0], r[1]);  // r0[0] r1[0] r0[2] r1[2]
    const __m256d b = _mm256_unpackhi_pd(r[0], r[1]);  // r0[1] r1[1] r0[3] r1[3]
    const __m256d c = _mm256_unpacklo_pd(r[2], r[3]);
    const __m256d d = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(a, c, 0x20);
    r[1] = _mm256_permute2f128_pd(b, d, 0x20);
    r[2] = _mm256_permute2f128_pd(a, c, 0x31);
    r[3] = _mm256_permute2f128_pd(b, d, 0x31);
}
#endif

// max(0, the largest x[f]) (with Abs, of |x[f]|); NaN entries are skipped, as a loop of
// std::max(top, x[f]) from 0 skips them. A maximum is exact, so the vector lanes' order changes
// no bit; the plain loop is a serial chain of compares (Simba takes two per step).
template <bool Abs>
FASTFS_SIMD_CLONES double max_entry(const double* __restrict x, Index n) {
    return lane_max0(0, n, [&](Index f) { return Abs ? std::abs(x[f]) : x[f]; });
}

// out[f] = float(w2[f] * scale), or 0 where the product is below `flush` (the screen's weights,
// engine.hpp). GCC keeps a select of a float64 comparison scalar here (the comparison may trap
// under its default -ftrapping-math), so the AVX2 version is written out.
#ifdef FASTFS_HAVE_AVX2_FMA
__attribute__((target("avx2"))) inline Index scaled_floats_flushed_avx2(const double* w2, Index n,
                                                                       double scale, double flush,
                                                                       float* out) {
    const __m256d sc = _mm256_set1_pd(scale), fl = _mm256_set1_pd(flush);
    Index f = 0;
    for (; f + 4 <= n; f += 4) {
        const __m256d v = _mm256_mul_pd(_mm256_loadu_pd(w2 + f), sc);
        // Kept where not (v < flush), NaN included, as the scalar select keeps it.
        const __m256d keep = _mm256_and_pd(v, _mm256_cmp_pd(v, fl, _CMP_NLT_UQ));
        _mm_storeu_ps(out + f, _mm256_cvtpd_ps(keep));
    }
    return f;
}
#endif
inline void scaled_floats_flushed(const double* w2, Index n, double scale, double flush,
                                  float* out) {
    Index f = 0;
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) f = scaled_floats_flushed_avx2(w2, n, scale, flush, out);
#endif
    for (; f < n; ++f) {
        const double v = w2[f] * scale;
        out[f] = v < flush ? 0.0f : static_cast<float>(v);
    }
}

// sum_f a[f] b[f] in sixteen running lanes, then added up: the terms in another order than a
// plain loop's, so only for sums whose callers bound the rounding of any order (the n
// products and n - 1 additions of non-negative terms err by at most gamma_2n however they
// are grouped), several times faster than the plain loop's chain of dependent additions.
FASTFS_SIMD_CLONES inline double dot_lanes(const double* __restrict a,
                                           const double* __restrict b, Index n) {
    double lane[17] = {};
    in_sixteen_lanes(n, [&](Index f, int l) { lane[l] += a[f] * b[f]; });
    double sum = lane[16];
    for (int l = 0; l < 16; ++l) sum += lane[l];
    return sum;
}

// sum[f] += x[f], and returns max(0, max_f |x[f]|) (NaN skipped), in sixteen running lanes.
template <class T>
FASTFS_SIMD_CLONES double add_row_max_abs(const T* __restrict x, Index n,
                                          double* __restrict sum) {
    double lane[17] = {};
    in_sixteen_lanes(n, [&](Index f, int l) {
        const double v = static_cast<double>(x[f]);
        sum[f] += v;
        const double a = v < 0.0 ? -v : v;
        lane[l] = a > lane[l] ? a : lane[l];
    });
    double top = 0.0;
    for (double v : lane) top = v > top ? v : top;
    return top;
}

// out[f] = (w[f] * scale)^2.
FASTFS_SIMD_CLONES inline void scaled_squares(const double* __restrict w, Index n, double scale,
                                              double* __restrict out) {
#pragma omp simd
    for (Index f = 0; f < n; ++f) {
        const double v = w[f] * scale;
        out[f] = v * v;
    }
}

// One row a: returns min_b v and lowers colmin[b] to v, for b in [lo, hi).
template <int S, class T>
FASTFS_SIMD_CLONES T scan_row(const T* __restrict row, const T* __restrict col, T xa, Index lo,
                              Index hi, T* __restrict colmin) {
    return lane_min<T>(lo, hi, [&](Index b) {
        const T diff = xa - col[b];
        const T v = shifted<S>(row[b], diff * diff);
        colmin[b] = min_of(colmin[b], v);
        return v;
    });
}

// Four rows a0..a0+3 against the same columns: col[b] and colmin[b] are loaded once per four
// pairs instead of once per pair. best[r] is lowered to the row minima. With P = +1 or -1, the
// rows first take a deferred update in the same pass: r[b] = r[b] + P (pa[r] - pcol[b])^2 is
// stored (update_row's expression and bits) and the candidate is scored on the updated value
// (one read and one write of the rows instead of an update pass and a scan pass).
template <int S, int P = 0, class T>
FASTFS_SIMD_CLONES void scan_rows4(T* __restrict r0, T* __restrict r1, T* __restrict r2,
                                   T* __restrict r3, const T* xa, const T* __restrict col,
                                   Index lo, Index hi, T* __restrict colmin, T* best,
                                   const T* pa = nullptr, const T* __restrict pcol = nullptr) {
    // Lanes per row: GCC runs four rows of one register each as fast as its reduction did (two
    // registers each cost it 8% on floats, from spills); Clang needs two to vectorise doubles.
#if defined(__clang__)
    constexpr int W = kMinLanes<T>;
#else
    constexpr int W = kMinLanes<T> / 2;
#endif
    T b0[W + 1], b1[W + 1], b2[W + 1], b3[W + 1];
    std::fill(b0, b0 + W + 1, best[0]);
    std::fill(b1, b1 + W + 1, best[1]);
    std::fill(b2, b2 + W + 1, best[2]);
    std::fill(b3, b3 + W + 1, best[3]);
    const T x0 = xa[0], x1 = xa[1], x2 = xa[2], x3 = xa[3];
    T p0 = T(0), p1 = T(0), p2 = T(0), p3 = T(0);
    if constexpr (P != 0) p0 = pa[0], p1 = pa[1], p2 = pa[2], p3 = pa[3];
    in_lanes<W>(lo, hi, [&](Index b, int l) {
        T u0 = r0[b], u1 = r1[b], u2 = r2[b], u3 = r3[b];
        if constexpr (P != 0) {
            const T q = pcol[b];
            const T e0 = p0 - q, e1 = p1 - q, e2 = p2 - q, e3 = p3 - q;
            u0 = shifted<P>(u0, e0 * e0);
            u1 = shifted<P>(u1, e1 * e1);
            u2 = shifted<P>(u2, e2 * e2);
            u3 = shifted<P>(u3, e3 * e3);
            r0[b] = u0;
            r1[b] = u1;
            r2[b] = u2;
            r3[b] = u3;
        }
        const T c = col[b];
        const T d0 = x0 - c, d1 = x1 - c, d2 = x2 - c, d3 = x3 - c;
        const T v0 = shifted<S>(u0, d0 * d0);
        const T v1 = shifted<S>(u1, d1 * d1);
        const T v2 = shifted<S>(u2, d2 * d2);
        const T v3 = shifted<S>(u3, d3 * d3);
        b0[l] = min_of(b0[l], v0);
        b1[l] = min_of(b1[l], v1);
        b2[l] = min_of(b2[l], v2);
        b3[l] = min_of(b3[l], v3);
        colmin[b] = min_of(colmin[b], min_of(min_of(v0, v1), min_of(v2, v3)));
    });
    best[0] = fold_min(b0);
    best[1] = fold_min(b1);
    best[2] = fold_min(b2);
    best[3] = fold_min(b3);
}

// D[a, b] += sign * (x_a - x_b)^2 for b in [lo, hi): the same expression as the scans, so an
// accepted candidate leaves exactly the values it was scored with.
// A sign of +1 or -1 (every caller's) skips the multiply: x + (1 * q) == x + q and
// x + (-1 * q) == x - q exactly.
template <int S, class T>
inline __attribute__((always_inline)) void update_row_signed(T* __restrict row,
                                                             const T* __restrict col, T xa,
                                                             T sign, Index lo, Index hi) {
#pragma omp simd
    for (Index b = lo; b < hi; ++b) {
        const T diff = xa - col[b];
        if constexpr (S == 0) row[b] = row[b] + sign * (diff * diff);
        else row[b] = shifted<S>(row[b], diff * diff);
    }
}
template <class T>
FASTFS_SIMD_CLONES void update_row(T* row, const T* col, T xa, T sign, Index lo, Index hi) {
    if (sign == T(1)) update_row_signed<1>(row, col, xa, sign, lo, hi);
    else if (sign == T(-1)) update_row_signed<-1>(row, col, xa, sign, lo, hi);
    else update_row_signed<0>(row, col, xa, sign, lo, hi);
}

// out[b] = src[b] rounded to U for b in [lo, hi); returns max(0, the largest src[b]).
template <class T, class U>
FASTFS_SIMD_CLONES double round_row(const T* __restrict src, U* __restrict out, Index lo, Index hi) {
    T top = T(0);
#pragma omp simd reduction(max : top)
    for (Index b = lo; b < hi; ++b) {
        const T v = src[b];
        out[b] = static_cast<U>(v);
        top = top < v ? v : top;
    }
    return static_cast<double>(top);
}

// Sums of n terms in a fixed order, whatever the instruction set: term f goes to lane
// f % L of its row's accumulator (L = 4 doubles or 8 floats, one AVX2 register), and the lanes
// are combined pairwise at the end. An `omp simd reduction` would let the vector width choose
// the order, so the AVX2 and baseline builds (and other compilers) would round distances
// differently and break near-ties differently: the same data would select different
// neighbours on different machines. Lane-wise additions are exact per lane, so how the lanes
// are vectorised (one AVX2 register, two SSE2 registers, scalars) changes no bit.
#if defined(__GNUC__) || defined(__clang__)
#define FASTFS_VECTOR_LANES 1
template <class Acc>
struct LaneVector;
template <>
struct LaneVector<double> {
    typedef double type __attribute__((vector_size(32)));
};
template <>
struct LaneVector<float> {
    typedef float type __attribute__((vector_size(32)));
};

// L consecutive values from p (any alignment) as a lane vector of Acc (an out-parameter:
// returning an AVX-sized vector by value would change the baseline clone's ABI).
template <class Acc, class T>
inline void load_lanes(typename LaneVector<Acc>::type& v, const T* p) {
    if constexpr (std::is_same_v<Acc, T>) {
        std::memcpy(&v, p, sizeof v);
    } else {
        static_assert(std::is_same_v<Acc, double> && std::is_same_v<T, float>);
        v = typename LaneVector<Acc>::type{p[0], p[1], p[2], p[3]};
    }
}

// acc += |d| per lane, |d| by clearing the sign bits (one AND, as std::abs compiles for a
// scalar). By reference, for the same ABI reason as load_lanes.
template <class V>
inline void add_abs_lanes(V& acc, const V& d) {
    using Bits = std::conditional_t<sizeof(d[0]) == 8, std::int64_t, std::int32_t>;
    typedef Bits BitsVector __attribute__((vector_size(sizeof(V))));
    const Bits mask = std::numeric_limits<Bits>::max();
    acc += reinterpret_cast<V>(reinterpret_cast<BitsVector>(d) & mask);
}
#endif

// Squared distances from scratch, as a sum over the features in their given order: row[b] =
// (...((0 + q_1) + q_2) ...) + q_k, q_f = (cols[f][a] - cols[f][b])^2, for b in [lo, hi).
// Each term is added with update_row's expression (sign 1), so a state built this way holds
// exactly what k add_feature() calls from zero would give, and a row block's entries are those
// of the whole state's (the square does not depend on the order of the difference). The
// features are the outer loop over one tile of the row, which stays in L1 (see squares_tiled).
//
// add_squares4: one feature's terms added to four rows over [lo, hi) (inlined into the kernels,
// so that each of their clones vectorises the loop over b; update_row_signed<1> is the same for
// one row).
template <class T>
inline __attribute__((always_inline)) void add_squares4(T* __restrict r0, T* __restrict r1,
                                                        T* __restrict r2, T* __restrict r3,
                                                        const T* __restrict c, const T* xa,
                                                        Index lo, Index hi) {
    const T x0 = xa[0], x1 = xa[1], x2 = xa[2], x3 = xa[3];
#pragma omp simd
    for (Index b = lo; b < hi; ++b) {
        const T cb = c[b];
        const T d0 = x0 - cb, d1 = x1 - cb, d2 = x2 - cb, d3 = x3 - cb;
        r0[b] = r0[b] + d0 * d0;
        r1[b] = r1[b] + d1 * d1;
        r2[b] = r2[b] + d2 * d2;
        r3[b] = r3[b] + d3 * d3;
    }
}

// One row a.
template <class T>
FASTFS_SIMD_CLONES void squares_row(T* row, const T* const* cols, int k, Index a, Index lo,
                                    Index hi) {
    std::fill(row + lo, row + hi, T(0));
    for (int f = 0; f < k; ++f) update_row_signed<1>(row, cols[f], cols[f][a], T(1), lo, hi);
}

// The same for rows a0 .. a0+3 at once. Two lane vectors of columns of the four rows are held
// in registers while a chunk of features is added to them, so a row entry is loaded and stored
// once per chunk rather than once per feature (those stores bounded a loop with one feature per
// pass); the chunk's columns stay in L1 across the tile. Lane-wise, so each entry's sum keeps
// the features' order.
template <class T>
FASTFS_SIMD_CLONES void squares_rows4(T* r0, T* r1, T* r2, T* r3, const T* const* cols, int k,
                                      Index a0, Index lo, Index hi) {
    std::fill(r0 + lo, r0 + hi, T(0));
    std::fill(r1 + lo, r1 + hi, T(0));
    std::fill(r2 + lo, r2 + hi, T(0));
    std::fill(r3 + lo, r3 + hi, T(0));
    Index body = lo;
#ifdef FASTFS_VECTOR_LANES
    using V = typename LaneVector<T>::type;
    // Unaligned loads and stores of V straight from the rows (no copy through the stack).
    typedef T U __attribute__((vector_size(sizeof(V)), aligned(sizeof(T)), may_alias));
    constexpr Index L = sizeof(V) / sizeof(T), W = 2 * L;
    constexpr int kChunk = 16;
    body = lo + (hi - lo) / W * W;
    T* const rows[4] = {r0, r1, r2, r3};
    for (int f0 = 0; f0 < k; f0 += kChunk) {
        const int f1 = std::min(k, f0 + kChunk);
        for (Index b = lo; b < body; b += W) {
            V s[4][2];
            for (int r = 0; r < 4; ++r) {
                s[r][0] = *reinterpret_cast<const U*>(rows[r] + b);
                s[r][1] = *reinterpret_cast<const U*>(rows[r] + b + L);
            }
            for (int f = f0; f < f1; ++f) {
                const T* c = cols[f];
                const V c0 = *reinterpret_cast<const U*>(c + b);
                const V c1 = *reinterpret_cast<const U*>(c + b + L);
                for (int r = 0; r < 4; ++r) {
                    V x;
                    for (Index l = 0; l < L; ++l) x[l] = c[a0 + r];
                    const V d0 = x - c0, d1 = x - c1;
                    s[r][0] = s[r][0] + d0 * d0;
                    s[r][1] = s[r][1] + d1 * d1;
                }
            }
            for (int r = 0; r < 4; ++r) {
                *reinterpret_cast<U*>(rows[r] + b) = s[r][0];
                *reinterpret_cast<U*>(rows[r] + b + L) = s[r][1];
            }
        }
    }
#endif
    if (body < hi)
        for (int f = 0; f < k; ++f) add_squares4(r0, r1, r2, r3, cols[f], cols[f] + a0, body, hi);
}

// rows[r] (r < n_rows <= 4) = squares_row of sample a0 + r over [lo, hi), tile by tile (256
// columns: four rows of a tile stay in L1 while every feature is added to them).
template <class T>
inline void squares_tiled(T* const* rows, int n_rows, const T* const* cols, int k, Index a0,
                          Index lo, Index hi) {
    constexpr Index kTile = 256;
    for (Index t = lo; t < hi; t += kTile) {
        const Index e = std::min(t + kTile, hi);
        if (n_rows == 4) {
            squares_rows4(rows[0], rows[1], rows[2], rows[3], cols, k, a0, t, e);
        } else {
            for (int r = 0; r < n_rows; ++r) squares_row(rows[r], cols, k, a0 + r, t, e);
        }
    }
}

template <class Acc>
inline constexpr int kLanes = sizeof(Acc) == 4 ? 8 : 4;

template <class Acc>
inline Acc combine_lanes(const Acc* s) {
    if constexpr (kLanes<Acc> == 8)
        return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    else
        return (s[0] + s[1]) + (s[2] + s[3]);
}

// Four rows of per-lane sums; `vec(f, acc)` adds the terms f .. f+L-1 of the four rows to the
// lane vectors acc[0..3] (when lane vectors exist), `term(f, r)` is one term. Both compute the
// same value per term.
//
// The sums can also be taken a range of features at a time: fixed_order_lanes4 adds the terms
// f0 .. f1-1 (f1 - f0 a multiple of L) to the lane sums s[4][L] it is given, and
// fixed_order_finish4 adds the tail (n - n % L .. n-1) and combines the lanes. Each lane is
// still one sum in f order, so splitting the features changes no bit (a caller can keep a tile
// of rows in cache while it walks a wide matrix feature block by feature block).
template <class Acc, class Vec, class Term>
inline void fixed_order_lanes4(Index f0, Index f1, Vec&& vec, Term&& term,
                               Acc (*s)[kLanes<Acc>]) {
    constexpr int L = kLanes<Acc>;
    Index f = f0;
#ifdef FASTFS_VECTOR_LANES
    (void)term;
    using V = typename LaneVector<Acc>::type;
    V acc[4];
    std::memcpy(acc, s, sizeof acc);
    for (; f + L <= f1; f += L) vec(f, acc);
    std::memcpy(s, acc, sizeof acc);
#else
    (void)vec;
    for (; f + L <= f1; f += L)
        for (int l = 0; l < L; ++l)
            for (int r = 0; r < 4; ++r) s[r][l] += term(f + l, r);
#endif
}

template <class Acc, class Term>
inline void fixed_order_finish4(Index n, Term&& term, Acc (*s)[kLanes<Acc>], Acc* out) {
    constexpr int L = kLanes<Acc>;
    const Index f = n - n % L;
    for (int l = 0; f + l < n; ++l)
        for (int r = 0; r < 4; ++r) s[r][l] += term(f + l, r);
    for (int r = 0; r < 4; ++r) out[r] = combine_lanes(s[r]);
}

template <class Acc, class Vec, class Term>
inline void fixed_order_sums4(Index n, Vec&& vec, Term&& term, Acc* out) {
    Acc s[4][kLanes<Acc>] = {};
    fixed_order_lanes4<Acc>(0, n - n % kLanes<Acc>, vec, term, s);
    fixed_order_finish4<Acc>(n, term, s, out);
}

// Weighted squared distances from x to four rows at once: out[r] = sum_f w2[f] (x_f - z_r,f)^2,
// in the accumulator type Acc (deduced from w2 and out): float64 for exact distances whatever
// T is, float32 for the shortlist pass of the neighbour query (twice the lanes). x and w2 are
// loaded once per four rows. Every exact distance of a query goes through this one kernel (a
// short tail repeats a row), so each value has the same bits however rows are split among
// threads, and on every CPU.
template <class Acc, class T>
FASTFS_SIMD_CLONES void sq_dist4(const T* __restrict x, const T* __restrict z0,
                                 const T* __restrict z1, const T* __restrict z2,
                                 const T* __restrict z3, const Acc* __restrict w2, Index n,
                                 Acc* out) {
    const T* z[4] = {z0, z1, z2, z3};
    auto term = [&](Index f, int r) {
        const Acc d = static_cast<Acc>(x[f]) - static_cast<Acc>(z[r][f]);
        return w2[f] * (d * d);
    };
#ifdef FASTFS_VECTOR_LANES
    auto vec = [&](Index f, typename LaneVector<Acc>::type* acc) {
        typename LaneVector<Acc>::type xv, wv, zv;
        load_lanes<Acc>(xv, x + f);
        load_lanes<Acc>(wv, w2 + f);
        for (int r = 0; r < 4; ++r) {
            load_lanes<Acc>(zv, z[r] + f);
            const auto d = xv - zv;
            acc[r] += wv * (d * d);
        }
    };
#else
    auto vec = 0;
#endif
    fixed_order_sums4<Acc>(n, vec, term, out);
}

// Manhattan distances from x to four rows at once: out[r] = sum_f |x_f - z_r,f| (ReliefF),
// in the same fixed order. l1_lanes4 and l1_finish4 are the same sums a block of features at a
// time (see fixed_order_lanes4): the same bits as l1_dist4.
template <class T>
inline auto l1_parts(const T* __restrict x, const T* const* z) {
    auto term = [=](Index f, int r) { return std::abs(x[f] - z[r][f]); };
#ifdef FASTFS_VECTOR_LANES
    auto vec = [=](Index f, typename LaneVector<T>::type* acc) {
        typename LaneVector<T>::type xv, zv;
        load_lanes<T>(xv, x + f);
        for (int r = 0; r < 4; ++r) {
            load_lanes<T>(zv, z[r] + f);
            add_abs_lanes(acc[r], xv - zv);
        }
    };
#else
    auto vec = 0;
#endif
    struct Parts {
        decltype(term) t;
        decltype(vec) v;
    };
    return Parts{term, vec};
}

template <class T>
FASTFS_SIMD_CLONES void l1_lanes4_any(const T* __restrict x, const T* __restrict z0,
                                      const T* __restrict z1, const T* __restrict z2,
                                      const T* __restrict z3, Index f0, Index f1,
                                      T (*s)[kLanes<T>]) {
    const T* z[4] = {z0, z1, z2, z3};
    auto p = l1_parts(x, z);
    fixed_order_lanes4<T>(f0, f1, p.v, p.t, s);
}

#ifdef FASTFS_HAVE_AVX2_FMA
// l1_lanes4 on CPUs with FMA: x - z is formed as -(z * 1) + x, which is exactly x - z (z * 1 is
// exact and the fused operation rounds once), so the bits are those of l1_lanes4_any. The
// subtractions move to the FMA units and leave the add units to the additions of |x - z|
// (docs/how-it-works.md has the rates).
__attribute__((target("avx2,fma"))) inline void l1_lanes4_fma(const double* x, const double* z0,
                                                              const double* z1,
                                                              const double* z2,
                                                              const double* z3, Index f0,
                                                              Index f1, double (*s)[4]) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    const double* z[4] = {z0, z1, z2, z3};
    __m256d a[4];
    for (int r = 0; r < 4; ++r) a[r] = _mm256_loadu_pd(s[r]);
    for (Index f = f0; f + 4 <= f1; f += 4) {
        const __m256d xv = _mm256_loadu_pd(x + f);
        for (int r = 0; r < 4; ++r)
            a[r] = _mm256_add_pd(
                a[r], _mm256_and_pd(_mm256_fnmadd_pd(_mm256_loadu_pd(z[r] + f), one, xv), mask));
    }
    for (int r = 0; r < 4; ++r) _mm256_storeu_pd(s[r], a[r]);
}

__attribute__((target("avx2,fma"))) inline void l1_lanes4_fma(const float* x, const float* z0,
                                                              const float* z1, const float* z2,
                                                              const float* z3, Index f0,
                                                              Index f1, float (*s)[8]) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const float* z[4] = {z0, z1, z2, z3};
    __m256 a[4];
    for (int r = 0; r < 4; ++r) a[r] = _mm256_loadu_ps(s[r]);
    for (Index f = f0; f + 8 <= f1; f += 8) {
        const __m256 xv = _mm256_loadu_ps(x + f);
        for (int r = 0; r < 4; ++r)
            a[r] = _mm256_add_ps(
                a[r], _mm256_and_ps(_mm256_fnmadd_ps(_mm256_loadu_ps(z[r] + f), one, xv), mask));
    }
    for (int r = 0; r < 4; ++r) _mm256_storeu_ps(s[r], a[r]);
}
#endif

template <class T>
inline void l1_lanes4(const T* x, const T* z0, const T* z1, const T* z2, const T* z3, Index f0,
                      Index f1, T (*s)[kLanes<T>]) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) return l1_lanes4_fma(x, z0, z1, z2, z3, f0, f1, s);
#endif
    l1_lanes4_any(x, z0, z1, z2, z3, f0, f1, s);
}

// l1_lanes4 for two rows x0 and x1 against the same four rows z: s0 takes x0's lane sums, s1
// x1's. Each pair's lanes add their terms in f order exactly as l1_lanes4 adds them, so the bits
// are the same; the point is eight independent chains of additions instead of four (with four,
// each addition waits on the latency of the one before: 1.8x in float64 and 1.4-1.9x in float32
// on the benchmark machine) and each z row loaded once per two rows.
template <class T>
FASTFS_SIMD_CLONES void l1_lanes2x4_any(const T* __restrict x0, const T* __restrict x1,
                                        const T* __restrict z0, const T* __restrict z1,
                                        const T* __restrict z2, const T* __restrict z3, Index f0,
                                        Index f1, T (*s0)[kLanes<T>], T (*s1)[kLanes<T>]) {
#ifdef FASTFS_VECTOR_LANES
    constexpr int L = kLanes<T>;
    using V = typename LaneVector<T>::type;
    const T* z[4] = {z0, z1, z2, z3};
    V a[4], b[4];
    std::memcpy(a, s0, sizeof a);
    std::memcpy(b, s1, sizeof b);
    for (Index f = f0; f + L <= f1; f += L) {
        V xv, wv, zv;
        load_lanes<T>(xv, x0 + f);
        load_lanes<T>(wv, x1 + f);
        for (int r = 0; r < 4; ++r) {
            load_lanes<T>(zv, z[r] + f);
            add_abs_lanes(a[r], xv - zv);
            add_abs_lanes(b[r], wv - zv);
        }
    }
    std::memcpy(s0, a, sizeof a);
    std::memcpy(s1, b, sizeof b);
#else
    l1_lanes4_any(x0, z0, z1, z2, z3, f0, f1, s0);
    l1_lanes4_any(x1, z0, z1, z2, z3, f0, f1, s1);
#endif
}

#ifdef FASTFS_HAVE_AVX2_FMA
// l1_lanes2x4 with x - z formed on the FMA units, as l1_lanes4_fma does (the same bits).
template <class T>
__attribute__((target("avx2,fma"))) inline void l1_lanes2x4_fma(
    const T* x0, const T* x1, const T* z0, const T* z1, const T* z2, const T* z3, Index f0,
    Index f1, T (*s0)[kLanes<T>], T (*s1)[kLanes<T>]) {
    const T* z[4] = {z0, z1, z2, z3};
    if constexpr (std::is_same_v<T, double>) {
        const __m256d one = _mm256_set1_pd(1.0);
        const __m256d mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
        __m256d a[4], b[4];
        for (int r = 0; r < 4; ++r) a[r] = _mm256_loadu_pd(s0[r]), b[r] = _mm256_loadu_pd(s1[r]);
        for (Index f = f0; f + 4 <= f1; f += 4) {
            const __m256d xv = _mm256_loadu_pd(x0 + f), wv = _mm256_loadu_pd(x1 + f);
            for (int r = 0; r < 4; ++r) {
                const __m256d zv = _mm256_loadu_pd(z[r] + f);
                a[r] = _mm256_add_pd(a[r], _mm256_and_pd(_mm256_fnmadd_pd(zv, one, xv), mask));
                b[r] = _mm256_add_pd(b[r], _mm256_and_pd(_mm256_fnmadd_pd(zv, one, wv), mask));
            }
        }
        for (int r = 0; r < 4; ++r) _mm256_storeu_pd(s0[r], a[r]), _mm256_storeu_pd(s1[r], b[r]);
    } else {
        const __m256 one = _mm256_set1_ps(1.0f);
        const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        __m256 a[4], b[4];
        for (int r = 0; r < 4; ++r) a[r] = _mm256_loadu_ps(s0[r]), b[r] = _mm256_loadu_ps(s1[r]);
        for (Index f = f0; f + 8 <= f1; f += 8) {
            const __m256 xv = _mm256_loadu_ps(x0 + f), wv = _mm256_loadu_ps(x1 + f);
            for (int r = 0; r < 4; ++r) {
                const __m256 zv = _mm256_loadu_ps(z[r] + f);
                a[r] = _mm256_add_ps(a[r], _mm256_and_ps(_mm256_fnmadd_ps(zv, one, xv), mask));
                b[r] = _mm256_add_ps(b[r], _mm256_and_ps(_mm256_fnmadd_ps(zv, one, wv), mask));
            }
        }
        for (int r = 0; r < 4; ++r) _mm256_storeu_ps(s0[r], a[r]), _mm256_storeu_ps(s1[r], b[r]);
    }
}

// Whether this CPU has AVX-512F (checked once): its 32 vector registers hold the sums of
// weighted_l1_lists below, which the 16 of AVX2 cannot without spilling.
inline bool cpu_has_avx512f() {
    static const bool ok = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f");
    }();
    return ok;
}

#endif

template <class T>
inline void l1_lanes2x4(const T* x0, const T* x1, const T* z0, const T* z1, const T* z2,
                        const T* z3, Index f0, Index f1, T (*s0)[kLanes<T>],
                        T (*s1)[kLanes<T>]) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx2_fma()) return l1_lanes2x4_fma<T>(x0, x1, z0, z1, z2, z3, f0, f1, s0, s1);
#endif
    l1_lanes2x4_any<T>(x0, x1, z0, z1, z2, z3, f0, f1, s0, s1);
}

template <class T>
FASTFS_SIMD_CLONES void l1_finish4(const T* __restrict x, const T* __restrict z0,
                                   const T* __restrict z1, const T* __restrict z2,
                                   const T* __restrict z3, Index n, T (*s)[kLanes<T>], T* out) {
    const T* z[4] = {z0, z1, z2, z3};
    auto p = l1_parts(x, z);
    fixed_order_finish4<T>(n, p.t, s, out);
}

template <class T>
inline void l1_dist4(const T* x, const T* z0, const T* z1, const T* z2, const T* z3, Index n,
                     T* out) {
    T s[4][kLanes<T>] = {};
    l1_lanes4(x, z0, z1, z2, z3, 0, n - n % kLanes<T>, s);
    l1_finish4(x, z0, z1, z2, z3, n, s, out);
}

// Weighted absolute differences summed over lists of pairs (the pair sums of the Relief
// family's radius rules). Rows z_k = z + k ldz for k < count; row k's list is the entries t in
// [start[k], start[k + 1]), each a query row q + use[t] ldq with a weight c[t]:
//     out[f] += sum_k sum_t c[t] |q_use[t][f] - z_k[f]|   for f in [0, n).
// Per feature, the entries at even positions of a row's list go into one sum and those at odd
// positions into another, each a chain of fused multiply-adds in (k, t) order starting at +0,
// and out[f] gains the two sums' sum: the same bits in the portable version and the AVX2 + FMA
// and AVX-512 ones, which keep the sums of 12 or 32 features in registers across all the rows
// (two chains hide the latency of the multiply-adds), so each query value is loaded once per
// term and each z value once per row.
constexpr Index kListLanes = 16;

// The portable version, kListLanes features at a time.
inline void weighted_l1_lists_any(const double* z, Index ldz, Index count, const Index* start,
                                  const std::uint8_t* use, const double* c, const double* q,
                                  Index ldq, Index n, double* out) {
    for (Index f0 = 0; f0 < n; f0 += kListLanes) {
        const Index w = std::min(kListLanes, n - f0);
        double even[kListLanes] = {}, odd[kListLanes] = {};
        for (Index k = 0; k < count; ++k) {
            const double* zk = z + k * ldz + f0;
            for (Index t = start[k]; t < start[k + 1]; ++t) {
                const double* qt = q + static_cast<Index>(use[t]) * ldq + f0;
                double* a = (t - start[k]) % 2 == 0 ? even : odd;
                const double ct = c[t];
                for (Index f = 0; f < w; ++f) a[f] = std::fma(ct, std::abs(qt[f] - zk[f]), a[f]);
            }
        }
        for (Index f = 0; f < w; ++f) out[f0 + f] += even[f] + odd[f];
    }
}

#ifdef FASTFS_HAVE_AVX2_FMA
// The AVX2 + FMA version: the sums of W = 4 V features in V registers of 4 doubles (V = 3
// leaves room for the differences and the weights in the 16 registers; with 4, one sum spilled
// to memory and its chain went through a store and a load).
__attribute__((target("avx2,fma"))) inline void weighted_l1_lists_fma(
    const double* z, Index ldz, Index count, const Index* start, const std::uint8_t* use,
    const double* c, const double* q, Index ldq, Index n, double* out) {
    constexpr int V = 3;
    constexpr Index W = 4 * V;
    const __m256d mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    const Index body = n - n % W;
    for (Index f0 = 0; f0 < body; f0 += W) {
        __m256d e[V], o[V];
        for (int r = 0; r < V; ++r) e[r] = o[r] = _mm256_setzero_pd();
        for (Index k = 0; k < count; ++k) {
            const double* zk = z + k * ldz + f0;
            const double* ahead = z + std::min(k + 2, count - 1) * ldz + f0;  // as below
            for (Index c = 0; c < W; c += 8) _mm_prefetch(reinterpret_cast<const char*>(ahead + c), _MM_HINT_T0);
            __m256d zv[V];
            for (int r = 0; r < V; ++r) zv[r] = _mm256_loadu_pd(zk + 4 * r);
            Index t = start[k];
            const Index end = start[k + 1];
            for (; t + 1 < end; t += 2) {
                const double* qa = q + static_cast<Index>(use[t]) * ldq + f0;
                const double* qb = q + static_cast<Index>(use[t + 1]) * ldq + f0;
                const __m256d ca = _mm256_broadcast_sd(c + t), cb = _mm256_broadcast_sd(c + t + 1);
                for (int r = 0; r < V; ++r) {
                    e[r] = _mm256_fmadd_pd(
                        ca, _mm256_and_pd(_mm256_sub_pd(_mm256_loadu_pd(qa + 4 * r), zv[r]), mask),
                        e[r]);
                    o[r] = _mm256_fmadd_pd(
                        cb, _mm256_and_pd(_mm256_sub_pd(_mm256_loadu_pd(qb + 4 * r), zv[r]), mask),
                        o[r]);
                }
            }
            if (t < end) {
                const double* qa = q + static_cast<Index>(use[t]) * ldq + f0;
                const __m256d ca = _mm256_broadcast_sd(c + t);
                for (int r = 0; r < V; ++r)
                    e[r] = _mm256_fmadd_pd(
                        ca, _mm256_and_pd(_mm256_sub_pd(_mm256_loadu_pd(qa + 4 * r), zv[r]), mask),
                        e[r]);
            }
        }
        for (int r = 0; r < V; ++r)
            _mm256_storeu_pd(out + f0 + 4 * r, _mm256_add_pd(_mm256_loadu_pd(out + f0 + 4 * r),
                                                             _mm256_add_pd(e[r], o[r])));
    }
    if (body < n)
        weighted_l1_lists_any(z + body, ldz, count, start, use, c, q + body, ldq, n - body,
                              out + body);
}

__attribute__((target("avx512f"))) inline void weighted_l1_lists_avx512(
    const double* z, Index ldz, Index count, const Index* start, const std::uint8_t* use,
    const double* c, const double* q, Index ldq, Index n, double* out) {
    constexpr int V = 4;
    constexpr Index W = 8 * V;
    const Index body = n - n % W;
    for (Index f0 = 0; f0 < body; f0 += W) {
        __m512d e[V], o[V];
        for (int r = 0; r < V; ++r) e[r] = o[r] = _mm512_setzero_pd();
        for (Index k = 0; k < count; ++k) {
            const double* zk = z + k * ldz + f0;
            // the row two ahead into cache (each row's W values start a new stretch of memory
            // that the hardware prefetchers do not foresee)
            const double* ahead = z + std::min(k + 2, count - 1) * ldz + f0;
            for (Index c = 0; c < W; c += 8) _mm_prefetch(reinterpret_cast<const char*>(ahead + c), _MM_HINT_T0);
            __m512d zv[V];
            for (int r = 0; r < V; ++r) zv[r] = _mm512_loadu_pd(zk + 8 * r);
            Index t = start[k];
            const Index end = start[k + 1];
            for (; t + 1 < end; t += 2) {
                const double* qa = q + static_cast<Index>(use[t]) * ldq + f0;
                const double* qb = q + static_cast<Index>(use[t + 1]) * ldq + f0;
                const __m512d ca = _mm512_set1_pd(c[t]), cb = _mm512_set1_pd(c[t + 1]);
                for (int r = 0; r < V; ++r) {
                    e[r] = _mm512_fmadd_pd(
                        ca, _mm512_abs_pd(_mm512_sub_pd(_mm512_loadu_pd(qa + 8 * r), zv[r])), e[r]);
                    o[r] = _mm512_fmadd_pd(
                        cb, _mm512_abs_pd(_mm512_sub_pd(_mm512_loadu_pd(qb + 8 * r), zv[r])), o[r]);
                }
            }
            if (t < end) {
                const double* qa = q + static_cast<Index>(use[t]) * ldq + f0;
                const __m512d ca = _mm512_set1_pd(c[t]);
                for (int r = 0; r < V; ++r)
                    e[r] = _mm512_fmadd_pd(
                        ca, _mm512_abs_pd(_mm512_sub_pd(_mm512_loadu_pd(qa + 8 * r), zv[r])), e[r]);
            }
        }
        for (int r = 0; r < V; ++r)
            _mm512_storeu_pd(out + f0 + 8 * r, _mm512_add_pd(_mm512_loadu_pd(out + f0 + 8 * r),
                                                             _mm512_add_pd(e[r], o[r])));
    }
    if (body < n)
        weighted_l1_lists_fma(z + body, ldz, count, start, use, c, q + body, ldq, n - body,
                                 out + body);
}
#endif

inline void weighted_l1_lists(const double* z, Index ldz, Index count, const Index* start,
                              const std::uint8_t* use, const double* c, const double* q, Index ldq,
                              Index n, double* out) {
#ifdef FASTFS_HAVE_AVX2_FMA
    if (cpu_has_avx512f())
        return weighted_l1_lists_avx512(z, ldz, count, start, use, c, q, ldq, n, out);
    if (cpu_has_avx2_fma())
        return weighted_l1_lists_fma(z, ldz, count, start, use, c, q, ldq, n, out);
#endif
    weighted_l1_lists_any(z, ldz, count, start, use, c, q, ldq, n, out);
}

}  // namespace fastfs::kernels
