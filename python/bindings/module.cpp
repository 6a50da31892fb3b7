// The private compiled module fastfs._core: one register_<area>() per area of the library.
#include "common.hpp"
#include "fastfs/core/memory.hpp"
#include "fastfs/simd/pair_kernels.hpp"  // FASTFS_HAVE_CLONES, FASTFS_HAVE_AVX2_FMA

#ifndef FASTFS_VERSION
#define FASTFS_VERSION "unknown"
#endif

namespace {
// The pair kernels are compiled twice on x86-64 by GCC (target_clones("avx2", "default")) and
// the loader picks one per process; this reports which one it picks on this CPU.
bool cpu_supports_avx2() {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return false;
#endif
}

const char* simd_dispatch() {
#if defined(FASTFS_HAVE_CLONES)
    return cpu_supports_avx2() ? "avx2 (target_clones avx2/default)"
                               : "default (target_clones avx2/default)";
#elif defined(FASTFS_HAVE_AVX2_FMA)
    // Clang: no clones of the templates; the kernels with their own AVX2 version still choose
    return cpu_supports_avx2() ? "avx2 kernels only (no target_clones under Clang)"
                               : "default (no target_clones under Clang)";
#else
    return "none (single build)";
#endif
}
}  // namespace

namespace fastfs::bindings {
void register_margin(py::module_& m);
void register_relief(py::module_& m);
void register_filters(py::module_& m);
void register_search(py::module_& m);
void register_regression(py::module_& m);
void register_linear(py::module_& m);
void register_arrays(py::module_& m);
void register_generated(py::module_& m);
void register_dictionary(py::module_& m);
void register_learners(py::module_& m);
void register_distributed(py::module_& m);
}

PYBIND11_MODULE(_core, m) {
    namespace py = pybind11;
    m.doc() = "fastfs compiled core (private; use the fastfs package)";
    m.attr("__version__") = FASTFS_VERSION;
    m.def("has_openmp", &fastfs::has_openmp);
    m.def("default_threads", &fastfs::default_threads);
    m.def("available_cores", &fastfs::available_cores);
    py::dict build;
#if defined(__clang__)
    build["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    build["compiler"] = std::string("gcc ") + __VERSION__;
#else
    build["compiler"] = "unknown";
#endif
    build["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." +
                     std::to_string(EIGEN_MAJOR_VERSION) + "." +
                     std::to_string(EIGEN_MINOR_VERSION);
    build["simd"] = Eigen::SimdInstructionSetsInUse();
#if defined(__x86_64__) || defined(_M_X64)
    build["arch"] = "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
    build["arch"] = "aarch64";
#else
    build["arch"] = "other";
#endif
    m.def("cpu_supports_avx2", &cpu_supports_avx2,
          "True when this CPU runs the AVX2 clones of the pair kernels (x86 only).");
    m.def("simd_dispatch", &simd_dispatch,
          "Which clone of the pair kernels the loader chose on this CPU.");
    m.attr("build_info") = build;
    m.def(
        "set_kept_memory",
        [](std::size_t bytes) { fastfs::RecycleBin::instance().set_capacity(bytes); },
        "Bytes of finished calls' work buffers kept for later calls (fastfs.config.kept_memory).");
    m.attr("kept_memory_default") = fastfs::RecycleBin::kDefaultBytes;
    m.def(
        "set_pair_cache_limit",
        [](double bytes) { fastfs::PairCacheLimit::bytes().store(bytes, std::memory_order_relaxed); },
        "Bytes up to which the Relief family keeps its m x m pair distances (fastfs.config).");
    m.attr("pair_cache_default") = fastfs::PairCacheLimit::kDefaultBytes;
    // Hooks that expose internal states to the tests, kept out of the module's own namespace.
    auto testing =
        m.def_submodule("_testing", "Test hooks of fastfs's C++ states (not part of any API).");
    testing.def("kept_bytes", [] { return fastfs::RecycleBin::instance().bytes(); },
                "Bytes the bin of work buffers keeps now.");
    fastfs::bindings::register_margin(m);
    fastfs::bindings::register_relief(m);
    fastfs::bindings::register_filters(m);
    fastfs::bindings::register_search(m);
    fastfs::bindings::register_regression(m);
    fastfs::bindings::register_linear(m);
    fastfs::bindings::register_arrays(m);
    fastfs::bindings::register_generated(m);
    fastfs::bindings::register_dictionary(m);
    fastfs::bindings::register_learners(m);
    fastfs::bindings::register_distributed(m);
}
