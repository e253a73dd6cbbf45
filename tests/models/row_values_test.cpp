// A stored row's columns (models/db/row_values.hpp): they read back as they were given, in
// name order, and a change to a copy leaves the others as they were.

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "models/db/row_values.hpp"

namespace db = models::db;

namespace {

const std::string kLong(40, 'x');  // past what a value holds inline

db::Values every_kind() {
  return {{"id", std::int64_t{-7}}, {"empty", std::string()}, {"note", std::string("fifteen bytes!!")},
          {"big", std::numeric_limits<std::int64_t>::min()}, {"gone", db::Null{}}, {"text", kLong}};
}

}  // namespace

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
