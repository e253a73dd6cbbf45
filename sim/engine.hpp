#pragma once
// The discrete-event engine: simulated time, the event queue, nodes, processes.
//
// Processes are fibers written as straight-line blocking code (see sim/process.hpp);
// only one runs at a time and every wake-up is an event. Events at the same instant are
// ordered by the run's choice source, so explorers can permute them; with a seed the
// whole run is a pure function of (binary, configuration, seed).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/callback.hpp"
#include "sim/event_queue.hpp"
#include "sim/footprints.hpp"
#include "sim/random.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace sim {

using NodeId = std::uint32_t;
using ProcessId = std::uint32_t;

/// The node that exists in every engine: where fault injectors and other
/// out-of-world processes live. It cannot be paused or crashed.
inline constexpr NodeId kWorld = 0;

#ifdef NDEBUG
inline constexpr bool kGuardPagesByDefault = false;
#else
inline constexpr bool kGuardPagesByDefault = true;
#endif

/// Who an event ready at the current instant belongs to, for a tie-break policy: a
/// process id, or kDeliveryAgent + node id for a delivery into a node (a callback).
inline constexpr std::uint64_t kDeliveryAgent = 1ull << 32;
/// Picks which of the events ready at one instant runs next, given their agents in
/// sequence order; returns an index into `agents`. An explorer's schedule (PCT, say).
using TieBreak = std::function<std::size_t(const std::vector<std::uint64_t>& agents)>;

struct EngineConfig {
  std::uint64_t seed = 1;
  /// The run ends, reported as such, when the next event lies beyond this instant.
  Duration time_budget = std::chrono::hours(24 * 365);
  /// The run ends, reported as such, after this many events.
  std::uint64_t event_budget = 10'000'000'000ull;
  /// The run ends, reported as such, once the models hold more bytes than this, as they count
  /// them (Engine::count_memory says how), with each pending event (a message in flight, a
  /// timer) counted at Engine::kPendingEventBytes; checked every kMemoryCheckEvents events.
  /// 0: no budget.
  std::uint64_t memory_budget = 0;
  /// Set by another thread (a run's --time deadline) to end the run unfinished: it is read
  /// every kInterruptCheckEvents events and inside long work (Engine::work), and run() then
  /// throws sim::Interrupted. Null: never. It only ever stops a run: a run it does not stop
  /// is the same run.
  const std::atomic<bool>* interrupt = nullptr;
  TraceMode trace = TraceMode::hash;
  /// Stack size of each process (four times this in an AddressSanitizer build, whose
  /// frames are larger: sim/sanitizer.hpp).
  std::size_t stack_bytes = 16 * 1024;
  /// A PROT_NONE page below every stack, so an overflow is a clean SIGSEGV rather
  /// than heap corruption. One memory mapping per process: for tests and debugging.
  bool guard_pages = kGuardPagesByDefault;
  /// Unset: the choice source picks among simultaneous events (its "sim.ties" stream).
  TieBreak tie_break{};
  /// Set: answers every enumerable choice of the run (ties, declared delay sets) instead
  /// of the PRNGs; see ChoiceSource::set_chooser. The tie-break, when set, still wins.
  Chooser chooser{};
  /// Set: what each event touched and each tie chose among is kept here, for an explorer's
  /// reduction (sim/footprints.hpp). Needs a chooser (streams are watched through it).
  Footprints* footprints = nullptr;
};

struct SpawnOptions {
  /// A daemon (a server loop, say) may still be waiting when the run completes;
  /// any other process still waiting then is a liveness failure.
  bool daemon = false;
  /// A background process (a fault injector, a periodic expiry cycle) keeps no run
  /// alive: the run completes once only background wake-ups are left. Implies daemon.
  bool background = false;
};

/// What a blocked process waits for, kept cheap: no formatting until a report asks.
struct WaitInfo {
  const char* what = "";                   // "sleep", "Mailbox::get", ...
  const std::string* object = nullptr;     // the name of the mailbox or future, if any
  Time deadline = kNever;
};

/// Identifies one wait of one process; wake-ups for an older wait are ignored.
struct WaitHandle {
  std::uint32_t slot = 0;
  std::uint64_t token = 0;

  WaitHandle() = default;
  WaitHandle(std::uint32_t s, std::uint64_t t) : slot(s), token(t) {}
  // Field by field: a 16-byte copy of a handle just stored as two fields is not store-forwarded.
  WaitHandle(const WaitHandle& other) : slot(other.slot), token(other.token) {}
  WaitHandle& operator=(const WaitHandle& other) {
    slot = other.slot;
    token = other.token;
    return *this;
  }
  bool operator==(const WaitHandle& other) const { return slot == other.slot && token == other.token; }
};

enum class RunStatus {
  completed,     // no events left, every non-daemon process finished
  deadlock,      // no events left, but non-daemon processes still wait
  time_budget,   // the next event lies beyond the time budget
  event_budget,  // the event budget was used up
  memory_budget,  // the models held more than the memory budget
  stopped,       // Engine::stop() was called
};
const char* to_string(RunStatus status);

/// A process still alive when the run ended, and what it was waiting for.
struct BlockedProcess {
  ProcessId id = 0;
  std::string name;
  std::string node;
  std::string waiting_for;  // "Mailbox::get on 'server.inbox' until t=1 s"
  Time since;
  bool daemon = false;
};

struct RunResult {
  RunStatus status = RunStatus::completed;
  Time end;                       // time of the last event handled
  std::uint64_t events = 0;       // events handled by this run() call
  std::uint64_t trace_hash = 0;
  std::vector<BlockedProcess> alive;  // every process alive at the end, in id order
  /// Completed or stopped; anything else is a liveness result.
  bool ok() const { return status == RunStatus::completed || status == RunStatus::stopped; }
  /// A few lines: why the run ended and every non-daemon process still waiting, on what.
  std::string liveness_report() const;
};

struct Process;
struct ProcessEntry;
class StackPool;

class Engine {
 public:
  explicit Engine(EngineConfig config = {});
  /// Unwinds every process still alive with sim::Killed. Whatever the processes use
  /// (mailboxes, models) must therefore outlive the engine: declare it first.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineConfig& config() const { return config_; }

  /// Unwinds every process still alive with sim::Killed, at once (the destructor does
  /// it too). For owners that must destroy what processes use before the engine.
  void shutdown();

  // --- Nodes -------------------------------------------------------------
  NodeId add_node(std::string name);
  std::size_t node_count() const { return nodes_.size(); }
  const std::string& node_name(NodeId node) const;
  bool is_up(NodeId node) const;
  bool is_paused(NodeId node) const;
  /// Called when the node crashes, after its processes are marked killed: drop volatile state here.
  void on_crash(NodeId node, std::function<void()> hook);
  /// Called when the node restarts: re-create its processes here.
  void on_restart(NodeId node, std::function<void()> hook);
  /// Stops the world on `node` for `length` from now (overlapping pauses merge): none of
  /// its processes runs; their wake-ups wait until the pause ends. Deliveries into the
  /// node's queues (callbacks) still land, in order, as in a kernel under a paused
  /// process. A process pausing its own node stops at once.
  void pause(NodeId node, Duration length);
  /// Every process of the node unwinds with sim::Killed from where it waits; events
  /// scheduled for the node are dropped. A process crashing its own node is killed at once.
  void crash(NodeId node);
  /// Brings a crashed node back and calls its restart hook.
  void restart(NodeId node);

  // --- Processes ---------------------------------------------------------
  /// Creates a process on `node`; it starts by an event at the current instant.
  ProcessId spawn(NodeId node, std::string name, std::function<void()> body, SpawnOptions options = {});
  /// Kills one process (it unwinds with sim::Killed). Killing the caller throws at once.
  void kill(ProcessId process);
  /// Work the running process does inside one event (the rows a statement visits), counted
  /// against the event budget at kWorkPerEvent units an event. Once events and work together
  /// pass the budget, the calling process is killed at once (its statement does not finish)
  /// and the run ends with RunStatus::event_budget. Outside a process: nothing.
  static constexpr std::uint64_t kWorkPerEvent = 100;
  void work(std::uint64_t units);
  /// Number of processes started and not yet finished.
  std::size_t live_processes() const { return live_; }
  /// The running process's id and node (kWorld and 0 outside any process).
  ProcessId current_process() const;
  NodeId current_node() const;
  /// Whether the running process has been killed: it unwinds with sim::Killed, or will at
  /// its next wait (false outside any process).
  bool current_killed() const;
  const std::string& process_name(ProcessId process) const;
  /// While the events ready at one instant are being ordered (the choice source's "sim.ties"
  /// asks which runs first): whose each one is, in the order of the options: a process's name
  /// ("client 0", "app-1.worker-1"), "a delivery into <node>" (a message, a timer of the node's
  /// kernel side) or "<node> resumes". Empty at any other time. For a workbench's words.
  std::vector<std::string> tied() const;

  // --- Time and callbacks ------------------------------------------------
  Time now() const { return from_ns(now_); }
  /// Runs `fn` at `t` on behalf of `node`, the node's kernel side: it runs even while the
  /// node is paused and is dropped if the node crashes first. For deliveries into a node's
  /// queues; work the node's program does belongs in a process.
  void at(Time t, NodeId node, Callback&& fn);
  void after(Duration d, NodeId node, Callback&& fn);

  /// Work that only a background process can finish (messages a partition holds until
  /// an injector heals it): while any is open, background wake-ups keep the run going.
  void hold_open() { ++holds_; }
  void release_hold();

  // --- Randomness and trace ----------------------------------------------
  ChoiceSource& choices() { return choices_; }
  /// The component's own stream (see ChoiceSource).
  Stream stream(std::string_view name) { return choices_.stream(name); }
  Stream stream(std::string&& name) { return choices_.stream(std::move(name)); }
  Stream stream(const char* name) { return choices_.stream(std::string_view(name)); }
  Trace& trace() { return trace_; }
  /// Records a model event, stamped with the time, node and process.
  void record(TraceKind kind, std::uint64_t key = 0, std::int64_t a = 0, std::int64_t b = 0);
  /// Declares that the current step touches `object` (a key the model chooses, hashed from
  /// its name): state that steps on different nodes share without a message, such as one Lua
  /// state serving every app server. Only an explorer's reduction reads it (sim/footprints.hpp).
  void touch(std::uint64_t object) {
    if (config_.footprints != nullptr) [[unlikely]]
      config_.footprints->touched.push_back(object | (std::uint64_t{1} << 63));
  }
  /// Declares that the current step may depend on every other: it reads or writes state of
  /// other nodes directly (a checker peeking at a lock service's keys, say).
  void touch_everything() {
    if (config_.footprints != nullptr) [[unlikely]]
      config_.footprints->touched.push_back(Footprints::kEverything);
  }

  // --- Running -----------------------------------------------------------
  /// Handles events until none is left, a budget is reached or stop() is called.
  /// Rethrows, as ProcessError, an exception that escaped a process.
  RunResult run();
  /// Ends the current run() after the event being handled.
  void stop() { stop_requested_ = true; }
  /// How the models count the bytes they hold, for EngineConfig::memory_budget: called every
  /// kMemoryCheckEvents events (a count, so the check falls at the same events in every run).
  void count_memory(std::function<std::uint64_t()> held);
  /// What the memory budget counts for each pending event: the event and the callback it
  /// carries (a message in flight holds its request).
  static constexpr std::uint64_t kPendingEventBytes = 128;
  static constexpr std::uint64_t kMemoryCheckEvents = 1024;
  /// How often EngineConfig::interrupt is read, in events (a power of two).
  static constexpr std::uint64_t kInterruptCheckEvents = 1024;

  // --- Blocking, for sim's primitives (Mailbox, Future); models use those ----
  /// The current process's next wait. Throws UsageError naming `call` outside a process.
  WaitHandle prepare_wait(const char* call);
  /// Suspends the current process until `handle` is woken. Throws sim::Killed if the
  /// process was killed meanwhile.
  void wait(WaitHandle handle, const WaitInfo& info);
  /// As wait(), but returns false instead of throwing when the process is killed
  /// (before or during the wait). The caller must then return from the process without
  /// waiting again: a further wait throws sim::Killed.
  bool wait_unless_killed(WaitHandle handle, const WaitInfo& info);
  /// Suspends the current process for `d` (sim::sleep_for). Throws UsageError naming
  /// `call` outside a process or for a negative `d`.
  void sleep_for(Duration d, const char* call);
  /// Schedules the wake-up of `handle` at `t` (no effect if that wait is over by then).
  void wake_at(WaitHandle handle, Time t);
  /// Wakes `handle` at the current instant: a message or a value handed to a waiter.
  void wake(WaitHandle handle);
  /// The wait is still the process's current one and has not been woken.
  bool is_waiting(WaitHandle handle) const;

  /// The engine running on this thread (inside run()), or nullptr.
  static Engine* current();

  /// The parts of the engine's stacks that hold nothing now, appended to `out` as [low, high):
  /// every free stack, and each process's stack below its deepest frame (the running one's
  /// at `sp`, a position on the caller's stack), with a margin. What a snapshot of the memory
  /// they are in leaves out (sim/restorable.hpp).
  void unused_stacks(const void* sp, std::vector<std::pair<const void*, const void*>>& out) const;
  /// The scheduler's deepest frame while a process runs (nullptr while the scheduler does):
  /// below it, the stack the scheduler runs on holds nothing.
  const void* scheduler_frame() const;

 private:
  friend struct ProcessEntry;
  enum class EventKind : std::uint8_t { wake, kill, callback, node_resume };
  struct Node;
  // Everything a wake-up event needs before it touches the process itself.
  struct Slot {
    Process* process = nullptr;
    std::uint64_t token = 0;
    NodeId node = 0;
    bool waiting = false;     // suspended in a wait (not running, not finished)
    bool background = false;  // its wake-ups keep no run alive
  };
  struct PendingCallback {
    Callback fn;
    NodeId node = 0;
    std::uint64_t epoch = 0;
  };

  // What take_next found: an event taken, a tie for the choice source, or why the run ends.
  enum class Next : std::uint8_t { event, tie, stop, failure, event_budget, memory_budget, end };

  void schedule(std::int64_t at, EventKind kind, std::uint64_t target, std::uint64_t extra, bool background = false);
  Next take_next(Event& e);
  void take_tied(Event& out);
  void put_back(const Event& e);
  RunStatus end_status(Next next) const;
  void dispatch(const Event& e);
  std::uint64_t agent_of(const Event& e) const;
  void resume(Process* p);
  void switch_to(Process* from, Process* to);
  void arrived(void* context);
  Process* take_next_here(Process* self);
  Process* run_here(Process* self);
  void call_here(std::uint32_t callback, Process* self, std::uint64_t seq);
  void finish(Process* p);
  void kill_process(Process* p);
  void run_body(Process* p);
  void suspend(Process* p, const WaitInfo& info);
  bool suspend_unless_killed(Process* p, const WaitInfo& info);
  // Inline, with the message built out of line: every delivery names its node.
  Node& node_ref(NodeId node, const char* call) {
    if (node >= nodes_.size()) [[unlikely]]
      throw_no_node(node, call);
    return *nodes_[node];
  }
  const Node& node_ref(NodeId node, const char* call) const {
    if (node >= nodes_.size()) [[unlikely]]
      throw_no_node(node, call);
    return *nodes_[node];
  }
  [[noreturn]] static void throw_no_node(NodeId node, const char* call);
  Process* current_or_throw(const char* call) const;
  [[noreturn]] static void throw_outside_process(const char* call);
  // Inline, so with tracing off nothing is evaluated, not even the process's id.
  void record_engine(TraceKind kind, NodeId node, ProcessId process, std::int64_t a = 0) {
    if (trace_.mode() != TraceMode::off) trace_.record(TraceEvent{now(), node, process, kind, 0, a, 0});
  }
  std::vector<BlockedProcess> alive_processes() const;

  EngineConfig config_;
  ChoiceSource choices_;
  Stream ties_;
  Trace trace_;
  std::unique_ptr<StackPool> stacks_;
  // The scheduler's continuation while a process runs, and who switched last (engine.cpp).
  struct Switching;
  std::unique_ptr<Switching> switching_;
  EventQueue queue_;
  // Events at the current instant, in sequence order; the tie-break picks among them.
  std::vector<Event> ready_;
  std::size_t ready_head_ = 0;
  bool ordering_tie_ = false;  // take_tied is asking the choice source (tied())
  std::int64_t now_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t run_start_events_ = 0;  // events_ when the current run() began
  std::uint64_t work_ = 0, run_start_work_ = 0;  // work() units, all and when the current run() began
  bool work_over_budget_ = false;                // work() passed the event budget in this run
  bool interrupted_ = false;                     // EngineConfig::interrupt ended this run
  bool interrupt_requested() const {
    return config_.interrupt != nullptr && config_.interrupt->load(std::memory_order_relaxed);
  }
  std::uint64_t foreground_pending_ = 0;  // scheduled events not of background processes
  std::uint64_t holds_ = 0;               // see hold_open()
  std::vector<std::unique_ptr<Node>> nodes_;
  // Checked first, so that the common case (no node paused, none ever crashed) reads no node.
  std::uint32_t paused_nodes_ = 0;  // nodes paused now
  std::uint64_t crashes_ = 0;       // crashes so far
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  // Callbacks waiting for their event, by index, in chunks that never move: a callback
  // runs in place while it schedules others.
  static constexpr std::uint32_t kCallbackChunk = 64;
  std::vector<std::unique_ptr<PendingCallback[]>> callback_chunks_;
  std::uint32_t callback_slots_ = 0;
  std::vector<std::uint32_t> free_callbacks_;
  PendingCallback& callback_slot(std::uint64_t index) const {
    return callback_chunks_[index / kCallbackChunk][index % kCallbackChunk];
  }
  // The callback's node is up and has not crashed since it was scheduled.
  bool callback_live(const PendingCallback& cb) const;
  void release_callback(std::uint32_t index);
  // A wake-up taken: counted, its wait over, traced.
  void count_resume(Slot& slot, std::uint64_t seq);
  // With footprints kept: a step begins (the event `seq` on `node`), an event is scheduled.
  void note_step(std::uint64_t seq, NodeId node);
  void note_scheduled(std::uint64_t seq);
  std::vector<std::string> process_names_;  // by process id
  ProcessId next_process_id_ = 1;
  std::size_t live_ = 0;
  Process* current_ = nullptr;
  bool running_ = false;
  bool stop_requested_ = false;
  std::exception_ptr failure_;
  std::function<std::uint64_t()> memory_held_{};
  std::uint64_t next_memory_check_ = ~std::uint64_t{0};  // the event count of the next check: never without a budget
  bool over_memory();
};

namespace detail {
/// Makes `engine` the thread's current engine (Engine::current()), returning the one before:
/// for a computation that stops and goes on inside a run (sim/restorable.hpp).
Engine* exchange_current_engine(Engine* engine);
}  // namespace detail

/// Holds the run open while it lives (Engine::hold_open): for a process waiting on
/// something only a background process can bring, such as a session expiry.
class HoldOpen {
 public:
  explicit HoldOpen(Engine& engine) : engine_(engine) { engine_.hold_open(); }
  ~HoldOpen() { engine_.release_hold(); }
  HoldOpen(const HoldOpen&) = delete;
  HoldOpen& operator=(const HoldOpen&) = delete;

 private:
  Engine& engine_;
};

}  // namespace sim
