// Binding helpers shared by every register_<area>.cpp: the Ctrl-C stop hook, the Python
// callback bridge and the array types that cross the boundary without copies.
#pragma once
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
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

// ---- Typed results -------------------------------------------------------------------------
// Every result struct crosses the boundary as one bound class, declared once with
// bind_result<S>(module, "Name", doc, {field("a", &S::a), ...}): read-only properties (arrays
// are NumPy views of the struct's own memory, no copy, kept alive by the result object; they
// stay writable, as the arrays of the public results built from them always were), a
// _fields tuple, __repr__, __eq__ (NaN equal to NaN) and pickling (fastfs.dask ships results
// between processes). A function then returns S itself; pybind11 moves it into the object.

template <class S>
struct ResultField {
    const char* name;
    std::function<py::object(const S&, py::handle)> get;  // (result, its Python object)
    std::function<void(S&, py::handle)> set;                // from the pickled value
    std::function<bool(const S&, const S&)> same;
};

namespace result_detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
// A vector of numbers (not std::vector<bool>, which holds no array).
template <class T>
struct is_number_vector : std::false_type {};
template <class T, class A>
struct is_number_vector<std::vector<T, A>>
    : std::bool_constant<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>> {};

// A NumPy array over p (shape, strides in bytes) whose memory `base` owns: no copy.
template <class T>
py::array_t<T> view(std::vector<py::ssize_t> shape, std::vector<py::ssize_t> strides,
                    const T* p, py::handle base) {
    return py::array_t<T>(std::move(shape), std::move(strides), p, base);
}

// Lists of indices (the subsets a search records: about n^2 / 2 indices for a backward search
// over n features) as tuples of tuples whose entries share one Python int per value: 8 bytes
// an entry instead of 36 (a separate int object beyond 256 takes 28 bytes).
template <class V>
py::tuple index_tuples(const V& v) {
    using T = typename V::value_type::value_type;
    T top = 0;
    bool small = true;
    std::size_t total = 0;
    for (const auto& e : v)
        for (const T x : e) {
            if constexpr (std::is_signed_v<T>)
                if (x < 0) small = false;
            top = std::max(top, x);
            ++total;
        }
    std::vector<py::object> ints;
    if (small && static_cast<std::size_t>(top) <= total)
        for (T x = 0; x <= top; ++x) ints.push_back(py::int_(x));
    py::tuple out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        py::tuple t(v[i].size());
        for (std::size_t j = 0; j < v[i].size(); ++j) {
            const T x = v[i][j];
            t[j] = ints.empty() ? py::object(py::int_(x)) : ints[static_cast<std::size_t>(x)];
        }
        out[i] = std::move(t);
    }
    return out;
}

template <class M>
py::object to_python(const M& v, py::handle base) {
    if constexpr (is_number_vector<M>::value) {
        using T = typename M::value_type;
        return view<T>({static_cast<py::ssize_t>(v.size())},
                                {static_cast<py::ssize_t>(sizeof(T))}, v.data(), base);
    } else if constexpr (std::is_base_of_v<Eigen::EigenBase<M>, M>) {
        static_assert(!M::IsRowMajor, "Eigen results are column-major");
        using T = typename M::Scalar;
        const auto s = static_cast<py::ssize_t>(sizeof(T));
        if constexpr (M::ColsAtCompileTime == 1)
            return view<T>({v.rows()}, {s}, v.data(), base);
        else
            return view<T>({v.rows(), v.cols()}, {s, s * v.rows()}, v.data(), base);
    } else if constexpr (is_vector<M>::value) {  // nested vectors: tuples of tuples
        using E = typename M::value_type;
        if constexpr (is_number_vector<E>::value &&
                      std::is_integral_v<typename E::value_type>) {
            return index_tuples(v);
        } else {
            py::list out;
            for (const auto& e : v) out.append(py::tuple(py::cast(e)));
            return py::tuple(out);
        }
    } else {
        return py::cast(v);
    }
}

template <class M>
void from_python(M& v, py::handle h) {
    if constexpr (is_number_vector<M>::value) {
        using T = typename M::value_type;
        const auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(h);
        if (!a) throw py::error_already_set();
        v.assign(a.data(), a.data() + a.size());
    } else {
        v = h.cast<M>();
    }
}

inline bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
inline bool same_value(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

template <class M>
bool same_value(const M& a, const M& b) {
    if constexpr (is_vector<M>::value) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same_value(a[i], b[i])) return false;
        return true;
    } else if constexpr (std::is_base_of_v<Eigen::EigenBase<M>, M>) {
        if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
        for (Eigen::Index i = 0; i < a.size(); ++i)
            if (!same_value(a.data()[i], b.data()[i])) return false;
        return true;
    } else {
        return a == b;
    }
}

// The fields of S, filled once by bind_result<S>.
template <class S>
std::vector<ResultField<S>>& fields_of() {
    static std::vector<ResultField<S>> fields;
    return fields;
}

}  // namespace result_detail

// A member as it is: arrays of numbers as 1-D (Eigen matrices 2-D) views, numbers as numbers.
template <class S, class M>
ResultField<S> field(const char* name, M S::*p) {
    return {name,
            [p](const S& s, py::handle base) { return result_detail::to_python(s.*p, base); },
            [p](S& s, py::handle h) { result_detail::from_python(s.*p, h); },
            [p](const S& a, const S& b) { return result_detail::same_value(a.*p, b.*p); }};
}

// A member inherited from a base of S (field<S>("a", &S::a) when a is declared in the base).
template <class S, class B, class M,
          std::enable_if_t<std::is_base_of_v<B, S> && !std::is_same_v<B, S>, int> = 0>
ResultField<S> field(const char* name, M B::*p) {
    return field<S, M>(name, static_cast<M S::*>(p));
}

// A flat row-major vector seen as a matrix with one row per element of `rows_of` (e.g. one row
// per class count).
template <class S, class T, class R>
ResultField<S> matrix_field(const char* name, std::vector<T> S::*p, R S::*rows_of) {
    return {name,
            [p, rows_of](const S& s, py::handle base) -> py::object {
                const auto rows = static_cast<py::ssize_t>((s.*rows_of).size());
                const py::ssize_t cols =
                    rows ? static_cast<py::ssize_t>((s.*p).size()) / rows : 0;
                const auto e = static_cast<py::ssize_t>(sizeof(T));
                return result_detail::view<T>({rows, cols}, {e * cols, e}, (s.*p).data(), base);
            },
            [p](S& s, py::handle h) { result_detail::from_python(s.*p, h); },
            [p](const S& a, const S& b) { return result_detail::same_value(a.*p, b.*p); }};
}

// A vector of 0/1 bytes (uint8_t, char) seen as a NumPy bool array.
template <class S, class C>
ResultField<S> bool_field(const char* name, std::vector<C> S::*p) {
    static_assert(sizeof(C) == sizeof(bool), "bool_field takes a vector of bytes");
    return {name,
            [p](const S& s, py::handle base) -> py::object {
                const auto& v = s.*p;
                return result_detail::view<bool>(
                    {static_cast<py::ssize_t>(v.size())}, {1},
                    reinterpret_cast<const bool*>(v.data()), base);
            },
            [p](S& s, py::handle h) {
                const auto a =
                    py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(h);
                if (!a) throw py::error_already_set();
                (s.*p).assign(a.size(), C{0});
                for (py::ssize_t i = 0; i < a.size(); ++i)
                    (s.*p)[static_cast<std::size_t>(i)] = a.data()[i] ? C{1} : C{0};
            },
            [p](const S& a, const S& b) { return a.*p == b.*p; }};
}

// Binds S as module.<name> with the given fields (see above). Call once per S.
template <class S>
py::class_<S> bind_result(py::module_& m, const char* name, const char* doc,
                          std::vector<ResultField<S>> fields) {
    using result_detail::fields_of;
    fields_of<S>() = std::move(fields);
    py::class_<S> c(m, name, doc);
    py::tuple names(fields_of<S>().size());
    for (std::size_t i = 0; i < fields_of<S>().size(); ++i) {
        names[i] = fields_of<S>()[i].name;
        c.def_property_readonly(fields_of<S>()[i].name, [i](py::object self) {
            return fields_of<S>()[i].get(self.cast<const S&>(), self);
        });
    }
    c.attr("_fields") = names;
    c.def("__eq__", [](const py::object& self, const py::object& other) -> py::object {
        if (!py::isinstance<S>(other))
            return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        const S& a = self.cast<const S&>();
        const S& b = other.cast<const S&>();
        for (const auto& f : fields_of<S>())
            if (!f.same(a, b)) return py::bool_(false);
        return py::bool_(true);
    });
    c.attr("__hash__") = py::none();
    c.def("__repr__", [](const py::object& self) {
        std::string out = py::str(py::type::handle_of(self).attr("__name__")).cast<std::string>() + "(";
        const S& s = self.cast<const S&>();
        for (std::size_t i = 0; i < fields_of<S>().size(); ++i) {
            const auto& f = fields_of<S>()[i];
            if (i) out += ", ";
            out += std::string(f.name) + "=" + std::string(py::repr(f.get(s, self)));
        }
        return out + ")";
    });
    c.def(py::pickle(
        [](const py::object& self) {
            const S& s = self.cast<const S&>();
            py::tuple state(fields_of<S>().size());
            for (std::size_t i = 0; i < fields_of<S>().size(); ++i)
                state[i] = fields_of<S>()[i].get(s, self);
            return state;
        },
        [](const py::tuple& state) {
            require(state.size() == fields_of<S>().size(), "pickled result: wrong field count");
            S s{};
            for (std::size_t i = 0; i < fields_of<S>().size(); ++i)
                fields_of<S>()[i].set(s, state[i]);
            return s;
        }));
    return c;
}

// The submodule _core._testing (created first in module.cpp): test hooks go there.
inline py::module_ testing_module(py::module_& m) { return m.attr("_testing").cast<py::module_>(); }

}  // namespace fastfs::bindings
