// The private compiled module fastfs._core: one register_<area>() per area of the library.
#include "common.hpp"

#ifndef FASTFS_VERSION
#define FASTFS_VERSION "unknown"
#endif

namespace fastfs::bindings {
void register_margin(py::module_& m);
void register_relief(py::module_& m);
void register_filters(py::module_& m);
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
    m.attr("build_info") = build;
    fastfs::bindings::register_margin(m);
    fastfs::bindings::register_relief(m);
    fastfs::bindings::register_filters(m);
}
