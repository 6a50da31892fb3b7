// G-flip (SPEC 2.4): flip search over feature subsets maximising the margin evaluation e(F).
// Candidates are scored on the shared distance state D + sign * delta(feature), several per
// pass over D; an accepted flip applies the same update to the state. Two guards keep rounding
// from changing the answer:
//  * the state is rebuilt from scratch after every epoch that changed it, so +/- updates never
//    accumulate error across epochs;
//  * removing a feature whose squared range dominates the rest of F would cancel
//    catastrophically in D - delta (the small features' distances drown in the big one's
//    rounding), so such a removal is scored on a state rebuilt without the feature.
// The state is accumulated in float64 whatever the input type: in float32 the cancellation
// above already bites at ordinary scale differences (a column in the thousands next to unit
// columns).
//
// Once flips are rare, additions are scored on each sample's kept nearest pairs
// (state/kept_neighbours.hpp: its nearest hits and misses under D and a bound on the rest of its
// row), which gives the full pass's minima bit for bit wherever the kept minimum is within the
// bound and scans the whole row of the samples where it is not; an accepted flip updates the
// state's whole rows and the kept values (the full pass folds a flip into its next pass
// instead, which is why a flip-heavy stretch, such as the start from the empty set, keeps it).
// The lists are built from a mirrored state; when more than 1/kKeptRows of the samples needed
// their rows, they are built afresh, and when even fresh lists leave that many, the candidates
// take the full pass for a while. Removals (whose bound is looser by the feature's largest
// square) always take the full pass. Full runs (every epoch, 1 thread): 1.3-1.6x faster on the
// 1000 x 300 families and MADELON, 1.1x on MNIST and word counts, unchanged on COIL-20 and gene
// expression.
//
// Optionally (GFlipOptions::float32_screen, off by default: measured at parity on one thread),
// candidates are screened on a float32 copy of the state (half the bytes, twice the SIMD lanes
// of a pass): from each sample's float32 nearest hit and miss, the rounding bound of the 1-NN
// criterion's screen (screen::state_update_error) gives an interval holding the float64 ones,
// hence an interval [lo, hi] holding the float64 e of the candidate (u is monotone; the float64
// rounding of theta, u and the sum are allowed for). A candidate with hi <= e(F) cannot be a
// strict increase and is rejected there; one with lo > e(F) is accepted; only the others (and
// candidates where a sample's bound is too loose) are scored on the float64 state. An accepted
// flip updates the float64 state and rounds it to float32 in one pass. e(F) itself is known
// exactly or as such an interval, and made exact when a comparison needs it; the epoch ends
// with the usual rebuild and exact score. The search therefore takes exactly the decisions,
// flips and scores of the float64 pass (the C++ tests compare both bit for bit).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstring>
#include <limits>
#include <vector>

#include <cmath>
#include <memory>

#include "../data/row_groups.hpp"
#include "../state/distance_state.hpp"
#include "../state/kept_neighbours.hpp"
#include "../neighbours/engine.hpp"
#include "../criteria/margin.hpp"
#include "../core/random.hpp"

namespace fastfs {

struct GFlipOptions {
    UtilitySpec utility;
    int max_epochs = 100;
    int n_restarts = 1;
    // Restarts are numbered from here: restart r runs with the random stream (and, for G-flip,
    // the start) of restart first_restart + r, so a run of restarts a .. b-1 alone gives those
    // restarts of the full run (fastfs.dask runs restarts as separate tasks).
    int first_restart = 0;
    std::uint64_t seed = 0;
    int n_threads = 0;
    // Empty = not given: restarts alternate between the empty set (even restarts) and the full
    // set (odd ones). Greedy flips from the empty set stop at a noise feature that happens to
    // add margin before the features that only help together (xor: 7 of 20 seeds find its
    // three); from the full set those features are already in (20 of 20).
    std::vector<std::uint8_t> initial;
    // Screen candidates on a float32 copy of the state (same results, see above). Off by
    // default: measured at 1 thread it only matches the float64 pass on the data families (the
    // epoch's other costs and flip-heavy stretches eat the float32 pass's gain), for 50% more
    // memory; the tests compare both paths bit for bit.
    bool float32_screen = false;
    // Score candidates on the kept nearest pairs first (same results, see above; the tests
    // compare both paths bit for bit). Not combined with the float32 screen.
    bool kept_neighbours = true;
    // Tests: the lists score every addition they can, whatever the recent flips and however
    // little they paid (same results, more of the candidates on the lists).
    bool kept_always = false;
};

// The progress hook (core/progress.hpp) is called between epochs with Progress::flips: the
// restart, the epoch, e(w) and the support; returning true stops the search (the best result
// so far is returned).

struct GFlipResult {
    std::vector<std::uint8_t> support;
    std::vector<Index> selected;  // in the order the features (last) entered the set
    double score = -std::numeric_limits<double>::infinity();
    std::vector<double> history;  // score after each epoch of the winning restart
    std::vector<double> restart_scores;  // final score of each restart run, in order
    int n_epochs = 0, n_flips = 0, best_restart = 0;
    bool stopped_early = false;  // the callback stopped the search (in any restart)
    // Candidates of the winning restart decided by the float32 screen's bounds alone, and
    // scored on the float64 state (a diagnostic of the screen).
    long screened = 0, exact = 0;
    long kept = 0;  // of the exact ones: scored on the kept nearest pairs
};

template <class T>
class GFlip {
public:
    using Acc = double;  // type of the distance state, see the header comment

    // X: samples x features in the caller's order; codes: class code per sample.
    GFlip(const MatrixRef<T>& X, const Labels& codes, GFlipOptions opt)
        : opt_(std::move(opt)),
          rows_(check_rows(X, codes)),
          state_(rows_.layout, opt_.n_threads),
          n_features_(X.cols()) {
        require(opt_.max_epochs >= 1, "max_epochs must be >= 1");
        require(opt_.n_restarts >= 1, "n_restarts must be >= 1");
        require(opt_.initial.empty() || static_cast<Index>(opt_.initial.size()) == n_features_,
                "initial: length must equal the number of features");
        // Feature-major copy in class order, one sample per group of equal rows: one candidate
        // reads one contiguous column.
        const Index m = state_.n_samples();
        columns_.resize(n_features_, m);
        for (Index p = 0; p < m; ++p)
            columns_.col(p) = X.row(rows_.sample[static_cast<std::size_t>(p)]).transpose().template cast<Acc>();
        range2_.resize(static_cast<std::size_t>(n_features_));
        col_lo_.resize(static_cast<std::size_t>(n_features_));
        col_hi_.resize(static_cast<std::size_t>(n_features_));
        for (Index j = 0; j < n_features_; ++j) {
            const std::size_t f = static_cast<std::size_t>(j);
            col_lo_[f] = columns_.row(j).minCoeff();
            col_hi_[f] = columns_.row(j).maxCoeff();
            const Acc r = col_hi_[f] - col_lo_[f];
            range2_[f] = r * r;
        }
        require_finite_distances(range2_);
        const double top = m > 0 && n_features_ > 0 ? columns_.cwiseAbs().maxCoeff() : 0.0;
        if (opt_.float32_screen && m >= 2 && top <= screen::kMaxAbs) {
            state32_ = std::make_unique<DistanceState<float>>(rows_.layout, opt_.n_threads);
            columns32_ = columns_.template cast<float>();
            copy_.resize(m);
            for (Index g = 0; g < m; ++g) copy_[g] = rows_.size[static_cast<std::size_t>(g)] > 1 ? 1.0 : 0.0;
            colmax_.resize(static_cast<std::size_t>(n_features_));
            for (Index j = 0; j < n_features_; ++j)
                colmax_[static_cast<std::size_t>(j)] = columns_.row(j).cwiseAbs().maxCoeff();
        }
    }

    GFlipResult run(const StopHook& stop = {}, const ProgressHook& callback = {}) {
        GFlipResult best;
        std::vector<double> scores;
        bool stopped = false;
        for (int r = 0; r < opt_.n_restarts && !stopped; ++r) {
            GFlipResult res = run_once(r, stop, callback);
            stopped = res.stopped_early;
            scores.push_back(res.score);
            if (r == 0 || res.score > best.score) {
                best = std::move(res);
                best.best_restart = r;
            }
        }
        best.restart_scores = std::move(scores);
        best.stopped_early = stopped;
        return best;
    }

private:
    // Removing j from F is scored from scratch when j's squared range exceeds the rest of F's
    // by this factor: the relative error of D - delta grows like eps * range2_j / distance.
    static constexpr double kDominance = 1e4;

    // j is in F: does it dominate the other features of F?
    bool dominant(Index j) const {
        const double r = range2_[static_cast<std::size_t>(j)];
        return r > kDominance * (in_range2_ - r);
    }

    void rebuild(const std::vector<std::uint8_t>& support, Index skip = -1) {
        std::vector<Index> chosen;
        for (Index j = 0; j < n_features_; ++j)
            if (support[static_cast<std::size_t>(j)] && j != skip) chosen.push_back(j);
        in_range2_ = 0.0;
        for (Index j = 0; j < n_features_; ++j)
            if (support[static_cast<std::size_t>(j)]) in_range2_ += range2_[static_cast<std::size_t>(j)];
        std::vector<const Acc*> cols(chosen.size());
        for (std::size_t k = 0; k < chosen.size(); ++k) cols[k] = columns_.row(chosen[k]).data();
        state_.assign_columns(static_cast<int>(cols.size()), cols.data());
        kept_.invalidate();
        pending_cols_.clear();
        pending_signs_.clear();
        synced32_ = false;
    }

    // The float32 state. After a sync it is the float64 state rounded to float32. An accepted
    // addition is then applied to it in float32 (deferred into its next pass) and queued for
    // the float64 state, which catches up only when it is read (an undecided candidate, an
    // exact e(F)) or after kMaxQueued additions, in one pass that also rounds it afresh: a
    // flip costs a float32 update instead of a float64 pass. Each float32 update adds at most
    // state_update_error(V, 2 max|x_j|) to an entry's error (entries only grow under
    // additions, so V bounds them all); score_bounds() adds those terms. A removal is applied
    // to the float64 state at once.
    static constexpr int kMaxQueued = 8;
    // Every entry stays far below float32's range, so no float32 value overflows.
    static constexpr double kScreenMaxD = 1e30;

    // Brings the float64 state up to date (and the float32 one back to its rounding).
    void sync() {
        if (pending_cols_.empty()) return;
        largest_ = state_.add_features_rounded(static_cast<int>(pending_cols_.size()),
                                               pending_cols_.data(), pending_signs_.data(),
                                               state32_.get());
        pending_cols_.clear();
        pending_signs_.clear();
        queued_amax_ = 0.0;
        synced32_ = state32_ != nullptr;
    }

    bool screening() {
        if (!state32_) return false;
        if (!synced32_) {
            state_.flush();
            largest_ = state32_->assign_rounded(state_);
            synced32_ = true;
        }
        return largest_ <= kScreenMaxD;
    }

    // An accepted flip of feature j while screening.
    void apply_screened(Index j, Acc sign) {
        pending_cols_.push_back(columns_.row(j).data());
        pending_signs_.push_back(sign);
        if (sign < 0 || static_cast<int>(pending_cols_.size()) >= kMaxQueued) {
            sync();
            return;
        }
        state32_->defer_feature(columns32_.row(j).data(), 1.0f);
        queued_amax_ = std::max(queued_amax_, 2.0 * colmax_[static_cast<std::size_t>(j)]);
        largest_ += 1.01 * range2_[static_cast<std::size_t>(j)];
    }

    // Bounds lo <= e <= hi on the float64 e of a candidate (column c, sign) from its float32
    // nearest hits and misses nn; false when some sample's bound is too loose to use. Array
    // expressions throughout (Eigen vectorises sqrt; the bounds cost a few percent of a pass).
    bool score_bounds(const Nearest<float>& nn, const Acc* c, Acc sign, double M, double& lo,
                      double& hi) {
        using Arr = Eigen::ArrayXd;
        const Index G = static_cast<Index>(nn.hit.size());
        const double inf = std::numeric_limits<double>::infinity();
        const UtilitySpec& u = opt_.utility;
        const double queued = static_cast<double>(pending_cols_.size());
        // A group with a copy has its nearest hit at 0 exactly (see score()).
        Arr h = (copy_ > 0.0).select(0.0, Eigen::Map<const Eigen::ArrayXf>(nn.hit.data(), G).cast<double>());
        Arr s = Eigen::Map<const Eigen::ArrayXf>(nn.miss.data(), G).cast<double>();
        // No hit or no miss: no term; the float64 state has the same structure (finite entries).
        const Eigen::Array<bool, Eigen::Dynamic, 1> none = (h == inf) || (s == inf);
        h = none.select(0.0, h);
        s = none.select(0.0, s);
        // V bounds both float64 minima when W <= V / 4 (see state_update_error); a removal's
        // entries are D - q with D <= V + A^2, which the bound at V + A^2 covers. The float32
        // updates since the last rounding add one term each (see sync()).
        const Arr V = 2.0 * h.max(s).max(0.0) + 1e-30;
        const Arr A = Eigen::Map<const Arr>(c, G).abs() + M;
        const Arr Vc = sign > 0 ? V : V + A * A;
        const Arr t = Vc.sqrt() * (1.0 + 1e-12);
        Arr W = update_error(Vc, t, A);
        if (queued > 0) W += queued * update_error(Vc, t, Arr::Constant(G, queued_amax_));
        if ((W > 0.25 * V).any()) return false;
        const Arr rs_lo = (s - W).max(0.0).sqrt(), rs_hi = (s + W).sqrt();
        const Arr rh_lo = (copy_ > 0.0).select(0.0, (h - W).max(0.0).sqrt());
        const Arr rh_hi = (copy_ > 0.0).select(0.0, (h + W).sqrt());
        // The float64 theta's own roundings (and these bounds' own).
        const Arr rounding = 4e-15 * (rs_hi + rh_hi) + 1e-300;
        const Arr t_lo = 0.5 * (rs_lo - rh_hi) - rounding;
        const Arr t_hi = 0.5 * (rs_hi - rh_lo) + rounding;
        if (u.kind == Utility::linear) {
            ulo_ = none.select(0.0, t_lo);
            uhi_ = none.select(0.0, t_hi);
        } else if (u.kind == Utility::zero_one) {
            ulo_ = (!none && t_lo > 0.0).select(Arr::Ones(G), 0.0);
            uhi_ = (!none && t_hi > 0.0).select(Arr::Ones(G), 0.0);
        } else {
            // 1 / (1 + exp(-beta theta)) is monotone in theta; its float64 evaluation errs by a
            // few units of the last place plus the exponent's |beta theta| u.
            ulo_.resize(G);
            uhi_.resize(G);
            for (Index g = 0; g < G; ++g) {
                if (none[g]) {
                    ulo_[g] = uhi_[g] = 0.0;
                    continue;
                }
                const double a = u(t_lo[g]), b = u(t_hi[g]);
                const double rel = (std::abs(u.beta) * std::max(std::abs(t_lo[g]), std::abs(t_hi[g])) + 16.0) * 2.3e-16;
                ulo_[g] = std::min(a, b) * (1.0 - rel) - 1e-300;
                uhi_[g] = std::max(a, b) * (1.0 + rel) + 1e-300;
            }
        }
        // e sums u over the samples in class order; the float64 sum and these sums of the
        // bounds (in any order) each err by at most gamma_m times the sum of magnitudes.
        double sl = 0.0, sh = 0.0, sa = 0.0;
        const std::size_t m = rows_.group.size();
        if (!rows_.merged) {
            sl = ulo_.sum();
            sh = uhi_.sum();
            sa = ulo_.abs().max(uhi_.abs()).sum();
        } else {
            for (std::size_t p = 0; p < m; ++p) {
                const auto g = rows_.group[p];
                sl += ulo_[g];
                sh += uhi_[g];
                sa += std::max(std::abs(ulo_[g]), std::abs(uhi_[g]));
            }
        }
        const double slack = 2.02 * screen::gamma(static_cast<Index>(m) + 2, screen::kUnit64) * sa + 1e-300;
        lo = sl - slack;
        hi = sh + slack;
        return true;
    }

    // screen::state_update_error(V, A) of every entry, t = sqrt(V) (1 + 1e-12) given (the same
    // terms, as array expressions).
    static Eigen::ArrayXd update_error(const Eigen::ArrayXd& V, const Eigen::ArrayXd& t,
                                       const Eigen::ArrayXd& A) {
        constexpr double u = screen::kUnit32;
        const Eigen::ArrayXd ed = 1.001 * u * (A + t) + 1e-44;
        const Eigen::ArrayXd sq = 2.0 * t * ed + ed * ed;
        return 1.01 * (u * V + sq + u * (t + ed).square() + 2.0 * u * (V + sq) + 4e-16 * V + 1e-37);
    }

    // The kept lists: for the float64 pass (no float32 screen), a state large enough for a pass
    // to cost more than the lists, a non-empty F (D is 0 everywhere before the first flip),
    // rare flips and outside a pause.
    static constexpr Index kKeptMinRows = 128;
    static constexpr Index kKeptRows = 16;   // rebuild when more than 1/16 of the rows were scanned
    static constexpr Index kKeptPause = 64;  // steps in the full pass after fresh lists failed
    bool use_kept() const {
        return opt_.kept_neighbours && !state32_ && state_.n_samples() >= kKeptMinRows &&
               in_range2_ > 0.0 &&
               (opt_.kept_always || (counter_ >= kept_off_until_ && flips_rare()));
    }
    // An accepted flip costs the lists a pass over the whole rows, which the full pass folds
    // into its next candidates' pass: the lists score while at most one recent candidate in
    // kFlipRate was accepted (counts halved every 64 candidates).
    static constexpr long kFlipRate = 16;
    bool flips_rare() const { return recent_ >= 16 && recent_flips_ * kFlipRate <= recent_; }
    void note_candidates(long seen, long flipped) {
        recent_ += seen;
        recent_flips_ += flipped;
        if (recent_ >= 64) {
            recent_ /= 2;
            recent_flips_ /= 2;
        }
    }
    // Fresh lists from the state, brought up to date and mirrored first.
    void prepare_kept() {
        state_.flush();
        state_.mirror();
        kept_.build(state_);
        since_build_ = 0;
    }

    double score_state(Nearest<Acc>& nn) {
        state_.nearest_with(nullptr, Acc(0), nn);
        return score(nn);
    }

    // Equal rows of one class ("duplicates") are one sample of the state: an update adds
    // (x_a - x_b)^2 = 0 to their distance, which so stays exactly 0, and every other distance
    // of a copy is its group's, bit for bit (the same expressions over the same values). The
    // state is then m_u x m_u; a sample's nearest miss is its group's, its nearest hit is 0
    // when its group has another member (min(0, group's hit), exact), and e is summed over
    // the samples in class order, as over the whole state.
    struct Rows {
        ClassLayout layout;               // of the groups, in class order
        std::vector<Index> sample;        // group -> original index of its first sample
        std::vector<Index> group;         // class-order position of a sample -> its group
        std::vector<Index> size;          // members per group
        bool merged = false;              // fewer groups than samples
    };
    static Rows check_rows(const MatrixRef<T>& X, const Labels& codes) {
        require(X.rows() == codes.size(), "X and y have different numbers of samples");
        const ClassLayout full = ClassLayout::from_codes(codes);
        const Index m = X.rows();
        const RowGroups groups = equal_row_groups(X, codes);
        Rows R;
        R.group.resize(static_cast<std::size_t>(m));
        std::vector<std::int64_t> group_codes;
        // Renumbered in class order (a group's first sample there is its lowest).
        std::vector<Index> number(static_cast<std::size_t>(groups.n_groups()), -1);
        for (Index p = 0; p < m; ++p) {
            const Index i = full.order[static_cast<std::size_t>(p)];
            const auto g0 = static_cast<std::size_t>(groups.group[static_cast<std::size_t>(i)]);
            if (number[g0] < 0) {
                number[g0] = static_cast<Index>(R.sample.size());
                R.sample.push_back(groups.first[g0]);
                R.size.push_back(groups.size[g0]);
                group_codes.push_back(full.cls[static_cast<std::size_t>(p)]);
            }
            R.group[static_cast<std::size_t>(p)] = number[g0];
        }
        R.merged = static_cast<Index>(R.sample.size()) < m && R.sample.size() >= 2;
        if (!R.merged) {  // the state keeps every sample
            R.sample.assign(full.order.begin(), full.order.end());
            for (Index p = 0; p < m; ++p) R.group[static_cast<std::size_t>(p)] = p;
            R.size.assign(static_cast<std::size_t>(m), 1);
            R.layout = full;
            return R;
        }
        // Groups are numbered in class order, so their layout keeps that order.
        Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> gc(static_cast<Index>(group_codes.size()));
        for (std::size_t g = 0; g < group_codes.size(); ++g) gc[static_cast<Index>(g)] = group_codes[g];
        R.layout = ClassLayout::from_codes(gc);
        return R;
    }

    // e of the samples from the nearest hits and misses of the state's groups.
    double score(const Nearest<Acc>& nn) {
        if (!rows_.merged) return margin_score(nn, opt_.utility);
        const std::size_t m = rows_.group.size();
        full_nn_.hit.resize(m);
        full_nn_.miss.resize(m);
        for (std::size_t p = 0; p < m; ++p) {
            const auto g = static_cast<std::size_t>(rows_.group[p]);
            Acc h = nn.hit[g];
            if (rows_.size[g] > 1 && h > Acc(0)) h = Acc(0);  // min(0, h): a copy at distance 0
            full_nn_.hit[p] = h;
            full_nn_.miss[p] = nn.miss[g];
        }
        return margin_score(full_nn_, opt_.utility);
    }

    // Flips j in the bookkeeping (the caller has already updated the state).
    void toggle(GFlipResult& res, Index j) {
        auto& in = res.support[static_cast<std::size_t>(j)];
        in = !in;
        in_range2_ += in ? range2_[static_cast<std::size_t>(j)] : -range2_[static_cast<std::size_t>(j)];
        if (in) res.selected.push_back(j);
        else res.selected.erase(std::find(res.selected.begin(), res.selected.end(), j));
    }

    GFlipResult run_once(int restart, const StopHook& stop, const ProgressHook& callback) {
        const int number = opt_.first_restart + restart;
        Rng rng(opt_.seed, static_cast<std::uint64_t>(number));
        GFlipResult res;
        res.support = opt_.initial.empty()
                          ? std::vector<std::uint8_t>(static_cast<std::size_t>(n_features_),
                                                      number % 2 == 1 ? 1 : 0)
                          : opt_.initial;
        for (Index j = 0; j < n_features_; ++j)
            if (res.support[static_cast<std::size_t>(j)]) res.selected.push_back(j);
        rebuild(res.support);
        Nearest<Acc> nn(state_.n_samples());
        // e(F): exact when `exact`, else known to lie in [cur_lo, cur_hi] (a flip accepted on
        // the screen's bounds); made exact on demand from the float64 state.
        double current = score_state(nn);
        double cur_lo = current, cur_hi = current;
        bool exact = true;
        auto set_exact = [&](double v) {
            current = cur_lo = cur_hi = v;
            exact = true;
        };
        auto make_exact = [&] {
            sync();
            if (!exact) set_exact(score_state(nn));
        };

        for (int epoch = 0; epoch < opt_.max_epochs; ++epoch) {
            std::vector<Index> visit = rng.permutation(n_features_);
            // A constant feature (squared range 0: every squared difference is then exactly 0,
            // rounding being monotone) leaves D and so the score as they are: it never flips.
            visit.erase(std::remove_if(visit.begin(), visit.end(),
                                       [&](Index j) { return range2_[static_cast<std::size_t>(j)] == 0.0; }),
                        visit.end());
            int flips = 0;
            // The screen is used while it pays, judged on the recent candidates (counts halved
            // every 32): it must decide most of them (where e barely moves, as for a rare word
            // of sparse data, most need the float64 score anyway and the float32 pass before it
            // is a loss), and flips must be rare (a flip-heavy stretch, such as the start from
            // the empty set on images, scores blocks of one or two candidates, where the float64
            // pass with its fused update is as cheap).
            long decided = 0, undecided = 0, accepted = 0;
            // Candidates are scored in speculative blocks on the same state: a block's scores
            // are exact up to its first accepted flip; the rest are scored again in the next
            // block. Blocks shrink after a flip and grow while nothing flips.
            std::size_t pos = 0;
            int block = 4;
            while (pos < visit.size()) {
                if (stop && stop()) throw Interrupted();
                const Index first = visit[pos];
                if (res.support[static_cast<std::size_t>(first)] && dominant(first)) {
                    make_exact();
                    rebuild(res.support, first);
                    const double candidate = score_state(nn);
                    ++res.exact;
                    if (candidate > current) {
                        set_exact(candidate);
                        toggle(res, first);
                        ++flips;
                    } else {  // adding a feature back is well conditioned
                        state_.add_feature(columns_.row(first).data(), Acc(1));
                        synced32_ = false;
                    }
                    ++pos;
                    continue;
                }
                if (!res.support[static_cast<std::size_t>(first)] && use_kept()) {
                    const Index j = first;
                    const Acc sign = Acc(1);
                    const Acc* col = columns_.row(j).data();
                    const Acc lo = col_lo_[static_cast<std::size_t>(j)];
                    const Acc hi = col_hi_[static_cast<std::size_t>(j)];
                    if (!kept_.valid()) prepare_kept();
                    const Index rows = kept_.nearest_with(state_, col, sign, lo, hi, block_nn_[0]);
                    const double candidate = score(block_nn_[0]);
                    ++res.exact;
                    ++res.kept;
                    ++pos;
                    ++counter_;
                    const bool accept = candidate > current;  // strict increase only: ties keep F
                    note_candidates(1, accept ? 1 : 0);
                    if (accept) {
                        kept_.accept(state_, col, sign, lo, hi);
                        set_exact(candidate);
                        toggle(res, j);
                        ++flips;
                    }
                    ++since_build_;
                    // Lists that leave this many rows to scan are built afresh, or, when they
                    // were fresh, given up for the next kKeptPause steps.
                    if (rows * kKeptRows > state_.n_samples()) {
                        if (since_build_ == 1) kept_off_until_ = counter_ + kKeptPause;
                        kept_.invalidate();
                    }
                    continue;
                }
                ++counter_;
                int count = 0;
                const Acc* cols[DistanceState<Acc>::kMaxBlock];
                Acc signs[DistanceState<Acc>::kMaxBlock];
                while (count < block && pos + static_cast<std::size_t>(count) < visit.size()) {
                    const Index j = visit[pos + static_cast<std::size_t>(count)];
                    const bool in = res.support[static_cast<std::size_t>(j)];
                    if (count > 0 && in && dominant(j)) break;
                    if (count > 0 && !in && use_kept()) break;  // the lists score additions
                    cols[count] = columns_.row(j).data();
                    signs[count] = in ? Acc(-1) : Acc(1);
                    ++count;
                }
                int used = count;
                bool flipped = false;
                if (decided + undecided >= 32) {
                    decided /= 2;
                    undecided /= 2;
                    accepted /= 2;
                }
                const bool screen_on = decided + undecided < 8 ||
                                       (undecided * 4 <= decided && accepted * 4 <= decided + undecided);
                if (screen_on && screening()) {
                    const float* cols32[DistanceState<float>::kMaxBlock];
                    float signs32[DistanceState<float>::kMaxBlock];
                    for (int k = 0; k < count; ++k) {
                        cols32[k] = columns32_.row(visit[pos + static_cast<std::size_t>(k)]).data();
                        signs32[k] = static_cast<float>(signs[k]);
                    }
                    state32_->nearest_many(count, cols32, signs32, block32_.data());
                    for (int k = 0; k < count; ++k) {
                        const Index j = visit[pos + static_cast<std::size_t>(k)];
                        double lo = 0.0, hi = 0.0;
                        const bool bounded = score_bounds(block32_[static_cast<std::size_t>(k)], cols[k], signs[k],
                                                          colmax_[static_cast<std::size_t>(j)], lo, hi);
                        if (bounded && hi <= cur_lo) {  // e(F with the flip) <= e(F)
                            ++res.screened;
                            ++decided;
                            continue;
                        }
                        bool accept = bounded && lo > cur_hi;
                        double candidate = 0.0;
                        if (accept) ++res.screened, ++decided;
                        else ++res.exact, ++undecided;
                        if (!accept) {  // undecided: the float64 score
                            make_exact();  // also brings the float64 state up to date
                            state_.nearest_with(cols[k], signs[k], nn);
                            candidate = score(nn);
                            accept = candidate > current;
                        }
                        if (!accept) continue;
                        ++accepted;
                        apply_screened(j, signs[k]);
                        if (bounded && lo > cur_hi) {
                            cur_lo = lo;
                            cur_hi = hi;
                            exact = false;
                        } else {
                            set_exact(candidate);
                        }
                        toggle(res, j);
                        ++flips;
                        used = k + 1;
                        flipped = true;
                        break;
                    }
                    pos += static_cast<std::size_t>(used);
                    block = flipped ? std::max(1, block / 2)
                                    : std::min(DistanceState<Acc>::kMaxBlock, block * 2);
                    continue;
                }
                make_exact();
                state_.nearest_many(count, cols, signs, block_nn_.data());
                for (int k = 0; k < count; ++k) {
                    const double candidate = score(block_nn_[static_cast<std::size_t>(k)]);
                    if (candidate > current) {  // strict increase only: ties keep F
                        // Applied by the next block's pass (or dropped by the rebuild); with
                        // kept lists in use, to them and the whole rows at once (they stay
                        // valid); lists not in use are dropped rather than paid for.
                        const Index j = visit[pos + static_cast<std::size_t>(k)];
                        if (kept_.valid() && use_kept()) {
                            kept_.accept(state_, cols[k], signs[k], col_lo_[static_cast<std::size_t>(j)],
                                         col_hi_[static_cast<std::size_t>(j)]);
                        } else {
                            kept_.invalidate();
                            state_.defer_feature(cols[k], signs[k]);
                        }
                        synced32_ = false;
                        set_exact(candidate);
                        toggle(res, visit[pos + static_cast<std::size_t>(k)]);
                        ++flips;
                        used = k + 1;
                        flipped = true;
                        break;
                    }
                }
                res.exact += used;
                note_candidates(used, flipped ? 1 : 0);
                // The float64 pass feeds the recent counts as if the screen had decided its
                // candidates, so the screen is tried again once flips become rare.
                decided += used;
                if (flipped) ++accepted;
                pos += static_cast<std::size_t>(used);
                block = flipped ? std::max(1, block / 2)
                                : std::min(DistanceState<Acc>::kMaxBlock, block * 2);
            }
            res.n_flips += flips;
            res.n_epochs = epoch + 1;
            if (flips > 0) {
                rebuild(res.support);
                set_exact(score_state(nn));
            }
            res.history.push_back(current);
            if (callback) {
                const Progress info = Progress::flips(restart, epoch + 1, current, &res.support);
                if (callback(info)) {
                    res.stopped_early = true;
                    break;
                }
            }
            if (flips == 0) break;
        }
        make_exact();
        res.score = current;
        return res;
    }

public:
    // Bytes G-flip holds for m samples and n features: its distance state, the features in
    // class order and the per-block nearest hits and misses (the memory guard's figure; the
    // float32 screen, off by default, adds half as much again).
    static double bytes_needed(Index m, Index n, int n_threads) {
        const double md = static_cast<double>(m);
        return DistanceState<Acc>::bytes_needed(m, n_threads) +
               sizeof(Acc) * (static_cast<double>(n) * md + DistanceState<Acc>::kMaxBlock * 2.0 * md) +
               KeptNeighbours<Acc>::bytes_needed(m, n_threads) + sizeof(Acc) * 2.0 * static_cast<double>(n);
    }

private:
    GFlipOptions opt_;
    Rows rows_;  // the samples of the state: one per group of equal rows in a class
    DistanceState<Acc> state_;
    Index n_features_;
    RowMatrix<Acc> columns_;    // n_features x n_samples, samples in class order
    std::vector<double> range2_;  // (max - min)^2 of each feature
    double in_range2_ = 0.0;      // sum of range2_ over F
    Nearest<Acc> full_nn_;  // score(): the groups' nearest spread over the samples
    std::vector<Nearest<Acc>> block_nn_ =
        std::vector<Nearest<Acc>>(static_cast<std::size_t>(DistanceState<Acc>::kMaxBlock));
    // The float32 screen (null when off): the state rounded to float32 (valid while synced32_),
    // its largest float64 entry, the columns in float32, max |x| of each column, the block's
    // float32 nearest and the per-group bounds of u(theta).
    std::unique_ptr<DistanceState<float>> state32_;
    bool synced32_ = false;
    double largest_ = 0.0;
    RowMatrix<float> columns32_;
    std::vector<double> colmax_;
    std::vector<Nearest<float>> block32_ =
        std::vector<Nearest<float>>(static_cast<std::size_t>(DistanceState<float>::kMaxBlock));
    Eigen::ArrayXd ulo_, uhi_;
    // The kept nearest pairs (see use_kept()), each feature's smallest and largest value, the
    // candidates seen (for the pause), the candidates since the last build.
    KeptNeighbours<Acc> kept_{rows_.layout};  // (scores into block_nn_[0])
    std::vector<Acc> col_lo_, col_hi_;
    Index counter_ = 0, kept_off_until_ = 0, since_build_ = 0;
    long recent_ = 0, recent_flips_ = 0;  // recent candidates and accepted flips (flips_rare())
    Eigen::ArrayXd copy_;  // 1 for a group with more than one sample, else 0
    // Accepted flips not yet applied to the float64 state (see sync()), and the largest
    // |x_a| + |x_b| bound of the ones applied to the float32 state since its last rounding.
    std::vector<const Acc*> pending_cols_;
    std::vector<Acc> pending_signs_;
    double queued_amax_ = 0.0;
};

}  // namespace fastfs
