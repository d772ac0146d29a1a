// A progress line on stderr for runs that last: only on a terminal (a log file or a pipe
// gets nothing), only after the run has taken `TRNSIM_PROGRESS_DELAY_MS` (default 2000 ms),
// redrawn five times a second from a thread of its own, and erased when it goes out of scope
// (before the report is printed):
//
//   trnsim: simulating, 1234567 of 3000000 instructions (41%), 4.2 s
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/progress.h"

namespace trnsim::cli {

class ProgressLine {
 public:
  explicit ProgressLine(const util::Progress& progress);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void draw_until_stopped();

  const util::Progress& progress_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;  // something is on the line (to erase)
  std::thread thread_;
};

}  // namespace trnsim::cli
