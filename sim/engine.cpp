#include "sim/engine.hpp"

#include <algorithm>
#include <new>

#include <fmt/format.h>

#include "sim/context.hpp"
#include "sim/errors.hpp"
#include "sim/sanitizer.hpp"
#include "sim/stack_pool.hpp"

namespace sim {

// A process lives at the top of its own stack, above its newest frames, so waking it
// touches one small, contiguous region of memory.
struct Process {
  // Touched on every wake-up: kept within the first cache line. (The id too: a wake-up's
  // trace record names it, and its load is hoisted above the check that tracing is on.)
  detail::Context context = nullptr;  // the process, while it is suspended
  std::uint32_t slot = 0;
  NodeId node = kWorld;
  ProcessId id = 0;
  bool killed = false;
  bool finished = false;  // its body has returned: it switched away for the last time
  WaitInfo wait;
  Time since;
  detail::ExceptionState exceptions;  // those it is handling, filed here while it is suspended
  // Touched at start, exit and crash.
  std::function<void()> body;
  bool daemon = false;
  Process* node_prev = nullptr;  // the node's processes, for crash()
  Process* node_next = nullptr;
  boost::context::stack_context stack;  // released by the engine once the process is destroyed
};

// Contexts switch directly: the scheduler to a process, a process to the scheduler, and a
// suspending process to the process whose wake-up is next (Engine::run_here). Each
// suspended context is kept in one place: a process's in Process::context, the scheduler's
// here. The context that resumes gets the context of the one that switched, and files it
// under `from`.
struct Engine::Switching {
  detail::Context scheduler = nullptr;
  Process* from = nullptr;     // who is switching: nullptr for the scheduler
  Process* arrived = nullptr;  // who switched to the scheduler last
  Process* calling = nullptr;  // a suspending process whose stack runs a callback (call_here): live below its context
  // The exceptions the running context handles, as the runtime keeps them for the thread that
  // runs the engine (found again by run() and shutdown()), and the scheduler's own while a
  // process runs. A switch files the running context's and puts the next one's in place.
  detail::ExceptionState* running_exceptions = detail::thread_exception_state();
  detail::ExceptionState scheduler_exceptions;

  void swap_exceptions(Process* from_process, const Process* to) {
    (from_process != nullptr ? from_process->exceptions : scheduler_exceptions) = *running_exceptions;
    *running_exceptions = to != nullptr ? to->exceptions : scheduler_exceptions;
  }
#if defined(LOCKSIM_ASAN)
  // The scheduler runs on the thread's own stack, whose bounds only ASan knows: it reports
  // them when a switch from the scheduler lands (the scheduler always switches first).
  detail::StackBounds scheduler_stack;

  // Announces a switch to `to`'s stack (nullptr: the scheduler's).
  void start(void** fake_stack_save, const Process* to) const {
    if (to == nullptr) return detail::start_switch(fake_stack_save, scheduler_stack);
    detail::start_switch(fake_stack_save, {static_cast<char*>(to->stack.sp) - to->stack.size, to->stack.size});
  }
  // Completes the switch that just landed here, from `from`.
  void finish(void* fake_stack_save) {
    const detail::StackBounds old = detail::finish_switch(fake_stack_save);
    if (from == nullptr) scheduler_stack = old;
  }
#endif
};

// Where a process starts, on its own stack, the first time it is switched to.
struct ProcessEntry {
  [[noreturn]] static void run(detail::Transfer t) {
    Engine& engine = *Engine::current();
    auto* p = static_cast<Process*>(t.data);
#if defined(LOCKSIM_ASAN)
    engine.switching_->finish(nullptr);
#endif
    engine.arrived(t.fctx);
    engine.run_body(p);
    // A finished process always switches to the scheduler, which releases its stack.
    p->finished = true;
    engine.switching_->from = p;
    engine.switching_->swap_exceptions(p, nullptr);
#if defined(LOCKSIM_ASAN)
    engine.switching_->start(nullptr, nullptr);  // never continued: its fake stack goes
#endif
    detail::jump_context(engine.switching_->scheduler, nullptr);
    __builtin_unreachable();
  }
};

struct Engine::Node {
  std::string name;
  bool up = true;
  bool paused = false;
  std::int64_t paused_until = 0;
  std::uint64_t epoch = 0;      // bumped by crash: callbacks for an older epoch are dropped
  std::vector<Event> deferred;  // wake-ups that came due during a pause, in order
  Process* processes = nullptr;
  std::function<void()> on_crash;
  std::function<void()> on_restart;
};

namespace {
thread_local Engine* tl_engine = nullptr;

// An event's `a` holds its kind, a background flag and its target (slot, callback or node).
constexpr int kKindShift = 56;
constexpr std::uint64_t kBackgroundBit = std::uint64_t{1} << 55;
constexpr std::uint64_t kTargetMask = kBackgroundBit - 1;

// A suspending process runs the callbacks due next on the scheduler's stack (Engine::run_here),
// this far below the scheduler's suspended context.
constexpr std::uintptr_t kBelowScheduler = 256;

// Makes `engine` the thread's current engine for the scope of run().
class CurrentEngine {
 public:
  explicit CurrentEngine(Engine* engine) : saved_(tl_engine) { tl_engine = engine; }
  ~CurrentEngine() { tl_engine = saved_; }
  CurrentEngine(const CurrentEngine&) = delete;
  CurrentEngine& operator=(const CurrentEngine&) = delete;

 private:
  Engine* saved_;
};
}  // namespace

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::completed: return "completed";
    case RunStatus::deadlock: return "deadlock";
    case RunStatus::time_budget: return "time budget reached";
    case RunStatus::event_budget: return "event budget reached";
    case RunStatus::memory_budget: return "memory budget reached";
    case RunStatus::stopped: return "stopped";
  }
  return "?";
}

std::string RunResult::liveness_report() const {
  std::string out = fmt::format("run {} at {} after {} events", to_string(status), format_time(end), events);
  std::size_t waiting = 0;
  for (const auto& p : alive) waiting += p.daemon ? 0 : 1;
  if (waiting == 0) return out + "; no process left waiting\n";
  out += fmt::format("; {} process{} still waiting:\n", waiting, waiting == 1 ? "" : "es");
  for (const auto& p : alive) {
    if (p.daemon) continue;
    out += fmt::format("  {} (#{}, node {}) waits on {} since {}\n", p.name, p.id, p.node, p.waiting_for,
                       format_time(p.since));
  }
  return out;
}

Engine* Engine::current() { return tl_engine; }

Engine* detail::exchange_current_engine(Engine* engine) { return std::exchange(tl_engine, engine); }

namespace {
// Below a stack's deepest frame, what a snapshot keeps anyway: the red zone and a switch's frame.
constexpr std::uintptr_t kUnusedMargin = 512;
}  // namespace

void Engine::unused_stacks(const void* sp, std::vector<std::pair<const void*, const void*>>& out) const {
  stacks_->free_stacks(out);
  const auto below = [&](const Process& p, const void* deepest) {
    const char* low = static_cast<const char*>(p.stack.sp) - p.stack.size;
    const auto at = reinterpret_cast<std::uintptr_t>(deepest);
    if (at < reinterpret_cast<std::uintptr_t>(low) + kUnusedMargin || at >= reinterpret_cast<std::uintptr_t>(p.stack.sp)) return;
    out.emplace_back(low, reinterpret_cast<const void*>(at - kUnusedMargin));
  };
  // A process's context is where it stands while it is suspended; the running one, and one whose
  // stack runs a callback (call_here), stand deeper: at `sp`, if that is on their stack.
  for (const Slot& slot : slots_)
    if (const Process* p = slot.process; p != nullptr && !p->finished)
      below(*p, p == current_ || p == switching_->calling ? sp : p->context);
}

const void* Engine::scheduler_frame() const { return current_ != nullptr ? switching_->scheduler : nullptr; }

void Engine::count_memory(std::function<std::uint64_t()> held) {
  memory_held_ = std::move(held);
  next_memory_check_ = config_.memory_budget > 0 && memory_held_ ? events_ : ~std::uint64_t{0};
}

// Over the budget, the check stays due: every later take of an event ends the run the same way.
[[gnu::noinline]] bool Engine::over_memory() {
  const std::uint64_t pending = queue_.size() + (ready_.size() - ready_head_);
  if (memory_held_() + pending * kPendingEventBytes > config_.memory_budget) return true;
  next_memory_check_ = events_ + kMemoryCheckEvents;
  return false;
}

Engine::Engine(EngineConfig config)
    : config_(std::move(config)), choices_(config_.seed), trace_(config_.trace) {
  if (config_.event_budget == 0) throw UsageError("sim::EngineConfig: event_budget must be at least 1");
  if (config_.time_budget <= Duration::zero())
    throw UsageError("sim::EngineConfig: time_budget must be positive, got " + format_duration(config_.time_budget));
  stacks_ = std::make_unique<StackPool>(config_.stack_bytes, config_.guard_pages);
  switching_ = std::make_unique<Switching>();
  ties_ = choices_.stream("sim.ties");
  if (config_.chooser) choices_.set_chooser(config_.chooser);
  if (config_.footprints != nullptr) {
    if (!config_.chooser) throw UsageError("sim::EngineConfig: footprints are kept only with a chooser");
    config_.footprints->clear();
    choices_.watch_draws(&config_.footprints->touched);
  }
  process_names_.reserve(32);  // a world's first few dozen processes without moving their names
  process_names_.emplace_back("(none)");
  add_node("world");
}

Engine::~Engine() { shutdown(); }

void Engine::shutdown() {
  // Not from a process, nor from a callback: a callback may run in the midst of a process's
  // suspending (see run_here), and that process cannot be resumed from there.
  if (running_) throw UsageError("sim::Engine::shutdown: called while the engine runs");
  switching_->running_exceptions = detail::thread_exception_state();
  // Unwind every suspended process with Killed, so its destructors run and its stack
  // returns to the pool.
  CurrentEngine scope(this);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (Process* p = slots_[i].process) {
      p->killed = true;
      resume(p);
    }
  }
}

// --- Nodes -----------------------------------------------------------------

NodeId Engine::add_node(std::string name) {
  auto node = std::make_unique<Node>();
  node->name = std::move(name);
  nodes_.push_back(std::move(node));
  return static_cast<NodeId>(nodes_.size() - 1);
}

void Engine::throw_no_node(NodeId node, const char* call) {
  throw UsageError(fmt::format("{}: no node #{}", call, node));
}

const std::string& Engine::node_name(NodeId node) const { return node_ref(node, "sim::Engine::node_name").name; }
bool Engine::is_up(NodeId node) const { return node_ref(node, "sim::Engine::is_up").up; }
bool Engine::is_paused(NodeId node) const { return node_ref(node, "sim::Engine::is_paused").paused; }
void Engine::on_crash(NodeId node, std::function<void()> hook) { node_ref(node, "sim::Engine::on_crash").on_crash = std::move(hook); }
void Engine::on_restart(NodeId node, std::function<void()> hook) {
  node_ref(node, "sim::Engine::on_restart").on_restart = std::move(hook);
}

void Engine::pause(NodeId node, Duration length) {
  Node& n = node_ref(node, "sim::Engine::pause");
  if (node == kWorld) throw UsageError("sim::Engine::pause: the world node cannot be paused");
  if (length < Duration::zero()) throw UsageError("sim::Engine::pause: negative length " + format_duration(length));
  if (!n.up) return;  // a crashed node has nothing to stop
  const std::int64_t until = now_ + length.count();
  record_engine(trace_kind::node_pause, node, 0, length.count());
  if (until <= n.paused_until && n.paused) return;
  n.paused_until = std::max(n.paused_until, until);
  if (!n.paused) ++paused_nodes_;
  n.paused = true;
  schedule(until, EventKind::node_resume, node, n.epoch);
  if (current_ != nullptr && current_->node == node) {
    // The caller is on the paused node: it stops here, like every other thread there.
    WaitHandle h = prepare_wait("sim::Engine::pause");
    wake(h);
    wait(h, WaitInfo{"pause of its node", nullptr, from_ns(until)});
  }
}

void Engine::crash(NodeId node) {
  Node& n = node_ref(node, "sim::Engine::crash");
  if (node == kWorld) throw UsageError("sim::Engine::crash: the world node cannot crash");
  if (!n.up) return;
  n.up = false;
  if (n.paused) --paused_nodes_;
  n.paused = false;
  n.paused_until = 0;
  ++n.epoch;
  ++crashes_;
  n.deferred.clear();
  record_engine(trace_kind::node_crash, node, 0);
  for (Process* p = n.processes; p != nullptr; p = p->node_next) kill_process(p);
  if (n.on_crash) n.on_crash();
  if (current_ != nullptr && current_->node == node) throw Killed{};
}

void Engine::restart(NodeId node) {
  Node& n = node_ref(node, "sim::Engine::restart");
  if (n.up) throw UsageError(fmt::format("sim::Engine::restart: node '{}' is not crashed", n.name));
  n.up = true;
  record_engine(trace_kind::node_restart, node, 0);
  if (n.on_restart) n.on_restart();
}

// --- Scheduling ------------------------------------------------------------

// Inline: every wake-up, sleep and delivery passes here.
[[gnu::always_inline]] inline void Engine::schedule(std::int64_t at, EventKind kind, std::uint64_t target,
                                                     std::uint64_t extra, bool background) {
  const std::uint64_t a = (static_cast<std::uint64_t>(kind) << kKindShift) | (background ? kBackgroundBit : 0) | target;
  if (!background) ++foreground_pending_;
  std::uint64_t seq;
  if (at == now_ && running_) {
    // Same instant: joins the ready set directly, so it can be ordered against the
    // events already due now.
    seq = queue_.next_seq();
    ready_.push_back(Event{at, seq, a, extra});
  } else {
    seq = queue_.push(at, a, extra).seq;
  }
  if (config_.footprints != nullptr) [[unlikely]]
    note_scheduled(seq);
}

// The scheduling rules, in one place: both the scheduler (run) and a suspending process
// (run_here) take events here, so both make the same decisions in the same order.
// Takes the next event into `e` when it is alone at its instant; on a tie, leaves the
// events of that instant in the ready set for the choice source (take_tied).
[[gnu::always_inline]] inline Engine::Next Engine::take_next(Event& e) {
  if (stop_requested_) return Next::stop;
  if ((events_ & (kInterruptCheckEvents - 1)) == 0 && interrupt_requested()) {
    interrupted_ = stop_requested_ = true;
    return Next::stop;
  }
  if (failure_) return Next::failure;
  if (events_ - run_start_events_ >= config_.event_budget || work_over_budget_) return Next::event_budget;
  if (events_ >= next_memory_check_ && over_memory()) return Next::memory_budget;
  // Only background wake-ups left (an injector's next fault, say): the run is over.
  if (foreground_pending_ == 0 && holds_ == 0) return Next::end;
  if (ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
    if (queue_.empty() || queue_.top().at > to_ns(Time{config_.time_budget})) return Next::end;
    e = queue_.pop();
    now_ = e.at;
    if (!queue_.empty() && queue_.top().at == now_) {
      ready_.push_back(e);
      while (!queue_.empty() && queue_.top().at == now_) ready_.push_back(queue_.pop());
      return Next::tie;
    }
  } else {
    if (ready_.size() - ready_head_ != 1) return Next::tie;
    // Field by field: the event was most often written a moment ago by a wake-up, as four
    // 8-byte stores, and a 16-byte load spanning two of them cannot be store-forwarded.
    const Event& r = ready_[ready_head_];
    e.at = r.at;
    e.seq = r.seq;
    e.a = r.a;
    e.b = r.b;
    ++ready_head_;
  }
  if ((e.a & kBackgroundBit) == 0) --foreground_pending_;
  return Next::event;
}

// Undoes take_next: `e` becomes again the one event due now, which the scheduler takes next.
void Engine::put_back(const Event& e) {
  if ((e.a & kBackgroundBit) == 0) ++foreground_pending_;
  if (ready_head_ != 0) {
    --ready_head_;  // taken from the ready set, where it still is
  } else {
    ready_.push_back(e);  // taken from the queue: now_ is its instant already
  }
}

// --- Processes -------------------------------------------------------------

ProcessId Engine::spawn(NodeId node, std::string name, std::function<void()> body, SpawnOptions options) {
  Node& n = node_ref(node, "sim::Engine::spawn");
  if (!n.up) throw UsageError(fmt::format("sim::Engine::spawn: node '{}' is crashed (spawning '{}')", n.name, name));
  if (!body) throw UsageError(fmt::format("sim::Engine::spawn: process '{}' has no body", name));

  const boost::context::stack_context stack = stacks_->allocate();
  char* const top = static_cast<char*>(stack.sp);
  char* const place = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(top) - sizeof(Process)) &
                                              ~static_cast<std::uintptr_t>(63));
  auto* p = new (place) Process;
  p->stack = stack;
  p->body = std::move(body);
  p->id = next_process_id_++;
  p->node = node;
  p->daemon = options.daemon || options.background;
  p->since = now();
  p->wait = WaitInfo{"its start"};
  if (free_slots_.empty()) {
    p->slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    p->slot = free_slots_.back();
    free_slots_.pop_back();
  }
  slots_[p->slot].process = p;
  slots_[p->slot].node = node;
  slots_[p->slot].waiting = true;
  slots_[p->slot].background = options.background;
  p->node_next = n.processes;
  if (n.processes != nullptr) n.processes->node_prev = p;
  n.processes = p;
  process_names_.push_back(std::move(name));
  ++live_;

  const auto usable = stack.size - static_cast<std::size_t>(top - place);
  p->context = detail::make_context(place, usable, &ProcessEntry::run);
  schedule(now_, EventKind::wake, p->slot, slots_[p->slot].token, options.background);
  return p->id;
}

void Engine::run_body(Process* p) {
  // Nothing may leave a process's stack but through failure_: an exception there ends the program.
  try {
    record_engine(trace_kind::process_start, p->node, p->id);
    if (!p->killed) p->body();
  } catch (const Killed&) {
  } catch (const std::bad_alloc&) {
    failure_ = std::current_exception();  // out of memory stays itself: the command says so in one line
  } catch (const std::exception& e) {
    failure_ = std::make_exception_ptr(ProcessError(fmt::format("process '{}' (node {}) failed at {}: {}",
                                                                process_names_[p->id], nodes_[p->node]->name,
                                                                format_time(now()), e.what())));
  } catch (...) {
    failure_ = std::make_exception_ptr(ProcessError(fmt::format("process '{}' (node {}) failed at {}: non-standard exception",
                                                                process_names_[p->id], nodes_[p->node]->name,
                                                                format_time(now()))));
  }
  try {
    record_engine(p->killed ? trace_kind::process_killed : trace_kind::process_exit, p->node, p->id);
  } catch (const std::bad_alloc&) {
    if (!failure_) failure_ = std::current_exception();
  }
  // Captured state is released inside the process, where its destructors may still use sim.
  p->body = nullptr;
}

void Engine::kill(ProcessId process) {
  for (auto& slot : slots_) {
    if (slot.process != nullptr && slot.process->id == process) {
      kill_process(slot.process);
      if (slot.process == current_) throw Killed{};
      return;
    }
  }
}

void Engine::work(std::uint64_t units) {
  if (current_ == nullptr) return;
  if (interrupt_requested()) {  // a statement over millions of rows stops inside, not after
    interrupted_ = stop_requested_ = true;
    kill(current_->id);
  }
  work_ += units;
  if (events_ - run_start_events_ + (work_ - run_start_work_) / kWorkPerEvent < config_.event_budget) return;
  work_over_budget_ = true;
  kill(current_->id);  // throws sim::Killed: the process unwinds from inside its work
}

void Engine::kill_process(Process* p) {
  if (p->killed) return;
  p->killed = true;
  if (p != current_) schedule(now_, EventKind::kill, p->slot, slots_[p->slot].token);
}

// On the scheduler: runs `p` until some process switches back to the scheduler.
void Engine::resume(Process* p) {
  Process* outer = current_;
  current_ = p;
  slots_[p->slot].waiting = false;
  switch_to(nullptr, p);
  current_ = outer;
  Process* back = switching_->arrived;
  if (back != nullptr && back->finished) finish(back);
}

// Suspends the running context (`from`, nullptr for the scheduler) and runs `to` (nullptr:
// the scheduler); returns when some context switches back to `from`.
[[gnu::always_inline]] inline void Engine::switch_to(Process* from, Process* to) {
  const detail::Context target = to != nullptr ? to->context : switching_->scheduler;
  switching_->from = from;
  switching_->swap_exceptions(from, to);
#if defined(LOCKSIM_ASAN)
  void* fake_stack = nullptr;
  switching_->start(&fake_stack, to);
  const detail::Transfer t = detail::jump_context(target, to);
  switching_->finish(fake_stack);
  arrived(t.fctx);
#else
  // `to` goes along for a process's first start (ProcessEntry::run).
  arrived(detail::jump_context(target, to).fctx);
#endif
}

// Files the context that just switched to the running one.
[[gnu::always_inline]] inline void Engine::arrived(void* context) {
  Process* from = switching_->from;
  (from != nullptr ? from->context : switching_->scheduler) = context;
  switching_->arrived = from;
}


// Shared by the scheduler (dispatch) and a suspending process (run_here).
[[gnu::always_inline]] inline bool Engine::callback_live(const PendingCallback& cb) const {
  if (crashes_ == 0) return true;  // every node is up, in its first epoch
  const Node& n = *nodes_[cb.node];
  return n.up && n.epoch == cb.epoch;
}

[[gnu::always_inline]] inline void Engine::release_callback(std::uint32_t index) {
  callback_slot(index).fn.reset();
  free_callbacks_.push_back(index);
}

[[gnu::always_inline]] inline void Engine::count_resume(Slot& slot, std::uint64_t seq) {
  ++events_;
  ++slot.token;
  if (config_.footprints != nullptr) [[unlikely]]
    note_step(seq, slot.node);
  record_engine(trace_kind::process_resume, slot.node, slot.process->id);
}

// On a suspending process `self`: handles the run's next events here, by the scheduler's
// rules (take_next), for as long as they are deliveries (callbacks); returns the process
// whose wake-up comes next, so the switch goes straight to it, or `self` if that is its
// own. Anything else (a tie, a budget, a stop, a failure, a kill, a paused node, a stale
// event, the end of the run) returns nullptr: the scheduler decides. So a message handed
// from one process to another costs one switch, not two through the scheduler.
// Inline, for the first check: a process that suspends with nothing due is rare.
[[gnu::always_inline]] inline Process* Engine::take_next_here(Process* self) {
  if (ready_head_ == ready_.size() && queue_.empty()) return nullptr;
  return run_here(self);
}

Process* Engine::run_here(Process* self) {
  if (!running_) return nullptr;
  for (;;) {
    Event e;
    if (take_next(e) != Next::event) return nullptr;
    const auto kind = static_cast<EventKind>(e.a >> kKindShift);
    const std::uint64_t target = e.a & kTargetMask;
    if (kind == EventKind::wake) {
      Slot& slot = slots_[target];
      Process* q = slot.process;
      if (q != nullptr && slot.token == e.b && (paused_nodes_ == 0 || !nodes_[slot.node]->paused)) {
        count_resume(slot, e.seq);
        slot.waiting = false;
        return q;
      }
    } else if (kind == EventKind::callback && detail::kCallOnStack && callback_live(callback_slot(target))) {
      call_here(static_cast<std::uint32_t>(target), self, e.seq);
      continue;
    }
    put_back(e);  // a stale wake-up or one into a paused node, a kill, a resume: the scheduler's
    return nullptr;
  }
}

// Runs a delivery for run_here where the scheduler would run it: on the scheduler's stack,
// below its suspended frames, where it has room and finds its frames' cache lines warm from
// the last callback. A call, not a switch to the scheduler.
[[gnu::always_inline]] inline void Engine::call_here(std::uint32_t index, Process* self, std::uint64_t seq) {
  PendingCallback& cb = callback_slot(index);
  ++events_;
  if (config_.footprints != nullptr) [[unlikely]]
    note_step(seq, cb.node);
  record_engine(trace_kind::callback, cb.node, 0);
  current_ = nullptr;  // a callback runs outside any process
  struct Call {
    Engine* engine;
    PendingCallback* cb;
    static void run(void* arg) noexcept {
#if defined(LOCKSIM_ASAN)
      const detail::StackBounds caller = detail::finish_switch(nullptr);
#endif
      auto* call = static_cast<Call*>(arg);
      try {
        call->cb->fn();
      } catch (...) {
        // The scheduler rethrows it from run(), as when it runs the callback itself.
        call->engine->failure_ = std::current_exception();
      }
#if defined(LOCKSIM_ASAN)
      detail::start_switch(nullptr, caller);  // the callback's fake frames are all gone
#endif
    }
  } call{this, &cb};
  const auto below = reinterpret_cast<std::uintptr_t>(switching_->scheduler) - kBelowScheduler;
#if defined(LOCKSIM_ASAN)
  // For ASan, a call on another stack is a switch there and one back.
  void* fake_stack = nullptr;
  detail::start_switch(&fake_stack, switching_->scheduler_stack);
#endif
  switching_->calling = self;
  detail::call_on_stack(&Call::run, &call, reinterpret_cast<void*>(below & ~std::uintptr_t{15}));
  switching_->calling = nullptr;
#if defined(LOCKSIM_ASAN)
  detail::finish_switch(fake_stack);
#endif
  current_ = self;
  release_callback(index);
}

void Engine::finish(Process* p) {
  Node& n = *nodes_[p->node];
  if (p->node_prev != nullptr) p->node_prev->node_next = p->node_next;
  else n.processes = p->node_next;
  if (p->node_next != nullptr) p->node_next->node_prev = p->node_prev;
  Slot& slot = slots_[p->slot];
  slot.process = nullptr;
  slot.waiting = false;
  ++slot.token;
  free_slots_.push_back(p->slot);
  --live_;
  boost::context::stack_context stack = p->stack;
  p->~Process();
  stacks_->deallocate(stack);
}

ProcessId Engine::current_process() const { return current_ != nullptr ? current_->id : 0; }
NodeId Engine::current_node() const { return current_ != nullptr ? current_->node : kWorld; }
bool Engine::current_killed() const { return current_ != nullptr && current_->killed; }
const std::string& Engine::process_name(ProcessId process) const {
  if (process >= process_names_.size()) throw UsageError(fmt::format("sim::Engine::process_name: no process #{}", process));
  return process_names_[process];
}

std::vector<std::string> Engine::tied() const {
  std::vector<std::string> out;
  if (!ordering_tie_) return out;
  for (std::size_t i = ready_head_; i < ready_.size(); ++i) {
    const Event& e = ready_[i];
    const std::uint64_t target = e.a & kTargetMask;
    switch (static_cast<EventKind>(e.a >> kKindShift)) {
      case EventKind::wake:
      case EventKind::kill: {
        const Process* p = slots_[target].process;
        out.push_back(p != nullptr ? process_names_[p->id] : std::string("a process that has finished"));
        break;
      }
      case EventKind::callback: out.push_back("a delivery into " + node_name(callback_slot(target).node)); break;
      case EventKind::node_resume: out.push_back(node_name(static_cast<NodeId>(target)) + " resumes"); break;
    }
  }
  return out;
}

// --- Blocking --------------------------------------------------------------

// Inline, with the message built out of line: it guards every wait and sleep.
[[gnu::always_inline]] inline Process* Engine::current_or_throw(const char* call) const {
  if (current_ == nullptr) [[unlikely]]
    throw_outside_process(call);
  return current_;
}

void Engine::throw_outside_process(const char* call) {
  throw UsageError(std::string(call) + ": called outside a simulated process");
}

WaitHandle Engine::prepare_wait(const char* call) {
  Process* p = current_or_throw(call);
  return WaitHandle{p->slot, slots_[p->slot].token};
}

[[gnu::always_inline]] inline bool Engine::suspend_unless_killed(Process* p, const WaitInfo& info) {
  if (p->killed) return false;
  p->wait = info;
  p->since = now();
  slots_[p->slot].waiting = true;
  Process* next = take_next_here(p);
  if (next != p) {
    current_ = next;
    switch_to(p, next);
    current_ = p;
  }
  return !p->killed;
}

[[gnu::always_inline]] inline void Engine::suspend(Process* p, const WaitInfo& info) {
  if (!suspend_unless_killed(p, info)) throw Killed{};
}

void Engine::wait(WaitHandle handle, const WaitInfo& info) {
  if (!wait_unless_killed(handle, info)) throw Killed{};
}

bool Engine::wait_unless_killed(WaitHandle handle, const WaitInfo& info) {
  Process* p = current_or_throw(info.what);
  if (handle.slot != p->slot || handle.token != slots_[p->slot].token)
    throw UsageError(fmt::format("sim::Engine::wait ({}): the wait handle is not the current process's", info.what));
  return suspend_unless_killed(p, info);
}

// The hottest path of most models: one frame between the process body and the switch.
void Engine::sleep_for(Duration d, const char* call) {
  Process* p = current_or_throw(call);
  if (d < Duration::zero()) throw UsageError(std::string(call) + ": negative duration " + format_duration(d));
  const Time until = now() + d;
  const Slot& slot = slots_[p->slot];
  schedule(to_ns(until), EventKind::wake, p->slot, slot.token, slot.background);
  suspend(p, WaitInfo{"sleep", nullptr, until});
}

void Engine::wake_at(WaitHandle handle, Time t) {
  if (to_ns(t) < now_)
    throw UsageError(fmt::format("sim::Engine::wake_at: {} is in the past (now {})", format_time(t), format_time(now())));
  const bool background = handle.slot < slots_.size() && slots_[handle.slot].background;
  schedule(to_ns(t), EventKind::wake, handle.slot, handle.token, background);
}

void Engine::wake(WaitHandle handle) {
  const bool background = handle.slot < slots_.size() && slots_[handle.slot].background;
  schedule(now_, EventKind::wake, handle.slot, handle.token, background);
}

bool Engine::is_waiting(WaitHandle handle) const {
  if (handle.slot >= slots_.size()) return false;
  const Slot& slot = slots_[handle.slot];
  return slot.token == handle.token && slot.waiting;
}

// --- Callbacks and trace ---------------------------------------------------

void Engine::at(Time t, NodeId node, Callback&& fn) {
  Node& n = node_ref(node, "sim::Engine::at");
  if (to_ns(t) < now_)
    throw UsageError(fmt::format("sim::Engine::at: {} is in the past (now {})", format_time(t), format_time(now())));
  std::uint32_t index;
  if (free_callbacks_.empty()) {
    // Default-initialized: value-initializing would zero every Callback's inline storage.
    if (callback_slots_ % kCallbackChunk == 0)
      callback_chunks_.push_back(std::make_unique_for_overwrite<PendingCallback[]>(kCallbackChunk));
    index = callback_slots_++;
  } else {
    index = free_callbacks_.back();
    free_callbacks_.pop_back();
  }
  PendingCallback& cb = callback_slot(index);
  cb.fn = std::move(fn);
  cb.node = node;
  cb.epoch = n.epoch;
  schedule(to_ns(t), EventKind::callback, index, 0);
}

void Engine::after(Duration d, NodeId node, Callback&& fn) {
  if (d < Duration::zero()) throw UsageError("sim::Engine::after: negative delay " + format_duration(d));
  at(now() + d, node, std::move(fn));
}

void Engine::release_hold() {
  if (holds_ == 0) throw UsageError("sim::Engine::release_hold: no hold is open");
  --holds_;
}

void Engine::record(TraceKind kind, std::uint64_t key, std::int64_t a, std::int64_t b) {
  trace_.record(TraceEvent{now(), current_node(), current_process(), kind, key, a, b});
}

// --- The loop --------------------------------------------------------------

// Takes one of the events tied at the current instant (take_next left them in the ready
// set), as the tie-break or the choice source picks.
void Engine::note_step(std::uint64_t seq, NodeId node) {
  Footprints& f = *config_.footprints;
  f.steps.push_back({seq, now_, node, static_cast<std::uint32_t>(f.touched.size())});
}

void Engine::note_scheduled(std::uint64_t seq) {
  Footprints& f = *config_.footprints;
  if (f.creator.size() <= seq) f.creator.resize(seq + 1, Footprints::kNone);
  f.creator[seq] = f.steps.empty() ? Footprints::kNone : static_cast<std::uint32_t>(f.steps.size() - 1);
}

void Engine::take_tied(Event& out) {
  const std::size_t n = ready_.size() - ready_head_;
  std::size_t pick = 0;
  if (config_.tie_break) {
    std::vector<std::uint64_t> agents;
    agents.reserve(n);
    for (std::size_t i = ready_head_; i < ready_.size(); ++i) agents.push_back(agent_of(ready_[i]));
    pick = std::min(config_.tie_break(agents), n - 1);
  } else if (config_.footprints != nullptr) {
    // The tie's own draw is no step's: the streams are not watched while it is made.
    Footprints& f = *config_.footprints;
    f.ties.push_back({static_cast<std::uint32_t>(f.steps.size()), {}});
    for (std::size_t i = ready_head_; i < ready_.size(); ++i) f.ties.back().ready.push_back(ready_[i].seq);
    choices_.watch_draws(nullptr);
    ordering_tie_ = true;
    pick = static_cast<std::size_t>(ties_.pick(n));
    ordering_tie_ = false;
    choices_.watch_draws(&f.touched);
  } else {
    ordering_tie_ = true;
    pick = static_cast<std::size_t>(ties_.pick(n));
    ordering_tie_ = false;
  }
  const Event& picked = ready_[ready_head_ + pick];  // field by field: see take_next
  out.at = picked.at;
  out.seq = picked.seq;
  out.a = picked.a;
  out.b = picked.b;
  if ((out.a & kBackgroundBit) == 0) --foreground_pending_;
  if (pick == 0) {
    ++ready_head_;
  } else {
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(ready_head_ + pick));
  }
}

std::uint64_t Engine::agent_of(const Event& e) const {
  const auto kind = static_cast<EventKind>(e.a >> kKindShift);
  const std::uint64_t target = e.a & kTargetMask;
  switch (kind) {
    case EventKind::wake:
    case EventKind::kill: {
      const Process* p = slots_[target].process;
      return p != nullptr ? p->id : 0;
    }
    case EventKind::callback: return kDeliveryAgent + callback_slot(target).node;
    case EventKind::node_resume: return kDeliveryAgent + target;
  }
  return 0;
}

void Engine::dispatch(const Event& e) {
  const auto kind = static_cast<EventKind>(e.a >> kKindShift);
  const std::uint64_t target = e.a & kTargetMask;
  switch (kind) {
    case EventKind::wake:
    case EventKind::kill: {
      const Slot& slot = slots_[target];
      Process* p = slot.process;
      if (p == nullptr || slot.token != e.b) return;  // stale: that wait is over
      Node& n = *nodes_[slot.node];
      if (n.paused && kind == EventKind::wake) {
        n.deferred.push_back(e);
        return;
      }
      count_resume(slots_[target], e.seq);
      resume(p);
      return;
    }
    case EventKind::callback: {
      // A callback is the node's kernel side (a delivery into its queues): it runs while
      // the node is paused, so arrivals keep their order, and the processes that handle
      // them wait for the pause to end.
      // It runs in place and its slot is freed after, even if it throws out of run().
      struct Release {
        Engine& engine;
        std::uint32_t slot;
        ~Release() { engine.release_callback(slot); }
      } release{*this, static_cast<std::uint32_t>(target)};
      PendingCallback& cb = callback_slot(target);
      if (!callback_live(cb)) return;
      ++events_;
      if (config_.footprints != nullptr) [[unlikely]]
        note_step(e.seq, cb.node);
      record_engine(trace_kind::callback, cb.node, 0);
      cb.fn();
      return;
    }
    case EventKind::node_resume: {
      Node& n = *nodes_[target];
      if (!n.paused || n.epoch != e.b || n.paused_until > now_) return;
      ++events_;
      if (config_.footprints != nullptr) [[unlikely]]
        note_step(e.seq, static_cast<NodeId>(target));
      n.paused = false;
      --paused_nodes_;
      record_engine(trace_kind::node_resume, static_cast<NodeId>(target), 0);
      // The processes woken during the pause are all ready now; the tie-break orders them.
      for (const Event& d : n.deferred) {
        if ((d.a & kBackgroundBit) == 0) ++foreground_pending_;
        ready_.push_back(Event{now_, queue_.next_seq(), d.a, d.b});
        if (config_.footprints != nullptr) [[unlikely]]
          note_scheduled(ready_.back().seq);
      }
      n.deferred.clear();
      return;
    }
  }
}

RunResult Engine::run() {
  if (running_) throw UsageError("sim::Engine::run: the engine is already running");
  CurrentEngine scope(this);
  switching_->running_exceptions = detail::thread_exception_state();
  // A callback or a replay divergence may throw out of the loop: the engine stays usable.
  struct Running {
    bool& flag;
    explicit Running(bool& f) : flag(f) { flag = true; }
    ~Running() { flag = false; }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
  } running(running_);
  stop_requested_ = false;
  run_start_events_ = events_;
  run_start_work_ = work_;
  work_over_budget_ = false;
  interrupted_ = false;
  RunResult result;
  Event e;
  for (;;) {
    const Next next = take_next(e);
    if (next == Next::tie) {
      take_tied(e);
    } else if (next != Next::event) {
      result.status = end_status(next);
      break;
    }
    dispatch(e);
  }
  if (failure_) {
    std::exception_ptr failure = std::exchange(failure_, nullptr);
    std::rethrow_exception(failure);
  }
  if (interrupted_) throw Interrupted{};
  result.end = now();
  result.events = events_ - run_start_events_;
  result.trace_hash = trace_.hash();
  result.alive = alive_processes();
  if (result.status == RunStatus::completed) {
    for (const auto& p : result.alive)
      if (!p.daemon) result.status = RunStatus::deadlock;
  }
  return result;
}

// Why the run ends when take_next has no event for it (a failure is rethrown instead).
RunStatus Engine::end_status(Next next) const {
  if (next == Next::stop) return RunStatus::stopped;
  if (next == Next::event_budget) return RunStatus::event_budget;
  if (next == Next::memory_budget) return RunStatus::memory_budget;
  // Work still pending: the time budget ended the run.
  if (foreground_pending_ > 0 || (holds_ > 0 && !queue_.empty())) return RunStatus::time_budget;
  return RunStatus::completed;
}

std::vector<BlockedProcess> Engine::alive_processes() const {
  // Every run ends here (a search's runs too), so the processes are put in id order before
  // their descriptions are written, and the descriptions are appended, not formatted.
  std::vector<const Process*> alive;
  for (const Slot& slot : slots_)
    if (slot.process != nullptr) alive.push_back(slot.process);
  std::sort(alive.begin(), alive.end(), [](const Process* x, const Process* y) { return x->id < y->id; });
  std::vector<BlockedProcess> out;
  out.reserve(alive.size());
  for (const Process* p : alive) {
    std::string what = p->wait.what;
    if (p->wait.object != nullptr) what.append(" on '").append(*p->wait.object).append("'");
    if (p->wait.deadline == kNever)
      what += " (no deadline)";
    else
      what.append(" until ").append(format_time(p->wait.deadline));
    if (nodes_[p->node]->paused) what += ", its node paused";
    out.push_back(BlockedProcess{p->id, process_names_[p->id], nodes_[p->node]->name, std::move(what), p->since, p->daemon});
  }
  return out;
}

}  // namespace sim
