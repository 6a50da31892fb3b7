// Binding helpers shared by every register_<area>.cpp: the Ctrl-C stop hook, the Python
// callback bridge and the array types that cross the boundary without copies.
#pragma once
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "fastfs/core/errors.hpp"
#include "fastfs/core/parallel.hpp"
#include "fastfs/core/types.hpp"

namespace fastfs::bindings {
namespace py = pybind11;

template <class T>
using InMatrix = Eigen::Ref<const RowMatrix<T>>;
using InCodes = Eigen::Ref<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>;

// Polls Python's signal handlers at most every 50 ms from the loop's thread. Called with the
// GIL released; takes it only for the check. When a handler raised (Ctrl-C), the Python error
// stays set and the core unwinds with fastfs::Interrupted, which run_released() turns back
// into that Python exception.
class SignalPoll {
public:
    bool operator()() {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(50)) return false;
        last_ = now;
        py::gil_scoped_acquire gil;
        return PyErr_CheckSignals() != 0;
    }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs f() without the GIL (every py:: cast is done before), mapping an interruption back to
// the pending Python exception once the GIL is held again.
template <class F>
auto run_released(F&& f) -> decltype(f()) {
    bool interrupted = false;
    decltype(f()) out{};
    {
        py::gil_scoped_release release;
        try {
            out = f();
        } catch (const Interrupted&) {
            interrupted = true;
        }
    }
    if (interrupted) {
        if (PyErr_Occurred()) throw py::error_already_set();
        throw py::value_error("fastfs: computation interrupted");
    }
    return out;
}

template <class V>
py::array_t<typename V::value_type> to_numpy(const V& v) {
    py::array_t<typename V::value_type> a(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

// The one bridge from the core's progress hook to Python: callback(restart, step, score,
// selection) -> bool, where selection is the running values, the subset (int64 indices) or
// the support (a bool mask), whichever the algorithm reports. Empty when `callback` is None.
// The core calls it from the calling thread, between steps.
inline ProgressHook progress_hook(const py::object& callback) {
    if (callback.is_none()) return {};
    return [&callback](const Progress& p) {
        py::gil_scoped_acquire gil;
        py::object selection = py::none();
        if (p.values) {
            selection = to_numpy(*p.values);
        } else if (p.subset) {
            selection = to_numpy(*p.subset);
        } else if (p.support) {
            py::array_t<bool> mask(static_cast<py::ssize_t>(p.support->size()));
            std::copy(p.support->begin(), p.support->end(), mask.mutable_data());
            selection = mask;
        }
        return callback(p.restart, p.step, p.score, selection).template cast<bool>();
    };
}

// (values, stopped_early) of a one-pass computation.
inline py::tuple pass_result(const std::vector<double>& values, const PassStatus& status) {
    return py::make_tuple(to_numpy(values), status.stopped_early);
}

// The submodule _core._testing (created first in module.cpp): test hooks go there.
inline py::module_ testing_module(py::module_& m) { return m.attr("_testing").cast<py::module_>(); }

}  // namespace fastfs::bindings
