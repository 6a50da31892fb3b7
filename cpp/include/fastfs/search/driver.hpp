// The search side of "criterion x search" (SPEC 5.2): the one driver every strategy runs on. It
// owns the current subset S (a list: additions append, removals delete), keeps the criterion's
// state in step with it, picks the best move of a step (candidates in ascending feature order,
// the first one that ties with the maximum wins, so ties go to the lower index), records every
// step (the subset, sorted, and its J), counts evaluations and handles the caller's callback
// and stop hook. A strategy is then a short function of moves and records.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../criteria/criterion.hpp"

namespace fastfs {

// Two values of J within this relative distance are a tie. The same J reached by two routes
// (an incremental update in another order, two identical columns, a solve of a permuted
// matrix) differs in the last bits, and rounding must never decide a tie: every comparison of
// candidates in every strategy goes through tied() / beats().
constexpr double kTieTolerance = 1e-10;
inline bool tied(double a, double b) {
    if (a == b) return true;
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    return std::abs(a - b) <= kTieTolerance * std::max(std::abs(a), std::abs(b));
}
// a is larger than b by more than rounding.
inline bool beats(double a, double b) { return a > b && !tied(a, b); }

// Index of the first value that ties with the maximum (the maximum itself if none earlier).
inline std::size_t first_of_max(const std::vector<double>& v) {
    std::size_t top = 0;
    for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i] > v[top]) top = i;
    for (std::size_t i = 0; i < top; ++i)
        if (!beats(v[top], v[i])) return i;
    return top;
}

// The subset that a search over candidates offered in any order settles on: among those that
// tie with the largest J offered, the lexicographically smallest. Kept as a frontier of
// (subset, J) with J rising in subset order; an entry with a smaller subset and a J at least
// as high makes a later one useless, so the frontier holds only J's within one tie of the
// maximum.
class TieFrontier {
public:
    bool empty() const { return entries_.empty(); }
    double max() const { return max_; }
    const Subset& subset() const { return entries_.begin()->first; }
    double score() const { return entries_.begin()->second; }
    // Offers a sorted subset; true when the chosen subset changed.
    bool offer(const Subset& key, double J) {
        const bool had = !entries_.empty();
        if (!had || J > max_) max_ = J;
        if (beats(max_, J)) return false;
        auto next = entries_.lower_bound(key);
        if (next != entries_.begin() && std::prev(next)->second >= J) return false;
        const Subset before = had ? subset() : Subset{};
        while (next != entries_.end() && next->second <= J) next = entries_.erase(next);
        entries_.emplace_hint(next, key, J);
        while (beats(max_, entries_.begin()->second)) entries_.erase(entries_.begin());
        return !had || subset() != before;
    }

private:
    std::map<Subset, double> entries_;
    double max_ = -std::numeric_limits<double>::infinity();
};

struct SearchRecord {
    Subset subset;  // ascending
    double score;
    Subset list;    // the same subset in the strategy's list order
};

struct SearchOutcome {
    Subset selected;  // the result in the strategy's list order
    double score = 0.0;
    std::vector<SearchRecord> history;
    std::vector<double> best_scores;  // by subset size, NaN where nothing was recorded
    long long n_evaluations = 0;
    bool stopped_early = false;
    // every finite J of the candidates the search scored ties with every other (and there
    // were two or more): the selection is then the tie rule's, not the criterion's
    bool scores_tied = false;
};

// Called after every record with (record index, J, subset ascending); true stops the search.

// What n_features_to_select asked for: a size, or "the best J of any size reached".
struct SearchTarget {
    Index k = 1;
    bool best = false;
};

class SearchDriver {
public:
    SearchDriver(Criterion& J, StopHook stop, ProgressHook callback)
        : J_(J),
          n_(J.n_features()),
          in_(static_cast<std::size_t>(n_), 0),
          stop_(std::move(stop)),
          callback_(std::move(callback)) {
        best_scores_.assign(static_cast<std::size_t>(n_) + 1,
                            std::numeric_limits<double>::quiet_NaN());
        J_.set_stop(&stop_);  // polled inside a step's scoring too, not only between steps
    }
    ~SearchDriver() { J_.set_stop(nullptr); }
    SearchDriver(const SearchDriver&) = delete;
    SearchDriver& operator=(const SearchDriver&) = delete;

    Index n() const { return n_; }
    const Subset& S() const { return S_; }
    Index size() const { return static_cast<Index>(S_.size()); }
    bool contains(Index x) const { return in_[static_cast<std::size_t>(x)] != 0; }
    Criterion& criterion() { return J_; }

    // n_features_to_select = "auto" (stop when a round stalls) and tol (for "auto" and "best":
    // the result is the smallest recorded subset within |tol| of the best J recorded).
    // best: the result is the best record (n_features_to_select "auto" or "best"), so a step
    // where no candidate has a finite J (j2 or j3 past as many features as samples a class)
    // ends the run there instead of failing it, once some record is finite.
    void follow(bool auto_stop, double tol, bool best = false) {
        auto_stop_ = auto_stop;
        tol_ = tol;
        best_target_ = best;
    }
    // Whether a step without a finite candidate ends the run (see follow).
    bool ends_without_finite_move() const {
        if (!best_target_) return false;
        for (const auto& h : history_)
            if (h.score > -std::numeric_limits<double>::infinity()) return true;
        return false;
    }
    // A strategy calls begin_round() before each round (its main step and whatever follows
    // it) and stalled() after it: true, under "auto", when the round did not raise the best J
    // recorded before it by more than tol (tol = 0: by more than a tie). The first round
    // never stalls. The records of a round that stalled stay in the history but are not
    // chosen by finish_best (a backward search's stalled round is the smaller subset, which
    // the parsimony rule would otherwise prefer).
    void begin_round() {
        round_base_ = top_;
        round_top_ = -std::numeric_limits<double>::infinity();
        round_start_ = history_.size();
    }
    bool stalled() {
        if (!auto_stop_ || round_base_ == -std::numeric_limits<double>::infinity()) return false;
        const bool s = !gains(round_top_, round_base_);
        if (s) choosable_ = std::min(choosable_, round_start_);
        return s;
    }
    // Whether J raises base by more than tol ("auto"'s test; tol = 0: by more than a tie).
    bool gains(double J, double base) const {
        return tol_ == 0.0 ? beats(J, base) : J > base + tol_;
    }

    void reset(const Subset& S) {
        std::fill(in_.begin(), in_.end(), 0);
        for (Index x : S) in_[static_cast<std::size_t>(x)] = 1;
        S_ = S;
        J_.reset(S_);
    }
    void reset_full() {
        Subset all(static_cast<std::size_t>(n_));
        for (Index x = 0; x < n_; ++x) all[static_cast<std::size_t>(x)] = x;
        reset(all);
    }
    void add(Index x) {
        S_.push_back(x);
        in_[static_cast<std::size_t>(x)] = 1;
        J_.add(x);
    }
    void remove(Index x) {
        S_.erase(std::find(S_.begin(), S_.end(), x));
        in_[static_cast<std::size_t>(x)] = 0;
        J_.remove(x);
    }

    double current() {
        ++evaluations_;
        return clean(J_.current());
    }
    void count_evaluations(long long c) { evaluations_ += c; }
    // Keeps the range of the finite candidate scores (scores_tied); returns v. The driver's
    // own candidate scoring calls it; a strategy scoring subsets itself does too.
    double seen(double v) {
        if (std::isfinite(v)) {
            ++finite_seen_;
            low_ = std::min(low_, v);
            high_ = std::max(high_, v);
        }
        return v;
    }
    long long evaluations() const { return evaluations_; }

    Subset outside() const {
        Subset out;
        for (Index x = 0; x < n_; ++x)
            if (!contains(x)) out.push_back(x);
        return out;
    }
    Subset inside() const {
        Subset s = S_;
        std::sort(s.begin(), s.end());
        return s;
    }

    // Scores of every move, NaN turned into -inf so it is never preferred.
    std::vector<double> score_additions(const Subset& cands) {
        return score(cands, true);
    }
    std::vector<double> score_removals(const Subset& cands) {
        return score(cands, false);
    }

    // The best addition / removal among cands (ascending): (feature, J). The first candidate
    // that ties with the maximum wins, so ties go to the lower feature index.
    std::pair<Index, double> best_addition(const Subset& cands) {
        return pick(cands, score(cands, true), true);
    }
    std::pair<Index, double> best_removal(const Subset& cands) {
        return pick(cands, score(cands, false), false);
    }

    // Records (sorted T, J), calls the callback; a stop request ends the search here.
    void record(const Subset& T, double score) {
        SearchRecord r{T, score, T};
        std::sort(r.subset.begin(), r.subset.end());
        const std::size_t s = r.subset.size();
        if (std::isnan(best_scores_[s]) || score > best_scores_[s]) best_scores_[s] = score;
        top_ = std::max(top_, score);
        round_top_ = std::max(round_top_, score);
        history_.push_back(std::move(r));
        const Index step = static_cast<Index>(history_.size()) - 1;
        if (callback_ && callback_(Progress::selection(0, step, score, &history_.back().subset)))
            throw Stopped{};
        poll();
    }
    void record(double score) { record(S_, score); }

    void poll() {
        if (stop_ && stop_()) throw Interrupted();
    }

    // Result = the given subset.
    SearchOutcome finish(const Subset& selected, double score) {
        SearchOutcome out;
        out.selected = selected;
        out.score = score;
        return fill(std::move(out));
    }
    // Result = the recorded subset with the largest J; ties (and, with tol, every J within
    // |tol| of the largest): the smaller subset, then the earlier record.
    SearchOutcome finish_best(bool stopped_early = false) {
        require(!history_.empty(), "search: nothing was recorded");
        const std::size_t end = std::max<std::size_t>(1, std::min(choosable_, history_.size()));
        std::size_t top = 0;
        for (std::size_t i = 1; i < end; ++i)
            if (history_[i].score > history_[top].score) top = i;
        std::size_t best = top;
        for (std::size_t i = 0; i < end; ++i) {
            const auto& h = history_[i];
            if (beats(history_[top].score, h.score) &&
                !(h.score >= history_[top].score - std::abs(tol_)))
                continue;
            if (h.subset.size() < history_[best].subset.size() ||
                (h.subset.size() == history_[best].subset.size() && i < best))
                best = i;
        }
        SearchOutcome out;
        out.selected = history_[best].list;
        out.score = history_[best].score;
        out.stopped_early = stopped_early;
        return fill(std::move(out));
    }

    // Thrown by record() when the callback asks to stop.
    struct Stopped {};
    // Thrown by a step without a finite candidate when ends_without_finite_move().
    struct NoFiniteMove {};

private:
    static double clean(double v) {
        return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
    }


    std::vector<double> score(const Subset& cands, bool additions) {
        poll();
        std::vector<double> out(cands.size());
        if (cands.empty()) return out;
        if (additions) J_.score_additions(cands, out.data());
        else J_.score_removals(cands, out.data());
        for (double& v : out) v = seen(clean(v));
        evaluations_ += static_cast<long long>(cands.size());
        return out;
    }

    std::pair<Index, double> pick(const Subset& cands, const std::vector<double>& scores,
                                  bool additions) const {
        require(!cands.empty(), "search: no candidate move left");
        const std::size_t best = first_of_max(scores);
        if (!(scores[best] > -std::numeric_limits<double>::infinity()) &&
            ends_without_finite_move())
            throw NoFiniteMove{};
        if (!(scores[best] > -std::numeric_limits<double>::infinity()))
            throw std::invalid_argument(
                additions
                    ? "criterion: no candidate of this step has a finite value (for j2, j3, "
                      "divergence and bhattacharyya: the scatter matrices of every candidate "
                      "subset are singular, as past as many features as a class has samples "
                      "or with duplicate / constant features: pass ridge > 0, a smaller "
                      "n_features_to_select or 'best'; a callable criterion gave NaN or -inf "
                      "for every candidate: for a Wrapper, its cross-validated score was NaN, "
                      "as a scoring gives on a test fold with one class: check cv and "
                      "scoring)"
                    : "criterion: no removal of this step leaves a subset with a finite value "
                      "(for j2, j3, divergence and bhattacharyya: the scatter matrices of the "
                      "subset and of every subset one feature smaller are singular, as with "
                      "more features than a class has samples or with duplicate / constant "
                      "features; a backward step cannot pass them whatever "
                      "n_features_to_select is: pass ridge > 0, or search forward (sfs, "
                      "sffs); a callable criterion gave NaN or -inf for every candidate)");
        return {cands[best], scores[best]};
    }

    SearchOutcome fill(SearchOutcome out) {
        out.history = std::move(history_);
        out.best_scores = best_scores_;
        out.n_evaluations = evaluations_;
        out.scores_tied = finite_seen_ >= 2 && !beats(high_, low_);
        return out;
    }

    Criterion& J_;
    Index n_;
    Subset S_;
    std::vector<char> in_;
    StopHook stop_;
    ProgressHook callback_;
    std::vector<SearchRecord> history_;
    std::vector<double> best_scores_;
    long long evaluations_ = 0;
    long long finite_seen_ = 0;
    double low_ = std::numeric_limits<double>::infinity();
    double high_ = -std::numeric_limits<double>::infinity();
    bool auto_stop_ = false;
    bool best_target_ = false;
    double tol_ = 0.0;
    double top_ = -std::numeric_limits<double>::infinity();
    double round_base_ = -std::numeric_limits<double>::infinity();
    double round_top_ = -std::numeric_limits<double>::infinity();
    std::size_t round_start_ = 0;
    // records from this index on belong to a round that stalled: never the result
    std::size_t choosable_ = std::numeric_limits<std::size_t>::max();
};

// Runs a strategy body; a callback's stop request returns the best record so far, and so
// does a step without a finite candidate under n_features_to_select "auto" or "best".
template <class Body>
SearchOutcome run_search(SearchDriver& d, Body&& body) {
    try {
        return body(d);
    } catch (const SearchDriver::Stopped&) {
        return d.finish_best(true);
    } catch (const SearchDriver::NoFiniteMove&) {
        return d.finish_best();
    }
}

}  // namespace fastfs
