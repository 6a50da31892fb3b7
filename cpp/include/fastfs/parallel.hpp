// OpenMP plumbing shared by every kernel: thread counts and the hook a long loop polls between
// chunks. No exception may leave a parallel region: the regions of the core allocate and
// validate before they start, so nothing inside them throws.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <vector>

#include "errors.hpp"

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

// Polled by long loops from the calling thread between units of work; returning true stops the
// loop with fastfs::Interrupted. Empty = never stop.
using StopHook = std::function<bool()>;

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
    std::atomic<bool> halt{false};
    std::exception_ptr error;
    auto keep_going = [&]() -> bool {
        if (halt.load()) return false;
#ifdef FASTFS_HAVE_OPENMP
        if (omp_get_thread_num() != 0) return true;
#endif
        if (stop && stop()) throw Interrupted();
        return true;
    };
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::min(threads, restarts))
    for (int r = 0; r < restarts; ++r) {
        if (halt.load()) continue;
        try {
            std::vector<double> w;
            const double score = run(r, keep_going, w);
            if (!halt.load()) {
                out.scores[static_cast<std::size_t>(r)] = score;
                out.finals[static_cast<std::size_t>(r)] = std::move(w);
            }
        } catch (...) {
#pragma omp critical(fastfs_restart_error)
            if (!error) error = std::current_exception();
            halt.store(true);
        }
    }
    if (error) std::rethrow_exception(error);
    return out;
}

}  // namespace fastfs
