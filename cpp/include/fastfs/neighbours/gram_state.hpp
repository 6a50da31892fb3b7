// The Gram expansion of a weighted squared distance, the float32 screen of the k nearest query
// (knn_query.hpp) under weights that change at every step (RGS):
// the data side built once per X, the weights side (GramWeights) carried across steps, and the
// bounds of the expansion, derived here once.
//
// The screen expands the distance of centred coordinates z (z_j = float(x_j - centre), or its
// half-precision copy, below):
//   sum_f w2_f (z_if - z_jf)^2 = a_i + a_j - 2 sum_f w2_f z_if z_jf,   a_j = sum_f w2_f z_jf^2,
// so a query costs one multiply-add per sample and feature (the cross term, from a transposed
// copy contiguous along samples), about half of the direct form of the engine's WeightedL2.
// a_j depends on the weights, which RGS changes at every step; GramWeights keeps a_j in float64
// for reference weights rho instead, and refreshes a feature's part (m multiply-adds) only when
// w2_f / rho_f leaves [1 - drift, 1 + drift]. For the others, a_j under w2 lies between lo and
// hi times a_j under rho (the smallest and largest ratio), and the bounds carry that interval.
// The tolerance adapts from query to query (GramWeights::drift): it only trades refresh work
// against the exact distances that wider bounds let onto the shortlist, never the result.
//
// The copy of X a query reads is in half precision on CPUs that convert it (F16C): the
// coordinates times a power of two 2^-E (the largest then below 2^15, half precision's range),
// each rounded to the nearest half, which reads half the bytes of a float32 copy (a 1000 x 300
// copy then fits the per-core L2 cache) while each product and sum still rounds in float32.
// Only the conversion radius grows (relative 2^-10 per coordinate instead of 2^-23, plus 2^-13
// absolute in the scaled units for values below the normal halves): the bounds carry it as
// they carried float32's, with the split mu moved to match (limit()). CPUs without F16C, and
// GramCopy::kFloat32, keep the float32 copy.
//
// The rounding primitives (screen::gamma, the weights' power of two, rounding a bound up into
// float32 or into the screen's units) are the engine's (engine.hpp).
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "engine.hpp"

namespace fastfs {

// The weights side of the expansion, kept by each scratch across queries.
struct GramWeights {
    // a_j under the reference weights rho, and what the bounds need of it.
    std::vector<double> rho, inv_rho, a;
    std::vector<Index> moved;
    std::vector<double> delta;
    double drift = 0.02;       // refresh a feature when its weight moves by this fraction
    Index extra = 0;           // exact distances of the last query beyond the k needed
    std::uint64_t owner = 0;   // the id of the expansion a was built for
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
    bool shortlist_ok = false;  // false: no screen for these weights (scan exhaustively)
    Index n_refreshed = 0, n_rebuilt = 0;  // counters for tests and benchmarks
};

// The precision of the expansion's copy of X: half precision where the CPU converts it, or
// float32 (tests take both paths on any CPU).
enum class GramCopy { kAuto, kFloat32 };

// The data side: the centred copy (half precision or float32), transposed (one feature per
// row), and its extent.
template <class T>
class GramExpansion {
public:
    explicit GramExpansion(const MatrixRef<T>& X, GramCopy copy = GramCopy::kAuto)
        : m_(X.rows()), n_(X.cols()) {
        double top = 0.0;
        centre_.assign(static_cast<std::size_t>(n_), 0.0);
        double* sum = centre_.data();
        for (Index i = 0; i < m_; ++i) {
            const double t = kernels::add_row_max_abs(X.row(i).data(), n_, sum);
            top = t > top ? t : top;
        }
        // float32 must hold every product and sum of the screen with room to spare, and its
        // relative error g32 must stay small (n < 2^20: below 1/8); with very few features the
        // exact pass is as cheap as the float32 one. Sample indices are 32-bit in the scans.
        usable_ = top <= kMaxAbs && n_ >= kMinFeatures && n_ < (Index{1} << 20) &&
                  m_ < (Index{1} << 31);
        if (!usable_) return;
        // The centre of each feature. Any centre leaves distances unchanged, but away from the
        // bulk of the data the expansion's terms grow and cancel: the mean, unless a few
        // outlying samples pulled it away from the bulk (robust_centres()).
        for (double& c : centre_) c /= static_cast<double>(m_);
        robust_centres(X);
        half_ = copy == GramCopy::kAuto && fma_ && kernels::cpu_has_f16c();  // (false without
                                                                        // the AVX2 kernels)
        if (half_) {
            // The largest |x - centre| (not max |x|: a large common offset would otherwise
            // push the centred values into the subnormal halves), M < 2^(ilogb(M) + 1):
            // scaled by 2^-E, every value lies below 2^15.
            double M = 0.0;
            for (Index i = 0; i < m_; ++i)
                M = std::max(M, kernels::max_abs_difference(X.row(i).data(), centre_.data(), n_));
            // (At least -1000, so that 2^-E stays finite: a spread below 2^-985 then leaves
            // subnormal or zero halves, which e0 covers.)
            if (M > 0.0) E_ = std::max(std::ilogb(M) + 1 - 15, -1000);
            to_copy_ = std::ldexp(1.0, -E_);
            u_conv_ = screen::kUnit16;
            // Below 2^-14 a half is subnormal: 2^-25 absolute, or 2^-14 if a thread flushes
            // subnormal results to zero (F16C is not documented to; allowed for anyway).
            e0_ = 0x1.0p-13;
            mu_ = 0x1.0p-10;
            XT16_.assign(static_cast<std::size_t>(n_ * m_), 0);
        } else {
            XT_.resize(n_, m_);
        }
        transpose_centred(X);
        for (double v : z2_col_) top_z_ = std::max(top_z_, std::sqrt(v));
        top_z_ *= 1.0 + 0x1.0p-50;  // the square root's rounding
    }

    Index rows() const { return m_; }
    Index cols() const { return n_; }
    bool usable() const { return usable_; }
    std::uint64_t id() const { return id_; }
    bool fma() const { return fma_; }
    bool half() const { return half_; }

    // Sets up the weights side for weights w2_in (non-negative, length n). A GramWeights
    // prepared before for this expansion keeps its a_j and refreshes the features whose weight
    // moved too far. Returns s.shortlist_ok: false when the screen cannot take these weights.
    bool prepare(const double* w2_in, GramWeights& s) const {
        double top = kernels::max_entry<false>(w2_in, n_);
        s.shortlist_ok = usable_ && top > 0.0 && std::isfinite(top);
        if (!s.shortlist_ok) return false;
        // The screen works on the weights times a power of two, 2^-exp, chosen at each rebuild
        // so that the largest lies in [1, 2) and kept while it stays within 2^+-16 of that:
        // scaling every weight by a power of two scales every distance by it, which changes no
        // comparison, and keeps the float32 pass and its absolute allowances (tiny, rho0) away
        // from the subnormal range however small the weights are (RGS and SKS weights of 1e-20
        // would otherwise leave every sample on the shortlist). The exact distances use the
        // caller's weights; limit() scales them into the screen's units.
        const bool same_owner = s.owner == id_ && s.built;
        if (!same_owner || std::abs(screen::exponent(top) - s.exp) > kExpSlack) {
            s.exp = screen::exponent(top);
            s.built = false;
        }
        s.w2s.resize(static_cast<std::size_t>(n_));
        if (s.exp >= -1022 && s.exp <= 1022) {
            // Times the power of two itself (one correctly rounded product, as ldexp gives,
            // without a library call per feature on every step).
            kernels::scaled_values(w2_in, n_, std::ldexp(1.0, -s.exp), s.w2s.data());
        } else {
            for (Index f = 0; f < n_; ++f) s.w2s[static_cast<std::size_t>(f)] = std::ldexp(w2_in[f], -s.exp);
        }
        const double* w2 = s.w2s.data();
        top = std::ldexp(top, -s.exp);
        if (s.owner != id_) s.built = false;
        const double u = screen::kUnit64;
        double lo = 1.0, hi = 1.0;
        if (s.built) {
            // The features whose weight left [1 - drift, 1 + drift] times its reference, and
            // the range of the ratio over the others.
            // A feature with rho = 0 counts as moved as soon as its weight is not 0.
            s.moved.resize(static_cast<std::size_t>(n_));
            const Index moved = kernels::drifted_features(w2, s.inv_rho.data(), s.rho.data(), n_,
                                                          s.drift, s.moved.data(), lo, hi);
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
        // the allowance that grow with a_j onto the sample's own value (limit() derives it):
        // the float32 error of the cross term, |2 sum w2 z_i z_j| <= A_i + A_j, and the
        // conversion radius of z_j, (R + r_j)^2 <= (1 + mu) R^2 + (1 + 1/mu) r_j^2 with
        // r_j^2 <= 4 u^2 A_j (u the conversion's unit). What is left over is uniform over j.
        s.scale = (s.lo - kappa(s) - g32_ * s.hi) / (1.0 + g32_) * (1.0 - 4.0 * u);
        return true;
    }

    // The query's own term a_i (returned) and the multipliers v_f = -2 w2s_f z_if of the cross
    // term, from the sample's own row x (a column of the copy would touch one cache line per
    // feature) through the same conversion as the one that built the copy, so the same values
    // (the bounds do not need them equal: each side has its own conversion radius).
    double query_terms(const T* xr, const GramWeights& s, float* v) const {
        // a_i in any order: its bound allows for the rounding of every order.
#ifdef FASTFS_HAVE_AVX2_FMA
        if (half_) {
            kernels::centred_halves(xr, centre_.data(), to_copy_, n_, nullptr, v);
            return kernels::query_terms_of(s.w2s.data(), n_, v);
        }
#endif
        return kernels::centred_query_terms(xr, centre_.data(), s.w2s.data(), n_, v);
    }

    // The largest screen value (float32, rounded up) a sample may have and still be within
    // exact distance top_d (in the caller's units, +inf allowed) of the query whose own term is
    // ai. The derivation: with A_i, A_j the real a_i, a_j of the converted coordinates under w2
    // (A_j within [lo, hi] (a_j +- a_err)), d~ their real distance, and e the float32 error of
    // a value,
    //   |e| <= g32 (|scale a_j| + A_i + A_j) + tiny, so, by the choice of scale,
    //   d~ - value >= (1 - g32) A_i + kappa a_j - (lo + g32 hi) a_err - tiny
    // (the allowance below also covers a slightly negative computed a_j).
    // A sample is within top_d only if its real distance is at most top_d / (1 - g64), and
    // (centring and conversion) the square root of d~ at most that of top_d / (1 - g64) plus
    // r_i + r_j, with r <= 2 u sqrt(A) + rho0 (u: the conversion's unit, u_conv_; rho0: the
    // absolute error of coordinates below the copy's normal range). So
    //   d~ <= (1 + mu) t^2 + kappa (a_j + a_err),  t = sqrt(top_d / (1 - g64)) + r_i + rho0,
    // and its value is at most the limit. Every sum is rounded up on the way.
    float limit(const GramWeights& s, double ai, double top_d) const {
        const double u = screen::kUnit64;
        // (n roundings below float64's normal range, flushed or not, allowed for in ai_lo.)
        const double ai_lo = ai * (1.0 - g64_) - static_cast<double>(n_ + 2) * 0x1.0p-1020;
        const double ai_hi = ai * (1.0 + g64_) + static_cast<double>(n_ + 2) * 0x1.0p-1020;
        const double ea = s.a_err * (1.0 + 4.0 * u);
        const double e32 = (g32_ * (ai_hi + (4.0 * s.hi + 3.0 * s.lo) * ea) + s.tiny) * (1.0 + 8.0 * u);
        const double rho0 = std::sqrt(static_cast<double>(n_) * s.top_w) * e0_;
        // (The float64 roundings below the normal range, 2^-1022 each if flushed, are added
        // to top_d.)
        const double d_abs = static_cast<double>(n_ + 4) * 0x1.0p-1020;
        // top_d in the screen's units (rounded up when the power of two is not exact).
        const double top_s = screen::scaled_up(top_d + d_abs, s.exp + 2 * E_);
        const double t = (std::sqrt(top_s / (1.0 - g64_)) * (1.0 + 4.0 * u) +
                          2.0 * u_conv_ * std::sqrt(ai_hi) * (1.0 + 4.0 * u) + 2.0 * rho0) *
                         (1.0 + 4.0 * u);
        const double t2 = (1.0 + mu_) * t * t * (1.0 + 4.0 * u);
        const double eb = (s.lo + kappa(s)) * ea;
        double limit = t2 - ai_lo + eb + e32;
        limit += 8.0 * u * (t2 + ai_lo + eb + e32);
        return screen::round_up_to_float(limit);
    }

    // The screen values of samples [j0, j1): float(scale a_j) plus the cross term, eight features
    // per sweep.
#ifdef FASTFS_HAVE_AVX2_FMA
    // The screen values of samples [j0, j1) for Q queries at once (1 or 4; CPUs with FMA:
    // fma() true), their multipliers interleaved (vq[Q f + q] = v_f of query q): the values
    // approximate() gives each query alone, with each column read once per Q queries.
    template <int Q>
    void approximate_q(const GramWeights& s, const float* vq, Index j0, Index j1,
                       float* const* out) const {
        for (Index lo = j0; lo < j1; lo += kTile) {
            const Index hi = std::min(lo + kTile, j1);
            for (Index f0 = 0; f0 < n_; f0 += kChunk) {
                const Index f1 = std::min(f0 + kChunk, n_);
                auto sweep = [&](const auto* copy) {  // the half or the float32 columns
                    if (f0 == 0)
                        kernels::dot_columns_xq_fma<Q, true>(copy, m_, f0, f1, vq, s.a.data(),
                                                             s.scale, lo, hi, out);
                    else
                        kernels::dot_columns_xq_fma<Q, false>(copy, m_, f0, f1, vq, s.a.data(),
                                                              s.scale, lo, hi, out);
                };
                if (half_)
                    sweep(XT16_.data());
                else
                    sweep(XT_.data());
            }
        }
    }
#endif

    void approximate(const GramWeights& s, const float* v, Index j0, Index j1,
                     float* out) const {
        const double* init = s.a.data();
        const double scale = s.scale;
        for (Index lo = j0; lo < j1; lo += kTile) {
            const Index hi = std::min(lo + kTile, j1);
            Index f = 0;
            const float* c[8];
            auto sweep = [&](auto width, auto first) {
                constexpr int F = decltype(width)::value;
                constexpr bool Init = decltype(first)::value;
#ifdef FASTFS_HAVE_AVX2_FMA
                if (half_) {
                    const std::uint16_t* h[8];
                    for (int q = 0; q < F; ++q) h[q] = col16(f + q);
                    kernels::dot_columns_fma<F, Init>(h, v + f, init, scale, lo, hi, out);
                    f += F;
                    return;
                }
#endif
                for (int q = 0; q < F; ++q) c[q] = XT_.row(f + q).data();
#ifdef FASTFS_HAVE_AVX2_FMA
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
            // n >= 8 here (kMinFeatures), so the first sweep is a full one.
            sweep(std::integral_constant<int, 8>{}, std::true_type{});
            while (f + 8 <= n_) sweep(std::integral_constant<int, 8>{}, std::false_type{});
            rest(std::false_type{});
        }
    }

private:
    // The limits of the data the expansion takes: float32 must hold every product and sum of
    // the screen with room to spare (every |x| at most kMaxAbs), and its relative error g32
    // must stay small (n < 2^20: below 1/8); with fewer than kMinFeatures features the exact
    // pass is as cheap as the float32 one. (Its own limits, not the direct screens' of
    // engine.hpp: the expansion cancels, and it costs about half a direct one per sample.)
    static constexpr double kMaxAbs = 1e9;
    static constexpr Index kMinFeatures = 8;
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
        // In blocks of features, so that the sixteen rows of a block stay in L1 through the
        // network (wide data would stream them from memory once per comparator).
        constexpr Index kBlock = 256;
        for (Index f0 = 0; f0 < n_; f0 += kBlock) {
            const Index f1 = std::min(n_, f0 + kBlock);
            for (int p = 1; p < kNet; p <<= 1)
                for (int k = p; k >= 1; k >>= 1)
                    for (int j = k % p; j + k < kNet; j += 2 * k)
                        for (int i = 0; i < std::min(k, kNet - j - k); ++i) {
                            if ((i + j) / (2 * p) != (i + j + k) / (2 * p)) continue;
                            kernels::compare_exchange(rows.data() + (i + j) * n_ + f0,
                                                      rows.data() + (i + j + k) * n_ + f0,
                                                      f1 - f0);
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

    // XT_ = float(x - centre) (or XT16_ = half((x - centre) 2^-E)), transposed through blocks
    // of kRows rows (each written column is then a run of kRows values, not one value per cache
    // line), and z2_col_.
    void transpose_centred(const MatrixRef<T>& X) {
        constexpr Index kRows = 16;
        const double* centre = centre_.data();
        z2_col_.assign(static_cast<std::size_t>(n_), 0.0);
        std::vector<float> rows(static_cast<std::size_t>(kRows * n_));
        std::vector<std::uint16_t> bits(half_ ? static_cast<std::size_t>(kRows * n_) : 0);
        for (Index i0 = 0; i0 < m_; i0 += kRows) {
            const Index nr = std::min(kRows, m_ - i0);
            for (Index r = 0; r < nr; ++r) {
                const T* xr = X.row(i0 + r).data();
                float* zr = rows.data() + r * n_;
#ifdef FASTFS_HAVE_AVX2_FMA
                if (half_) {
                    kernels::centred_halves(xr, centre, to_copy_, n_, bits.data() + r * n_, zr);
                    continue;
                }
#endif
#pragma omp simd
                for (Index f = 0; f < n_; ++f)
                    zr[f] = static_cast<float>(static_cast<double>(xr[f]) - centre[f]);
            }
            for (Index f = 0; f < n_; ++f) {
                if (half_) {
                    std::uint16_t* out = XT16_.data() + f * m_ + i0;
                    for (Index r = 0; r < nr; ++r) out[r] = bits[static_cast<std::size_t>(r * n_ + f)];
                } else {
                    float* out = XT_.row(f).data() + i0;
                    for (Index r = 0; r < nr; ++r) out[r] = rows[static_cast<std::size_t>(r * n_ + f)];
                }
                double zmax = z2_col_[static_cast<std::size_t>(f)];
#pragma omp simd reduction(max : zmax)
                for (Index r = 0; r < nr; ++r) {
                    const double z = rows[static_cast<std::size_t>(r * n_ + f)];
                    zmax = z * z > zmax ? z * z : zmax;
                }
                z2_col_[static_cast<std::size_t>(f)] = zmax;
            }
        }
    }

    const std::uint16_t* col16(Index f) const { return XT16_.data() + f * m_; }
    static constexpr Index kTile = 1024;  // samples per tile: the float32 sums stay in L1
    static constexpr Index kChunk = 16;   // features per sweep of approximate4()
    // The range of the refresh tolerance (GramWeights::drift).
    static constexpr double kDriftMin = 0.002, kDriftMax = 0.25;
    // a_j is built afresh after this many refreshes per feature (which keeps a_err small).
    static constexpr Index kRebuildUpdates = 16;
    // (1 + 1/mu) 4 u^2 hi, rounded up (u the conversion's unit): the squared conversion radius
    // of z_j, r_j^2 <= 4 u^2 A_j <= 4 u^2 hi (a_j + a_err), weighted by the split.
    double kappa(const GramWeights& s) const {
        return (1.0 + 1.0 / mu_) * 4.0 * u_conv_ * u_conv_ * s.hi * (1.0 + 0x1.0p-48);
    }

    // a_j = sum_f rho_f z_jf^2 afresh with rho = w2.
    void build(const double* w2, GramWeights& s) const {
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
    void refresh(const double* w2, GramWeights& s) const {
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
    void add_squares(const std::vector<Index>& features, const double* d, GramWeights& s) const {
#ifdef FASTFS_HAVE_AVX2_FMA
        if (half_) {
            add_squares_from([&](Index f) { return col16(f); }, features, d, s);
            return;
        }
#endif
        add_squares_from([&](Index f) { return XT_.row(f).data(); }, features, d, s);
    }

    // The same from the columns col(f) of either copy (the kernels' overloads take both).
    template <class Col>
    void add_squares_from(Col col, const std::vector<Index>& features, const double* d,
                          GramWeights& s) const {
        std::size_t q = 0;
        for (; q + 4 <= features.size(); q += 4) {
            const Index f0 = features[q], f1 = features[q + 1], f2 = features[q + 2],
                        f3 = features[q + 3];
            kernels::add_scaled_squares4(col(f0), col(f1), col(f2), col(f3), d[f0], d[f1],
                                         d[f2], d[f3], m_, s.a.data());
        }
        for (; q < features.size(); ++q)
            kernels::add_scaled_squares(col(features[q]), d[features[q]], m_, s.a.data());
    }

    // sum_f r_f max_j z_jf^2, rounded up (the allowance holds for any order of the sum, so
    // it is summed in lanes): bounds sum_f r_f z_jf^2 for every j.
    double weighted_top(const double* r) const {
        const double top = kernels::dot_lanes(r, z2_col_.data(), n_);
        return top * (1.0 + static_cast<double>(2 * n_ + 4) * 0x1.0p-53);
    }

    static std::uint64_t next_id() {
        static std::atomic<std::uint64_t> counter{0};
        return ++counter;
    }

    Index m_, n_;
    std::uint64_t id_ = next_id();  // weights prepared for another expansion start afresh
    bool usable_ = false;
    std::vector<double> centre_;  // per feature: the centre of the float32 copy (its median)
    RowMatrix<float> XT_;        // centred X transposed, float32: one feature per row
    std::vector<std::uint16_t> XT16_;  // or in half precision, times 2^-E (half_)
    bool half_ = false;
    int E_ = 0;                  // the copy holds (x - centre) 2^-E
    double to_copy_ = 1.0;       // 2^-E
    // The conversion into the copy: relative error 2 u_conv at most, plus e0 absolute for
    // values below the copy's normal range; and the split mu of limit() that suits them.
    double u_conv_ = screen::kUnit32;
    double e0_ = 0x1.0p-124;
    double mu_ = 0x1.0p-20;
    double top_z_ = 0.0;         // the largest |z_jf| (of the copy's values)
    // The float32 value of a sample is a sum of n + 1 terms (the converted scale a_j and the
    // products of -2 w2_f z_if, itself rounded, with z_jf), each addition rounding once with
    // FMA and twice without: relative error at most g32 = gamma_{2n+4} of the sum of the
    // terms' magnitudes. The exact distance, against the real one: n + 4 roundings of
    // non-negative terms, g64 = gamma_{n+4} in float64.
    double g32_ = screen::gamma(2 * n_ + 4, screen::kUnit32);
    double g64_ = screen::gamma(n_ + 4, screen::kUnit64);
    std::vector<double> z2_col_;  // max_j z_jf^2 per feature
    // AVX2 and FMA, and F16C, which the sweeps' target needs (every AVX2 CPU has it so far).
    bool fma_ = kernels::cpu_has_f16c();
};

}  // namespace fastfs
