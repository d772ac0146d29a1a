// A minimal deterministic parallel loop: tasks 0..count-1 run on up to `threads` threads
// (the calling thread included), each task exactly once. Results must not depend on which
// thread ran a task: callers give every task its own output slot and combine the slots in
// task order afterwards, so the outcome is the same for every thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace trnsim::util {

// Threads to use when the caller asks for `requested` (0 = one per hardware thread).
inline unsigned resolve_threads(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Runs task(i) for every i in [0, count). If tasks throw, every task still runs or is
// skipped cleanly and the exception of the lowest-numbered failing task is rethrown after
// all threads have joined (the same one whatever the thread count).
template <class Task>
void parallel_for(std::size_t count, unsigned threads, Task&& task) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(count, std::max(1u, threads)) - (count > 0);
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads available: the ones started (and this one) do the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace trnsim::util
