#pragma once
// A row's columns as a table stores them: one block per row version, its values by position
// against a list of column names that every row of the same columns shares. A value takes 16
// bytes (an integer, NULL, or a string of up to 15 bytes inline; a longer string points at its
// own copy), so a row of seven narrow columns costs 128 bytes where a Values of the same
// columns, a name and a variant each, cost 552 (docs/limits.md, "Memory budget").
//
// Copies share the block, so a SELECT's result or a checker's list of a table of millions of
// rows costs a pointer a row. Blocks are immutable once made: a change makes a new one (set()).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "models/db/expr.hpp"

namespace models::db {

class RowValues {
  struct Names;
  struct Block;

 public:
  /// A cache of the column list rows of a table share: rows made with the same cache and the
  /// same columns point at one list (what a table of millions of rows needs), where rows made
  /// without one each carry their own.
  class Shape {
   public:
    Shape() = default;
    Shape(const Shape& other) noexcept;
    Shape& operator=(const Shape& other) noexcept;
    ~Shape();

   private:
    friend class RowValues;
    Names* names_ = nullptr;
  };

  RowValues() = default;
  RowValues(const Values& values);  // NOLINT: a Values reads as the same row
  RowValues(const Values& values, Shape& shape);
  RowValues(std::initializer_list<Values::value_type> values) : RowValues(Values(values)) {}
  RowValues(const RowValues& other) noexcept;
  RowValues(RowValues&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  RowValues& operator=(const RowValues& other) noexcept;
  RowValues& operator=(RowValues&& other) noexcept;
  ~RowValues();

  std::size_t size() const;
  bool empty() const { return size() == 0; }
  bool contains(const std::string& column) const { return position(column) != kAbsent; }
  std::size_t count(const std::string& column) const { return contains(column) ? 1 : 0; }
  /// The column's value; std::out_of_range where the row has no such column (as Values::at).
  Value at(const std::string& column) const;
  /// The column's value, or nullopt where the row has no such column.
  std::optional<Value> find(const std::string& column) const;
  /// Every column as a Values, to change or to hand to what reads one.
  Values to_values() const;
  /// Sets one column (adds it where the row has none): a new block, the shared one untouched.
  void set(const std::string& column, Value value);

  /// Columns in name order, as a Values iterates them: `for (const auto& [column, value] : row)`.
  class iterator {
   public:
    using value_type = std::pair<const std::string&, Value>;
    value_type operator*() const;
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    friend class RowValues;
    iterator(const Block* block, std::size_t i) : block_(block), i_(i) {}
    const Block* block_;
    std::size_t i_;
  };
  iterator begin() const { return {block_, 0}; }
  iterator end() const { return {block_, size()}; }

  bool operator==(const RowValues& other) const;

  /// The bytes this row's block holds, the shared column list not counted: 16 bytes of header,
  /// 16 a column, and each string too long to sit inline with its own allocation.
  std::uint64_t bytes() const;

 private:
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);
  std::size_t position(const std::string& column) const;
  static Block* make(const Values& values, Names* names);
  Block* block_ = nullptr;  // null: no columns
};

}  // namespace models::db
