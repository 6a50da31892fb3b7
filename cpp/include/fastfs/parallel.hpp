// OpenMP plumbing shared by every kernel: thread counts and the hook a long loop polls between
// chunks. No exception may leave a parallel region: the regions of the core allocate and
// validate before they start, so nothing inside them throws.
#pragma once
#include <functional>

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

}  // namespace fastfs
