#pragma once
// One value in 16 bytes, as a table stores its rows' columns (models/db/row_values.hpp) and as
// the InnoDB model's secondary index stores its keys: the last byte says what it is, the first
// 15 hold it (an integer, or a string's bytes where they fit; a longer string's own copy by
// pointer). An index key of several columns is one Cell as well, pointing at its columns' cells.
//
// Cells order as the values they hold (Value's <: NULL, then integers, then strings by their
// bytes), so an index compares its stored keys without making Values of them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "models/db/expr.hpp"

namespace models::db::detail {

class Cell {
 public:
  explicit Cell(const Value& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      std::memcpy(bytes_, i, sizeof *i);
      tag() = kInteger;
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      if (s->size() <= kInline) {
        std::memcpy(bytes_, s->data(), s->size());
        tag() = static_cast<unsigned char>(kInlineString + s->size());
      } else {
        set_pointer(new std::string(*s));
        tag() = kLongString;
      }
    } else {
      tag() = kNull;
    }
  }
  /// Several values (an index key of several columns) as one cell.
  template <class Values>
  static Cell several(const Values& values) {
    Cell out(Value{});
    out.set_pointer(make_parts(values));
    out.tag() = kSeveral;
    return out;
  }
  Cell(const Cell& other) {
    std::memcpy(bytes_, other.bytes_, sizeof bytes_);
    if (tag() == kLongString) set_pointer(new std::string(*other.long_string()));
    if (tag() == kSeveral) set_pointer(make_parts(other.parts()));
  }
  Cell(Cell&& other) noexcept {
    std::memcpy(bytes_, other.bytes_, sizeof bytes_);
    other.tag() = kNull;  // what it pointed at is this cell's now
  }
  Cell& operator=(const Cell& other) {
    if (this != &other) {
      Cell copy(other);
      swap(copy);
    }
    return *this;
  }
  Cell& operator=(Cell&& other) noexcept {
    swap(other);
    return *this;
  }
  ~Cell() {
    if (tag() == kLongString) delete long_string();
    if (tag() == kSeveral) {
      Parts* parts = pointer<Parts>();
      for (std::uint32_t i = 0; i < parts->size; ++i) parts->cells[i].~Cell();
      ::operator delete(parts->cells);
      delete parts;
    }
  }

  Value value() const {
    const unsigned char t = tag();
    if (t == kNull) return Null{};
    if (t == kInteger) return integer();
    return std::string(text());
  }
  /// The values a cell of several holds; a cell of one value is its only part.
  std::span<const Cell> parts() const {
    if (tag() != kSeveral) return {this, 1};
    const Parts* p = pointer<Parts>();
    return {p->cells, p->size};
  }
  /// <0, 0, >0 as this cell's value sorts before, with, or after `v` (Value's order).
  int compare(const Value& v) const {
    const int rank = this->rank(), other = static_cast<int>(v.index());
    if (rank != other) return rank < other ? -1 : 1;
    if (rank == 1) return three_way(integer(), std::get<std::int64_t>(v));
    if (rank == 2) return text().compare(std::get<std::string>(v));
    return 0;
  }
  int compare(const Cell& o) const {
    const int rank = this->rank(), other = o.rank();
    if (rank != other) return rank < other ? -1 : 1;
    if (rank == 1) return three_way(integer(), o.integer());
    if (rank == 2) return text().compare(o.text());
    return 0;
  }
  /// What it holds beside its 16 bytes: a long string's copy, a key's columns.
  std::uint64_t heap_bytes() const {
    if (tag() == kLongString) return sizeof(std::string) + ((long_string()->size() + 16) & ~std::uint64_t{15});  // rounded as an allocator rounds
    if (tag() == kSeveral) {
      std::uint64_t out = sizeof(Parts);
      for (const Cell& c : parts()) out += sizeof(Cell) + c.heap_bytes();
      return out;
    }
    return 0;
  }

 private:
  struct Parts {
    std::uint32_t size;
    Cell* cells;
  };
  // A block of cells made from each of `from` (Values, or the cells of a key being copied).
  template <class Range>
  static Parts* make_parts(const Range& from) {
    auto* parts = new Parts{static_cast<std::uint32_t>(std::size(from)), nullptr};
    parts->cells = static_cast<Cell*>(::operator new(parts->size * sizeof(Cell)));
    std::size_t i = 0;
    for (const auto& v : from) new (parts->cells + i++) Cell(v);
    return parts;
  }
  static constexpr std::size_t kInline = 15;
  static constexpr unsigned char kNull = 0, kInteger = 1, kLongString = 2, kSeveral = 3, kInlineString = 16;
  static int three_way(std::int64_t a, std::int64_t b) { return a < b ? -1 : a > b ? 1 : 0; }
  unsigned char& tag() { return bytes_[15]; }
  unsigned char tag() const { return bytes_[15]; }
  // Value's alternatives in order: 0 NULL, 1 an integer, 2 a string.
  int rank() const {
    const unsigned char t = tag();
    return t == kNull ? 0 : t == kInteger ? 1 : 2;
  }
  std::int64_t integer() const {
    std::int64_t i;
    std::memcpy(&i, bytes_, sizeof i);
    return i;
  }
  std::string_view text() const {
    if (tag() == kLongString) return *long_string();
    return {reinterpret_cast<const char*>(bytes_), static_cast<std::size_t>(tag() - kInlineString)};
  }
  template <class T>
  T* pointer() const {
    T* p;
    std::memcpy(&p, bytes_, sizeof p);
    return p;
  }
  const std::string* long_string() const { return pointer<const std::string>(); }
  template <class T>
  void set_pointer(T* p) {
    std::memcpy(bytes_, &p, sizeof p);
  }
  void swap(Cell& other) noexcept {
    unsigned char tmp[16];
    std::memcpy(tmp, bytes_, sizeof tmp);
    std::memcpy(bytes_, other.bytes_, sizeof tmp);
    std::memcpy(other.bytes_, tmp, sizeof tmp);
  }
  alignas(8) unsigned char bytes_[16];
};
static_assert(sizeof(Cell) == 16);

/// Lexicographic order of two lists of values, the shorter first where one begins the other
/// (as Key's < orders them): <0, 0, >0.
template <class Values>
int compare_parts(std::span<const Cell> cells, const Values& values) {
  auto v = std::begin(values);
  const auto end = std::end(values);
  for (const Cell& c : cells) {
    if (v == end) return 1;
    if (const int d = c.compare(*v++); d != 0) return d;
  }
  return v == end ? 0 : -1;
}
inline int compare_parts(std::span<const Cell> a, std::span<const Cell> b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (const int d = a[i].compare(b[i]); d != 0) return d;
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

}  // namespace models::db::detail
