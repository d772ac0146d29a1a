// The event loop's events and their queue (internal to the executor, executor.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/sim.h"

namespace trnsim::sim::executor_detail {

// kCompleteAndFree: an instruction whose latency equals its occupancy (a DMA transfer)
// completes and frees its queue in one event, handled exactly as the kComplete and
// kQueueFree events it stands for (see Executor::run).
enum class EventKind : std::uint8_t { kComplete, kQueueFree, kCompleteAndFree };

// Ordered by time, then queue, id and kind: a total order (a queue's id has at most one
// event of each kind pending), so the run's order of events does not depend on how they are
// stored. The id is the instruction's index, or in a program with control flow the execution
// slot of its start (CoreRun::looping). The last three are packed into one integer that
// compares in that order, so that comparing events needs no branch.
class Event {
 public:
  Event(Duration at, std::uint32_t queue, std::size_t id, EventKind kind)
      : time(at),
        key_(std::uint64_t{queue} << 34 | std::uint64_t{id} << 2 |
             static_cast<std::uint64_t>(kind)) {}
  Duration time;
  std::uint32_t queue() const { return static_cast<std::uint32_t>(key_ >> 34); }
  std::uint32_t id() const { return static_cast<std::uint32_t>((key_ >> 2) & 0xFFFFFFFF); }
  EventKind kind() const { return static_cast<EventKind>(key_ & 3); }
  friend bool earlier(const Event& a, const Event& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.key_ < b.key_));
  }

 private:
  std::uint64_t key_;
};

// The pending events, earliest first. A run keeps few pending (one or two per busy queue:
// 3 at most in bench_timing's pipeline), and finding the earliest of a few by a branch-free
// scan costs less than a binary heap's unpredictable branches (bench_timing's event loop
// took 30% less time than with std::push_heap / pop_heap); past kScanLimit events it
// becomes a binary heap.
class EventQueue {
 public:
  bool empty() const { return events_.empty(); }
  // Inlined into the event loop (GCC kept push out of line: ~10% more loop time).
  [[gnu::always_inline]] void push(const Event& e) {
    events_.push_back(e);
    if (heap_ || events_.size() > kScanLimit) [[unlikely]]
      push_heap();
  }
  [[gnu::always_inline]] Event pop() {
    if (heap_) [[unlikely]]
      return pop_heap();
    std::size_t first = 0;
    for (std::size_t i = 1; i < events_.size(); ++i)
      if (earlier(events_[i], events_[first])) first = i;
    const Event e = events_[first];
    events_[first] = events_.back();
    events_.pop_back();
    return e;
  }
  // Whether a pending event comes before `e`.
  bool has_earlier(const Event& e) const {
    if (heap_) [[unlikely]]
      return earlier(events_.front(), e);
    for (const Event& p : events_)
      if (earlier(p, e)) return true;
    return false;
  }

 private:
  static constexpr std::size_t kScanLimit = 16;
  static bool later(const Event& a, const Event& b) { return earlier(b, a); }  // max-heap
  // Out of line: the scanned array's push and pop stay small enough to inline.
  [[gnu::noinline]] void push_heap() {
    if (heap_) {
      std::push_heap(events_.begin(), events_.end(), later);
      return;
    }
    std::make_heap(events_.begin(), events_.end(), later);
    heap_ = true;
  }
  [[gnu::noinline]] Event pop_heap() {
    std::pop_heap(events_.begin(), events_.end(), later);
    const Event e = events_.back();
    events_.pop_back();
    heap_ = events_.size() > kScanLimit / 2;  // an unsorted array needs no rebuilding
    return e;
  }
  std::vector<Event> events_;
  bool heap_ = false;
};

}  // namespace trnsim::sim::executor_detail
