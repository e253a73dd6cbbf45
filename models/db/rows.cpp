// What both database engines do alike with rows (models/db/rows.hpp).

#include "models/db/rows.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>

namespace models::db::detail {

bool matches(RowRef v, const Where& where) {
  for (const Condition& c : where) {
    const std::optional<Value> found = v.find(c.column);
    if (!found) throw sim::UsageError("Unknown column '" + c.column + "' in 'where clause'");
    const Value& have = *found;
    if (is_null(have) || is_null(c.value)) return false;  // NULL op anything is NULL, never true
    bool ok = false;
    switch (c.op) {
      case Condition::Op::eq: ok = have == c.value; break;
      case Condition::Op::ne: ok = have != c.value; break;
      case Condition::Op::lt: ok = have < c.value; break;
      case Condition::Op::le: ok = have <= c.value; break;
      case Condition::Op::gt: ok = have > c.value; break;
      case Condition::Op::ge: ok = have >= c.value; break;
    }
    if (!ok) return false;
  }
  return true;
}

bool matches(RowRef v, const Statement& s) {
  if (!matches(v, s.where)) return false;
  if (s.more().filter.empty()) return true;
  try {
    return std::all_of(s.more().filter.begin(), s.more().filter.end(), [&](const Expr& e) { return holds(e, Scope{v, s.more().args}); });
  } catch (const ExprError& e) {
    throw Failure{static_cast<Code>(e.code), e.message};
  }
}

namespace {

// Sorts `rows` by `order_by`'s columns: Value's order puts NULL first, as MariaDB sorts it;
// PostgreSQL sorts it after every value.
void sort_rows(const std::vector<std::pair<std::string, bool>>& order_by, Engine engine, std::vector<Row>& rows) {
  if (order_by.empty()) return;
  const bool nulls_last = engine == Engine::postgresql;
  const auto before = [&](const Value& x, const Value& y) {
    if (nulls_last && is_null(x) != is_null(y)) return is_null(y);
    return x < y;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    for (const auto& [column, descending] : order_by) {
      const std::optional<Value> x = a.values.find(column), y = b.values.find(column);
      if (!x || !y) throw Failure{Code::bad_field, "Unknown column '" + column + "' in 'order clause'"};
      if (*x == *y) continue;
      return descending ? before(*y, *x) : before(*x, *y);
    }
    return false;
  });
}

// Keeps `limit` rows after the first `offset`.
void cut(std::optional<std::int64_t> limit, std::int64_t offset, std::vector<Row>& rows) {
  if (!limit) return;
  const auto from = static_cast<std::size_t>(std::min<std::int64_t>(offset, static_cast<std::int64_t>(rows.size())));
  rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(from));
  if (static_cast<std::size_t>(*limit) < rows.size()) rows.resize(static_cast<std::size_t>(*limit));
}

}  // namespace

void order_and_limit(const Statement& s, Engine engine, std::vector<Row>& rows) {
  sort_rows(s.more().order_by, engine, rows);
  if (!s.count_rows) cut(s.limit, s.offset, rows);  // an aggregate's LIMIT applies to its rows
}

Values row_values(const TableSchema& schema, Engine engine, const Values& given, std::optional<std::int64_t>& explicit_id) {
  Values values = schema.columns;
  for (const std::string& column : schema.null_by_default)
    if (const auto it = values.find(column); it != values.end()) it->second = Null{};
  for (const auto& [column, value] : given) {
    if (column == "id" && !schema.clustered_key) {
      // NULL: the next AUTO_INCREMENT id on MariaDB; on PostgreSQL, or without AUTO_INCREMENT,
      // a NULL id, which the engine refuses.
      if (is_null(value) && engine == Engine::mariadb && schema.auto_increment) continue;
      if (is_null(value)) {
        if (engine == Engine::postgresql)
          throw Failure{Code::bad_null, "null value in column \"id\" of relation \"" + schema.name + "\" violates not-null constraint"};
        throw Failure{Code::bad_null, "Column 'id' cannot be null"};
      }
      if (!std::holds_alternative<std::int64_t>(value))
        throw sim::UsageError("Incorrect integer value: " + to_string(value) + " for column 'id'");
      explicit_id = std::get<std::int64_t>(value);
    } else if (column == schema.key_column || schema.columns.count(column)) {
      values[column] = value;
    } else {
      throw sim::UsageError("Unknown column '" + column + "' in 'field list'");
    }
  }
  if (schema.clustered_key)  // a primary key's columns have no default (sql.cpp refuses one)
    for (const std::string& column : schema.key_columns())
      if (!given.count(column)) {
        if (engine == Engine::postgresql)
          throw Failure{Code::bad_null, "null value in column \"" + column + "\" of relation \"" + schema.name + "\" violates not-null constraint"};
        throw Failure{Code::no_default, "Field '" + column + "' doesn't have a default value"};
      }
  if (!schema.key_column.empty() && !given.count(schema.key_column) && !schema.columns.count(schema.key_column)) {
    if (!schema.may_be_null(schema.key_column))
      throw sim::UsageError("Field '" + schema.key_column + "' doesn't have a default value");
    values[schema.key_column] = Null{};
  }
  check_row(schema, engine, values);
  return values;
}

namespace {

// The integer a string spells, as both servers read one given to an integer column: optional
// spaces around an optional sign and digits. `overflow`: digits past BIGINT's range.
std::optional<std::int64_t> integer_text(const std::string& text, bool& overflow) {
  std::size_t from = text.find_first_not_of(' '), to = text.find_last_not_of(' ');
  overflow = false;
  if (from == std::string::npos) return std::nullopt;
  const std::string_view digits(text.data() + from, to - from + 1);
  std::int64_t n = 0;
  const char* first = digits.data() + (digits.front() == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(first, digits.data() + digits.size(), n);
  if (end != digits.data() + digits.size() || first == end) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    overflow = true;
    return std::nullopt;
  }
  if (error != std::errc()) return std::nullopt;
  return n;
}

std::size_t characters(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

void check_row(const TableSchema& schema, Engine engine, Values& row) {
  check_nulls(schema, engine, row);
  const bool pg = engine == Engine::postgresql;
  for (auto& [column, value] : row) {
    const auto type = schema.types.find(column);
    if (type == schema.types.end() || is_null(value)) continue;
    const ColumnType& t = type->second;
    const bool integer = t.max_chars == 0;
    if (integer) {
      if (const auto* text = std::get_if<std::string>(&value)) {
        bool overflow = false;
        const auto n = integer_text(*text, overflow);
        if (overflow)
          throw Failure{Code::column_out_of_range, pg ? "value \"" + *text + "\" is out of range for type " + t.name
                                                      : "Out of range value for column '" + column + "' at row 1"};
        if (!n)
          throw Failure{Code::bad_integer, pg ? "invalid input syntax for type " + t.name + ": \"" + *text + "\""
                                              : "Incorrect integer value: '" + *text + "' for column `" + schema.name + "`.`" + column +
                                                    "` at row 1"};
        value = *n;
      }
      const std::int64_t n = std::get<std::int64_t>(value);
      if (n < t.min || n > t.max)
        throw Failure{Code::column_out_of_range, pg ? t.name + " out of range" : "Out of range value for column '" + column + "' at row 1"};
    } else if (const auto* text = std::get_if<std::string>(&value); text != nullptr && characters(*text) > t.max_chars) {
      throw Failure{Code::data_too_long, pg ? "value too long for type " + t.name : "Data too long for column '" + column + "' at row 1"};
    }
  }
}

void check_nulls(const TableSchema& schema, Engine engine, const Values& row) {
  for (const auto& [column, value] : row) {
    if (!is_null(value) || schema.may_be_null(column)) continue;
    if (engine == Engine::postgresql)
      throw Failure{Code::bad_null, "null value in column \"" + column + "\" of relation \"" + schema.name + "\" violates not-null constraint"};
    throw Failure{Code::bad_null, "Column '" + column + "' cannot be null"};
  }
}

void assign(const Statement& s, Values& row, const Values* inserted, Engine engine) {
  const char* by_zero = engine == Engine::postgresql ? "division by zero" : "Division by 0";
  for (const auto& [column, e] : s.more().assign) {
    const auto it = row.find(column);
    if (it == row.end()) throw Failure{Code::bad_field, "Unknown column '" + column + "' in 'field list'"};
    std::optional<Value> v;
    try {
      v = evaluate(e, Scope{row, s.more().args, inserted, by_zero});
    } catch (const ExprError& error) {
      throw Failure{static_cast<Code>(error.code), error.message};
    }
    it->second = v ? std::move(*v) : Value{Null{}};
  }
}

namespace {

// The aggregate as the server names it when no alias does.
std::string server_name(const StatementExtra& e, Engine engine) {
  using A = StatementExtra::Aggregate;
  static constexpr const char* kUpper[] = {"COUNT", "MAX", "MIN", "SUM"};
  static constexpr const char* kLower[] = {"count", "max", "min", "sum"};
  const auto i = static_cast<std::size_t>(e.aggregate);
  if (engine == Engine::postgresql) return kLower[i];
  if (e.aggregate == A::count) return "COUNT(*)";
  return std::string(kUpper[i]) + "(" + e.aggregate_column + ")";
}

// The aggregate over `rows` (every row found, or one group's), each read as `row_of` gives it.
template <class Rows, class RowOf>
Value aggregate_of(const StatementExtra& e, Engine engine, const Rows& rows, RowOf row_of) {
  using A = StatementExtra::Aggregate;
  if (e.aggregate == A::count && e.aggregate_column.empty()) return static_cast<std::int64_t>(rows.size());
  Value out = Null{};
  if (e.aggregate == A::count) out = std::int64_t{0};
  for (const auto& item : rows) {
    const Row& r = row_of(item);
    const std::optional<Value> found = r.values.find(e.aggregate_column);
    if (!found) {
      if (engine == Engine::postgresql) throw Failure{Code::bad_field, "column \"" + e.aggregate_column + "\" does not exist"};
      throw Failure{Code::bad_field, "Unknown column '" + e.aggregate_column + "' in 'field list'"};
    }
    const Value& v = *found;
    if (is_null(v)) continue;
    switch (e.aggregate) {
      case A::count: out = std::get<std::int64_t>(out) + 1; break;
      case A::max:
        if (is_null(out) || out < v) out = v;
        break;
      case A::min:
        if (is_null(out) || v < out) out = v;
        break;
      case A::sum: {
        // A string column sums as its values' leading integers, as MySQL reads a string as a number.
        std::int64_t total = is_null(out) ? 0 : std::get<std::int64_t>(out);
        if (__builtin_add_overflow(total, as_number(v), &total)) {
          if (engine == Engine::postgresql) throw Failure{Code::value_out_of_range, "bigint out of range"};
          throw Failure{Code::value_out_of_range, "BIGINT value is out of range in '" + server_name(e, engine) + "'"};
        }
        out = total;
        break;
      }
      case A::none: break;  // groups alone: aggregate_rows asks for no value
    }
  }
  return out;
}

// GROUP BY: the rows found, grouped by the group columns' values (NULLs one group), in the
// order of those values.
std::map<std::vector<Value>, std::vector<const Row*>> groups_of(const StatementExtra& e, Engine engine, const std::vector<Row>& rows) {
  std::map<std::vector<Value>, std::vector<const Row*>> groups;
  for (const Row& r : rows) {
    std::vector<Value> key;
    key.reserve(e.group_by.size());
    for (const std::string& column : e.group_by) {
      std::optional<Value> found = r.values.find(column);
      if (!found) {
        if (engine == Engine::postgresql) throw Failure{Code::bad_field, "column \"" + column + "\" does not exist"};
        throw Failure{Code::bad_field, "Unknown column '" + column + "' in 'group statement'"};
      }
      key.push_back(std::move(*found));
    }
    groups[std::move(key)].push_back(&r);
  }
  return groups;
}

// Whether HAVING keeps a group's row.
bool kept(const StatementExtra& e, RowRef row) {
  try {
    return holds(*e.having, Scope{row, e.args});
  } catch (const ExprError& error) {
    throw Failure{static_cast<Code>(error.code), error.message};
  }
}

}  // namespace

std::string aggregate_name(const StatementExtra& e, Engine engine) {
  if (e.aggregate == StatementExtra::Aggregate::none) return {};
  return e.aggregate_alias.empty() ? server_name(e, engine) : e.aggregate_alias;
}

void aggregate_rows(const Statement& s, Engine engine, std::vector<Row>& rows) {
  const StatementExtra& e = s.more();
  const std::string name = aggregate_name(e, engine);
  if (e.group_by.empty()) {
    Value out = aggregate_of(e, engine, rows, [](const Row& r) -> const Row& { return r; });
    rows = {Row{0, {{name, std::move(out)}}}};
    if ((s.limit && *s.limit == 0) || s.offset > 0 || (e.having && !kept(e, rows.front().values))) rows.clear();
    return;
  }
  // A row a group, in the group columns' order (MariaDB's GROUP BY sorts so; PostgreSQL
  // promises no order, and a script that needs one says ORDER BY), kept where HAVING holds.
  std::vector<Row> out;
  for (const auto& [key, members] : groups_of(e, engine, rows)) {
    Values values;
    for (std::size_t i = 0; i < key.size(); ++i) values[e.group_by[i]] = key[i];
    if (e.aggregate != StatementExtra::Aggregate::none)
      values[name] = aggregate_of(e, engine, members, [](const Row* r) -> const Row& { return *r; });
    if (e.having && !kept(e, values)) continue;
    out.push_back(Row{0, RowValues(std::move(values))});
  }
  sort_rows(e.group_order_by, engine, out);
  cut(e.group_limit, e.group_offset, out);
  rows = std::move(out);
}

namespace {

// The select list's computed columns over `row`, by name.
Values computed_values(const Statement& s, RowRef row) {
  Values out;
  for (const auto& [name, e] : s.more().computed) {
    try {
      std::optional<Value> v = evaluate(e, Scope{row, s.more().args});
      out[name] = v ? std::move(*v) : Value{Null{}};
    } catch (const ExprError& error) {
      throw Failure{static_cast<Code>(error.code), error.message};
    }
  }
  return out;
}

}  // namespace

Row computed_row(const Statement& s) {
  static const Values kNoRow;
  return Row{0, RowValues(computed_values(s, kNoRow))};
}

void add_computed(const Statement& s, std::vector<Row>& rows) {
  RowValues::Shape shape;  // the rows found share their columns' names
  for (Row& r : rows) {
    Values values = r.values.to_values();
    for (auto& [name, v] : computed_values(s, r.values)) values[name] = std::move(v);  // each over the row as stored, not as the ones before it left it
    r.values = RowValues(values, shape);
  }
}

Statement with_clock(const Statement& s, sim::Time statement, sim::Time transaction) {
  using Read = StatementExtra::ClockRead;
  Statement out = s;
  for (const auto& [slot, read] : s.more().clock_args) {
    const sim::Time at = read == Read::transaction_rounded ? transaction : statement;
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
    const std::int64_t seconds = read == Read::statement_floor ? micros / 1'000'000 : (micros + 500'000) / 1'000'000;
    out.edit().args.at(slot) = Value{seconds};
  }
  return out;
}

sim::Time now_if_running() {
  const sim::Engine* e = sim::Engine::current();
  return e == nullptr ? sim::kNever : e->now();
}

void spend(sim::Duration d) {
  if (d > sim::Duration::zero()) sim::sleep_for(d);
}

void check_unmoved(const TableSchema& schema, const Statement& s) {
  const auto assigns = [&](const std::string& column) {
    return s.values.count(column) ||
           std::any_of(s.more().assign.begin(), s.more().assign.end(), [&](const auto& a) { return a.first == column; });
  };
  for (const std::string& column : schema.key_columns())
    if (assigns(column)) throw sim::UsageError("models::db: updating a column of the key index is not modelled");
  if (assigns("id")) throw sim::UsageError("models::db: updating id is not modelled");
}

void refuse_id(const TableSchema& schema, Engine engine, const Statement& st) {
  if (!schema.clustered_key) return;
  const auto names_id = [](const auto& self, const Expr& e) -> bool {
    if (e.kind == Expr::Kind::column && e.column == "id") return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(self, a); });
  };
  const StatementExtra& x = st.more();
  const bool named =
      std::any_of(st.where.begin(), st.where.end(), [](const Condition& c) { return c.column == "id"; }) ||
      std::any_of(x.filter.begin(), x.filter.end(), [&](const Expr& e) { return names_id(names_id, e); }) ||
      std::any_of(x.assign.begin(), x.assign.end(), [&](const auto& a) { return a.first == "id" || names_id(names_id, a.second); }) ||
      std::any_of(x.order_by.begin(), x.order_by.end(), [](const auto& o) { return o.first == "id"; }) ||
      st.values.count("id") || st.on_update.count("id") ||
      std::any_of(x.more_rows.begin(), x.more_rows.end(), [](const Values& row) { return row.count("id") > 0; });
  if (!named) return;
  if (engine == Engine::postgresql) throw Failure{Code::bad_field, "column \"id\" does not exist"};
  throw Failure{Code::bad_field, "Unknown column 'id' in 'where clause'"};
}


// A text's map node, its place by number, and its characters where they do not sit inline.
std::uint64_t Origins::origin_bytes(const std::string& who) {
  return 96 + sizeof(Kept) + (who.size() > 15 ? (who.size() + 16) & ~std::uint64_t{15} : 0);
}

void Origins::keep(Stored& slot, std::string who, std::uint64_t transaction, sim::Time inserted_at) {
  Origin origin{std::move(who), transaction, inserted_at};
  auto it = numbers_.find(origin);
  if (it == numbers_.end()) {
    bytes_ += origin_bytes(std::get<0>(origin));
    std::uint32_t number;
    if (unused_.empty()) {
      number = static_cast<std::uint32_t>(kept_.size());
      kept_.emplace_back();
    } else {
      number = unused_.back();
      unused_.pop_back();
    }
    it = numbers_.emplace(std::move(origin), number).first;
    kept_[number].at = it;
  }
  ++kept_[it->second].rows;  // before the drop: a row may keep the origin it had
  drop(slot);
  slot = Stored{it->second};
}

void Origins::drop(Stored& slot) {
  if (slot.number == Stored::kNone) return;
  Kept& kept = kept_[slot.number];
  if (--kept.rows == 0) {
    bytes_ -= origin_bytes(std::get<0>(kept.at->first));
    numbers_.erase(kept.at);
    unused_.push_back(slot.number);
  }
  slot.number = Stored::kNone;
}

}  // namespace models::db::detail
