// OpenMP plumbing shared by every kernel: thread counts, the hook a long loop polls between
// chunks, and RegionErrors. No exception may leave a parallel region (the runtime would call
// std::terminate): a region either allocates and validates before it starts, so that nothing
// inside it throws, or runs its work through RegionErrors, which rethrows after the region
// (std::bad_alloc then reaches Python as MemoryError).
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "progress.hpp"
#include "types.hpp"

#ifdef FASTFS_HAVE_OPENMP
#include <omp.h>
#endif

namespace fastfs {

inline bool has_openmp() {
#ifdef FASTFS_HAVE_OPENMP
    return true;
#else
    return false;
#endif
}

// Threads the runtime would use by default (honours OMP_NUM_THREADS and threadpoolctl limits).
inline int default_threads() {
#ifdef FASTFS_HAVE_OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

inline int available_cores() {
#ifdef FASTFS_HAVE_OPENMP
    return omp_get_num_procs();
#else
    return 1;
#endif
}

// n <= 0 means "the runtime's default".
inline int resolve_threads(int n) { return n > 0 ? n : default_threads(); }

// This thread's number in the innermost parallel region (0 outside one), and the region's
// number of threads (1 outside one): per-thread scratch is indexed by the first.
inline int thread_index() {
#ifdef FASTFS_HAVE_OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}
inline int team_size() {
#ifdef FASTFS_HAVE_OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

// Polled by long loops from the calling thread between units of work; returning true stops the
// loop with fastfs::Interrupted. Empty = never stop.
using StopHook = std::function<bool()>;

// The stop hook inside a parallel loop: only the thread that created the StopPoll (the caller,
// which handles signals) calls the hook; once it asks to stop, every thread skips the rest of
// its iterations (`if (poll.stopped()) continue;`) and check(), called after the region,
// throws fastfs::Interrupted. Nothing leaves the region. Works the same outside a region.
class StopPoll {
public:
    explicit StopPoll(const StopHook* hook)
        : hook_(hook && *hook ? hook : nullptr), owner_(std::this_thread::get_id()) {}
    explicit StopPoll(const StopHook& hook) : StopPoll(&hook) {}

    bool stopped() {
        if (halt_.load(std::memory_order_relaxed)) return true;
        if (!hook_ || std::this_thread::get_id() != owner_) return false;
        bool stop = true;
        try {
            stop = (*hook_)();
        } catch (...) {  // a failing hook stops the loop rather than escape the region
        }
        if (stop) halt_.store(true);
        return stop;
    }
    void check() const {
        if (halt_.load()) throw Interrupted();
    }

private:
    const StopHook* hook_;
    std::thread::id owner_;
    std::atomic<bool> halt_{false};
};

// How a one-pass computation ended: `done` samples (features) processed, and whether the
// callback stopped it early.
struct PassStatus {
    Index done = 0;
    bool stopped_early = false;
};

// Query samples per step when a callback wants progress: about 1/64 of the pass, at least 64,
// a multiple of 4 (the neighbour queries go four samples at a time). Without a callback the
// pass runs as a single step (and polls its stop hook inside).
inline Index pass_step(Index count, bool reporting) {
    if (!reporting) return std::max<Index>(count, 1);
    const Index s = std::max<Index>(64, (count + 63) / 64);
    return (s + 3) / 4 * 4;
}

// The first exception thrown by work run() inside a parallel region, rethrown by rethrow()
// after the region. Once one has been caught, run() skips all further work of every thread, so
// the region ends soon; every thread still reaches each worksharing construct and barrier.
class RegionErrors {
public:
    template <class Work>
    void run(Work&& work) noexcept {
        if (failed()) return;
        try {
            work();
        } catch (...) {
#pragma omp critical(fastfs_region_error)
            if (!error_) error_ = std::current_exception();
            failed_.store(true, std::memory_order_relaxed);
        }
    }
    bool failed() const { return failed_.load(std::memory_order_relaxed); }
    // Call after the region, on the calling thread.
    void rethrow() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
};

// Independent restarts of a weight search (Simba, RGS) side by side, one per thread: no
// synchronisation inside a restart, so a busy core delays only its own restarts.
// run(r, keep_going, w) performs restart r into w and returns its score; it calls keep_going()
// between steps and abandons the restart when that returns false (another restart failed).
// Only the calling thread (OpenMP thread 0) polls the stop hook, because Python handles
// signals there and the hook is not thread-safe. The first exception is rethrown after the
// region; none leaves it.
struct SideBySide {
    std::vector<double> scores;
    std::vector<std::vector<double>> finals;
};

template <class Run>
SideBySide restarts_side_by_side(int restarts, int threads, const StopHook& stop, Run&& run) {
    SideBySide out{std::vector<double>(static_cast<std::size_t>(restarts)),
                   std::vector<std::vector<double>>(static_cast<std::size_t>(restarts))};
    RegionErrors errors;
    auto keep_going = [&]() -> bool {
        if (errors.failed()) return false;
        if (thread_index() != 0) return true;
        if (stop && stop()) throw Interrupted();
        return true;
    };
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::min(threads, restarts))
    for (int r = 0; r < restarts; ++r) {
        errors.run([&] {
            std::vector<double> w;
            const double score = run(r, keep_going, w);
            if (!errors.failed()) {
                out.scores[static_cast<std::size_t>(r)] = score;
                out.finals[static_cast<std::size_t>(r)] = std::move(w);
            }
        });
    }
    errors.rethrow();
    return out;
}

}  // namespace fastfs
