// InnoDB's model: the points and ranges a WHERE's conditions hold an index's columns to, index
// merges, and the entries a path visits (MariaDB's sql/opt_range.cc; docs/sql.md).

#include "models/db/innodb/innodb.hpp"

namespace models::db::innodb {

// The values the WHERE holds `column` to: one (`column = v`, an expression of constants, or
// IS NULL) or a list (`column IN (...)`); none when it holds it to neither.
std::optional<std::vector<Value>> held_values(const Statement& s, const std::string& column) {
  for (const Condition& c : s.where)
    if (c.op == Condition::Op::eq && c.column == column) return std::vector<Value>{c.value};
  if (auto v = folded_point(s, column)) return std::vector<Value>{*v};
  if (is_null_term(s, column)) return std::vector<Value>{Value{Null{}}};
  return in_list(s, column);
}

// An index's first columns (`columns`) the WHERE fixes to one value each (`merchant = ? AND
// request = ?`), a prefix of its keys; none when it does not fix the first. The first
// column counts by `column = value` only, unless `folded_first` (then also by an expression
// of constants, which the path weighs after `id`); a further one by either, or IS NULL.
std::optional<Key> key_prefix(const std::vector<std::string>& columns, const Statement& s, bool folded_first) {
  Key prefix;
  for (const std::string& column : columns) {
    std::optional<Value> v;
    for (const Condition& c : s.where)
      if (c.op == Condition::Op::eq && c.column == column) {
        v = c.value;
        break;
      }
    if (!v && (folded_first || !prefix.empty())) v = folded_point(s, column);
    if (!v && !prefix.empty() && is_null_term(s, column)) v = Value{Null{}};
    if (!v) break;
    prefix.push_back(std::move(*v));
  }
  if (prefix.empty()) return std::nullopt;
  return prefix;
}

// `column IS NULL` among the WHERE's terms.
bool is_null_term(const Statement& s, const std::string& column) {
  return std::any_of(s.more().filter.begin(), s.more().filter.end(), [&](const Expr& e) {
    return e.kind == Expr::Kind::is_null && !e.negated && e.args[0].kind == Expr::Kind::column && e.args[0].column == column;
  });
}

// `column IN (v, ...)`, or `column = v OR column = w ...`, among the WHERE's terms: its
// values sorted and each once (a value of the other type than the column's never matches a
// row the index could find). MariaDB's range optimizer makes the same list of both
// (conformance in-or-equalities-rr).
std::optional<std::vector<Value>> in_list(const Statement& s, const std::string& column) {
  for (const Expr& e : s.more().filter) {
    std::optional<std::vector<Value>> values = listed(e, s, column);
    if (!values) continue;
    std::sort(values->begin(), values->end());
    values->erase(std::unique(values->begin(), values->end()), values->end());
    return values;
  }
  return std::nullopt;
}

// The constants `e` holds `column` to, or none when it is not such a list.
std::optional<std::vector<Value>> listed(const Expr& e, const Statement& s, const std::string& column) {
  const auto of_column = [&](const Expr& x) { return x.kind == Expr::Kind::column && x.column == column; };
  std::vector<Value> values;
  if (e.kind == Expr::Kind::in && !e.negated && of_column(e.args[0])) {
    for (std::size_t i = 1; i < e.args.size(); ++i) {
      if (e.args[i].kind == Expr::Kind::null) continue;  // NULL matches nothing
      auto v = constant_of(e.args[i], s);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    return values;
  }
  if (e.kind == Expr::Kind::compare && e.op == Expr::Op::eq && of_column(e.args[0])) {
    auto v = constant_of(e.args[1], s);
    if (!v) return std::nullopt;
    if (!is_null(*v)) values.push_back(*v);  // `= NULL` matches nothing
    return values;
  }
  if (e.kind == Expr::Kind::logical_or) {
    for (const Expr& branch : e.args) {
      auto part = listed(branch, s, column);
      if (!part) return std::nullopt;
      values.insert(values.end(), part->begin(), part->end());
    }
    return values;
  }
  return std::nullopt;
}

// `key = v OR id = w` (each branch a list or a range of the key index's first column or of
// id, and both indexes named): MariaDB's index merge, a search of the key index for its
// values and ranges, then of the primary key for its ids and ranges, each as it alone would
// be searched (but for a range of the key index, the row of the entry past it is locked too,
// as the server does there for a locking read), their rows merged in id order (conformance
// index-merge-*). The server weighs it against a scan by its statistics; measured on MariaDB
// 10.11 (docs/sql.md), it merged 2 searches from 4 rows on, 3 from 6, 4 from 13 and 10 of
// 100, and scanned past those, and a LIMIT made it scan in id order. The model merges where
// the points and the rows of the ranges number at most 2 + (rows - 4) / 8, from 4 rows,
// without LIMIT: never where the server scanned, so that past the rule it locks more than
// the server, never less. None for another WHERE.
std::optional<Path> index_merge(const Table& t, const Statement& s) {
  if (s.limit) return std::nullopt;
  const std::string& key_column = t.schema.key_column;
  for (const Expr& e : s.more().filter) {
    if (e.kind != Expr::Kind::logical_or) continue;
    Merge m;
    if (!merge_branches(e, s, key_column, holds_text(t, key_column), m)) continue;
    if ((m.ids.empty() && m.id_ranges.empty()) || (m.keys.empty() && m.key_ranges.empty())) continue;
    for (auto* list : {&m.ids, &m.keys}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    for (Range& r : m.key_ranges)  // past the NULLs, as a range of the index alone starts
      if (!r.lo) r.lo = Value{Null{}}, r.lo_closed = false;
    const std::size_t rows = t.rows.size();
    if (rows < 4) return std::nullopt;
    const std::size_t most = 2 + (rows - 4) / 8;
    std::size_t searched = m.ids.size() + m.keys.size();
    for (const Range& r : m.key_ranges) searched += rows_in(t, kKey, r, most);
    for (const Range& r : m.id_ranges) searched += rows_in(t, kPrimary, r, most);
    if (searched > most) return std::nullopt;
    Path merged{.index = kPrimary, .by = Path::By::merged};
    if (!m.keys.empty()) merged.parts.push_back({.index = kKey, .by = Path::By::points, .points = std::move(m.keys)});
    if (!m.key_ranges.empty()) merged.parts.push_back({.index = kKey, .by = Path::By::ranges, .ranges = std::move(m.key_ranges)});
    if (!m.ids.empty()) merged.parts.push_back({.index = kPrimary, .by = Path::By::points, .points = std::move(m.ids)});
    if (!m.id_ranges.empty())
      merged.parts.push_back({.index = kPrimary, .by = Path::By::ranges, .ranges = std::move(m.id_ranges)});
    return merged;
  }
  return std::nullopt;
}

// Sorts the OR's branches into what they search; false when one searches neither index.
bool merge_branches(const Expr& e, const Statement& s, const std::string& key_column, bool text, Merge& m) {
  if (e.kind == Expr::Kind::logical_or)
    return std::all_of(e.args.begin(), e.args.end(),
                       [&](const Expr& branch) { return merge_branches(branch, s, key_column, text, m); });
  if (auto listed_ids = listed(e, s, "id")) {
    for (Value& v : *listed_ids)
      if (std::holds_alternative<std::int64_t>(v)) m.ids.push_back(std::move(v));  // another can match no id
    return true;
  }
  if (auto listed_keys = listed(e, s, key_column)) {
    m.keys.insert(m.keys.end(), listed_keys->begin(), listed_keys->end());
    return true;
  }
  if (auto r = branch_range(e, s, "id", false)) {
    if (!r->lo || std::holds_alternative<std::int64_t>(*r->lo)) m.id_ranges.push_back(std::move(*r));
    return true;  // (a string's bound matches no id)
  }
  if (auto r = branch_range(e, s, key_column, text)) {
    m.key_ranges.push_back(std::move(*r));
    return true;
  }
  return false;
}

// The range a branch of an OR gives `column`: a bound, or an AND of bounds of it alone.
std::optional<Range> branch_range(const Expr& e, const Statement& s, const std::string& column, bool text) {
  Range r;
  if (e.kind != Expr::Kind::logical_and) return bound_by(e, s, column, text, r) ? std::optional<Range>(r) : std::nullopt;
  for (const Expr& term : e.args)
    if (!bound_by(term, s, column, text, r)) return std::nullopt;
  return r;
}

// How many rows a range of `index` holds (its live entries), for the merge's cost: past
// `most`, most + 1.
std::size_t rows_in(const Table& t, int index, const Range& r, std::size_t most) {
  std::optional<Entry> at;
  if (index == kKey) {
    at = after(t, kKey, Entry{Key{r.lo.value_or(Value{Null{}})}, kBeforeAll});
  } else if (!r.lo) {
    at = first_entry(t, kPrimary);
  } else {
    const Entry start = primary_entry(std::get<std::int64_t>(*r.lo));
    at = live_entry(t, kPrimary, start) ? std::optional<Entry>(start) : after(t, kPrimary, start);
  }
  std::size_t n = 0;
  for (; at && n <= most; at = after(t, index, *at)) {
    if (!r.contains_above_lo(at->key.front())) continue;
    if (!r.below_hi(at->key.front())) break;
    ++n;
  }
  return n;
}

// `column = (an expression of constants)` among the WHERE's terms: `id = ? + 1`.
std::optional<Value> folded_point(const Statement& s, const std::string& column) {
  if (column.empty()) return std::nullopt;
  for (const Expr& e : s.more().filter)
    if (e.kind == Expr::Kind::compare && e.op == Expr::Op::eq && e.args[0].kind == Expr::Kind::column && e.args[0].column == column)
      if (auto v = constant_of(e.args[1], s); v && (column != "id" || std::holds_alternative<std::int64_t>(*v))) return v;
  return std::nullopt;
}

// The value of an expression of constants (literals, `?`s, arithmetic), as the optimizer
// folds it; none when it reads a column, is NULL or fails.
std::optional<Value> constant_of(const Expr& e, const Statement& s) {
  std::vector<const Expr*> todo{&e};
  while (!todo.empty()) {
    const Expr* x = todo.back();
    todo.pop_back();
    if (x->kind == Expr::Kind::column || x->kind == Expr::Kind::inserted) return std::nullopt;
    for (const Expr& a : x->args) todo.push_back(&a);
  }
  static const Values kNoRow;
  try {
    return evaluate(e, Scope{kNoRow, s.more().args});
  } catch (const ExprError&) {
    return std::nullopt;  // the statement reports it when it evaluates the term
  }
}

// The range `column`'s comparisons and BETWEENs give, if any.
// Whether `column` holds strings (its default's type; the key column's, key_text).
bool holds_text(const Table& t, const std::string& column) {
  if (column == t.schema.key_column) return t.schema.key_text;
  const auto it = t.schema.columns.find(column);
  return it == t.schema.columns.end() || std::holds_alternative<std::string>(it->second);
}

// The range `column LIKE 'abc%'` bounds a string column to: its pattern's text before the
// first wildcard, up to every string that begins with it ([abc, abc\xff), bytes compared),
// the range MariaDB's optimizer reads (conformance range-like-prefix-rr); a pattern with no
// wildcard, that one string. None where the pattern begins with a wildcard.
std::optional<std::pair<std::string, bool>> like_prefix(const std::string& pattern) {
  std::string prefix;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' || pattern[i] == '_') return prefix.empty() ? std::nullopt : std::optional(std::pair{prefix, false});
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    prefix += pattern[i];
  }
  return std::pair{prefix, true};
}

// Narrows `r` by the bound the term `e` puts on `column`, if it is one: a comparison with an
// expression of constants (`id <= ? + 5`), BETWEEN, or on a string column LIKE 'abc%' (the
// keys beginning with abc; LIKE 'abc' the point). Returns whether it was.
bool bound_by(const Expr& e, const Statement& s, const std::string& column, bool text, Range& r) {
  const auto lower = [&](const Value& v, bool closed) {
    if (!r.lo || v > *r.lo || (v == *r.lo && !closed)) r.lo = v, r.lo_closed = closed;
  };
  const auto upper = [&](const Value& v, bool closed) {
    if (!r.hi || v < *r.hi || (v == *r.hi && !closed)) r.hi = v, r.hi_closed = closed;
  };
  const auto constant = [&](const Expr& a) { return constant_of(a, s); };
  if (e.args.empty() || e.args[0].kind != Expr::Kind::column || e.args[0].column != column) return false;
  if (e.kind == Expr::Kind::compare) {
    const auto v = constant(e.args[1]);
    if (!v) return false;
    switch (e.op) {
      case Expr::Op::gt: lower(*v, false); return true;
      case Expr::Op::ge: lower(*v, true); return true;
      case Expr::Op::lt: upper(*v, false); return true;
      case Expr::Op::le: upper(*v, true); return true;
      default: return false;
    }
  }
  if (e.kind == Expr::Kind::between && !e.negated) {
    const auto lo = constant(e.args[1]), hi = constant(e.args[2]);
    if (!lo || !hi) return false;
    lower(*lo, true);
    upper(*hi, true);
    return true;
  }
  if (e.kind == Expr::Kind::like && !e.negated && text) {
    const auto pattern = constant(e.args[1]);
    if (!pattern || !std::holds_alternative<std::string>(*pattern)) return false;
    const auto prefix = like_prefix(std::get<std::string>(*pattern));
    if (!prefix) return false;
    lower(Value{prefix->first}, true);
    if (prefix->second) upper(Value{prefix->first}, true);
    else upper(Value{prefix->first + '\xff'}, false);  // no UTF-8 text has the byte 0xff
    return true;
  }
  return false;
}

std::optional<Range> range_of(const Statement& s, const std::string& column, bool text) {
  Range r;
  bool any = false;
  const auto lower = [&](const Value& v, bool closed) {
    if (!r.lo || v > *r.lo || (v == *r.lo && !closed)) r.lo = v, r.lo_closed = closed;
    any = true;
  };
  const auto upper = [&](const Value& v, bool closed) {
    if (!r.hi || v < *r.hi || (v == *r.hi && !closed)) r.hi = v, r.hi_closed = closed;
    any = true;
  };
  for (const Condition& c : s.where) {
    if (c.column != column) continue;
    switch (c.op) {
      case Condition::Op::gt: lower(c.value, false); break;
      case Condition::Op::ge: lower(c.value, true); break;
      case Condition::Op::lt: upper(c.value, false); break;
      case Condition::Op::le: upper(c.value, true); break;
      default: break;
    }
  }
  for (const Expr& e : s.more().filter) any |= bound_by(e, s, column, text, r);
  if (!any) return std::nullopt;
  return r;
}

// The entries a search by `p` visits, in index order.
std::vector<Entry> visited(const Table& t, const Path& p) {
  if (p.index != kPrimary) return entries_with(t, p.index, *p.key);
  std::vector<Entry> out;
  if (p.key) {
    const std::int64_t id = std::get<std::int64_t>(p.key->front());
    if (live_entry(t, kPrimary, primary_entry(id))) out.push_back(primary_entry(id));
    return out;
  }
  sim::work(t.rows.size());  // a full scan: every row, counted against the trial's event budget
  for (const auto& [id, row] : t.rows)
    if (live(*row)) out.push_back(primary_entry(id));
  return out;
}

}  // namespace models::db::innodb
