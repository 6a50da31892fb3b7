// Batched sparse coding by OMP on the Gram matrix (fastfs.dictionary).
#include "common.hpp"
#include "fastfs/linear/batch_omp.hpp"

namespace fastfs::bindings {

void register_dictionary(py::module_& m) {
    m.def(
        "batch_omp_gram",
        [](const py::array_t<double, py::array::c_style>& G,
           const py::array_t<double, py::array::c_style>& XY, int n_nonzero, int n_threads) {
            require(G.ndim() == 2 && G.shape(0) == G.shape(1), "G: expected a square matrix");
            const Index k = G.shape(0);
            require(XY.ndim() == 2 && XY.shape(1) == k, "XY: expected shape (n_samples, k)");
            const Index n = XY.shape(0);
            py::array_t<double> codes({n, k});
            const double* g = G.data();
            const double* xy = XY.data();
            double* c = codes.mutable_data();
            run_released([&] {
                SignalPoll poll;
                batch_omp_gram(g, k, xy, n, n_nonzero, c, n_threads, std::ref(poll));
                return 0;
            });
            return codes;
        },
        py::arg("G"), py::arg("XY"), py::arg("n_nonzero"), py::arg("n_threads"));
}

}  // namespace fastfs::bindings
