// calc/expr.cpp -- the operation table of the calculator.
#include "calc/expr.hpp"

#include "calc/coalesce.hpp"
#include "calc/complement.hpp"
#include "calc/composition.hpp"
#include "calc/divide.hpp"
#include "calc/inverse.hpp"
#include "calc/product.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace tessel::calc {

namespace {

// The arguments of one call, with conversions that name the operation and the argument on error.
struct Args {
  std::string const& op;
  std::vector<Value> const& v;

  std::string where(std::size_t i) const { return op + ": argument " + std::to_string(i + 1); }

  void count(std::size_t lo, std::size_t hi) const {
    if (v.size() < lo || v.size() > hi) {
      std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
      fail(op + ": expects " + want + " argument" + (hi == 1 ? "" : "s") + ", got " + std::to_string(v.size()));
    }
  }
  Layout layout(std::size_t i) const {
    if (auto const* l = std::get_if<Layout>(&v[i])) return *l;
    fail(where(i) + " must be a layout (shape:stride); got " + describe(v[i]));
  }
  IntTuple int_tuple(std::size_t i) const {
    if (auto const* t = std::get_if<IntTuple>(&v[i])) return *t;
    fail(where(i) + " must be an integer or a tuple of integers; got " + describe(v[i]));
  }
  IntTuple numbers(std::size_t i) const {  // an IntTuple without `_`
    IntTuple t = int_tuple(i);
    if (has_underscore(t)) fail(where(i) + " cannot contain `_`; got " + to_string(t));
    return t;
  }
  Integer integer(std::size_t i) const {
    IntTuple t = int_tuple(i);
    if (!t.is_leaf()) fail(where(i) + " must be an integer; got " + describe(v[i]));
    return t.value;
  }
  Tiler tiler(std::size_t i) const {
    if (auto const* l = std::get_if<Layout>(&v[i])) return Tiler::of_layout(*l);
    if (auto const* t = std::get_if<IntTuple>(&v[i])) return Tiler::of_int_tuple(*t);
    if (auto const* t = std::get_if<Tiler>(&v[i])) return *t;
    fail(where(i) + " must be a tiler (a layout, an integer, `_`, or a tuple of these); got " + describe(v[i]));
  }
};

Value int_value(Integer x) { return IntTuple::leaf(x); }

// A layout whose extents are all >= 1 (the algebra's precondition on its inputs).
Layout algebra_layout(Args const& a, std::size_t i) {
  Layout l = a.layout(i);
  require_positive_extents(l, a.op.c_str());
  return l;
}

void require_positive_tiler(Tiler const& t, std::string const& op) {
  switch (t.kind) {
    case Tiler::Kind::integer:
      if (t.value.value < 1) fail(op + ": a tile extent must be >= 1, got " + to_string(t.value));
      break;
    case Tiler::Kind::layout: require_positive_extents(t.layout, op.c_str()); break;
    case Tiler::Kind::tuple:
      for (auto const& e : t.elems) require_positive_tiler(e, op);
      break;
    case Tiler::Kind::underscore: break;
  }
}

Tiler algebra_tiler(Args const& a, std::size_t i) {
  Tiler t = a.tiler(i);
  require_positive_tiler(t, a.op);
  return t;
}

IntTuple zero_underscores(IntTuple t) {
  if (t.is_underscore()) return IntTuple::leaf(static_int(0));
  for (auto& e : t.elems) e = zero_underscores(e);
  return t;
}

Value eval_at(Value const& f, std::vector<Value> const& args, std::string const& op) {
  if (args.empty()) fail(op + ": needs an index or a coordinate");
  std::vector<IntTuple> coords;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto const* t = std::get_if<IntTuple>(&args[i]);
    if (!t) fail(op + ": the index must be an integer or a coordinate tuple; got " + describe(args[i]));
    coords.push_back(*t);
  }
  IntTuple coord = coords.size() == 1 ? coords[0] : IntTuple::tuple(coords);
  if (auto const* l = std::get_if<Layout>(&f)) {
    if (has_underscore(coord)) return slice(*l, coord);
    return int_value(eval(*l, coord));
  }
  if (auto const* c = std::get_if<ComposedLayout>(&f)) {
    if (has_underscore(coord)) {
      // Sw o off o L sliced: Sw o (off + L(fixed part, `_` read as 0)) o L(slice).
      Integer fixed = crd2idx(zero_underscores(coord), c->layout.shape, c->layout.stride);
      return ComposedLayout{c->swizzle, c->offset + fixed, slice(c->layout, coord)};
    }
    return int_value(eval(*c, coord));
  }
  if (auto const* sw = std::get_if<Swizzle>(&f)) {
    if (!coord.is_leaf()) fail(op + ": a swizzle takes one integer offset; got " + to_string(coord));
    return int_value(apply(*sw, coord.value));
  }
  fail(op + ": cannot evaluate " + describe(f) + " (only layouts, swizzled layouts and swizzles take an index)");
}

using OpFn = std::function<Value(Args const&)>;

template <class F>
OpFn layout_tiler_op(F f) {
  return [f](Args const& a) -> Value {
    a.count(2, 2);
    return f(algebra_layout(a, 0), algebra_tiler(a, 1));
  };
}

// A divide that also accepts a swizzled layout: it divides the inner layout and keeps the swizzle
// and the offset (layout/composed_divide.hpp).
template <class F>
OpFn divide_op(F f) {
  return [f](Args const& a) -> Value {
    a.count(2, 2);
    if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) {
      require_positive_extents(c->layout, a.op.c_str());
      return ComposedLayout{c->swizzle, c->offset, f(c->layout, algebra_tiler(a, 1))};
    }
    return f(algebra_layout(a, 0), algebra_tiler(a, 1));
  };
}

template <class F>
OpFn layout_op(F f) {
  return [f](Args const& a) -> Value {
    a.count(1, 1);
    return f(algebra_layout(a, 0));
  };
}

std::map<std::string, OpFn> const& table() {
  static std::map<std::string, OpFn> const t = [] {
    std::map<std::string, OpFn> m;
    m["eval"] = [](Args const& a) -> Value {
      if (a.v.size() < 2) fail("eval: expects a layout and an index, e.g. eval((4,2):(2,1), 5)");
      return eval_at(a.v[0], std::vector<Value>(a.v.begin() + 1, a.v.end()), "eval");
    };
    m["swizzle"] = [](Args const& a) -> Value {
      a.count(2, 2);
      auto const* sw = std::get_if<Swizzle>(&a.v[0]);
      if (!sw) fail("swizzle: argument 1 must be a swizzle Sw<B,M,S>; got " + describe(a.v[0]));
      return int_value(apply(*sw, a.integer(1)));
    };
    m["swizzle_layout"] = [](Args const& a) -> Value {
      a.count(2, 2);
      if (!std::holds_alternative<ComposedLayout>(a.v[0])) {
        fail("swizzle_layout: argument 1 must be a swizzled layout Sw<B,M,S> o OFFSET o LAYOUT; got " + describe(a.v[0]));
      }
      return eval_at(a.v[0], {a.v[1]}, "swizzle_layout");
    };
    m["size"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* l = std::get_if<Layout>(&a.v[0])) return int_value(size(*l));
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) return int_value(size(c->layout));
      return int_value(product(a.numbers(0)));
    };
    m["cosize"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) return int_value(cosize(c->layout));
      return int_value(cosize(a.layout(0)));
    };
    m["rank"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* l = std::get_if<Layout>(&a.v[0])) return int_value(static_int(rank(*l)));
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) return int_value(static_int(rank(c->layout)));
      return int_value(static_int(a.int_tuple(0).rank()));
    };
    m["depth"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* l = std::get_if<Layout>(&a.v[0])) return int_value(static_int(depth(*l)));
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) return int_value(static_int(depth(c->layout)));
      return int_value(static_int(depth(a.int_tuple(0))));
    };
    m["shape"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) return c->layout.shape;
      return a.layout(0).shape;
    };
    m["stride"] = [](Args const& a) -> Value {
      a.count(1, 1);
      return a.layout(0).stride;
    };
    m["get"] = [](Args const& a) -> Value {
      if (a.v.size() < 2) fail("get: expects a layout or tuple and at least one mode index, e.g. get((4,(2,3)):(1,(4,8)), 1)");
      Value cur = a.v[0];
      for (std::size_t i = 1; i < a.v.size(); ++i) {
        Integer k = a.integer(i);
        if (k.value < 0 || k.value > 1 << 20) fail("get: mode index " + to_string(k) + " is out of range");
        if (auto const* l = std::get_if<Layout>(&cur)) {
          cur = mode(*l, int(k.value));
        } else if (auto const* t = std::get_if<IntTuple>(&cur)) {
          cur = t->mode(int(k.value));
        } else {
          fail("get: argument 1 must be a layout or a tuple; got " + describe(a.v[0]));
        }
      }
      return cur;
    };
    m["flatten"] = [](Args const& a) -> Value {
      a.count(1, 1);
      if (auto const* l = std::get_if<Layout>(&a.v[0])) return flatten(*l);
      return flatten(a.int_tuple(0));
    };
    m["coalesce"] = [](Args const& a) -> Value {
      a.count(1, 2);
      Layout l = algebra_layout(a, 0);
      return a.v.size() == 2 ? coalesce(l, a.int_tuple(1)) : coalesce(l);
    };
    m["filter"] = [](Args const& a) -> Value {
      a.count(1, 2);
      Layout l = algebra_layout(a, 0);
      return a.v.size() == 2 ? filter(l, a.int_tuple(1)) : filter(l);
    };
    m["composition"] = [](Args const& a) -> Value {
      a.count(2, 2);
      if (auto const* sw = std::get_if<Swizzle>(&a.v[0])) return composition(*sw, algebra_layout(a, 1));
      if (auto const* c = std::get_if<ComposedLayout>(&a.v[0])) {
        require_positive_extents(c->layout, "composition");
        return composition(*c, algebra_tiler(a, 1));
      }
      return composition(algebra_layout(a, 0), algebra_tiler(a, 1));
    };
    m["complement"] = [](Args const& a) -> Value {
      a.count(1, 2);
      Layout l = algebra_layout(a, 0);
      return a.v.size() == 2 ? complement(l, a.numbers(1)) : complement(l);
    };
    m["right_inverse"] = layout_op([](Layout const& l) { return right_inverse(l); });
    m["left_inverse"] = layout_op([](Layout const& l) { return left_inverse(l); });
    m["logical_divide"] = divide_op([](Layout const& l, Tiler const& t) { return logical_divide(l, t); });
    m["zipped_divide"] = divide_op([](Layout const& l, Tiler const& t) { return zipped_divide(l, t); });
    m["tiled_divide"] = divide_op([](Layout const& l, Tiler const& t) { return tiled_divide(l, t); });
    m["flat_divide"] = divide_op([](Layout const& l, Tiler const& t) { return flat_divide(l, t); });
    m["logical_product"] = layout_tiler_op([](Layout const& l, Tiler const& t) { return logical_product(l, t); });
    m["zipped_product"] = layout_tiler_op([](Layout const& l, Tiler const& t) { return zipped_product(l, t); });
    m["tiled_product"] = layout_tiler_op([](Layout const& l, Tiler const& t) { return tiled_product(l, t); });
    m["flat_product"] = layout_tiler_op([](Layout const& l, Tiler const& t) { return flat_product(l, t); });
    m["blocked_product"] = [](Args const& a) -> Value {
      a.count(2, 2);
      return blocked_product(algebra_layout(a, 0), algebra_layout(a, 1));
    };
    m["raked_product"] = [](Args const& a) -> Value {
      a.count(2, 2);
      return raked_product(algebra_layout(a, 0), algebra_layout(a, 1));
    };
    m["make_layout"] = [](Args const& a) -> Value {
      if (a.v.empty()) fail("make_layout: expects a shape, e.g. make_layout((4,2)) or make_layout((4,2), GenRowMajor)");
      if (std::holds_alternative<Layout>(a.v[0])) {
        std::vector<Layout> modes;
        for (std::size_t i = 0; i < a.v.size(); ++i) modes.push_back(a.layout(i));
        return concat(modes);
      }
      a.count(1, 2);
      IntTuple shape = a.numbers(0);
      for (auto x : leaves(shape)) {
        if (x.value < 1) fail("make_layout: every extent must be >= 1; got the shape " + to_string(shape));
      }
      if (a.v.size() == 1) return make_layout(shape);
      if (auto const* m2 = std::get_if<Major>(&a.v[1])) return make_layout(shape, *m2);
      return make_layout(shape, a.numbers(1));
    };
    return m;
  }();
  return t;
}

}  // namespace

std::vector<std::string> const& operation_names() {
  static std::vector<std::string> const names = [] {
    std::vector<std::string> n;
    for (auto const& [k, v] : table()) n.push_back(k);
    return n;
  }();
  return names;
}

bool is_operation(std::string const& name) { return table().count(name) != 0; }

Value apply_op(std::string const& name, std::vector<Value> const& args) {
  auto it = table().find(name);
  if (it == table().end()) throw UnknownOperation("unknown operation '" + name + "'");
  try {
    Value r = it->second(Args{name, args});
    require_within_limits(r, name);
    return r;
  } catch (AlgebraError const& e) {
    std::string msg = e.what();
    if (msg.rfind(name + ":", 0) == 0) throw;
    throw AlgebraError(name + ": " + msg);
  }
}

Value call_value(Value const& f, std::vector<Value> const& args) {
  // (L)(i): a parenthesized layout is a rank-1 tiler, which cannot be called; read it as grouping.
  if (auto const* t = std::get_if<Tiler>(&f); t && t->is_tuple() && t->elems.size() == 1 &&
                                              t->elems[0].kind == Tiler::Kind::layout) {
    return call_value(t->elems[0].layout, args);
  }
  Value r = eval_at(f, args, "evaluation");
  require_within_limits(r, "evaluation");
  return r;
}

}  // namespace tessel::calc
