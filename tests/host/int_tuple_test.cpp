// IntTuple operations: static-ness of results, structure, and values (expected values worked out
// by hand from the definitions).
#include <tessel/layout.hpp>

#include <gtest/gtest.h>

#include <type_traits>

using namespace tessel;

TEST(Integral, StaticArithmeticStaysStaticAndRunTimeDoesNot) {
  static_assert(std::is_same_v<decltype(_4{} * _8{}), Int<32>>);
  static_assert(std::is_same_v<decltype(_4{} + 3), int>);
  static_assert(std::is_same_v<decltype(_0{} * 7), _0>, "_0 * x is a static _0");
  static_assert(std::is_same_v<decltype(7 * _0{}), _0>);
  static_assert(std::is_same_v<decltype(9 % _1{}), _0>, "x % _1 is a static _0");
  static_assert(std::is_same_v<decltype(min(_4{}, _2{})), _2>);
  static_assert(std::is_same_v<decltype(min(_4{}, 2)), int>);
  static_assert(is_static_v<decltype(make_tuple(_1{}, make_tuple(_2{})))>);
  static_assert(!is_static_v<decltype(make_tuple(_1{}, 2))>);
  EXPECT_EQ(to_string(Int<-4>{}), "_-4");
  EXPECT_EQ(to_string(-4), "-4");
  EXPECT_EQ(int(abs(-5)), 5);
  EXPECT_EQ(int(signum(-5)), -1);
  EXPECT_EQ(int(gcd(12, Int<18>{})), 6);
}

namespace stateless_cases {
// detail::stateless_v asks the compiler's traits; it must answer as the standard traits would.
template <class T>
constexpr bool by_std = std::is_empty_v<T> && std::is_default_constructible_v<T> && !std::is_final_v<T>;
struct FinalEmpty final {};
struct NoDefault {
  explicit NoDefault(int) {}
};
struct Holds {
  int x;
};
inline auto const closure = [] { return 1; };
inline auto const capturing = [n = 1] { return n; };
template <class... Ts>
constexpr bool agree = ((detail::stateless_v<Ts> == by_std<Ts>) && ...);
static_assert(agree<_4, int, FinalEmpty, NoDefault, Holds, tuple<>, tuple<_1, _2>, tuple<_4, int>,
                    decltype(closure), decltype(capturing), Underscore>);
static_assert(detail::stateless_v<_4> && !detail::stateless_v<FinalEmpty> && !detail::stateless_v<NoDefault>);
}  // namespace stateless_cases

TEST(Tuple, StaticElementsTakeNoStorage) {
  static_assert(std::is_empty_v<tuple<_1, _2>>);
  static_assert(sizeof(tuple<_4, int>) == sizeof(int));
  static_assert(sizeof(tuple<_4, int, _8, long long>) == 16);
  auto t = make_tuple(_2{}, 3, make_tuple(4, _5{}));
  EXPECT_EQ(to_string(t), "(_2,3,(4,_5))");
  EXPECT_EQ(to_string(tuple<>{}), "()");
  get<1>(t) = 7;
  EXPECT_EQ(get<1>(t), 7);
  EXPECT_EQ((get<2, 0>(t)), 4);
  auto [a, b, c] = t;
  EXPECT_EQ(to_string(a), "_2");
  EXPECT_EQ(b, 7);
  EXPECT_EQ(to_string(c), "(4,_5)");
}

TEST(IntTuple, RankDepthSizeProduct) {
  auto s = make_shape(_2{}, make_shape(3, _4{}), 5);
  static_assert(decltype(rank(s))::value == 3);
  static_assert(decltype(depth(s))::value == 2);
  static_assert(decltype(depth(7))::value == 0);
  static_assert(decltype(rank(7))::value == 1);
  EXPECT_EQ(size(s), 120);
  EXPECT_EQ((size<1>(s)), 12);
  EXPECT_EQ(to_string(product(make_shape(_2{}, _4{}))), "_8");
  EXPECT_EQ(to_string(product(tuple<>{})), "_1");
  EXPECT_EQ(to_string(product_each(s)), "(_2,12,5)");
  EXPECT_EQ(to_string(flatten(s)), "(_2,3,_4,5)");
  EXPECT_EQ(to_string(flatten(6)), "6");
}

TEST(IntTuple, SelectTakeAppendPrependRemoveReplace) {
  auto t = make_tuple(_1{}, 2, _3{}, 4);
  EXPECT_EQ(to_string(select<3, 0>(t)), "(4,_1)");
  EXPECT_EQ(to_string(take<1, 3>(t)), "(2,_3)");
  EXPECT_EQ(to_string(append(t, _5{})), "(_1,2,_3,4,_5)");
  EXPECT_EQ(to_string(prepend(t, 0)), "(0,_1,2,_3,4)");
  EXPECT_EQ(to_string(append<6>(t, _0{})), "(_1,2,_3,4,_0,_0)");
  EXPECT_EQ(to_string(append<3>(7, _1{})), "(7,_1,_1)");
  EXPECT_EQ(to_string(remove<1>(t)), "(_1,_3,4)");
  EXPECT_EQ(to_string(replace<2>(t, 9)), "(_1,2,9,4)");
  EXPECT_EQ(to_string(zip(make_tuple(1, 2), make_tuple(_3{}, _4{}))), "((1,_3),(2,_4))");
  EXPECT_EQ(to_string(unwrap(make_tuple(make_tuple(5)))), "5");
  EXPECT_EQ(to_string(wrap(5)), "(5)");
}

TEST(IntTuple, CeilDivAndShapeDiv) {
  EXPECT_EQ(to_string(ceil_div(_7{}, _2{})), "_4");
  EXPECT_EQ(ceil_div(7, _2{}), 4);
  // Tuple by integer: the divisor is consumed from the left.
  EXPECT_EQ(to_string(ceil_div(make_shape(_4{}, _5{}, _6{}), Int<40>{})), "(_1,_1,_3)");
  // The fold rounds up at each mode: ceil(4/50)=1 leaves ceil(50/4)=13, ceil(5/13)=1 leaves
  // ceil(13/5)=3, ceil(6/3)=2.
  EXPECT_EQ(to_string(ceil_div(make_shape(_4{}, _5{}, _6{}), Int<50>{})), "(_1,_1,_2)");
  EXPECT_EQ(to_string(shape_div(make_shape(_4{}, _5{}, _6{}), Int<40>{})), "(_1,_1,_3)");
  // shape_div rounds away from zero: 2 / 4 == 1.
  EXPECT_EQ(shape_div(2, 4), 1);
  EXPECT_EQ(to_string(shape_div(_2{}, _4{})), "_1");
  EXPECT_EQ(to_string(ceil_div(make_shape(9, _8{}), make_shape(_4{}))), "(3,_8)");
}

TEST(IntTuple, CongruentCompatibleWeaklyCongruent) {
  auto a = make_shape(_2{}, make_shape(3, 4));
  static_assert(decltype(congruent(a, make_shape(1, make_shape(_1{}, 2))))::value);
  static_assert(!decltype(congruent(a, make_shape(1, 2)))::value);
  EXPECT_TRUE(bool(compatible(make_shape(2, 12), a)));   // 12 refines into (3,4)
  EXPECT_FALSE(bool(compatible(make_shape(2, 11), a)));
  EXPECT_FALSE(bool(compatible(a, make_shape(2, 12))));  // a tuple is not compatible with a leaf
  static_assert(decltype(weakly_congruent(make_shape(1, 2), a))::value);
  static_assert(!decltype(weakly_congruent(a, make_shape(1, 2)))::value);
}

TEST(IntTuple, CoordinatesAndIndicesAreColexicographic) {
  auto s = make_shape(4, make_shape(2, 3));
  auto d = compact_col_major(s);
  EXPECT_EQ(to_string(d), "(_1,(4,8))");
  EXPECT_EQ(to_string(compact_row_major(make_shape(_4{}, _2{}, _3{}))), "(_6,_3,_1)");
  EXPECT_EQ(to_string(compact_col_major(make_shape(_1{}, _8{}))), "(_0,_1)");  // extent 1 -> stride _0
  for (int i = 0; i < 24; ++i) {
    auto c = idx2crd(i, s);
    EXPECT_EQ(crd2idx(c, s, d), i);
    EXPECT_EQ(get<0>(c), i % 4);
    EXPECT_EQ((get<1, 0>(c)), (i / 4) % 2);
    EXPECT_EQ((get<1, 1>(c)), i / 8);
  }
  // The last mode absorbs overflow.
  EXPECT_EQ(crd2idx(30, make_shape(4, 3), make_stride(1, 100)), 2 + 7 * 100);
}

// A static coordinate in a static shape and stride takes crd2idx's constant-expression path
// (detail::crd2idx_static); its answer is the Int<> of what the fold gives a run-time coordinate,
// over every index of nested shapes, with the last mode absorbing overflow.
template <class Shape, class Stride, int... I>
void expect_static_crd2idx_matches_fold(Shape s, Stride d, std::integer_sequence<int, I...>) {
  auto const one = [&](auto c) {
    auto const r = crd2idx(c, s, d);
    using R = std::remove_cvref_t<decltype(r)>;
    static_assert(std::is_same_v<R, Int<R::value>>, "a static crd2idx answer is an Int<>");
    EXPECT_EQ(R::value, int(crd2idx(int(decltype(c)::value), s, d))) << "index " << decltype(c)::value;
  };
  (one(Int<I>{}), ...);
}

TEST(IntTuple, StaticCrd2IdxMatchesTheFold) {
  expect_static_crd2idx_matches_fold(make_shape(_4{}, make_shape(_2{}, _3{})), make_stride(_1{}, make_stride(_4{}, _8{})),
                                     std::make_integer_sequence<int, 30>{});  // 24 in the shape, 6 overflowing
  expect_static_crd2idx_matches_fold(make_shape(make_shape(_2{}, _2{}), _1{}, make_shape(_3{}, _2{})),
                                     make_stride(make_stride(_64{}, _1{}), _0{}, make_stride(_2{}, _128{})),
                                     std::make_integer_sequence<int, 26>{});
  expect_static_crd2idx_matches_fold(make_shape(_8{}), make_stride(_16{}), std::make_integer_sequence<int, 9>{});
  // Mixed static and run-time operands keep the fold: the answer is a run-time int.
  auto const mixed = crd2idx(Int<5>{}, make_shape(_4{}, 3), make_stride(_1{}, 10));
  static_assert(!is_static_v<decltype(mixed)>);
  EXPECT_EQ(mixed, 1 + 1 * 10);
}

TEST(Slicing, UnderscoreKeepsAndLiftsModes) {
  auto s = make_shape(_4{}, make_shape(_2{}, 3), 5);
  EXPECT_EQ(to_string(slice(make_coord(_, make_coord(_, 1), 0), s)), "(_4,_2)");
  EXPECT_EQ(to_string(slice(make_coord(1, _, _), s)), "((_2,3),5)");
  EXPECT_EQ(to_string(dice(make_coord(1, _, _), s)), "(_4)");
  EXPECT_EQ(to_string(slice(_, s)), to_string(s));
}
