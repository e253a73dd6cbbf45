// A stored row's columns (models/db/row_values.hpp): they read back as they were given, in
// name order, and a change to a copy leaves the others as they were. The 16-byte cells they
// and the InnoDB model's index keys are made of (models/db/cell.hpp) order as their values.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "models/db/cell.hpp"
#include "models/db/row_values.hpp"

namespace db = models::db;

namespace {

const std::string kLong(40, 'x');  // past what a value holds inline

db::Values every_kind() {
  return {{"id", std::int64_t{-7}}, {"empty", std::string()}, {"note", std::string("fifteen bytes!!")},
          {"big", std::numeric_limits<std::int64_t>::min()}, {"gone", db::Null{}}, {"text", kLong}};
}

// Values as an index meets them: NULL, integers at both ends, strings that fit inline and
// longer ones, with shared prefixes and bytes past 127 (which sort after ASCII).
rc::Gen<db::Value> any_value() {
  return rc::gen::oneOf(
      rc::gen::just(db::Value{db::Null{}}),
      rc::gen::map(rc::gen::element<std::int64_t>(std::numeric_limits<std::int64_t>::min(), -1, 0, 1, 2,
                                                   std::numeric_limits<std::int64_t>::max()),
                   [](std::int64_t i) { return db::Value{i}; }),
      rc::gen::map(rc::gen::inRange<std::int64_t>(-3, 4), [](std::int64_t i) { return db::Value{i}; }),
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 20), [](std::size_t n) {
        return rc::gen::map(rc::gen::container<std::string>(n, rc::gen::element<char>('a', 'b', '\0', '\xff')),
                            [](std::string s) { return db::Value{std::move(s)}; });
      }));
}
int sign(int d) { return (d > 0) - (d < 0); }
int order(const db::Value& a, const db::Value& b) { return a < b ? -1 : b < a ? 1 : 0; }

}  // namespace

TEST_CASE("a cell orders as the value it holds, and a key of several cells as the list of its values", "[db]") {
  rc::prop("Cell::compare agrees with Value's order", [] {
    const auto a = *any_value();
    const auto b = *any_value();
    const db::detail::Cell x(a), y(b);
    RC_ASSERT(sign(x.compare(b)) == order(a, b));
    RC_ASSERT(sign(x.compare(y)) == order(a, b));
    RC_ASSERT(x.value() == a);
  });
  rc::prop("a key of several columns compares as its values' list, shorter first where one begins the other", [] {
    const auto a = *rc::gen::container<std::vector<db::Value>>(*rc::gen::inRange<std::size_t>(2, 4), any_value());
    const auto b = *rc::gen::container<std::vector<db::Value>>(*rc::gen::inRange<std::size_t>(0, 4), any_value());
    const db::detail::Cell key = db::detail::Cell::several(a);
    const db::detail::Cell copy = key;  // a copy holds its own columns
    RC_ASSERT(copy.parts().size() == a.size());
    const int expected = a < b ? -1 : b < a ? 1 : 0;
    RC_ASSERT(sign(db::detail::compare_parts(copy.parts(), b)) == expected);
    if (b.size() >= 2) {
      const db::detail::Cell other = db::detail::Cell::several(b);
      RC_ASSERT(sign(db::detail::compare_parts(key.parts(), other.parts())) == expected);
    }
    std::vector<db::Value> back;
    for (const auto& c : key.parts()) back.push_back(c.value());
    RC_ASSERT(back == a);
  });
}

TEST_CASE("a stored row reads back each value as given: NULL, integers, inline and long strings", "[db]") {
  const db::RowValues row(every_kind());
  CHECK(row.size() == 6);
  CHECK(row.to_values() == every_kind());
  CHECK(row.at("id") == db::Value{std::int64_t{-7}});
  CHECK(row.at("big") == db::Value{std::numeric_limits<std::int64_t>::min()});
  CHECK(row.at("empty") == db::Value{std::string()});
  CHECK(row.at("note") == db::Value{std::string("fifteen bytes!!")});
  CHECK(db::is_null(row.at("gone")));
  CHECK(row.at("text") == db::Value{kLong});
  CHECK_FALSE(row.find("missing"));
  CHECK_THROWS_AS(row.at("missing"), std::out_of_range);
  std::string names;
  for (const auto& [column, value] : row) names += column + ",";
  CHECK(names == "big,empty,gone,id,note,text,");  // name order, as a Values iterates
}

TEST_CASE("a stored row's copies share it until one is set, which leaves the others as they were", "[db]") {
  const db::RowValues original(every_kind());
  db::RowValues copy = original;
  CHECK(copy == original);
  copy.set("text", std::string("short"));
  copy.set("added", std::int64_t{1});
  CHECK(original.at("text") == db::Value{kLong});
  CHECK_FALSE(original.find("added"));
  CHECK(copy.at("text") == db::Value{std::string("short")});
  CHECK(copy.at("added") == db::Value{std::int64_t{1}});
  CHECK_FALSE(copy == original);
  db::RowValues moved = std::move(copy);
  CHECK(moved.size() == 7);
}

TEST_CASE("a stored row costs 16 bytes a column and a long string's copy, and rows made on one shape keep their own columns", "[db]") {
  db::RowValues::Shape shape;
  const db::RowValues a(every_kind(), shape), b(every_kind(), shape);
  CHECK(a == b);
  db::Values no_long = every_kind();
  no_long["text"] = std::string("short");
  const db::RowValues c(no_long, shape);
  CHECK(c.bytes() == 16 + 6 * 16);
  CHECK(a.bytes() > c.bytes() + kLong.size());
  db::Values other{{"id", std::int64_t{1}}};  // other columns: the shape follows them
  const db::RowValues d(other, shape);
  CHECK(d.at("id") == db::Value{std::int64_t{1}});
  CHECK(a.at("note") == db::Value{std::string("fifteen bytes!!")});  // the rows made before keep their names
}
