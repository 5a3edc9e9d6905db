//===- Run/Kernels/Padding.cpp - reflection and replication padding -------===//
//
// padding lists the last dim first: (left, right, top, bottom, front, back).
// Each output coordinate maps to an input coordinate: reflection mirrors
// around the edge element, replication clamps to it.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

template <bool Reflect> void pad(std::span<Value *> args, int64_t spatial) {
  const Tensor &self = tensorArg(args, 0);
  std::vector<int64_t> padding = intListArg(args, 1);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  if (int64_t(padding.size()) != 2 * spatial) fail("padding must have " + std::to_string(2 * spatial) + " elements");
  if (self.dim() != spatial + 1 && self.dim() != spatial + 2)
    fail("expected a " + std::to_string(spatial + 1) + "-d or " + std::to_string(spatial + 2) + "-d input, got " + sizesText(self.sizes));
  std::vector<int64_t> sizes = self.sizes, before(self.dim(), 0);
  for (int64_t k = 0; k < spatial; ++k) {
    int64_t d = self.dim() - 1 - k, lo = padding[2 * k], hi = padding[2 * k + 1];
    if (Reflect && (lo >= self.sizes[d] || hi >= self.sizes[d]))
      fail("padding size should be less than the corresponding input dimension");
    if (!Reflect && self.sizes[d] == 0) fail("cannot replicate an empty dimension");
    sizes[d] = self.sizes[d] + lo + hi;
    before[d] = lo;
    if (sizes[d] <= 0) fail("the padded output would be empty");
  }
  out.resize(sizes);
  checkSameDimOrder({&self, &out});
  View src = View::of(self), dst = View::of(out);
  size_t esize = elementSize(self.dtype);
  forEachIndex(sizes, [&](const std::vector<int64_t> &idx) {
    const uint8_t *from = src.data;
    uint8_t *to = dst.data;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d] - before[d], n = self.sizes[d];
      if (Reflect) i = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
      else i = std::min(std::max<int64_t>(i, 0), n - 1);
      from += i * src.byteStrides[d];
      to += idx[d] * dst.byteStrides[d];
    }
    std::memcpy(to, from, esize);
  });
}

KernelRegistration registration({
    {"aten::reflection_pad1d.out", [](auto args) { pad<true>(args, 1); }},
    {"aten::reflection_pad2d.out", [](auto args) { pad<true>(args, 2); }},
    {"aten::reflection_pad3d.out", [](auto args) { pad<true>(args, 3); }},
    {"aten::replication_pad2d.out", [](auto args) { pad<false>(args, 2); }},
    {"aten::replication_pad3d.out", [](auto args) { pad<false>(args, 3); }},
});

} // namespace
} // namespace exir::run::kern
