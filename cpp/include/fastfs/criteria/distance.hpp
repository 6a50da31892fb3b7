// Criteria read from the shared m x m distance state (SPEC 5.1): "margin" (e(w) of SPEC 2.3 with
// w the subset's indicator), "loo_knn_accuracy" (leave-one-out k-NN accuracy) and "loo_knn_mse"
// (minus the mean squared error of the leave-one-out soft kNN estimate of SPEC 3.1, RGS's
// criterion; y real, one-class layout). The state holds D = sum over S of delta(f); J(S + x)
// reads D + delta(x) in one pass, up to 16 candidates per pass over D
// (DistanceState::nearest_many), exactly as G-flip scores flips. An addition is committed with
// one more pass; a removal rebuilds D from the subset, because D - delta(x) can cancel
// catastrophically (see gflip.hpp), and a candidate removal whose feature dominates the
// subset's scale is scored from scratch for the same reason. So is a candidate removal whose
// 1-NN accuracy or zero-one margin an exact distance tie could decide (score_removals), so the
// residue of D - delta(x) does not break such ties. (Sums of three or more features in another
// order can still round apart, so a subset's J can depend on the order its features entered.)
//
// 1-NN accuracy only needs, per sample, whether the nearest hit is nearer than the nearest
// miss. Candidate additions are screened on a float32 copy of D (half the bytes, twice the
// SIMD lanes); a sample whose float32 hit and miss are further apart than a rigorous bound on
// the float32 rounding is decided there, the others are decided exactly from the float64 state
// (its mirrored rows), so the accuracy is the float64 one, bit for bit.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "../data/class_layout.hpp"
#include "../state/distance_state.hpp"
#include "../neighbours/engine.hpp"
#include "../neighbours/knn_query.hpp"
#include "margin.hpp"
#include "criterion.hpp"

namespace fastfs {

enum class DistanceKind { margin, knn_accuracy, knn_mse };

class DistanceCriterion : public Criterion {
public:
    // X: m x n in the caller's sample order; codes: class codes per sample (all 0 for
    // knn_mse, which also needs y: m real targets; beta <= 0 = SPEC 3.3's default on each
    // subset).
    template <class Mat>
    DistanceCriterion(const Mat& X, const Labels& codes, DistanceKind kind, UtilitySpec utility,
                      int n_neighbors, int n_threads, const double* y = nullptr,
                      double beta = 0.0)
        : kind_(kind),
          utility_(utility),
          k_(n_neighbors),
          layout_(ClassLayout::from_codes(codes)),
          m_(X.rows()),
          n_(X.cols()),
          cols_(X.cols(), X.rows()),
          range2_(static_cast<std::size_t>(X.cols()), 0.0),
          state_(layout_, n_threads) {
        threads_ = resolve_threads(n_threads);
        if (kind_ == DistanceKind::knn_mse) {
            require(y != nullptr && layout_.n_classes() == 1, "loo_knn_mse: needs real targets");
            y_.assign(y, y + m_);  // one-class layout: positions are sample indices
            beta_ = beta;
            k_ = effective_k(n_neighbors, m_);
        }
        // Feature columns in class order, one contiguous row of cols_ each.
        for (Index p = 0; p < m_; ++p) cols_.col(p) = X.row(layout_.order[static_cast<std::size_t>(p)]).transpose().template cast<double>();
        for (Index f = 0; f < n_; ++f) {
            const double r = cols_.row(f).maxCoeff() - cols_.row(f).minCoeff();
            range2_[static_cast<std::size_t>(f)] = r * r;
        }
        // knn_mse's default beta sums the k nearest distances of every sample.
        require_finite_distances(range2_, kind_ == DistanceKind::knn_mse
                                              ? static_cast<double>(m_) * static_cast<double>(k_)
                                              : 1.0);
        exact_sums_ = sums_are_exact();
        const double top = n_ > 0 && m_ > 0 ? cols_.cwiseAbs().maxCoeff() : 0.0;
        if (kind_ == DistanceKind::knn_accuracy && k_ == 1 && top <= kScreenMaxAbs) {
            state32_ = std::make_unique<DistanceState<float>>(layout_, n_threads);
            cols32_ = cols_.cast<float>();
            colmax_.resize(static_cast<std::size_t>(n_));
            for (Index f = 0; f < n_; ++f) colmax_[static_cast<std::size_t>(f)] = cols_.row(f).cwiseAbs().maxCoeff();
        }
    }

    Index n_features() const override { return n_; }

    void reset(const Subset& S) override {
        S_ = S;
        rebuild(state_, S_);
        synced32_ = false;
    }
    void add(Index x) override {
        S_.push_back(x);
        state_.add_feature(col(x), 1.0);
        synced32_ = false;
    }
    void remove(Index x) override {
        S_.erase(std::find(S_.begin(), S_.end(), x));
        rebuild(state_, S_);
        synced32_ = false;
    }
    double current() override { return score_state(state_, nullptr, 0.0); }

    void score_additions(const Subset& cands, double* out) override {
        if (kind_ == DistanceKind::knn_accuracy && k_ == 1 && S_.empty()) {
            single_feature_accuracy(cands, out);
            return;
        }
        if (state32_) {
            if (!synced32_) {
                largest_ = state32_->assign_rounded(state_);
                synced32_ = true;
            }
            if (largest_ <= kScreenMaxD) return screen_additions(cands, out);
        }
        score_block(state_, cands, 1.0, out);
    }
    void score_removals(const Subset& cands, double* out) override {
        double total = 0.0;
        for (Index f : S_) total += range2_[static_cast<std::size_t>(f)];
        Subset easy;
        std::vector<std::size_t> where;
        for (std::size_t i = 0; i < cands.size(); ++i) {
            const double r = range2_[static_cast<std::size_t>(cands[i])];
            if (r > kDominance * (total - r)) {
                poll();
                Subset T = S_;
                T.erase(std::find(T.begin(), T.end(), cands[i]));
                out[i] = evaluate(T);
            } else {
                easy.push_back(cands[i]);
                where.push_back(i);
            }
        }
        // Decisions that an exact distance tie settles (which sample is nearest, or whether
        // a hit and a miss are equally near) must not be left to the rounding residue of
        // D - delta(x): on data with repeated values (iris) it broke ties that the subset's
        // own distances make exact. 1-NN accuracy and the zero-one margin keep D - delta(x)
        // where every sample's hit and miss are further apart than a bound on that residue,
        // and score the other candidates from scratch.
        // (the k-NN vote and the soft kNN loss keep D - delta(x): scoring every removal from
        // scratch cost up to 8x on 400 genes; their ties stay open, see docs/how-it-works.md)
        const bool from_scratch = false;
        const bool checked = !exact_sums_ &&
                             ((kind_ == DistanceKind::knn_accuracy && k_ == 1) ||
                              (kind_ == DistanceKind::margin && utility_.kind == Utility::zero_one));
        std::vector<double> tmp(easy.size());
        std::vector<char> unsure(easy.size(), from_scratch ? 1 : 0);
        if (!from_scratch)
            score_block(state_, easy, -1.0, tmp.data(), checked ? unsure.data() : nullptr);
        for (std::size_t i = 0; i < easy.size(); ++i) {
            if (unsure[i]) {
                poll();
                Subset T = S_;
                T.erase(std::find(T.begin(), T.end(), easy[i]));
                tmp[i] = evaluate(T);
            }
            out[where[i]] = tmp[i];
        }
    }

    double evaluate(const Subset& S) override {
        if (!scratch_) scratch_ = std::make_unique<DistanceState<double>>(layout_, threads_);
        rebuild(*scratch_, S);
        return score_state(*scratch_, nullptr, 0.0);
    }
    // evaluate() shares one scratch state (and its calls run parallel inside).
    bool thread_safe() const override { return false; }

private:
    static constexpr double kDominance = 1e4;
    // The float32 screen is used while every |x| and every entry of D stay far from float32's
    // range limits, so no float32 value overflows and its error bound
    // (screen::state_update_error) holds.
    static constexpr double kScreenMaxAbs = screen::kMaxAbs;
    static constexpr double kScreenMaxD = 1e30;

    // 1-NN accuracy of every feature alone (the first step of a forward search): on one
    // feature the nearest other sample sits next to the sample in sorted order, so a candidate
    // costs a sort instead of a pass over the m x m state. The squared differences are the ones
    // the state would add to D = 0, so decisions and ties are the same bit for bit: equal values
    // are at distance 0 and the lowest original index among them wins; otherwise the nearest
    // squared difference on either side wins, scanning on while rounding makes a farther value
    // tie, and again the lowest original index among the tied samples wins.
    void single_feature_accuracy(const Subset& cands, double* out) const {
        const Index nc = static_cast<Index>(cands.size());
        const int nt = nc >= 4 && m_ >= 256 ? threads_ : 1;
        StopPoll stop(stop_);
        RegionErrors errors;
#pragma omp parallel num_threads(nt)
        {
            std::vector<Index> by_value;
            errors.run([&] { by_value.resize(static_cast<std::size_t>(m_)); });
#pragma omp for schedule(dynamic, 1)
            for (Index i = 0; i < nc; ++i) {
                if (stop.stopped()) continue;
                errors.run([&] {
                    out[i] = single_feature_accuracy(col(cands[static_cast<std::size_t>(i)]), by_value);
                });
            }
        }
        errors.rethrow();
        stop.check();
    }

    double single_feature_accuracy(const double* c, std::vector<Index>& by_value) const {
        const auto& order = layout_.order;
        for (Index p = 0; p < m_; ++p) by_value[static_cast<std::size_t>(p)] = p;
        std::sort(by_value.begin(), by_value.end(), [&](Index a, Index b) {
            if (c[a] != c[b]) return c[a] < c[b];
            return order[static_cast<std::size_t>(a)] < order[static_cast<std::size_t>(b)];
        });
        auto at = [&](Index r) { return by_value[static_cast<std::size_t>(r)]; };
        Index correct = 0;
        Index g0 = 0;  // first rank of the current group of equal values
        while (g0 < m_) {
            Index g1 = g0 + 1;
            while (g1 < m_ && c[at(g1)] == c[at(g0)]) ++g1;
            for (Index r = g0; r < g1; ++r) {
                const Index p = at(r);
                const double xp = c[p];
                Index winner = -1;
                double best = std::numeric_limits<double>::infinity();
                auto offer = [&](Index b) {
                    const double diff = xp - c[b];
                    const double v = diff * diff;
                    if (v < best) {
                        best = v;
                        winner = b;
                        return true;
                    }
                    if (v == best) {
                        if (order[static_cast<std::size_t>(b)] < order[static_cast<std::size_t>(winner)]) winner = b;
                        return true;
                    }
                    return false;
                };
                // Equal values (distance 0): the lowest original index of the group but p.
                if (g1 - g0 > 1) offer(at(r == g0 ? g0 + 1 : g0));
                // Then outwards on each side while values are at least as near (only a
                // squared difference that underflows to 0 can tie with the group).
                for (Index q = g0 - 1; q >= 0 && offer(at(q)); --q) {
                }
                for (Index q = g1; q < m_ && offer(at(q)); ++q) {
                }
                if (winner >= 0 && layout_.cls[static_cast<std::size_t>(winner)] == layout_.cls[static_cast<std::size_t>(p)])
                    ++correct;
            }
            g0 = g1;
        }
        return static_cast<double>(correct) / static_cast<double>(m_);
    }

    // 1-NN accuracy of every candidate addition from the float32 screen plus exact rechecks.
    // A candidate that leaves too many samples undecided (ties: duplicate values, the first
    // steps on discrete data) is scored on the float64 state instead, blocks as usual.
    void screen_additions(const Subset& cands, double* out) {
        constexpr int B = DistanceState<float>::kMaxBlock;
        std::vector<Nearest<float>> nn(B);
        state_.mirror();  // rows for the exact rechecks, once per committed state
        Subset unsettled;
        std::vector<std::size_t> where;
        // A block in which the screen settles no candidate (ties nearly everywhere: discrete
        // data) predicts the rest of the step: they go to the float64 state directly, which
        // gives every candidate the same accuracy the screen would have led to.
        bool screening = true;
        for (std::size_t lo = 0; lo < cands.size(); lo += B) {
            poll();
            const int count = static_cast<int>(std::min<std::size_t>(B, cands.size() - lo));
            if (!screening) {
                for (int i = 0; i < count; ++i) {
                    unsettled.push_back(cands[lo + static_cast<std::size_t>(i)]);
                    where.push_back(lo + static_cast<std::size_t>(i));
                }
                continue;
            }
            const float* cs[B];
            float signs[B];
            for (int i = 0; i < count; ++i) {
                cs[i] = cols32_.data() + cands[lo + static_cast<std::size_t>(i)] * m_;
                signs[i] = 1.0f;
            }
            state32_->nearest_many(count, cs, signs, nn.data());
            int settled = 0;
            for (int i = 0; i < count; ++i) {
                const std::size_t at = lo + static_cast<std::size_t>(i);
                if (!screened_accuracy(nn[static_cast<std::size_t>(i)], cands[at], out[at])) {
                    unsettled.push_back(cands[at]);
                    where.push_back(at);
                } else {
                    ++settled;
                }
            }
            screening = settled > 0;
        }
        std::vector<double> exact(unsettled.size());
        score_block(state_, unsettled, 1.0, exact.data());
        for (std::size_t i = 0; i < unsettled.size(); ++i) out[where[i]] = exact[i];
    }

    // false when more than a quarter of the samples need an exact recheck (then out is unset):
    // a recheck scans one row, a float64 pass costs about half a row per sample.
    bool screened_accuracy(const Nearest<float>& nn, Index f, double& out) {
        const double* c = col(f);
        const double M = colmax_[static_cast<std::size_t>(f)];
        const double inf = std::numeric_limits<double>::infinity();
        Index correct = 0;
        recheck_.clear();
        for (Index p = 0; p < m_; ++p) {
            const double h = nn.hit[static_cast<std::size_t>(p)], s = nn.miss[static_cast<std::size_t>(p)];
            // An infinite side has no sample at all (a class of one, or a single class): the
            // float64 state has the same structure, and the ranges exclude overflow.
            if (h == inf || s == inf) {
                if (h != inf) ++correct;
                continue;
            }
            const double V = 2.0 * std::max(h, s) + 1e-30;
            const double W = screen::state_update_error(V, std::abs(c[p]) + M);
            // W <= V / 4 makes V a valid bound on both float64 minima (see state_update_error).
            if (W <= 0.25 * V) {
                if (s - h > 2.0 * W) {
                    ++correct;
                    continue;
                }
                if (h - s > 2.0 * W) continue;
            }
            recheck_.push_back(p);
        }
        if (static_cast<Index>(recheck_.size()) * 4 > m_) return false;
        const Index r = static_cast<Index>(recheck_.size());
        const int nt = r * m_ >= (Index{1} << 18) ? threads_ : 1;
        RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt) reduction(+ : correct)
        for (Index i = 0; i < r; ++i)
            errors.run([&] {
                if (exact_correct(recheck_[static_cast<std::size_t>(i)], c)) ++correct;
            });
        errors.rethrow();
        out = static_cast<double>(correct) / static_cast<double>(m_);
        return true;
    }

    // The float64 decision for one sample under D + delta(c), as from_nearest() takes it. A
    // plain min scan, not k_nearest(p, c, 1, 1, ...): that one looks up every entry's original
    // index for its tie rule, which made a MADELON forward search 15% slower.
    bool exact_correct(Index p, const double* c) const {
        const double* r = state_.full_row(p);
        double h = 0.0, s = 0.0;
        row_nearest(layout_, r, p, c, 1.0, h, s);
        if (h < s) return true;
        if (h == s && h != std::numeric_limits<double>::infinity())
            return row_first_at_distance(layout_, r, p, c, 1.0, h) == layout_.cls[static_cast<std::size_t>(p)];
        return false;
    }

    const double* col(Index f) const { return cols_.data() + f * m_; }

    void rebuild(DistanceState<double>& st, const Subset& S) const {
        std::vector<const double*> cols(S.size());
        for (std::size_t j = 0; j < S.size(); ++j) cols[j] = col(S[j]);
        st.assign_columns(static_cast<int>(cols.size()), cols.data(), stop_);
    }

    // Are all distance sums exact? When every value is a multiple of one power of two 2^-s
    // (whole numbers, pixel levels, values rounded to halves) and the squared differences of
    // all features add up below 2^53 units of 2^-2s, every delta, D and D - delta(x) is an
    // exact binary number: no residue, so removals need no check (the data with the most
    // exact ties are the ones this covers).
    bool sums_are_exact() const {
        if (m_ == 0 || n_ == 0) return true;
        for (int sh = 0; sh <= 24; ++sh) {
            bool whole = true;
            for (Index f = 0; f < n_ && whole; ++f)
                for (Index p = 0; p < m_; ++p) {
                    const double v = std::ldexp(cols_(f, p), sh);
                    if (!(std::abs(v) < 0x1p52) || v != std::floor(v)) {
                        whole = false;
                        break;
                    }
                }
            if (!whole) continue;
            double total = 0.0;  // an upper bound on every D entry in units of 2^-2s
            for (Index f = 0; f < n_; ++f) {
                const double r = std::ldexp(cols_.row(f).maxCoeff() - cols_.row(f).minCoeff(), sh);
                total += r * r;
            }
            return total < 0x1p52;
        }
        return false;
    }

    // Could the rounding residue of D - delta(x) (removing x from the subset) have decided
    // whether a sample's nearest hit or nearest miss is nearer? D sums |S| terms and the
    // from-scratch distances of S - x sum |S| - 1, each with a relative error of at most
    // |S| u, and D(p, q) <= (D - delta(x))(p, q) + range(x)^2: a sample whose hit and miss
    // differ by more than twice that (with a margin) is decided as from scratch.
    bool removal_unsure(const Nearest<double>& nn, Index x) const {
        const double inf = std::numeric_limits<double>::infinity();
        const double rel = 4.0 * (static_cast<double>(S_.size()) + 2.0) *
                           std::numeric_limits<double>::epsilon();
        const double r = range2_[static_cast<std::size_t>(x)];
        for (Index p = 0; p < m_; ++p) {
            const double h = nn.hit[static_cast<std::size_t>(p)], s = nn.miss[static_cast<std::size_t>(p)];
            if (h == inf || s == inf) continue;
            if (std::abs(h - s) <= rel * (std::max(h, s) + r)) return true;
        }
        return false;
    }

    // J of D + sign * delta(x) for every candidate x, blocks of DistanceState::kMaxBlock;
    // with `unsure` (1-NN accuracy and the zero-one margin of removals), a candidate whose
    // decisions the residue of D - delta(x) could have changed gets unsure[i] = 1.
    void score_block(DistanceState<double>& st, const Subset& cands, double sign, double* out,
                     char* unsure = nullptr) {
        if (kind_ == DistanceKind::knn_mse) {
            st.mirror();
            for (std::size_t i = 0; i < cands.size(); ++i) {
                poll();
                out[i] = knn_mse(st, col(cands[i]), sign);
            }
            return;
        }
        if (kind_ == DistanceKind::knn_accuracy && k_ > 1) {
            for (std::size_t i = 0; i < cands.size(); ++i) {
                poll();
                out[i] = knn_accuracy(st, col(cands[i]), sign);
            }
            return;
        }
        constexpr int B = DistanceState<double>::kMaxBlock;
        std::vector<Nearest<double>> nn(B);
        for (std::size_t lo = 0; lo < cands.size(); lo += B) {
            poll();
            const int count = static_cast<int>(std::min<std::size_t>(B, cands.size() - lo));
            const double* cs[B];
            double signs[B];
            for (int i = 0; i < count; ++i) {
                cs[i] = col(cands[lo + static_cast<std::size_t>(i)]);
                signs[i] = sign;
            }
            st.nearest_many(count, cs, signs, nn.data());
            for (int i = 0; i < count; ++i) {
                const std::size_t at = lo + static_cast<std::size_t>(i);
                const Nearest<double>& near = nn[static_cast<std::size_t>(i)];
                if (unsure && removal_unsure(near, cands[at])) {
                    unsure[at] = 1;  // scored from scratch by the caller
                    continue;
                }
                out[at] = from_nearest(st, near, cs[i], sign);
            }
        }
    }

    double score_state(DistanceState<double>& st, const double* c, double sign) {
        if (kind_ == DistanceKind::knn_mse) {
            st.mirror();
            return knn_mse(st, c, sign);
        }
        if (kind_ == DistanceKind::knn_accuracy && k_ > 1) return knn_accuracy(st, c, sign);
        Nearest<double> nn;
        st.nearest_with(c, sign, nn);
        return from_nearest(st, nn, c, sign);
    }

    double from_nearest(DistanceState<double>& st, const Nearest<double>& nn, const double* c, double sign) {
        if (kind_ == DistanceKind::margin) return margin_score(nn, utility_);
        // 1-NN: right when the nearest hit is strictly nearer than the nearest miss; on an
        // exact tie the lower original sample index among the equally near ones decides.
        Index correct = 0;
        for (Index p = 0; p < m_; ++p) {
            const double h = nn.hit[static_cast<std::size_t>(p)], s = nn.miss[static_cast<std::size_t>(p)];
            if (h < s) ++correct;
            else if (h == s && h != std::numeric_limits<double>::infinity()) {
                st.mirror();
                if (row_first_at_distance(layout_, st.full_row(p), p, c, sign, h) == layout_.cls[static_cast<std::size_t>(p)]) ++correct;
            }
        }
        return static_cast<double>(correct) / static_cast<double>(m_);
    }

    // -(1/m) sum (y - g_hat)^2 = 2 e / m, e from the shared soft kNN core (neighbours/knn_query.hpp).
    double knn_mse(const DistanceState<double>& st, const double* c, double sign) const {
        const double e = knn_subset_score(st, y_.data(), static_cast<int>(k_), beta_, c, sign, threads_);
        return 2.0 * e / static_cast<double>(m_);
    }

    // k-NN vote of every sample under D + sign * delta(c); vote ties go to the lowest class
    // code (np.unique order), as scikit-learn's KNeighborsClassifier resolves them.
    double knn_accuracy(DistanceState<double>& st, const double* c, double sign) {
        st.mirror();
        const Index n_classes = layout_.n_classes();
        const int k = static_cast<int>(std::min<Index>(k_, m_ - 1));
        Index correct = 0;
        const int nt = m_ >= 256 ? threads_ : 1;
        RegionErrors errors;
#pragma omp parallel num_threads(nt) reduction(+ : correct)
        {
            std::vector<Index> pos;
            std::vector<double> dist;
            std::vector<int> votes;
            errors.run([&] {
                pos.resize(static_cast<std::size_t>(k));
                dist.resize(static_cast<std::size_t>(k));
                votes.resize(static_cast<std::size_t>(n_classes));
            });
#pragma omp for schedule(dynamic, 16)
            for (Index p = 0; p < m_; ++p) errors.run([&] {
                const int got = st.k_nearest(p, c, sign, k, pos.data(), dist.data());
                std::fill(votes.begin(), votes.end(), 0);
                for (int i = 0; i < got; ++i) ++votes[static_cast<std::size_t>(layout_.cls[static_cast<std::size_t>(pos[static_cast<std::size_t>(i)])])];
                const auto winner = std::max_element(votes.begin(), votes.end()) - votes.begin();
                if (winner == layout_.cls[static_cast<std::size_t>(p)]) ++correct;
            });
        }
        errors.rethrow();
        return static_cast<double>(correct) / static_cast<double>(m_);
    }

public:
    // Bytes the criterion holds at most for m samples and n features: the search state and
    // the scratch state of from-scratch evaluations, the features in class order, and for 1-NN
    // accuracy the float32 screen (its state and columns). The memory guard's figure.
    static double bytes_needed(Index m, Index n, DistanceKind kind, int n_neighbors, int n_threads) {
        const double md = static_cast<double>(m), nd = static_cast<double>(n);
        double b = 2.0 * DistanceState<double>::bytes_needed(m, n_threads) + 8.0 * nd * md;
        if (kind == DistanceKind::knn_accuracy && n_neighbors == 1)
            b += DistanceState<float>::bytes_needed(m, n_threads) + 4.0 * nd * md;
        return b;
    }

private:
    DistanceKind kind_;
    UtilitySpec utility_;
    Index k_;
    ClassLayout layout_;
    Index m_, n_;
    RowMatrix<double> cols_;  // n x m: row f = feature f in class order, contiguous
    std::vector<double> range2_;
    DistanceState<double> state_;
    std::unique_ptr<DistanceState<double>> scratch_;
    Subset S_;
    std::vector<double> y_;
    double beta_ = 0.0;
    // The float32 screen of 1-NN accuracy (null when not used).
    std::unique_ptr<DistanceState<float>> state32_;
    RowMatrix<float> cols32_;
    std::vector<double> colmax_;
    bool synced32_ = false;
    bool exact_sums_ = false;  // every distance sum exact (sums_are_exact)
    double largest_ = 0.0;
    std::vector<Index> recheck_;
};

}  // namespace fastfs
