#pragma once
// The words the replay's stories (explain.cpp) and its sequence diagram (sequence_svg.cpp) share,
// so a hold, a row and a reply read the same in both.

#include <cstddef>
#include <string>
#include <vector>

#include "reports/results.hpp"

namespace locksim::reports {

/// A hold's row in the picture and its tooltip: "<lock>  <holder>".
std::string row_of(const Timeline::Bar& b);
/// An insert, as the diagram and the narration name it: "row 17 by app-1 worker 4, ...".
std::string label(const Timeline::Mark& m);
/// What a node was doing over a band: paused, crashed, cut off.
std::string band_words(const Timeline::Band& b);
/// How the service ended a hold on its own: a Redis key's TTL, a ZooKeeper session, an etcd lease.
std::string lost_words(const Timeline::Bar& b);
/// A client's attempt (its request names its operation), not a call to a lock service.
bool is_attempt(const Timeline::Message& m);
/// Whether the reply reached the caller while it still waited.
bool answered_in_time(const Timeline::Message& m);
/// What a reply meant, where the command alone does not say: a SET NX answered (nil) was refused.
std::string reply_words(const Timeline::Message& m);

/// A message told once for it and the ones like it its caller sent next (a lock's retry loop,
/// keep-alives): the same callee, request and reply.
struct Folded {
  const Timeline::Message* message;
  std::size_t times = 1;
  double last_s = 0;  // the last one's sending
};
std::vector<Folded> fold_messages(const Timeline& t);

}  // namespace locksim::reports
