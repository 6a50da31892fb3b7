// OpenMP plumbing shared by every kernel: thread counts, exception capture across parallel
// regions (no exception may leave one), and the hooks a long loop polls between chunks.
#pragma once
#include <exception>
#include <functional>
#include <mutex>

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

// Keeps the first exception thrown inside a parallel region so it can be rethrown outside.
class ExceptionSlot {
public:
    template <class F>
    void run(F&& f) noexcept {
        try {
            f();
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_) error_ = std::current_exception();
        }
    }
    void rethrow() {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::exception_ptr error_;
    std::mutex mutex_;
};

// Polled by long loops from the calling thread between units of work; returning true stops the
// loop with fastfs::Interrupted. Empty = never stop.
using StopHook = std::function<bool()>;

}  // namespace fastfs
