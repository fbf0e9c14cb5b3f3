// calc/parse.cpp -- tokenizer and recursive-descent parser (depth-limited) for calc/parse.hpp.
#include "calc/parse.hpp"

#include "calc/expr.hpp"

#include <cctype>
#include <limits>
#include <vector>

namespace tessel::calc {

namespace {

enum class Tok { end, lparen, rparen, comma, colon, less, greater, integer, static_integer, underscore, ident };

struct Token {
  Tok kind = Tok::end;
  int column = 1;
  std::string text;
  std::int64_t value = 0;
};

std::string describe(Token const& t) {
  switch (t.kind) {
    case Tok::end: return "end of input";
    case Tok::integer:
    case Tok::static_integer: return "the integer " + t.text;
    case Tok::underscore: return "`_`";
    case Tok::ident: return "'" + t.text + "'";
    default: return "'" + t.text + "'";
  }
}

std::vector<Token> tokenize(std::string_view s) {
  if (s.size() > limits::max_input_chars) {
    throw ParseError("the expression is longer than " + std::to_string(limits::max_input_chars) + " characters", 1);
  }
  std::vector<Token> out;
  std::size_t numbers = 0;
  std::size_t i = 0;
  auto is_digit = [&](std::size_t k) { return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])); };
  while (i < s.size()) {
    char ch = s[i];
    int const col = int(i) + 1;
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
      continue;
    }
    Token t;
    t.column = col;
    auto read_int = [&](std::size_t k) {
      bool neg = false;
      if (s[k] == '-') {
        neg = true;
        ++k;
      }
      std::uint64_t mag = 0;
      std::uint64_t const limit = neg ? std::uint64_t(std::numeric_limits<std::int64_t>::max()) + 1
                                      : std::uint64_t(std::numeric_limits<std::int64_t>::max());
      while (is_digit(k)) {
        std::uint64_t digit = std::uint64_t(s[k] - '0');
        if (mag > (limit - digit) / 10) throw ParseError("the integer does not fit in 64 bits", col);
        mag = mag * 10 + digit;
        ++k;
      }
      t.value = neg ? std::int64_t(0 - mag) : std::int64_t(mag);
      if (++numbers > limits::max_input_leaves) {
        throw ParseError("the expression has more than " + std::to_string(limits::max_input_leaves) + " integers", col);
      }
      return k;
    };
    if (ch == '_' && (is_digit(i + 1) || (i + 1 < s.size() && s[i + 1] == '-' && is_digit(i + 2)))) {
      std::size_t end = read_int(i + 1);
      t.kind = Tok::static_integer;
      t.text = std::string(s.substr(i, end - i));
      i = end;
    } else if (ch == '_') {
      if (i + 1 < s.size() && (std::isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '_')) {
        throw ParseError("unexpected character '_' (names do not start with '_')", col);
      }
      t.kind = Tok::underscore;
      t.text = "_";
      ++i;
      if (++numbers > limits::max_input_leaves) {
        throw ParseError("the expression has more than " + std::to_string(limits::max_input_leaves) + " integers", col);
      }
    } else if (std::isdigit(static_cast<unsigned char>(ch)) || (ch == '-' && is_digit(i + 1))) {
      std::size_t end = read_int(i);
      t.kind = Tok::integer;
      t.text = std::string(s.substr(i, end - i));
      i = end;
    } else if (std::isalpha(static_cast<unsigned char>(ch))) {
      std::size_t end = i;
      while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
      t.kind = Tok::ident;
      t.text = std::string(s.substr(i, end - i));
      i = end;
    } else {
      switch (ch) {
        case '(': t.kind = Tok::lparen; break;
        case ')': t.kind = Tok::rparen; break;
        case ',': t.kind = Tok::comma; break;
        case ':': t.kind = Tok::colon; break;
        case '<': t.kind = Tok::less; break;
        case '>': t.kind = Tok::greater; break;
        default: {
          std::string shown = std::isprint(static_cast<unsigned char>(ch)) ? std::string(1, ch) : "\\x" + std::to_string(int(static_cast<unsigned char>(ch)));
          throw ParseError("unexpected character '" + shown + "'", col);
        }
      }
      t.text = std::string(1, ch);
      ++i;
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Tok::end;
  end.column = int(s.size()) + 1;
  out.push_back(end);
  return out;
}

class Parser {
 public:
  Parser(std::vector<Token> toks, bool allow_calls) : toks_(std::move(toks)), allow_calls_(allow_calls) {}

  Value parse_all() {
    Value v = parse_expr();
    if (peek().kind != Tok::end) {
      expected(peek().kind == Tok::rparen ? "end of input (this ')' has no matching '(')" : "end of input");
    }
    return v;
  }

 private:
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  bool allow_calls_;
  int nesting_ = 0;

  Token const& peek(std::size_t ahead = 0) const {
    std::size_t k = pos_ + ahead;
    return toks_[k < toks_.size() ? k : toks_.size() - 1];
  }
  Token const& take() {
    Token const& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  [[noreturn]] void expected(std::string const& what) const {
    throw ParseError("expected " + what + ", found " + describe(peek()), peek().column);
  }
  void expect(Tok k, char const* what) {
    if (peek().kind != k) expected(what);
    take();
  }

  struct Nest {
    Parser& p;
    Nest(Parser& parser, int column) : p(parser) {
      if (++p.nesting_ > limits::max_nesting) {
        throw ParseError("nesting deeper than " + std::to_string(limits::max_nesting) + " levels", column);
      }
    }
    ~Nest() { --p.nesting_; }
  };

  Value parse_expr() {
    Value v = parse_primary();
    while (peek().kind == Tok::lparen) {
      if (!allow_calls_) expected("',' or ')' (a literal cannot be evaluated)");
      int const col = peek().column;
      std::vector<Value> args = parse_args();
      try {
        v = call_value(v, args);
      } catch (AlgebraError const& e) {
        throw AlgebraError(std::string(e.what()) + " (at column " + std::to_string(col) + ")");
      }
    }
    return v;
  }

  // '(' [expr (',' expr)*] ')'
  std::vector<Value> parse_args() {
    Nest nest(*this, peek().column);
    int const open = peek().column;
    take();  // '('
    std::vector<Value> items;
    if (peek().kind == Tok::rparen) {
      take();
      return items;
    }
    while (true) {
      items.push_back(parse_expr());
      if (peek().kind == Tok::comma) {
        take();
        continue;
      }
      if (peek().kind == Tok::rparen) {
        take();
        return items;
      }
      expected("',' or ')' to close the '(' at column " + std::to_string(open));
    }
  }

  Value parse_primary() {
    Token const& t = peek();
    switch (t.kind) {
      case Tok::lparen: {
        int const col = t.column;
        std::vector<Value> items = parse_args();
        // (X) around a swizzle or swizzled layout only groups (there are no tuples of them).
        if (items.size() == 1 && (std::holds_alternative<Swizzle>(items[0]) || std::holds_alternative<ComposedLayout>(items[0]))) {
          return items[0];
        }
        return maybe_layout(make_tuple_value(items, col));
      }
      case Tok::integer:
      case Tok::static_integer: {
        Token const& n = take();
        return maybe_layout(IntTuple::leaf(Integer{n.value, n.kind == Tok::static_integer}));
      }
      case Tok::underscore:
        take();
        if (peek().kind == Tok::colon) expected("a shape before ':' (`_` is not an extent)");
        return IntTuple::underscore();
      case Tok::ident: return parse_name();
      default: expected("a layout, a tuple, an integer, `_`, a swizzle or an operation");
    }
  }

  Value make_tuple_value(std::vector<Value> const& items, int column) {
    bool plain = true;
    for (auto const& v : items) plain = plain && std::holds_alternative<IntTuple>(v);
    if (plain) {
      std::vector<IntTuple> e;
      for (auto const& v : items) e.push_back(std::get<IntTuple>(v));
      return IntTuple::tuple(std::move(e));
    }
    std::vector<Tiler> e;
    for (auto const& v : items) {
      if (auto const* x = std::get_if<IntTuple>(&v)) {
        e.push_back(Tiler::of_int_tuple(*x));
      } else if (auto const* l = std::get_if<Layout>(&v)) {
        e.push_back(Tiler::of_layout(*l));
      } else if (auto const* ti = std::get_if<Tiler>(&v)) {
        e.push_back(*ti);
      } else {
        throw ParseError("a tuple can hold integers, `_`, layouts and tuples of these, not " + calc::describe(v), column);
      }
    }
    return Tiler::tuple(std::move(e));
  }

  // shape [':' stride]
  Value maybe_layout(Value shape) {
    if (peek().kind != Tok::colon) return shape;
    int const col = peek().column;
    take();
    auto const* s = std::get_if<IntTuple>(&shape);
    if (!s) throw ParseError("the shape of a layout must be an integer or a tuple of integers, not " + calc::describe(shape), col);
    if (has_underscore(*s)) throw ParseError("the shape of a layout cannot contain `_`", col);
    IntTuple stride = parse_stride();
    if (!congruent(*s, stride)) {
      throw ParseError("the shape " + to_string(*s) + " and the stride " + to_string(stride) +
                           " of a layout must have the same profile",
                       col);
    }
    return Layout{*s, stride};
  }

  // A stride: an integer or a tuple of strides (no calls, no `_`).
  IntTuple parse_stride() {
    Token const& t = peek();
    if (t.kind == Tok::integer || t.kind == Tok::static_integer) {
      Token const& n = take();
      return IntTuple::leaf(Integer{n.value, n.kind == Tok::static_integer});
    }
    if (t.kind != Tok::lparen) expected("a stride (an integer or a tuple) after ':'");
    Nest nest(*this, t.column);
    int const open = t.column;
    take();
    std::vector<IntTuple> e;
    if (peek().kind == Tok::rparen) {
      take();
      return IntTuple::tuple({});
    }
    while (true) {
      e.push_back(parse_stride());
      if (peek().kind == Tok::comma) {
        take();
        continue;
      }
      if (peek().kind == Tok::rparen) {
        take();
        return IntTuple::tuple(std::move(e));
      }
      expected("',' or ')' to close the stride's '(' at column " + std::to_string(open));
    }
  }

  std::int64_t parse_swizzle_param() {
    Token const& t = peek();
    if (t.kind != Tok::integer && t.kind != Tok::static_integer) expected("an integer parameter of Sw<B,M,S>");
    return take().value;
  }

  Value parse_name() {
    Token const name = take();
    if ((name.text == "Sw" || name.text == "Swizzle") && peek().kind == Tok::less) {
      take();
      std::int64_t b = parse_swizzle_param();
      expect(Tok::comma, "',' in Sw<B,M,S>");
      std::int64_t m = parse_swizzle_param();
      expect(Tok::comma, "',' in Sw<B,M,S>");
      std::int64_t s = parse_swizzle_param();
      expect(Tok::greater, "'>' to close Sw<B,M,S>");
      Swizzle sw = make_swizzle(b, m, s);
      if (peek().kind == Tok::ident && peek().text == "o") return parse_composed(sw);
      return sw;
    }
    if (name.text == "GenRowMajor" || name.text == "LayoutRight") return Major::right;
    if (name.text == "GenColMajor" || name.text == "LayoutLeft") return Major::left;
    if (peek().kind != Tok::lparen) {
      if (is_operation(name.text)) expected("'(' after the operation '" + name.text + "'");
      throw ParseError("unknown name '" + name.text + "'", name.column);
    }
    if (!allow_calls_) throw ParseError("a literal cannot contain the call '" + name.text + "'", name.column);
    if (!is_operation(name.text)) {
      throw ParseError("unknown operation '" + name.text + "' (tessel layout --help lists them)", name.column);
    }
    std::vector<Value> args = parse_args();
    return apply_op(name.text, args);
  }

  // Sw o OFFSET o LAYOUT, or Sw o LAYOUT (offset _0).
  Value parse_composed(Swizzle sw) {
    Nest nest(*this, peek().column);
    take();  // 'o'
    int const col = peek().column;
    Value first = parse_primary();
    Integer offset = static_int(0);
    Value layout = first;
    if (peek().kind == Tok::ident && peek().text == "o") {
      auto const* off = std::get_if<IntTuple>(&first);
      if (!off || !off->is_leaf()) throw ParseError("the offset of Sw<B,M,S> o OFFSET o LAYOUT must be an integer", col);
      offset = off->value;
      take();
      layout = parse_primary();
    }
    auto const* l = std::get_if<Layout>(&layout);
    if (!l) throw ParseError("a swizzle composes with a layout (Sw<B,M,S> o OFFSET o LAYOUT), not " + calc::describe(layout), col);
    return ComposedLayout{sw, offset, *l};
  }
};

}  // namespace

Value evaluate(std::string_view text) { return Parser(tokenize(text), true).parse_all(); }

Value parse_literal(std::string_view text) { return Parser(tokenize(text), false).parse_all(); }

}  // namespace tessel::calc
