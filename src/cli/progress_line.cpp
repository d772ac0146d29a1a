#include "cli/progress_line.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trnsim::cli {

namespace {

std::chrono::milliseconds delay_from_environment() {
  const char* text = std::getenv("TRNSIM_PROGRESS_DELAY_MS");
  char* end = nullptr;
  const long value = text != nullptr ? std::strtol(text, &end, 10) : -1;
  if (text == nullptr || end == text || *end != '\0' || value < 0)
    return std::chrono::milliseconds(2000);
  return std::chrono::milliseconds(value);
}

std::string describe(const util::Progress& progress, double seconds) {
  using Phase = util::Progress::Phase;
  std::string what;
  switch (progress.phase.load(std::memory_order_relaxed)) {
    case Phase::kStarting:
      what = "preparing";
      break;
    case Phase::kTracing:
      what = "tracing the kernel";
      break;
    case Phase::kCompiling:
      what = "compiling";
      break;
    case Phase::kLoading:
      what = "loading the inputs";
      break;
    case Phase::kSimulating: {
      const std::uint64_t done = progress.done.load(std::memory_order_relaxed);
      const std::uint64_t total = progress.total.load(std::memory_order_relaxed);
      what = total > 0 ? fmt::format("simulating, {} of {} instructions ({:.0f}%)", done, total,
                                     100.0 * static_cast<double>(done) / static_cast<double>(total))
                       : "simulating";
      break;
    }
    case Phase::kChecking:
      what = "checking against the reference";
      break;
  }
  return fmt::format("trnsim: {}, {:.1f} s", what, seconds);
}

}  // namespace

ProgressLine::ProgressLine(const util::Progress& progress)
    : progress_(progress),
      start_(std::chrono::steady_clock::now()),
      delay_(delay_from_environment()) {
  if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { draw_until_stopped(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressLine::draw_until_stopped() {
  std::unique_lock lock(mutex_);
  if (!wake_.wait_until(lock, start_ + delay_, [this] { return stop_; })) {
    do {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      // Carriage return, the text, erase to the end of the line (no newline: redrawn).
      fmt::print(stderr, "\r{}\x1b[K", describe(progress_, seconds));
      std::fflush(stderr);
      drawn_ = true;
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; }));
  }
  if (drawn_) {
    fmt::print(stderr, "\r\x1b[K");
    std::fflush(stderr);
  }
}

}  // namespace trnsim::cli
