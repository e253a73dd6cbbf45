#include "sim/random.hpp"

#include <fmt/format.h>

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

Stream ChoiceSource::stream(std::string_view name) {
  const std::uint64_t hash = hash_name(name);
  auto [it, fresh] = by_hash_.try_emplace(hash, static_cast<std::uint32_t>(streams_.size()));
  if (!fresh) {
    for (std::uint32_t id = it->second;; id = streams_[id].next_same_hash) {
      if (streams_[id].name == name) return Stream(this, id, &streams_[id]);
      if (streams_[id].next_same_hash == kNoStream) {
        streams_[id].next_same_hash = static_cast<std::uint32_t>(streams_.size());
        break;
      }
    }
  }
  const auto id = static_cast<std::uint32_t>(streams_.size());
  // The stream seed mixes the run seed with the name, so streams are independent of
  // the order in which components are created.
  streams_.push_back(StreamState{std::string(name), Xoshiro256(SplitMix64(seed_ ^ hash).next())});
  if (recording_) record_.streams.emplace_back(name);
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

std::uint64_t ChoiceSource::answer(std::uint32_t stream, std::uint64_t range, bool enumerable) {
  if (drawn_ != nullptr) drawn_->push_back(stream);
  std::uint64_t value;
  if (enumerable && chooser_ && replay_pos_ >= replay_.answers.size()) {
    draw(stream, range);  // drawn and dropped: the stream's later draws stay those of the seed
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

}  // namespace sim
