#pragma once
// The run's single source of nondeterminism.
//
// Every random draw and every scheduling choice of a run is an answer of its ChoiceSource.
// In random mode the answers come from seeded PRNGs (xoshiro256** seeded through
// splitmix64), one stream per component, derived from the run seed and the component's
// name, so adding a component never shifts another's sequence. The answers can be
// recorded, and a record can be replayed: a replayed run asks the same questions and
// gets the recorded answers whatever the seed, which is what replay tokens, shrinking
// and the explorers build on.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sim {

/// splitmix64: expands one 64-bit seed into well-mixed 64-bit values.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/// xoshiro256** 1.0 (Blackman and Vigna), seeded from splitmix64 as its authors advise.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    SplitMix64 sm(seed);
    for (auto& word : s_) word = sm.next();
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

/// 64-bit FNV-1a of a name: how a component's name becomes part of its stream seed.
std::uint64_t hash_name(std::string_view name);

/// One answer of a run: which stream asked, over which range ([0, range), 0 = all 64 bits).
struct Answer {
  std::uint32_t stream = 0;
  std::uint64_t range = 0;
  std::uint64_t value = 0;
  bool operator==(const Answer&) const = default;
};

/// Every answer a run received, in order, with the names of the streams that asked.
struct ChoiceRecord {
  std::vector<std::string> streams;
  std::vector<Answer> answers;
};

/// What a replay does once the record is used up.
enum class AfterRecord { continue_randomly, fail };

class Stream;

/// An explorer's answer to an enumerable choice (Stream::pick): the asking stream and the
/// number of options n >= 2; returns an index in [0, n).
using Chooser = std::function<std::uint64_t(const std::string& stream, std::uint64_t n)>;

/// The run's choice source; see the file comment.
class ChoiceSource {
 public:
  explicit ChoiceSource(std::uint64_t seed);
  ChoiceSource(const ChoiceSource&) = delete;
  ChoiceSource& operator=(const ChoiceSource&) = delete;

  std::uint64_t seed() const { return seed_; }

  /// The stream of the named component (the same name gives the same stream).
  Stream stream(std::string_view name);
  /// The same, keeping `name` itself when the stream is new (no copy of a name built to ask).
  Stream stream(std::string&& name);
  Stream stream(const char* name);

  /// Keeps every answer from now on (also while replaying).
  void start_recording();
  const ChoiceRecord& record() const { return record_; }

  /// Answers from `record` before asking the PRNGs; a question that differs from the
  /// recorded one (another stream or range) throws ReplayDivergence.
  void replay(ChoiceRecord record, AfterRecord after = AfterRecord::continue_randomly);
  /// Answers taken from the replayed record so far.
  std::size_t replayed() const { return replay_pos_; }

  /// From now on `chooser` answers every enumerable choice (Stream::pick with n >= 2)
  /// instead of the streams' PRNGs: how `explore --mode dfs` walks the choice tree.
  void set_chooser(Chooser chooser);
  /// Whether a chooser answers the enumerable choices: an explorer walks them, so choices
  /// that exist only for a search (where to place a fault) are asked.
  bool exploring() const { return static_cast<bool>(chooser_); }
  /// From now on, the id of every stream asked to draw (outside the plain fast path, that is
  /// with a chooser, a record or a replay) is appended to `*drawn`; null stops it. The engine's
  /// footprints use it (sim/footprints.hpp).
  void watch_draws(std::vector<std::uint64_t>* drawn) { drawn_ = drawn; }

 private:
  friend class Stream;
  static constexpr std::uint32_t kNoStream = 0xffffffff;
  struct StreamState {
    std::string name;
    Xoshiro256 rng;
    std::uint32_t next_same_hash = kNoStream;  // another stream whose name hashes alike
  };
  /// A slot of the index from a name's hash to the first stream with it.
  struct HashSlot {
    std::uint64_t hash = 0;
    std::uint32_t first = kNoStream;  // none: the slot is free
  };
  template <class Name>
  Stream find_or_add(Name&& name);
  std::size_t free_slot(std::uint64_t hash) const;
  // An answer in [0, range) (all 64 bits for 0). An enumerable one may be the chooser's; with
  // `weights` (range of them), a random answer is option i at odds weights[i] / their sum.
  std::uint64_t answer(std::uint32_t stream, std::uint64_t range, bool enumerable = false, std::span<const std::uint32_t> weights = {});
  std::uint64_t draw(std::uint32_t stream, std::uint64_t range);

  std::uint64_t seed_;
  bool plain_ = true;  // neither recording nor replaying: streams draw directly
  bool recording_ = false;
  std::deque<StreamState> streams_;  // by id; a deque, so Stream's pointers stay valid
  // Name hash -> the first stream with it: open addressing, linear probing, at most half
  // full. A run makes a few dozen streams (a tree allocated a node for each) or, with
  // 100,000 clients, a few hundred thousand (a sorted vector inserted in linear time). Only
  // looked up, never walked, so its order reaches no result.
  std::vector<HashSlot> by_hash_;
  int index_bits_ = 5;  // by_hash_ has 2^index_bits_ slots (none before the first stream)
  ChoiceRecord record_;
  ChoiceRecord replay_;
  std::size_t replay_pos_ = 0;
  bool replaying_ = false;
  AfterRecord after_ = AfterRecord::continue_randomly;
  Chooser chooser_;
  std::vector<std::uint64_t>* drawn_ = nullptr;
};

/// A component's handle on the choice source. Cheap to copy; valid as long as its source.
class Stream {
 public:
  Stream() = default;
  /// 64 uniformly random bits.
  std::uint64_t bits() { return fast() ? state_->rng.next() : src_->answer(id_, 0); }
  /// A uniform choice in [0, n); n must be at least 1.
  std::uint64_t choose(std::uint64_t n);
  /// An enumerable choice in [0, n): like choose, but an explorer's chooser may answer it
  /// instead (the order of simultaneous events, a delay from a declared set). Index 0 is
  /// the default an explorer deviates from. n must be at least 1.
  std::uint64_t pick(std::uint64_t n);
  /// An enumerable choice whose options are not equally likely: option i at odds weights[i] /
  /// (their sum) in a random run, as the mechanism a model follows makes it (the order a server
  /// runs waiters woken together). An explorer's chooser answers it as it answers
  /// pick(weights.size()), and a record keeps the option. The likeliest goes first: index 0 is
  /// the default an explorer deviates from. Each weight must be at least 1.
  std::uint64_t pick_weighted(std::span<const std::uint32_t> weights);
  /// A uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(bits() >> 11) * 0x1.0p-53; }
  const std::string& name() const { return state_->name; }
  explicit operator bool() const { return src_ != nullptr; }

 private:
  friend class ChoiceSource;
  Stream(ChoiceSource* src, std::uint32_t id, ChoiceSource::StreamState* state)
      : src_(src), id_(id), state_(state) {}
  bool fast() const { return src_->plain_; }

  ChoiceSource* src_ = nullptr;
  std::uint32_t id_ = 0;
  ChoiceSource::StreamState* state_ = nullptr;
};

__extension__ using Uint128 = unsigned __int128;  // GCC and Clang on 64-bit targets

/// Lemire's nearly divisionless mapping of 64-bit draws to [0, n), drawing again on rejection.
template <class Draw>
std::uint64_t bounded(std::uint64_t n, Draw&& draw) {
  Uint128 m = static_cast<Uint128>(draw()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<Uint128>(draw()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

}  // namespace sim
