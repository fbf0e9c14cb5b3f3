// calc/int_tuple.cpp -- IntTuple structure and arithmetic, mirroring core/int_tuple.hpp.
#include "calc/int_tuple.hpp"

namespace tessel::calc {

IntTuple const& IntTuple::mode(int i) const {
  if (is_tuple()) {
    if (i < 0 || i >= int(elems.size())) {
      fail("mode " + std::to_string(i) + " of " + to_string(*this) + " does not exist (rank " +
           std::to_string(elems.size()) + ")");
    }
    return elems[std::size_t(i)];
  }
  if (i != 0) fail("mode " + std::to_string(i) + " of " + to_string(*this) + " does not exist (rank 1)");
  return *this;
}

namespace {
void append_text(std::string& out, IntTuple const& t) {
  switch (t.kind) {
    case IntTuple::Kind::leaf: out += to_string(t.value); break;
    case IntTuple::Kind::underscore: out += "_"; break;
    case IntTuple::Kind::tuple:
      out += "(";
      for (std::size_t i = 0; i < t.elems.size(); ++i) {
        if (i) out += ",";
        append_text(out, t.elems[i]);
      }
      out += ")";
      break;
  }
}

void collect_leaves(IntTuple const& t, std::vector<Integer>& out) {
  if (t.is_tuple()) {
    for (auto const& e : t.elems) collect_leaves(e, out);
  } else if (t.is_leaf()) {
    out.push_back(t.value);
  } else {
    fail("`_` cannot be used as a number here");
  }
}
}  // namespace

std::string to_string(IntTuple const& t) {
  std::string s;
  append_text(s, t);
  return s;
}

bool is_value(IntTuple const& t, std::int64_t v) { return t.is_leaf() && t.value.value == v; }

int depth(IntTuple const& t) {
  if (!t.is_tuple()) return 0;
  int d = 0;
  for (auto const& e : t.elems) d = std::max(d, depth(e));
  return d + 1;
}

std::size_t leaf_count(IntTuple const& t) {
  if (!t.is_tuple()) return 1;
  std::size_t n = 0;
  for (auto const& e : t.elems) n += leaf_count(e);
  return n;
}

bool has_underscore(IntTuple const& t) {
  if (t.is_underscore()) return true;
  for (auto const& e : t.elems) {
    if (has_underscore(e)) return true;
  }
  return false;
}

bool congruent(IntTuple const& a, IntTuple const& b) {
  if (a.is_tuple() != b.is_tuple()) return false;
  if (!a.is_tuple()) return true;
  if (a.elems.size() != b.elems.size()) return false;
  for (std::size_t i = 0; i < a.elems.size(); ++i) {
    if (!congruent(a.elems[i], b.elems[i])) return false;
  }
  return true;
}

bool all_static(IntTuple const& t) {
  if (t.is_leaf()) return t.value.is_static;
  for (auto const& e : t.elems) {
    if (!all_static(e)) return false;
  }
  return true;
}

Integer product(IntTuple const& t) {
  if (t.is_leaf()) return t.value;
  if (t.is_underscore()) fail("`_` has no size");
  if (t.elems.empty()) return static_int(1);
  Integer p = product(t.elems[0]);
  for (std::size_t i = 1; i < t.elems.size(); ++i) p = p * product(t.elems[i]);
  return p;
}

std::vector<Integer> leaves(IntTuple const& t) {
  std::vector<Integer> out;
  collect_leaves(t, out);
  return out;
}

IntTuple make_flat_tuple(std::vector<Integer> const& v) {
  std::vector<IntTuple> e;
  e.reserve(v.size());
  for (auto x : v) e.push_back(IntTuple::leaf(x));
  return IntTuple::tuple(std::move(e));
}

IntTuple flatten_to_tuple(IntTuple const& t) {
  if (!t.is_tuple()) return IntTuple::tuple({t});
  std::vector<IntTuple> out;
  out.reserve(leaf_count(t));
  auto rec = [&](auto&& self, IntTuple const& x) -> void {
    if (x.is_tuple()) {
      for (auto const& e : x.elems) self(self, e);
    } else {
      out.push_back(x);
    }
  };
  rec(rec, t);
  return IntTuple::tuple(std::move(out));
}

IntTuple flatten(IntTuple const& t) { return t.is_tuple() ? flatten_to_tuple(t) : t; }

IntTuple wrap(IntTuple const& t) { return t.is_tuple() ? t : IntTuple::tuple({t}); }

IntTuple unwrap(IntTuple const& t) {
  if (t.is_tuple() && t.elems.size() == 1) return unwrap(t.elems[0]);
  return t;
}

IntTuple ceil_div(IntTuple const& a, IntTuple const& b) {
  if (a.is_tuple()) {
    if (b.is_tuple()) {
      if (b.elems.size() > a.elems.size()) {
        fail("ceil_div: the divisor " + to_string(b) + " has more modes than " + to_string(a));
      }
      std::vector<IntTuple> out;
      for (std::size_t i = 0; i < a.elems.size(); ++i) {
        out.push_back(ceil_div(a.elems[i], i < b.elems.size() ? b.elems[i] : IntTuple::leaf(static_int(1))));
      }
      return IntTuple::tuple(std::move(out));
    }
    // Fold b across a's modes: each mode takes what it can of b, the rest moves on.
    std::vector<IntTuple> out;
    IntTuple rest = b;
    for (auto const& ai : a.elems) {
      out.push_back(ceil_div(ai, rest));
      rest = ceil_div(rest, ai);
    }
    return IntTuple::tuple(std::move(out));
  }
  if (b.is_tuple()) return ceil_div(a, IntTuple::leaf(product(b)));
  if (!a.is_leaf() || !b.is_leaf()) fail("ceil_div: `_` is not a number");
  return IntTuple::leaf(ceil_div(a.value, b.value));
}

IntTuple coalesce_shape(IntTuple const& shape) {
  auto v = leaves(shape);
  if (v.empty()) return IntTuple::leaf(static_int(1));
  Integer p = v[0];
  for (std::size_t i = 1; i < v.size(); ++i) p = p * v[i];
  return IntTuple::leaf(p);
}

namespace {
// Returns the strides of `shape`, advancing `current` by its size (int_tuple.hpp detail::compact).
IntTuple compact(IntTuple const& shape, Major major, Integer& current) {
  if (shape.is_tuple()) {
    std::size_t const r = shape.elems.size();
    std::vector<IntTuple> out(r);
    for (std::size_t k = 0; k < r; ++k) {
      std::size_t i = major == Major::left ? k : r - 1 - k;
      out[i] = compact(shape.elems[i], major, current);
    }
    return IntTuple::tuple(std::move(out));
  }
  if (!shape.is_leaf()) fail("`_` cannot be used as an extent");
  if (shape.value.value == 1) return IntTuple::leaf(static_int(0));
  Integer stride = current;
  current = current * shape.value;
  return IntTuple::leaf(stride);
}
}  // namespace

IntTuple compact_major(IntTuple const& shape, Major major, Integer current) {
  return compact(shape, major, current);
}

Integer crd2idx(IntTuple const& coord, IntTuple const& shape, IntTuple const& stride) {
  if (coord.is_tuple()) {
    if (!shape.is_tuple() || coord.elems.size() != shape.elems.size()) {
      fail("the coordinate " + to_string(coord) + " does not match the shape " + to_string(shape));
    }
    Integer acc = static_int(0);
    for (std::size_t i = 0; i < coord.elems.size(); ++i) {
      acc = acc + crd2idx(coord.elems[i], shape.elems[i], stride.elems[i]);
    }
    return acc;
  }
  if (!coord.is_leaf()) fail("`_` is not an index");
  if (shape.is_tuple()) {
    std::size_t const r = shape.elems.size();
    Integer acc = static_int(0);
    if (r == 0) return acc;
    Integer rest = coord.value;
    for (std::size_t i = 0; i + 1 < r; ++i) {
      Integer n = product(shape.elems[i]);
      acc = acc + crd2idx(IntTuple::leaf(rest % n), shape.elems[i], stride.elems[i]);
      rest = rest / n;
    }
    return acc + crd2idx(IntTuple::leaf(rest), shape.elems[r - 1], stride.elems[r - 1]);
  }
  return coord.value * stride.value;
}

namespace {
// underscore.hpp lift_slice: a tuple of the kept elements, to be concatenated by the parent.
void lift_slice(IntTuple const& c, IntTuple const& t, std::vector<IntTuple>& out) {
  if (c.is_tuple()) {
    if (!t.is_tuple() || t.elems.size() != c.elems.size()) {
      fail("slice: the coordinate " + to_string(c) + " and the shape " + to_string(t) + " differ in rank");
    }
    for (std::size_t i = 0; i < c.elems.size(); ++i) lift_slice(c.elems[i], t.elems[i], out);
  } else if (c.is_underscore()) {
    out.push_back(t);
  }
}
}  // namespace

IntTuple slice(IntTuple const& coord, IntTuple const& t) {
  if (coord.is_tuple()) {
    std::vector<IntTuple> out;
    lift_slice(coord, t, out);
    return IntTuple::tuple(std::move(out));
  }
  if (coord.is_underscore()) return t;
  return IntTuple::tuple({});
}

IntTuple append_to_rank(IntTuple const& t, int n, IntTuple const& x) {
  if (t.is_tuple()) {
    if (int(t.elems.size()) > n) fail("append: the tuple is already longer than " + std::to_string(n));
    IntTuple r = t;
    while (int(r.elems.size()) < n) r.elems.push_back(x);
    return r;
  }
  if (n == 1) return t;
  return append_to_rank(IntTuple::tuple({t}), n, x);
}

IntTuple zip(IntTuple const& t0, IntTuple const& t1) {
  // As CuTe's zip: a leaf first element makes zip((t0,t1)) wrap the pair, ((t0,t1)).
  if (!t0.is_tuple()) return IntTuple::tuple({IntTuple::tuple({t0, t1})});
  std::vector<IntTuple> out;
  for (std::size_t i = 0; i < t0.elems.size(); ++i) {
    out.push_back(IntTuple::tuple({t0.elems[i], t1.mode(int(i))}));
  }
  return IntTuple::tuple(std::move(out));
}

}  // namespace tessel::calc
