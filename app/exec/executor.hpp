#pragma once
// The one executor of numbered work items, which the runner's trials and the searches' runs
// both go through: items run on this process's threads (OrderedWork) and, when the command was
// started by mpirun or srun, on the other ranks too. The leader hands them items and folds
// their answers in item order with its own threads' results, so the results are those of one
// process whatever the threads and ranks (app/exec/cluster.hpp). Outside app/exec/ nothing
// names MPI: a caller asks whether it leads, serves when it does not, and runs its work here.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "app/exec/cluster.hpp"
#include "app/exec/ordered_work.hpp"

namespace locksim::exec {

/// This process's part in a command, in main(): joins the other ranks when mpirun started it.
using Session = cluster::Session;
/// Thrown on a rank whose leader failed: it ends quietly with this exit code, the leader reports.
using Quit = cluster::Quit;

/// Whether this process reports, printing and writing: always, except on the ranks under
/// mpirun that only run the leader's items.
inline bool leader() { return cluster::leader(); }

/// A rank's part in the leader's work named `fingerprint`: runs each item's request through
/// `answer` on `jobs` threads and sends back what it returns, until the leader ends the work.
inline void serve(const std::string& fingerprint, int jobs, const std::function<std::string(std::uint64_t, const std::string&)>& answer) {
  cluster::serve(fingerprint, jobs, answer);
}

/// The leader's other ranks for one piece of work, named by `fingerprint` (the scenarios, their
/// hashes, the items: a rank that read other files is refused); none without mpirun. They wait
/// for items while this lives, and are told the work is over when it ends.
class Ranks {
 public:
  /// `ahead`: items handed to a rank per thread it runs, so that it has the next ones at hand
  /// while the answers travel (more for short items).
  Ranks(const std::string& fingerprint, int ahead) {
    if (cluster::distributed()) workers_.emplace(fingerprint, ahead);
  }

  /// Threads over the other ranks: the items it pays to have handed out at once (0: none).
  int threads() const { return workers_ ? workers_->threads() : 0; }

  /// Runs `work`: `local(item)` on `jobs` threads of this process and, with other ranks, the
  /// caller's thread handing items to them with `request(item)` (what a rank needs beyond the
  /// item's number), each answer made a result by `decode(item, bytes)` and folded as the local
  /// threads' results are.
  template <class Result>
  void run(OrderedWork<Result>& work, int jobs, const std::function<std::optional<Result>(std::size_t)>& local,
           const std::function<std::string(std::uint64_t)>& request,
           const std::function<Result(std::uint64_t, std::string&&)>& decode) {
    std::function<void()> lead;
    if (workers_) lead = [&] { lead_ranks(work, request, decode); };
    work.run(jobs, local, lead);
  }

 private:
  template <class Result>
  void lead_ranks(OrderedWork<Result>& work, const std::function<std::string(std::uint64_t)>& request,
                  const std::function<Result(std::uint64_t, std::string&&)>& decode) {
    using Take = typename OrderedWork<Result>::Take;
    cluster::lead(
        *workers_,
        [&](std::uint64_t& item) {
          std::size_t taken = 0;
          const Take next = work.try_take(taken);
          item = taken;
          return next == Take::item ? cluster::Next::item : next == Take::wait ? cluster::Next::wait : cluster::Next::over;
        },
        request, [&](std::uint64_t item, std::string&& answer) { work.done(item, decode(item, std::move(answer))); });
  }

  std::optional<cluster::Workers> workers_;
};

}  // namespace locksim::exec
