#include "models/db/row_values.hpp"

#include "models/db/cell.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace models::db {
using detail::Cell;

// The column names, in name order, of every row made with one Shape.
struct RowValues::Names {
  std::atomic<std::uint32_t> refs{1};
  std::vector<std::string> list;
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

// A header and the row's cells after it, in one allocation.
struct RowValues::Block {
  std::atomic<std::uint32_t> refs{1};
  std::uint32_t size = 0;
  Names* names = nullptr;
  Cell* cells() { return reinterpret_cast<Cell*>(this + 1); }
  const Cell* cells() const { return reinterpret_cast<const Cell*>(this + 1); }
};

namespace {
bool same_columns(const std::vector<std::string>& names, const Values& values) {
  return names.size() == values.size() &&
         std::equal(names.begin(), names.end(), values.begin(), [](const std::string& n, const auto& kv) { return n == kv.first; });
}
}  // namespace

RowValues::Shape::Shape(const Shape& other) noexcept : names_(other.names_) {
  if (names_) names_->retain();
}

RowValues::Shape& RowValues::Shape::operator=(const Shape& other) noexcept {
  if (other.names_) other.names_->retain();
  if (names_) names_->release();
  names_ = other.names_;
  return *this;
}

RowValues::Shape::~Shape() {
  if (names_) names_->release();
}

RowValues::Block* RowValues::make(const Values& values, Names* names) {
  static_assert(sizeof(Block) == 16 && alignof(Block) >= alignof(Cell));
  void* memory = ::operator new(sizeof(Block) + values.size() * sizeof(Cell));
  Block* b = new (memory) Block{};
  b->size = static_cast<std::uint32_t>(values.size());
  b->names = names;
  Cell* cells = b->cells();
  std::size_t i = 0;
  for (const auto& [column, value] : values) new (cells + i++) Cell(value);
  return b;
}

RowValues::RowValues(const Values& values) {
  Shape own;  // a list of names for this row alone
  *this = RowValues(values, own);
}

RowValues::RowValues(const Values& values, Shape& shape) {
  if (values.empty()) return;
  if (!shape.names_ || !same_columns(shape.names_->list, values)) {
    auto* names = new Names;
    names->list.reserve(values.size());
    for (const auto& [column, value] : values) names->list.push_back(column);
    if (shape.names_) shape.names_->release();
    shape.names_ = names;
  }
  shape.names_->retain();
  block_ = make(values, shape.names_);
}

RowValues::RowValues(const RowValues& other) noexcept : block_(other.block_) {
  if (block_) block_->refs.fetch_add(1, std::memory_order_relaxed);
}

RowValues& RowValues::operator=(const RowValues& other) noexcept {
  RowValues copy(other);
  std::swap(block_, copy.block_);
  return *this;
}

RowValues& RowValues::operator=(RowValues&& other) noexcept {
  std::swap(block_, other.block_);
  return *this;
}

RowValues::~RowValues() {
  if (!block_ || block_->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Cell* cells = block_->cells();
  for (std::uint32_t i = 0; i < block_->size; ++i) cells[i].~Cell();
  block_->names->release();
  block_->~Block();
  ::operator delete(block_);
}

std::size_t RowValues::size() const { return block_ ? block_->size : 0; }

std::size_t RowValues::position(const std::string& column) const {
  if (!block_) return kAbsent;
  const auto& names = block_->names->list;
  const auto it = std::lower_bound(names.begin(), names.end(), column);
  return it != names.end() && *it == column ? static_cast<std::size_t>(it - names.begin()) : kAbsent;
}

Value RowValues::at(const std::string& column) const {
  const std::size_t i = position(column);
  if (i == kAbsent) throw std::out_of_range("no column " + column);
  return block_->cells()[i].value();
}

std::optional<Value> RowValues::find(const std::string& column) const {
  const std::size_t i = position(column);
  if (i == kAbsent) return std::nullopt;
  return block_->cells()[i].value();
}

Values RowValues::to_values() const {
  Values out;
  if (!block_) return out;
  out.reserve(block_->size);
  for (const auto& [column, value] : *this) out.emplace_hint(out.end(), column, std::move(value));
  return out;
}

void RowValues::set(const std::string& column, Value value) {
  Values values = to_values();
  values[column] = std::move(value);
  if (block_ && values.size() == block_->size) {  // the same columns: keep sharing their names
    block_->names->retain();
    RowValues changed;
    changed.block_ = make(values, block_->names);
    *this = std::move(changed);
  } else {
    *this = RowValues(values);
  }
}

RowValues::iterator::value_type RowValues::iterator::operator*() const {
  return {block_->names->list[i_], block_->cells()[i_].value()};
}

bool RowValues::operator==(const RowValues& other) const {
  if (block_ == other.block_) return true;
  if (size() != other.size()) return false;
  for (auto a = begin(), b = other.begin(); a != end(); ++a, ++b) {
    const auto x = *a, y = *b;
    if (x.first != y.first || x.second != y.second) return false;
  }
  return true;
}

std::uint64_t RowValues::bytes() const {
  if (!block_) return 0;
  std::uint64_t out = sizeof(Block) + block_->size * sizeof(Cell);
  for (std::uint32_t i = 0; i < block_->size; ++i) out += block_->cells()[i].heap_bytes();
  return out;
}

}  // namespace models::db
