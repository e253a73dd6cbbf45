#include "models/db/expr.hpp"
#include "models/db/row_values.hpp"
#include "sim/process.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace models::db {

std::optional<Value> RowRef::find(const std::string& column) const {
  if (stored_) return stored_->find(column);
  const auto it = values_->find(column);
  if (it == values_->end()) return std::nullopt;
  return it->second;
}

namespace {

using Int = std::int64_t;

// MySQL compares two strings as strings, and anything else as numbers.
int compare(const Value& a, const Value& b) {
  if (std::holds_alternative<std::string>(a) && std::holds_alternative<std::string>(b)) {
    const int c = std::get<std::string>(a).compare(std::get<std::string>(b));
    return (c > 0) - (c < 0);
  }
  const Int x = as_number(a), y = as_number(b);
  return (x > y) - (x < y);
}

bool truth(const Value& v) { return as_number(v) != 0; }
Value boolean(bool b) { return Int{b ? 1 : 0}; }

const char* op_text(Expr::Op op) {
  switch (op) {
    case Expr::Op::eq: return "=";
    case Expr::Op::ne: return "<>";
    case Expr::Op::lt: return "<";
    case Expr::Op::le: return "<=";
    case Expr::Op::gt: return ">";
    case Expr::Op::ge: return ">=";
    case Expr::Op::add: return "+";
    case Expr::Op::sub: return "-";
    case Expr::Op::mul: return "*";
    case Expr::Op::div: return "DIV";
    case Expr::Op::mod: return "%";
  }
  return "?";
}

[[noreturn]] void out_of_range(const Expr& e) {
  throw ExprError{1690, "BIGINT value is out of range in '" + to_string(e) + "'"};
}

std::optional<Value> arith(const Expr& e, Int x, Int y, const char* division_by_zero) {
  if ((e.op == Expr::Op::div || e.op == Expr::Op::mod) && y == 0 && division_by_zero != nullptr)
    throw ExprError{1365, division_by_zero};
  Int r = 0;
  switch (e.op) {
    case Expr::Op::add:
      if (__builtin_add_overflow(x, y, &r)) out_of_range(e);
      return r;
    case Expr::Op::sub:
      if (__builtin_sub_overflow(x, y, &r)) out_of_range(e);
      return r;
    case Expr::Op::mul:
      if (__builtin_mul_overflow(x, y, &r)) out_of_range(e);
      return r;
    case Expr::Op::div:
      if (y == 0) return std::nullopt;
      if (x == std::numeric_limits<Int>::min() && y == -1) out_of_range(e);
      return x / y;
    case Expr::Op::mod:
      if (y == 0) return std::nullopt;
      if (y == -1) return Int{0};
      return x % y;  // the sign of x, as MySQL's
    default: return std::nullopt;
  }
}

// LIKE over bytes: `%` any run, `_` one byte, `\` takes the next byte as it is. Its steps are
// work, as a row a scan visits is (a hundred steps a unit): a long pattern against a long value
// takes seconds, which the event budget then counts (docs/limits.md, "Bounds on a run").
bool like(std::string_view s, std::string_view p) {
  constexpr std::uint64_t kStepsPerUnit = 100, kChargeEvery = std::uint64_t{1} << 16;
  std::uint64_t steps = 0;
  const auto done = [&](bool matched) {
    sim::work(steps % kChargeEvery / kStepsPerUnit);  // what is left of the steps since the last charge
    return matched;
  };
  std::size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (++steps % kChargeEvery == 0) sim::work(kChargeEvery / kStepsPerUnit);
    if (pi < p.size() && p[pi] == '%') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size()) {
      const bool escaped = p[pi] == '\\' && pi + 1 < p.size();
      const char want = escaped ? p[pi + 1] : p[pi];
      if ((!escaped && want == '_') || want == s[si]) {
        pi += escaped ? 2 : 1;
        ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return done(false);
    pi = star_p;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return done(pi == p.size());
}

std::string quoted(const Value& v) {
  if (is_null(v)) return "NULL";
  if (const Int* n = std::get_if<Int>(&v)) return std::to_string(*n);
  return "'" + std::get<std::string>(v) + "'";
}

// A stored or bound value as an operand: Null is SQL's NULL.
std::optional<Value> operand(const Value& v) {
  if (is_null(v)) return std::nullopt;
  return v;
}

// One node's value from its operands' values (`v`, in order).
std::optional<Value> apply(const Expr& e, const std::optional<Value>* v, const Scope& scope) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::literal: return operand(e.value);
    case K::null: return std::nullopt;
    case K::param: return operand(scope.args.at(e.param));
    case K::column:
    case K::inserted: {
      if (e.kind == K::inserted && scope.inserted == nullptr) return std::nullopt;  // VALUES() outside ON DUPLICATE KEY UPDATE: NULL
      const std::optional<Value> found = e.kind == K::column ? scope.row.find(e.column) : RowRef(*scope.inserted).find(e.column);
      if (!found) throw ExprError{1054, "Unknown column '" + e.column + "' in 'where clause'"};
      return operand(*found);
    }
    case K::negate: {
      if (!v[0]) return std::nullopt;
      const Int n = as_number(*v[0]);
      if (n == std::numeric_limits<Int>::min()) out_of_range(e);
      return Value{-n};
    }
    case K::logical_not: {
      if (!v[0]) return std::nullopt;
      return boolean(!truth(*v[0]));
    }
    case K::logical_and:
    case K::logical_or: {
      // AND: false if one is false, else NULL if one is NULL; OR the same with true.
      const bool decisive = e.kind == K::logical_or;
      bool unknown = false;
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (!v[i]) unknown = true;
        else if (truth(*v[i]) == decisive) return boolean(decisive);
      }
      if (unknown) return std::nullopt;
      return boolean(!decisive);
    }
    case K::compare: {
      if (!v[0] || !v[1]) return std::nullopt;
      const int c = compare(*v[0], *v[1]);
      switch (e.op) {
        case Expr::Op::eq: return boolean(c == 0);
        case Expr::Op::ne: return boolean(c != 0);
        case Expr::Op::lt: return boolean(c < 0);
        case Expr::Op::le: return boolean(c <= 0);
        case Expr::Op::gt: return boolean(c > 0);
        case Expr::Op::ge: return boolean(c >= 0);
        default: return std::nullopt;
      }
    }
    case K::arith: {
      if (!v[0] || !v[1]) return std::nullopt;
      return arith(e, as_number(*v[0]), as_number(*v[1]), scope.division_by_zero);
    }
    case K::in: {
      // x IN (a, b): true if one equals x, else NULL if x or one of them is NULL, else false.
      const auto& x = v[0];
      if (!x) return std::nullopt;
      bool unknown = false;
      for (std::size_t i = 1; i < e.args.size(); ++i) {
        if (!v[i]) {
          unknown = true;
        } else if (compare(*x, *v[i]) == 0) {
          return boolean(!e.negated);
        }
      }
      if (unknown) return std::nullopt;
      return boolean(e.negated);
    }
    case K::between: {
      const auto &x = v[0], &lo = v[1], &hi = v[2];
      // x BETWEEN lo AND hi is lo <= x AND x <= hi, with AND's NULL rules.
      const std::optional<bool> above = (x && lo) ? std::optional<bool>(compare(*x, *lo) >= 0) : std::nullopt;
      const std::optional<bool> below = (x && hi) ? std::optional<bool>(compare(*x, *hi) <= 0) : std::nullopt;
      if ((above && !*above) || (below && !*below)) return boolean(e.negated);
      if (!above || !below) return std::nullopt;
      return boolean(!e.negated);
    }
    case K::like: {
      const auto &s = v[0], &p = v[1];
      if (!s || !p) return std::nullopt;
      const std::string text = std::holds_alternative<std::string>(*s) ? std::get<std::string>(*s) : quoted(*s);
      const std::string pattern = std::holds_alternative<std::string>(*p) ? std::get<std::string>(*p) : quoted(*p);
      return boolean(like(text, pattern) != e.negated);
    }
    case K::is_null: return boolean(!v[0].has_value() != e.negated);
    case K::coalesce:
      for (std::size_t i = 0; i < e.args.size(); ++i)
        if (v[i]) return v[i];
      return std::nullopt;
    case K::session_call: throw sim::UsageError("models::db: " + to_string(e) + " is the server's to run before the expression is evaluated");
  }
  return std::nullopt;
}

// How tightly an operator binds, as MySQL parses it: OR loosest, then AND, NOT, the
// comparisons, + -, * DIV %, unary -; operands bind tightest.
const char* call_name(Expr::Call call) {
  switch (call) {
    case Expr::Call::get_lock: return "GET_LOCK";
    case Expr::Call::release_lock: return "RELEASE_LOCK";
    case Expr::Call::release_all_locks: return "RELEASE_ALL_LOCKS";
    case Expr::Call::is_free_lock: return "IS_FREE_LOCK";
    case Expr::Call::is_used_lock: return "IS_USED_LOCK";
    case Expr::Call::connection_id: return "CONNECTION_ID";
  }
  return "?";
}

int precedence(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::logical_or: return 1;
    case Expr::Kind::logical_and: return 2;
    case Expr::Kind::logical_not: return 3;
    case Expr::Kind::compare:
    case Expr::Kind::in:
    case Expr::Kind::between:
    case Expr::Kind::like:
    case Expr::Kind::is_null: return 4;
    case Expr::Kind::arith: return e.op == Expr::Op::add || e.op == Expr::Op::sub ? 5 : 6;
    case Expr::Kind::negate: return 7;
    default: return 8;
  }
}

}  // namespace

Int as_number(const Value& v) {
  if (const Int* n = std::get_if<Int>(&v)) return *n;
  const std::string& s = std::get<std::string>(v);
  std::size_t at = 0;
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n')) ++at;
  Int n = 0;
  const auto [end, error] = std::from_chars(s.data() + at, s.data() + s.size(), n);
  if (error == std::errc::result_out_of_range)
    return s[at] == '-' ? std::numeric_limits<Int>::min() : std::numeric_limits<Int>::max();
  return error == std::errc() ? n : 0;
}

// Post-order over an explicit stack: simulated processes run on small stacks, so nothing
// here recurses.
std::optional<Value> evaluate(const Expr& root, const Scope& scope) {
  struct Visit {
    const Expr* e;
    std::size_t next = 0;
  };
  std::vector<Visit> todo{{&root}};
  std::vector<std::optional<Value>> done;
  while (!todo.empty()) {
    Visit& at = todo.back();
    if (at.next < at.e->args.size()) {
      const Expr* child = &at.e->args[at.next++];
      todo.push_back({child});
      continue;
    }
    const Expr& e = *at.e;
    todo.pop_back();
    const std::size_t first = done.size() - e.args.size();
    std::optional<Value> value = apply(e, done.data() + first, scope);
    done.resize(first);
    done.push_back(std::move(value));
  }
  return std::move(done.back());
}

bool holds(const Expr& e, const Scope& scope) {
  const auto v = evaluate(e, scope);
  return v && truth(*v);
}

std::string to_string(const Expr& e) {
  using K = Expr::Kind;
  // An operand in parentheses only where MySQL's precedence needs them.
  const auto arg = [&](std::size_t i) {
    const Expr& a = e.args[i];
    const int mine = precedence(e), theirs = precedence(a);
    const bool right_of_binary = i > 0 && (e.kind == K::arith || e.kind == K::compare);
    return theirs < mine || (theirs == mine && (right_of_binary || e.kind == K::compare)) ? "(" + to_string(a) + ")"
                                                                                          : to_string(a);
  };
  const std::string maybe_not = e.negated ? "NOT " : "";
  switch (e.kind) {
    case K::literal: return quoted(e.value);
    case K::null: return "NULL";
    case K::param: return "?";
    case K::column: return e.column;
    case K::inserted: return "VALUES(" + e.column + ")";
    case K::negate: return "-" + arg(0);
    case K::logical_not: return "NOT " + arg(0);
    case K::logical_and:
    case K::logical_or: {
      std::string out;
      for (std::size_t i = 0; i < e.args.size(); ++i) out += (i ? (e.kind == K::logical_and ? " AND " : " OR ") : "") + arg(i);
      return out;
    }
    case K::compare:
    case K::arith: return arg(0) + " " + op_text(e.op) + " " + arg(1);
    case K::in: {
      std::string out = arg(0) + " " + maybe_not + "IN (";
      for (std::size_t i = 1; i < e.args.size(); ++i) out += (i > 1 ? ", " : "") + arg(i);
      return out + ")";
    }
    case K::between: return arg(0) + " " + maybe_not + "BETWEEN " + arg(1) + " AND " + arg(2);
    case K::like: return arg(0) + " " + maybe_not + "LIKE " + arg(1);
    case K::is_null: return arg(0) + (e.negated ? " IS NOT NULL" : " IS NULL");
    case K::coalesce:
    case K::session_call: {
      std::string out = std::string(e.kind == K::coalesce ? "COALESCE" : call_name(e.call)) + "(";
      for (std::size_t i = 0; i < e.args.size(); ++i) out += (i ? ", " : "") + to_string(e.args[i]);
      return out + ")";
    }
  }
  return "?";
}

void columns_of(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::column || e.kind == Expr::Kind::inserted) out.push_back(e.column);
  for (const auto& a : e.args) columns_of(a, out);
}

}  // namespace models::db
