#include "sim/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sim/errors.hpp"

namespace sim {

std::uint64_t hash_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

ChoiceSource::ChoiceSource(std::uint64_t seed) : seed_(seed) {}

Stream ChoiceSource::stream(std::string_view name) { return find_or_add(name); }

Stream ChoiceSource::stream(std::string&& name) { return find_or_add(std::move(name)); }

Stream ChoiceSource::stream(const char* name) { return find_or_add(std::string_view(name)); }

// The slot that holds `hash`, or the free one where it goes. A slot is picked by FNV-1a's
// high bits: its low bits depend only on the low bits of each byte.
std::size_t ChoiceSource::free_slot(std::uint64_t hash) const {
  const std::size_t mask = by_hash_.size() - 1;
  std::size_t i = hash >> (64 - index_bits_);
  while (by_hash_[i].first != kNoStream && by_hash_[i].hash != hash) i = (i + 1) & mask;
  return i;
}

template <class Name>
Stream ChoiceSource::find_or_add(Name&& name) {
  const std::string_view asked = name;
  const std::uint64_t hash = hash_name(asked);
  const auto id = static_cast<std::uint32_t>(streams_.size());
  if (2 * (streams_.size() + 1) > by_hash_.size()) {  // at most half full, with the new stream
    std::vector<HashSlot> old = std::exchange(by_hash_, std::vector<HashSlot>(std::size_t{1} << ++index_bits_));
    for (const HashSlot& slot : old)
      if (slot.first != kNoStream) by_hash_[free_slot(slot.hash)] = slot;
  }
  const std::size_t i = free_slot(hash);
  if (by_hash_[i].first == kNoStream) {
    by_hash_[i] = HashSlot{hash, id};
  } else {
    for (std::uint32_t same = by_hash_[i].first;; same = streams_[same].next_same_hash) {
      if (streams_[same].name == asked) return Stream(this, same, &streams_[same]);
      if (streams_[same].next_same_hash == kNoStream) {
        streams_[same].next_same_hash = id;
        break;
      }
    }
  }
  // The stream seed mixes the run seed with the name, so streams are independent of
  // the order in which components are created.
  streams_.push_back(StreamState{std::string(std::forward<Name>(name)), Xoshiro256(SplitMix64(seed_ ^ hash).next())});
  if (recording_) record_.streams.emplace_back(streams_.back().name);
  return Stream(this, id, &streams_.back());
}

void ChoiceSource::start_recording() {
  if (!recording_)
    for (std::size_t id = record_.streams.size(); id < streams_.size(); ++id) record_.streams.push_back(streams_[id].name);
  recording_ = true;
  plain_ = false;
}

void ChoiceSource::replay(ChoiceRecord record, AfterRecord after) {
  replay_ = std::move(record);
  replay_pos_ = 0;
  replaying_ = true;
  after_ = after;
  plain_ = false;
}

std::uint64_t ChoiceSource::draw(std::uint32_t stream, std::uint64_t range) {
  Xoshiro256& rng = streams_[stream].rng;
  if (range == 0) return rng.next();
  return bounded(range, [&] { return rng.next(); });
}

void ChoiceSource::set_chooser(Chooser chooser) {
  chooser_ = std::move(chooser);
  plain_ = plain_ && !chooser_;
}

namespace {

// The sum of `weights`: the range a weighted choice draws over.
std::uint64_t total_of(std::span<const std::uint32_t> weights) {
  std::uint64_t total = 0;
  for (const std::uint32_t w : weights) total += w;
  return total;
}

// The option a draw in [0, total_of(weights)) falls on.
std::uint64_t option_of(std::uint64_t drawn, std::span<const std::uint32_t> weights) {
  std::uint64_t option = 0;
  while (drawn >= weights[option]) drawn -= weights[option++];
  return option;
}

}  // namespace

std::uint64_t ChoiceSource::answer(std::uint32_t stream, std::uint64_t range, bool enumerable, std::span<const std::uint32_t> weights) {
  if (drawn_ != nullptr) drawn_->push_back(stream);
  std::uint64_t value;
  if (enumerable && chooser_ && replay_pos_ >= replay_.answers.size()) {
    // Drawn and dropped: the stream's later draws stay those of the seed.
    draw(stream, weights.empty() ? range : total_of(weights));
    value = chooser_(streams_[stream].name, range);
    if (value >= range)
      throw UsageError(fmt::format("sim::ChoiceSource: the chooser answered {} for a choice among {} (stream '{}')",
                                   value, range, streams_[stream].name));
  } else if (replay_pos_ < replay_.answers.size()) {
    const Answer& recorded = replay_.answers[replay_pos_];
    const std::string& asked = streams_[stream].name;
    const std::string& had = recorded.stream < replay_.streams.size() ? replay_.streams[recorded.stream]
                                                                      : std::string("?");
    if (had != asked || recorded.range != range || (range != 0 && recorded.value >= range)) {
      throw ReplayDivergence(fmt::format(
          "replay diverged at answer #{}: the record answers stream '{}' over range {}, the run asks "
          "stream '{}' over range {}",
          replay_pos_, had, recorded.range, asked, range));
    }
    value = recorded.value;
    ++replay_pos_;
  } else if (replaying_ && after_ == AfterRecord::fail) {
    throw ReplayDivergence(fmt::format("replay ran past the end of its record ({} answers) at stream '{}'",
                                       replay_.answers.size(), streams_[stream].name));
  } else if (!weights.empty()) {
    value = option_of(draw(stream, total_of(weights)), weights);
  } else {
    value = draw(stream, range);
  }
  if (recording_) record_.answers.push_back(Answer{stream, range, value});
  return value;
}

std::uint64_t Stream::choose(std::uint64_t n) {
  if (n == 0) throw UsageError("sim::Stream::choose: n must be at least 1 (stream '" + state_->name + "')");
  if (fast()) return bounded(n, [this] { return state_->rng.next(); });
  return src_->answer(id_, n);
}

std::uint64_t Stream::pick(std::uint64_t n) {
  if (n == 0) throw UsageError("sim::Stream::pick: n must be at least 1 (stream '" + state_->name + "')");
  if (fast()) return bounded(n, [this] { return state_->rng.next(); });
  return src_->answer(id_, n, n >= 2);
}

std::uint64_t Stream::pick_weighted(std::span<const std::uint32_t> weights) {
  if (weights.empty() || std::find(weights.begin(), weights.end(), 0u) != weights.end())
    throw UsageError("sim::Stream::pick_weighted: each of at least one weight must be at least 1 (stream '" + state_->name + "')");
  if (fast()) return option_of(bounded(total_of(weights), [this] { return state_->rng.next(); }), weights);
  return src_->answer(id_, weights.size(), weights.size() >= 2, weights);
}

}  // namespace sim
