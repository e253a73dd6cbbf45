// sim::EventQueue: the pending events of the engine and of the bench's baseline loop.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/event_queue.hpp"

namespace {

// One step of a program against the queue: a push at a time (few distinct times, so
// there are ties), or a pop.
struct Step {
  bool push = true;
  std::int64_t at = 0;
};

bool earlier(const sim::Event& x, const sim::Event& y) { return std::tie(x.at, x.seq) < std::tie(y.at, y.seq); }

}  // namespace

TEST_CASE("the queue pops events by time, then by order of scheduling, whatever pushes and pops interleave") {
  rc::prop("pops match a sorted reference", [] {
    const auto steps = *rc::gen::container<std::vector<Step>>(rc::gen::build<Step>(
        rc::gen::set(&Step::push, rc::gen::weightedOneOf<bool>({{3, rc::gen::just(true)}, {2, rc::gen::just(false)}})),
        rc::gen::set(&Step::at, rc::gen::inRange<std::int64_t>(0, 8))));
    sim::EventQueue queue;
    std::vector<sim::Event> reference;  // what is pending, unsorted
    std::uint64_t payload = 0;
    for (const Step& step : steps) {
      if (step.push) {
        reference.push_back(queue.push(step.at, payload++, 0));
      } else if (!reference.empty()) {
        const auto expected = std::min_element(reference.begin(), reference.end(), earlier);
        RC_ASSERT(queue.top().a == expected->a);
        const sim::Event got = queue.pop();
        RC_ASSERT(got.a == expected->a);
        RC_ASSERT(got.at == expected->at);
        reference.erase(expected);
      }
      RC_ASSERT(queue.size() == reference.size());
      RC_ASSERT(queue.empty() == reference.empty());
    }
  });
}

TEST_CASE("an event pushed back with its sequence number keeps its place among simultaneous events") {
  sim::EventQueue queue;
  const sim::Event first = queue.push(5, 1, 0);
  queue.push(5, 2, 0);
  queue.push(3, 0, 0);
  CHECK(queue.pop().a == 0);
  CHECK(queue.pop().a == 1);
  queue.push(first);  // taken and returned: still before the second
  CHECK(queue.pop().a == 1);
  CHECK(queue.pop().a == 2);
  CHECK(queue.empty());
}
