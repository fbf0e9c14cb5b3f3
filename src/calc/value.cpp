// calc/value.cpp -- printing and size limits of calculator values.
#include "calc/value.hpp"

namespace tessel::calc {

namespace {
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;
}  // namespace

std::string to_string(Value const& v) {
  return std::visit(overloaded{[](IntTuple const& x) { return to_string(x); },
                               [](Layout const& x) { return to_string(x); },
                               [](Tiler const& x) { return to_string(x); },
                               [](Swizzle const& x) { return to_string(x); },
                               [](ComposedLayout const& x) { return to_string(x); },
                               [](Major m) { return std::string(m == Major::left ? "GenColMajor" : "GenRowMajor"); }},
                    v);
}

std::string describe(Value const& v) {
  return std::visit(overloaded{[](IntTuple const& x) {
                                 if (x.is_leaf()) return "the integer " + to_string(x);
                                 if (x.is_underscore()) return std::string("`_`");
                                 return "the tuple " + to_string(x);
                               },
                               [](Layout const& x) { return "the layout " + to_string(x); },
                               [](Tiler const& x) { return "the tiler " + to_string(x); },
                               [](Swizzle const& x) { return "the swizzle " + to_string(x); },
                               [](ComposedLayout const& x) { return "the swizzled layout " + to_string(x); },
                               [](Major m) { return std::string(m == Major::left ? "GenColMajor" : "GenRowMajor"); }},
                    v);
}

void require_within_limits(Value const& v, std::string const& op) {
  std::size_t leaves_n = 0;
  int depth_n = 0;
  if (auto const* t = std::get_if<IntTuple>(&v)) {
    leaves_n = leaf_count(*t);
    depth_n = depth(*t);
  } else if (auto const* l = std::get_if<Layout>(&v)) {
    leaves_n = leaf_count(l->shape);
    depth_n = depth(l->shape);
  } else if (auto const* c = std::get_if<ComposedLayout>(&v)) {
    leaves_n = leaf_count(c->layout.shape);
    depth_n = depth(c->layout.shape);
  } else if (auto const* ti = std::get_if<Tiler>(&v)) {
    leaves_n = leaf_count(*ti);
    depth_n = depth(*ti);
  }
  if (leaves_n > limits::max_result_leaves || depth_n > limits::max_result_depth) {
    fail(op + ": the result is too large to handle (" + std::to_string(leaves_n) + " leaves, depth " +
         std::to_string(depth_n) + "; the calculator's limits are " + std::to_string(limits::max_result_leaves) +
         " leaves and depth " + std::to_string(limits::max_result_depth) + ")");
  }
}

}  // namespace tessel::calc
