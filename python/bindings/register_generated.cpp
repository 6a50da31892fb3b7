// Generated features of binarised images (fastfs.generated): packing, drawing by meta-feature
// value and evaluation over every image in one pass.
#include "common.hpp"
#include "fastfs/data/generated.hpp"

namespace fastfs::bindings {

namespace {
using U8Matrix = py::array_t<std::uint8_t, py::array::c_style>;
using I32Array = py::array_t<std::int32_t, py::array::c_style>;

generated::FeatureSet feature_set(const I32Array& inputs, const U8Matrix& negated,
                                  const I32Array& n_inputs, const I32Array& shift) {
    const Index n = n_inputs.ndim() == 1 ? n_inputs.shape(0) : -1;
    require(n >= 0, "n_inputs: expected a 1-D array");
    require(inputs.ndim() == 2 && inputs.shape(0) == n &&
                inputs.shape(1) == generated::kMaxInputs,
            "inputs: expected shape (n_features, 8)");
    require(negated.ndim() == 2 && negated.shape(0) == n &&
                negated.shape(1) == generated::kMaxInputs,
            "negated: expected shape (n_features, 8)");
    require(shift.ndim() == 1 && shift.shape(0) == n, "shift: expected shape (n_features,)");
    return {inputs.data(), negated.data(), n_inputs.data(), shift.data(), n};
}
}  // namespace

void register_generated(py::module_& m) {
    m.def(
        "generated_pack",
        [](const U8Matrix& images, int n_threads) {
            require(images.ndim() == 2, "images: expected (n_images, n_pixels)");
            const Index n = images.shape(0), p = images.shape(1);
            py::array_t<std::uint64_t> out({p, generated::words_for(n)});
            const std::uint8_t* src = images.data();
            std::uint64_t* dst = out.mutable_data();
            {
                py::gil_scoped_release release;
                generated::pack_images(src, n, p, dst, n_threads);
            }
            return out;
        },
        py::arg("images"), py::arg("n_threads"));

    m.def(
        "generated_evaluate",
        [](const py::array_t<std::uint64_t, py::array::c_style>& bits, Index n_images,
           Index height, Index width, const I32Array& inputs, const U8Matrix& negated,
           const I32Array& n_inputs, const I32Array& shift, bool packed, int n_threads) {
            require(height >= 1 && width >= 1, "image_shape: sizes must be >= 1");
            require(n_images >= 1, "images: need at least one image");
            require(bits.ndim() == 2 && bits.shape(0) == height * width &&
                        bits.shape(1) == generated::words_for(n_images),
                    "bits: packed images of the wrong shape");
            const auto fs = feature_set(inputs, negated, n_inputs, shift);
            const Index nw = generated::words_for(n_images);
            py::array_t<std::uint64_t> words({fs.n_features, nw});
            const std::uint64_t* src = bits.data();
            std::uint64_t* dst = words.mutable_data();
            run_released([&] {
                SignalPoll poll;
                generated::evaluate_packed(src, n_images, height, width, fs, dst, n_threads,
                                           std::ref(poll));
                return 0;
            });
            if (packed) return py::object(words);
            py::array_t<std::uint8_t> out({fs.n_features, n_images});
            std::uint8_t* o = out.mutable_data();
            {
                py::gil_scoped_release release;
                generated::unpack(dst, fs.n_features, n_images, o, n_threads);
            }
            return py::object(out);
        },
        py::arg("bits"), py::arg("n_images"), py::arg("height"), py::arg("width"),
        py::arg("inputs"), py::arg("negated"), py::arg("n_inputs"), py::arg("shift"),
        py::arg("packed"), py::arg("n_threads"));

    m.def(
        "generated_draw",
        [](const py::array_t<double, py::array::c_style>& u, Index height, Index width,
           std::uint64_t seed, int n_threads) {
            require(u.ndim() == 2 && u.shape(1) == 4,
                    "u: expected shape (n_features, 4): numInputs, percentPos, shiftInvLen, "
                    "scatter");
            require(height >= 1 && width >= 1, "image_shape: sizes must be >= 1");
            const Index n = u.shape(0);
            I32Array inputs({n, Index{generated::kMaxInputs}});
            U8Matrix negated({n, Index{generated::kMaxInputs}});
            I32Array n_inputs(n), shift(n);
            const double* up = u.data();
            auto* ip = inputs.mutable_data();
            auto* np_ = negated.mutable_data();
            auto* nn = n_inputs.mutable_data();
            auto* sp = shift.mutable_data();
            {
                py::gil_scoped_release release;
                generated::draw(up, n, height, width, seed, ip, np_, nn, sp, n_threads);
            }
            return py::make_tuple(inputs, negated, n_inputs, shift);
        },
        py::arg("u"), py::arg("height"), py::arg("width"), py::arg("seed"),
        py::arg("n_threads"));
}

}  // namespace fastfs::bindings
