// A float32 copy of the columns of X, each scaled by a power of two, for screening: the
// products X^T v with one or two vectors v from one read of the copy (half the bytes of X, twice
// the lanes per instruction), each with a rigorous bound on its distance from the exact X_j^T v.
// A driver decides what the bounds can decide and computes the rest in float64 (OMP's
// correlation step, linear/omp.hpp).
//
// The bound (Higham, Accuracy and Stability of Numerical Algorithms, section 3.1): with column j
// scaled to a = 2^-s_j X_j (max |a_i| in [1/2, 1)) and v to b = 2^-s_v v likewise, rounding a
// and b to float32 moves each term by at most (2u + u^2) |a_i b_i| plus absolute terms below the
// smallest normal float; a float32 sum of m products in any order, fused or not, is within
// gamma_k = k u / (1 - k u) of sum |a~_i b~_i|. The sums run over at most R = 32 samples in
// float32 and are then added in float64, so |fl(a~^T b~) - a^T b| <= kappa ||a|| ||b|| +
// m 2^-123 with kappa = gamma_{R+3} + (m + 2) eps_64, u = 2^-24, whatever m, the thread count,
// fused or separate multiply-adds, and whether subnormals are flushed. Scaled back by
// 2^(s_j + s_v): delta_j = kappa ||X_j|| ||v|| + m 2^(s_j + s_v - 123).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "../core/errors.hpp"
#include "../core/memory.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"
#include "../simd/column_kernels.hpp"
#include "column_moments.hpp"

namespace fastfs {

namespace detail {
// One panel of kF32Panel columns stored sample by sample (panel[i * kF32Panel + l] = column l,
// sample i): out[l] = sum_i panel[i, l] v[i] for V (1 or 2) vectors, each column summed in
// sample order in float32 over runs of kF32Run samples, the runs added in float64. The lanes
// are columns, so no horizontal sums; the runs keep the float32 error independent of m.
constexpr int kF32Panel = 16;
constexpr Index kF32Run = 32;

template <int V>
FASTFS_SIMD_CLONES void panel_products(const float* __restrict panel, const float* __restrict v0,
                                       const float* __restrict v1, Index m,
                                       double* __restrict out0, double* __restrict out1) {
    double d0[kF32Panel] = {}, d1[kF32Panel] = {};
    for (Index i0 = 0; i0 < m; i0 += kF32Run) {
        const Index i1 = std::min(m, i0 + kF32Run);
        float a0[kF32Panel] = {}, a1[kF32Panel] = {};
        for (Index i = i0; i < i1; ++i) {
            const float w0 = v0[i];
            const float* __restrict row = panel + i * kF32Panel;
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) a0[l] += row[l] * w0;
            if constexpr (V == 2) {
                const float w1 = v1[i];
#pragma omp simd
                for (int l = 0; l < kF32Panel; ++l) a1[l] += row[l] * w1;
            }
        }
#pragma omp simd
        for (int l = 0; l < kF32Panel; ++l) d0[l] += static_cast<double>(a0[l]);
        if constexpr (V == 2) {
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) d1[l] += static_cast<double>(a1[l]);
        }
    }
    for (int l = 0; l < kF32Panel; ++l) out0[l] = d0[l];
    if constexpr (V == 2)
        for (int l = 0; l < kF32Panel; ++l) out1[l] = d1[l];
}

#ifdef FASTFS_HAVE_AVX2_FMA
// The same with fused multiply-adds (inside the bound), chosen at run time; even and odd samples
// go to separate accumulators (four chains of fused multiply-adds in flight), added at the end
// of each run.
template <int V>
__attribute__((target("avx2,fma"))) void panel_products_fma(
    const float* __restrict panel, const float* __restrict v0, const float* __restrict v1,
    Index m, double* __restrict out0, double* __restrict out1) {
    double d0[kF32Panel] = {}, d1[kF32Panel] = {};
    for (Index i0 = 0; i0 < m; i0 += kF32Run) {
        const Index i1 = std::min(m, i0 + kF32Run);
        float a0[kF32Panel] = {}, a1[kF32Panel] = {}, b0[kF32Panel] = {}, b1[kF32Panel] = {};
        Index i = i0;
        for (; i + 1 < i1; i += 2) {
            const float w0 = v0[i], x0 = v0[i + 1];
            const float* __restrict row = panel + i * kF32Panel;
            const float* __restrict nxt = row + kF32Panel;
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) {
                a0[l] = __builtin_fmaf(row[l], w0, a0[l]);
                b0[l] = __builtin_fmaf(nxt[l], x0, b0[l]);
            }
            if constexpr (V == 2) {
                const float w1 = v1[i], x1 = v1[i + 1];
#pragma omp simd
                for (int l = 0; l < kF32Panel; ++l) {
                    a1[l] = __builtin_fmaf(row[l], w1, a1[l]);
                    b1[l] = __builtin_fmaf(nxt[l], x1, b1[l]);
                }
            }
        }
        if (i < i1) {
            const float* __restrict row = panel + i * kF32Panel;
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) a0[l] = __builtin_fmaf(row[l], v0[i], a0[l]);
            if constexpr (V == 2) {
#pragma omp simd
                for (int l = 0; l < kF32Panel; ++l) a1[l] = __builtin_fmaf(row[l], v1[i], a1[l]);
            }
        }
#pragma omp simd
        for (int l = 0; l < kF32Panel; ++l) d0[l] += static_cast<double>(a0[l] + b0[l]);
        if constexpr (V == 2) {
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) d1[l] += static_cast<double>(a1[l] + b1[l]);
        }
    }
    for (int l = 0; l < kF32Panel; ++l) out0[l] = d0[l];
    if constexpr (V == 2)
        for (int l = 0; l < kF32Panel; ++l) out1[l] = d1[l];
}

// One full panel of the copy: panel[i * 16 + l] = float(cols[l][i] * inv[l]), four samples of
// four columns at a time (a 4 x 4 transpose in registers; the same multiply and rounding as
// the plain loop, so the same floats). The plain loop stores one float at a time, 16 floats
// apart: on gene expression filling the copy cost a tenth of an OMP call.
__attribute__((target("avx2,fma"))) inline void fill_panel_avx2(const double* const* cols,
                                                                 const double* inv, Index m,
                                                                 float* panel) {
    Index i = 0;
    for (; i + 4 <= m; i += 4) {
        for (int g = 0; g < kF32Panel; g += 4) {
            __m256d r[4];  // columns g .. g + 3, samples i .. i + 3
            for (int q = 0; q < 4; ++q)
                r[q] = _mm256_mul_pd(_mm256_loadu_pd(cols[g + q] + i), _mm256_set1_pd(inv[g + q]));
            kernels::transpose4(r);  // r[q]: sample i + q of the four columns
            for (int q = 0; q < 4; ++q)
                _mm_storeu_ps(panel + (i + q) * kF32Panel + g, _mm256_cvtpd_ps(r[q]));
        }
    }
    for (; i < m; ++i)
        for (int l = 0; l < kF32Panel; ++l)
            panel[i * kF32Panel + l] = static_cast<float>(cols[l][i] * inv[l]);
}
#endif

// Rows i0 .. i1 - 1 of a row-major X (n columns, row i at x + i * ld) into every panel of the
// copy (panel p at data + p * m * kF32Panel; the unused lanes of a partial panel zero): the values
// of fill_panel_avx2 and build()'s loop, x * inv rounded to float32.
FASTFS_SIMD_CLONES inline void rows_to_panels(const double* __restrict x, Index ld,
                                              const double* __restrict inv, Index i0, Index i1,
                                              Index n, Index m, float* __restrict data) {
    const Index full = n / kF32Panel, rest = n - full * kF32Panel;
    for (Index i = i0; i < i1; ++i) {
        const double* __restrict row = x + i * ld;
        for (Index p = 0; p < full; ++p) {
            float* __restrict out = data + (p * m + i) * kF32Panel;
            const double* __restrict r = row + p * kF32Panel;
            const double* __restrict v = inv + p * kF32Panel;
#pragma omp simd
            for (int l = 0; l < kF32Panel; ++l) out[l] = static_cast<float>(r[l] * v[l]);
        }
        if (rest) {
            float* out = data + (full * m + i) * kF32Panel;
            for (Index l = 0; l < rest; ++l)
                out[l] = static_cast<float>(row[full * kF32Panel + l] * inv[full * kF32Panel + l]);
            for (Index l = rest; l < kF32Panel; ++l) out[l] = 0.0f;
        }
    }
}
}  // namespace detail

// 2^e with top = f 2^e, f in [1/2, 1) (e = 0 for top = 0), and 2^-e: from the exponent bits
// when both powers are normal numbers (std::frexp and std::ldexp otherwise; the library calls
// cost more than filling a short column).
inline void power_of_two_scale(double top, double* scale, double* inv) {
    std::uint64_t bits;
    std::memcpy(&bits, &top, sizeof bits);
    const int biased = static_cast<int>((bits >> 52) & 0x7ff);
    const int e = biased - 1022;  // top = f 2^e for a normal top
    if (top > 0.0 && biased > 0 && e > -1022 && e < 1023) {
        const std::uint64_t up = static_cast<std::uint64_t>(e + 1023) << 52;
        const std::uint64_t down = static_cast<std::uint64_t>(1023 - e) << 52;
        std::memcpy(scale, &up, sizeof up);
        std::memcpy(inv, &down, sizeof down);
        return;
    }
    int ex = 0;
    if (top > 0.0) std::frexp(top, &ex);
    *scale = std::ldexp(1.0, ex);
    *inv = std::ldexp(1.0, -ex);
}

class Float32Columns {
public:
    // The copy from X alone: each panel's columns are first read for their moments against y
    // (ColumnMoments: ||X_j||^2, <X_j, y>, max |X_ij|, returned in `moments` for the caller's
    // other states), then converted while they are still in cache (a panel's 16 columns fit
    // in the second-level cache up to about 8000 samples): one read of X from memory for both. A column with a value that is not finite gets moments that are not finite
    // (||X_j||^2 is NaN or inf) and an unusable copy: the caller checks the moments first.
    Float32Columns(const Eigen::Ref<const Eigen::MatrixXd>& X,
                   const Eigen::Ref<const Eigen::VectorXd>& y, int n_threads,
                   ColumnMoments& moments)
        : Float32Columns(X.rows(), X.cols(), y, n_threads, moments) {
        build(X, y.data(), moments);
        norm_ = moments.sq.cwiseSqrt();
    }

    // The same copy and moments, bit for bit, from a row-major X (build_rows: two reads of
    // whole rows, the moments first, then every row into every panel).
    // (A template taking only a MatrixRef<double> itself: a column-major matrix must not
    // convert to it, which would copy.)
    template <class R, std::enable_if_t<std::is_same_v<R, MatrixRef<double>>, int> = 0>
    Float32Columns(const R& X, const Eigen::Ref<const Eigen::VectorXd>& y, int n_threads,
                   ColumnMoments& moments)
        : Float32Columns(X.rows(), X.cols(), y, n_threads, moments) {
        build_rows(X, y.data(), moments);
        norm_ = moments.sq.cwiseSqrt();
    }

    Index rows() const { return m_; }
    Index cols() const { return n_; }
    // ||X_j|| (the square roots of the moments' ||X_j||^2), which scale the products' bounds.
    const Eigen::VectorXd& column_norms() const { return norm_; }

    // out1 = X^T v1 and, when v2 is given, out2 = X^T v2 (approximations, length n each), with
    // err1 / err2 their bounds: |out_j - X_j^T v| <= err_j. One read of the float32 copy.
    void products(const Eigen::VectorXd& v1, const Eigen::VectorXd* v2, Eigen::VectorXd& out1,
                  Eigen::VectorXd& err1, Eigen::VectorXd* out2, Eigen::VectorXd* err2) const {
        const Scaled a(v1), b(v2 ? *v2 : v1);
        const Index W = detail::kF32Panel;
        out1.resize(n_panels_ * W);
        err1.resize(n_);
        if (v2) {
            out2->resize(n_panels_ * W);
            err2->resize(n_);
        }
        const bool fma = kernels::cpu_has_avx2_fma();
        const int team = round_team();
        const double abs_unit = static_cast<double>(m_) * 0x1p-123;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index p = 0; p < n_panels_; ++p) {
            const float* panel = data_.data() + p * m_ * W;
            double* o1 = out1.data() + p * W;
            double* o2 = v2 ? out2->data() + p * W : o1;
            run(fma, v2 != nullptr, panel, a.v.data(), b.v.data(), o1, o2);
            // Multiplying by powers of two is exact (X and v lie well inside the float64 range).
            const Index j0 = p * W, w = std::min(W, n_ - j0);
            scale_back(o1, err1.data() + j0, scale_.data() + j0, norm_.data() + j0, a, abs_unit,
                       w);
            if (v2)
                scale_back(o2, err2->data() + j0, scale_.data() + j0, norm_.data() + j0, b,
                           abs_unit, w);
        }
        out1.conservativeResize(n_);
        if (v2) out2->conservativeResize(n_);
    }

private:
    // The sizes, the bound's kappa and the checks of y, before either build.
    Float32Columns(Index m, Index n, const Eigen::Ref<const Eigen::VectorXd>& y, int n_threads,
                   ColumnMoments& moments)
        : m_(m), n_(n), n_panels_((n + detail::kF32Panel - 1) / detail::kF32Panel),
          n_threads_(n_threads) {
        require(y.size() == m_, "X and y have different numbers of samples");
        require(y.innerStride() == 1, "Float32Columns: y must be contiguous");
        moments.resize(n_);
        const double u = std::ldexp(1.0, -24);
        const double mu = static_cast<double>(detail::kF32Run + 3) * u;
        // The runs' sums in float64 add at most m eps_64 (relative, far below the rest).
        kappa_ = (mu / (1.0 - mu) + static_cast<double>(m_ + 2) * 0x1p-52) * (1.0 + 1e-9);
    }

    // Column j's power-of-two scale (and its inverse) from its maximum in the moments.
    void scale_column(const ColumnMoments& moments, Index j, double* inv) {
        double top = moments.top[j];
        if (!std::isfinite(top)) top = 0.0;  // the caller refuses the column
        power_of_two_scale(top, &scale_[j], inv);
    }

    // build() from a row-major X, in two reads of whole rows: the moments of blocks of columns,
    // then each row into every panel.
    void build_rows(const MatrixRef<double>& X, const double* y, ColumnMoments& moments) {
        const Index W = detail::kF32Panel;
        data_.resize(n_panels_, m_ * W);
        scale_.resize(n_);
        const Index ld = X.outerStride();
        const double* x = X.data();
        const int team = round_team();
        // Alone, blocks of up to kRowBlock columns (whole rows, their lanes' sums in the
        // second-level cache); with a team, about four blocks a thread taken one at a time, so
        // that a thread descheduled by another process (a busy core) leaves its share to the
        // others instead of holding them at the barrier.
        constexpr Index kRowBlock = 1024;
        const Index per = (n_ + 4 * team - 1) / (4 * team);
        const Index B = team > 1 ? std::min(kRowBlock, (per + W - 1) / W * W) : kRowBlock;
        const Index blocks = (n_ + B - 1) / B, work_size = ColumnMoments::row_work(B);
        std::vector<double> work(static_cast<std::size_t>(team * work_size));
        Eigen::VectorXd inv(n_);
#pragma omp parallel num_threads(team) if (team > 1)
        {
            double* mine = work.data() + thread_index() * work_size;
#pragma omp for schedule(dynamic, 1)
            for (Index b = 0; b < blocks; ++b) {
                const Index j0 = b * B, w = std::min(B, n_ - j0);
                moments.compute_rows(x, ld, y, m_, j0, w, mine);
                for (Index j = j0; j < j0 + w; ++j) scale_column(moments, j, &inv[j]);
            }
            // (the implied barrier: every scale is known before the rows are converted)
            constexpr Index kRows = 64;
            const Index tiles = (m_ + kRows - 1) / kRows;
#pragma omp for schedule(dynamic, 4)
            for (Index t = 0; t < tiles; ++t)
                detail::rows_to_panels(x, ld, inv.data(), t * kRows,
                                       std::min(m_, (t + 1) * kRows), n_, m_, data_.data());
        }
    }

    // Fills the copy, each column scaled from its maximum in the moments against y computed
    // first.
    void build(const Eigen::Ref<const Eigen::MatrixXd>& X, const double* y,
               ColumnMoments& moments) {
        const Index W = detail::kF32Panel;
        // Every float is written below (a partial panel's unused lanes with zeros), so the
        // buffer is not cleared first; a later call of the same shape reuses it (RecycleBin).
        data_.resize(n_panels_, m_ * W);
        scale_.resize(n_);
        const int team = round_team();
        // Panel by panel, in tiles of kTile samples: the tile of a panel (16 KiB) stays in the
        // first-level cache while its columns are written into it one by one.
        constexpr Index kTile = 256;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
        for (Index p = 0; p < n_panels_; ++p) {
            const Index j0 = p * W, w = std::min(W, n_ - j0);
            double inv[detail::kF32Panel];
            for (Index l = 0; l < w; ++l) {
                moments.compute(X.col(j0 + l).data(), y, m_, j0 + l);
                scale_column(moments, j0 + l, &inv[l]);
            }
            float* panel = data_.data() + p * m_ * W;
#ifdef FASTFS_HAVE_AVX2_FMA
            if (w == W && kernels::cpu_has_avx2_fma()) {
                const double* cols[detail::kF32Panel];
                for (Index l = 0; l < W; ++l) cols[l] = X.col(j0 + l).data();
                detail::fill_panel_avx2(cols, inv, m_, panel);
                continue;
            }
#endif
            if (w < W)
                for (Index i = 0; i < m_; ++i)
                    std::fill(panel + i * W + w, panel + (i + 1) * W, 0.0f);
            for (Index i0 = 0; i0 < m_; i0 += kTile) {
                const Index i1 = std::min(m_, i0 + kTile);
                for (Index l = 0; l < w; ++l) {
                    const double* x = X.col(j0 + l).data();
                    const double s = inv[l];
                    float* c = panel + l;
                    for (Index i = i0; i < i1; ++i) c[i * W] = static_cast<float>(x[i] * s);
                }
            }
        }
    }

    // A vector scaled by 2^-shift (max |.| in [1/2, 1)) and rounded to float32, with its norm.
    struct Scaled {
        std::vector<float> v;
        double scale = 1.0;
        double norm = 0.0;
        explicit Scaled(const Eigen::VectorXd& x) : v(static_cast<std::size_t>(x.size())) {
            const double top = x.size() ? x.cwiseAbs().maxCoeff() : 0.0;
            int shift = 0;
            if (top > 0.0) std::frexp(top, &shift);
            scale = std::ldexp(1.0, shift);
            const double inv = std::ldexp(1.0, -shift);
            for (Index i = 0; i < x.size(); ++i)
                v[static_cast<std::size_t>(i)] = static_cast<float>(x[i] * inv);
            norm = x.norm() * (1.0 + 1e-9);
        }
    };

    // One panel's products back in the units of X and v, with their bounds (vectorised: raw
    // pointers that do not alias).
    void scale_back(double* __restrict out, double* __restrict err,
                    const double* __restrict scale, const double* __restrict norm,
                    const Scaled& v, double abs_unit, Index w) const {
        const double vs = v.scale, vn = v.norm, kappa = kappa_;
#pragma omp simd
        for (Index l = 0; l < w; ++l) {
            const double s = scale[l] * vs;
            out[l] *= s;
            err[l] = kappa * norm[l] * vn + abs_unit * s;
        }
    }

    void run(bool fma, bool two, const float* panel, const float* v1, const float* v2,
             double* o1, double* o2) const {
#ifdef FASTFS_HAVE_AVX2_FMA
        if (fma) {
            if (two)
                detail::panel_products_fma<2>(panel, v1, v2, m_, o1, o2);
            else
                detail::panel_products_fma<1>(panel, v1, v2, m_, o1, o2);
            return;
        }
#else
        (void)fma;
#endif
        if (two)
            detail::panel_products<2>(panel, v1, v2, m_, o1, o2);
        else
            detail::panel_products<1>(panel, v1, v2, m_, o1, o2);
    }

    // As OrthoBasis: a team only above about a million elements.
    int round_team() const {
        return m_ * n_ >= (Index{1} << 20) ? resolve_threads(n_threads_) : 1;
    }

    Index m_, n_, n_panels_;
    int n_threads_;
    Eigen::VectorXd norm_;
    double kappa_ = 0.0;
    RecycledMatrix<float> data_;  // panel p is row p
    Eigen::VectorXd scale_;  // 2^s_j: column j is stored as X_j / 2^s_j
};

}  // namespace fastfs
