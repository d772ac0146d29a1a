// The event model of collective time: the analytical model's steps (plan.h) run as events.
// Each transfer is a stream of chunks through its route's channels; a channel serves the
// chunks in the order their heads reach it, and a chunk's head goes on to the next channel
// after this one's latency (virtual cut-through), its tail no earlier than it left the
// channel before; a channel is busy for a chunk's bytes at its own rate. A rank sends its
// step-s transfer once the receiver has begun step s, and starts its next step when its own
// transfers of the step have arrived and every transfer to it has: ranks drift apart where
// links differ, and a late peer shows as a wait (docs/collectives.md, "The event model").
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "collective/collective.h"
#include "collective/plan.h"

namespace trnsim::collective {

namespace {

// Chunks a transfer of `bytes` is cut into.
int chunks_of(double bytes, const SimulateOptions& o) {
  const double by_size = bytes / std::max(1.0, o.min_chunk_bytes);
  return static_cast<int>(std::clamp(by_size, 1.0, static_cast<double>(std::max(1, o.max_chunks))));
}

struct Event {
  double head_ns;  // the chunk's head reaches hop `hop` (hop == route length: delivered)
  double tail_ns;  // its tail does
  std::uint64_t seq;
  int transfer;
  int hop;
  bool operator>(const Event& o) const {
    return head_ns != o.head_ns ? head_ns > o.head_ns : seq > o.seq;
  }
};

struct Transfer {
  const int* route = nullptr;  // extended channel ids
  int hops = 0;
  int from = 0, to = 0, step = 0;
  int chunks = 0, injected = 0, delivered = 0;
  double chunk_bytes = 0;
};

// The run's state: channels (the topology's, then one chip-local path per chip), ranks and
// the transfers in flight.
class EventRun {
 public:
  EventRun(const std::vector<detail::StepPlan>& steps, const detail::Layout& layout,
           const SimulateOptions& options, Simulation& out)
      : steps_(steps), layout_(layout), n_(layout.ranks()), options_(options), out_(out) {
    const std::size_t cells = static_cast<std::size_t>(n_) * steps_.size();
    received_.assign(cells, 0);
    last_in_ns_.assign(cells, 0);
    last_in_peer_.assign(cells, -1);
    step_.assign(static_cast<std::size_t>(n_), 0);
    pending_out_.assign(static_cast<std::size_t>(n_), 0);
    start_ns_.assign(static_cast<std::size_t>(n_), 0);
    sent_ns_.assign(static_cast<std::size_t>(n_), 0);
    waiting_for_.resize(static_cast<std::size_t>(n_));
  }

  // Channel c's rate, latency and the chip-local path's id for a chip.
  void set_channels(std::vector<double> bytes_per_ns, std::vector<double> latency_ns) {
    rate_ = std::move(bytes_per_ns);
    latency_ = std::move(latency_ns);
    free_ns_.assign(rate_.size(), 0);
    busy_ns_.assign(rate_.size(), 0);
    bytes_.assign(rate_.size(), 0);
    last_span_.assign(rate_.size(), -1);
  }

  // route(from_rank, to_rank) gives the extended channel ids and their count.
  template <class Route>
  void run(double step_ns, Route&& route) {
    step_ns_ = step_ns;
    for (int r = 0; r < n_; ++r) begin_step(r, 0, route);
    while (!queue_.empty()) {
      const Event e = queue_.top();
      queue_.pop();
      ++out_.events;
      if (e.hop == transfers_[static_cast<std::size_t>(e.transfer)].hops)
        deliver(e, route);
      else
        forward(e);
    }
    for (int r = 0; r < n_; ++r)  // every transfer arrived: every rank finished every step
      if (step_[static_cast<std::size_t>(r)] != static_cast<int>(steps_.size()))
        throw std::logic_error(
            fmt::format("collective event model: rank {} stopped at step {} of {}", r,
                        step_[static_cast<std::size_t>(r)], steps_.size()));
  }

 private:
  std::size_t cell(int rank, int step) const {
    return static_cast<std::size_t>(rank) * steps_.size() + static_cast<std::size_t>(step);
  }

  void push(double head, double tail, int transfer, int hop) {
    queue_.push({head, tail, seq_++, transfer, hop});
  }

  // Rank r begins its next step at `now`: it sends to each partner that has begun the step
  // too (the partner's buffer for it is free) and waits for the others to begin it; it lets
  // go the transfers that waited for it.
  template <class Route>
  void begin_step(int r, double now, Route& route) {
    const auto ur = static_cast<std::size_t>(r);
    const int step = step_[ur];
    if (step == static_cast<int>(steps_.size())) {
      out_.time_ns = std::max(out_.time_ns, now);
      return;
    }
    const detail::StepPlan& s = steps_[static_cast<std::size_t>(step)];
    start_ns_[ur] = now;
    sent_ns_[ur] = now;
    pending_out_[ur] = layout_.sends(s, r);
    layout_.for_each_partner(s, r, [&](int to) {
      if (step_[static_cast<std::size_t>(to)] >= step)
        start_transfer(r, to, step, now, route);
      else
        waiting_for_[static_cast<std::size_t>(to)].push_back(r);
    });
    std::vector<int>& waiting = waiting_for_[ur];
    std::vector<int> still;
    for (const int from : waiting)
      if (step_[static_cast<std::size_t>(from)] == step)
        start_transfer(from, r, step, now, route);
      else
        still.push_back(from);
    waiting.swap(still);
    if (pending_out_[ur] == 0) try_finish(r, now, route);  // a permute step it sits out
  }

  template <class Route>
  void start_transfer(int from, int to, int step, double now, Route& route) {
    const detail::StepPlan& s = steps_[static_cast<std::size_t>(step)];
    Transfer t;
    std::tie(t.route, t.hops) = route(from, to);
    t.from = from;
    t.to = to;
    t.step = step;
    t.chunks = chunks_of(s.bytes, options_);
    t.chunk_bytes = s.bytes / t.chunks;
    int id = 0;
    if (free_transfers_.empty()) {
      id = static_cast<int>(transfers_.size());
      transfers_.push_back(t);
    } else {
      id = free_transfers_.back();
      free_transfers_.pop_back();
      transfers_[static_cast<std::size_t>(id)] = t;
    }
    push(now + step_ns_, now + step_ns_, id, 0);
  }

  // A chunk reaches channel `hop` of its route: the channel serves it after the chunks that
  // reached it earlier; the source offers its next chunk when this one has left.
  void forward(const Event& e) {
    Transfer& t = transfers_[static_cast<std::size_t>(e.transfer)];
    const auto c = static_cast<std::size_t>(t.route[e.hop]);
    const double start = std::max(e.head_ns, free_ns_[c]);
    const double service = t.chunk_bytes / rate_[c];
    // The channel is busy for the chunk's own bytes only: behind a slower channel, its gaps
    // carry other chunks (real packets are far smaller than a chunk).
    free_ns_[c] = start + service;
    busy_ns_[c] += service;
    const double end = std::max(start + service, e.tail_ns);
    bytes_[c] += t.chunk_bytes;
    if (options_.trace) record_busy(static_cast<int>(c), start, start + service);
    push(start + latency_[c], end + latency_[c], e.transfer, e.hop + 1);
    if (e.hop == 0 && ++t.injected < t.chunks) push(end, end, e.transfer, 0);
  }

  template <class Route>
  void deliver(const Event& e, Route& route) {
    Transfer& t = transfers_[static_cast<std::size_t>(e.transfer)];
    if (++t.delivered < t.chunks) return;
    const double now = e.tail_ns;
    const int from = t.from, to = t.to, step = t.step;
    free_transfers_.push_back(e.transfer);
    const std::size_t in = cell(to, step);
    ++received_[in];
    if (now >= last_in_ns_[in]) {
      last_in_ns_[in] = now;
      last_in_peer_[in] = from;
    }
    const auto uf = static_cast<std::size_t>(from);
    sent_ns_[uf] = std::max(sent_ns_[uf], now);
    --pending_out_[uf];
    try_finish(from, now, route);
    if (to != from) try_finish(to, now, route);
  }

  template <class Route>
  void try_finish(int r, double now, Route& route) {
    const auto ur = static_cast<std::size_t>(r);
    const int s = step_[ur];
    if (s == static_cast<int>(steps_.size()) || pending_out_[ur] > 0) return;
    const std::size_t in = cell(r, s);
    if (received_[in] < layout_.receives(steps_[static_cast<std::size_t>(s)], r)) return;
    RankStep rs{r, s, -1, start_ns_[ur], sent_ns_[ur], now};
    if (last_in_ns_[in] > sent_ns_[ur]) rs.waited_on = last_in_peer_[in];
    if (rs.end_ns - rs.sent_ns > out_.longest_wait.end_ns - out_.longest_wait.sent_ns)
      out_.longest_wait = rs;
    if (options_.trace) out_.rank_steps.push_back(rs);
    ++step_[ur];
    begin_step(r, now, route);
  }

  void record_busy(int channel, double start, double end) {
    int& last = last_span_[static_cast<std::size_t>(channel)];
    if (last >= 0 && out_.busy[static_cast<std::size_t>(last)].end_ns >= start) {
      BusySpan& span = out_.busy[static_cast<std::size_t>(last)];
      span.end_ns = std::max(span.end_ns, end);
      return;
    }
    last = static_cast<int>(out_.busy.size());
    out_.busy.push_back({channel, start, end});
  }

 public:
  const std::vector<double>& busy_ns() const { return busy_ns_; }
  const std::vector<double>& bytes() const { return bytes_; }

 private:
  const std::vector<detail::StepPlan>& steps_;
  const detail::Layout& layout_;
  int n_;
  const SimulateOptions& options_;
  Simulation& out_;
  double step_ns_ = 0;
  std::vector<double> rate_, latency_, free_ns_, busy_ns_, bytes_;
  std::vector<int> last_span_;  // per channel, its latest span in out_.busy (trace only)
  // Per rank: its current step, its transfers of that step still in flight, when the step
  // started and when its last own transfer arrived.
  std::vector<int> step_, pending_out_;
  std::vector<double> start_ns_, sent_ns_;
  // Per rank and step: transfers received, the latest one's arrival and sender (transfers
  // may arrive before their receiver has reached the step).
  std::vector<int> received_;
  std::vector<double> last_in_ns_;
  std::vector<int> last_in_peer_;
  // Per rank: the ranks whose transfer to it waits for it to begin their step.
  std::vector<std::vector<int>> waiting_for_;
  std::vector<Transfer> transfers_;
  std::vector<int> free_transfers_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::uint64_t seq_ = 0;
};

}  // namespace

std::uint64_t CollectiveModel::chunk_count(Op op, std::uint64_t bytes, int ranks,
                                           std::optional<Algorithm> algorithm,
                                           const Participants& who,
                                           const SimulateOptions& options) const {
  return chunks_in(plan(op, bytes, ranks, algorithm, who), op, bytes, options);
}

std::uint64_t CollectiveModel::chunks_in(const Plan& p, Op op, std::uint64_t bytes,
                                         const SimulateOptions& options) const {
  const detail::Layout& layout = *p.layout;
  const int n = layout.group_size();
  if (n == 1) return 0;
  std::uint64_t chunks = 0;
  for (const detail::StepPlan& s :
       detail::steps_of(op, p.algorithm, static_cast<double>(bytes), n, layout.ranks_per_node()))
    chunks += layout.transfers(s) * static_cast<std::uint64_t>(chunks_of(s.bytes, options));
  return chunks;
}

Simulation CollectiveModel::simulate(Op op, std::uint64_t bytes, int ranks,
                                     std::optional<Algorithm> algorithm, const Participants& who,
                                     const SimulateOptions& options) const {
  const Plan p = plan(op, bytes, ranks, algorithm, who);
  const std::uint64_t chunks = chunks_in(p, op, bytes, options);
  if (chunks > options.max_chunks_total)
    throw std::invalid_argument(fmt::format(
        "the event model would move {} chunks for this run (at most {}: host time and memory "
        "grow with them); the analytical model times it at once (trnsim ccom --model "
        "analytical)",
        chunks, options.max_chunks_total));
  Simulation out;
  out.algorithm = p.algorithm;
  out.ranks = ranks;
  out.ranks_per_chip = ranks_per_chip_;
  out.op_name = std::string(name(op));
  out.system_name = config_.name;
  const detail::Layout& layout = *p.layout;
  const int n = layout.group_size();
  const std::vector<detail::StepPlan> steps =
      detail::steps_of(op, p.algorithm, static_cast<double>(bytes), n, layout.ranks_per_node());
  out.steps = n == 1 ? 0 : static_cast<int>(steps.size());  // a group of one does nothing
  for (int r = 0; r < ranks; r += ranks_per_chip_)
    out.chip_names.push_back(topology_.describe(chip_of(r)));
  if (n == 1) return out;

  // The topology's channels, then chip c's local path (its HBM, read and write) at C + c.
  const std::vector<system::Channel>& channels = topology_.channels();
  const int links = static_cast<int>(channels.size());
  std::vector<double> rate, latency;
  for (const system::Channel& c : channels) {
    rate.push_back(c.bytes_per_ns);
    latency.push_back(c.latency_ns);
  }
  std::vector<int> local(static_cast<std::size_t>(topology_.chips()));
  for (int chip = 0; chip < topology_.chips(); ++chip) {
    local[static_cast<std::size_t>(chip)] = links + chip;
    rate.push_back(local_bytes_per_ns_);
    latency.push_back(0);
  }
  EventRun run(steps, layout, options, out);
  run.set_channels(std::move(rate), std::move(latency));
  run.run(step_ns_, [&](int from, int to) -> std::pair<const int*, int> {
    const int a = chip_of(from), b = chip_of(to);
    if (a == b) return {&local[static_cast<std::size_t>(a)], 1};
    const system::Route& r = route(a, b);
    return {r.channels.data(), r.hops()};
  });

  // The channels that carried data, busiest first (ties in id order); trace spans renumbered.
  std::vector<int> used;
  for (int c = 0; c < static_cast<int>(run.bytes().size()); ++c)
    if (run.bytes()[static_cast<std::size_t>(c)] > 0) used.push_back(c);
  std::stable_sort(used.begin(), used.end(), [&](int a, int b) {
    return run.busy_ns()[static_cast<std::size_t>(a)] > run.busy_ns()[static_cast<std::size_t>(b)];
  });
  std::vector<int> index(run.bytes().size(), -1);
  for (const int c : used) {
    index[static_cast<std::size_t>(c)] = static_cast<int>(out.channels.size());
    out.channels.push_back({c >= links ? path_name(c - links, true) : path_name(c, false),
                            run.busy_ns()[static_cast<std::size_t>(c)],
                            run.bytes()[static_cast<std::size_t>(c)]});
  }
  for (BusySpan& span : out.busy) span.channel = index[static_cast<std::size_t>(span.channel)];
  return out;
}

}  // namespace trnsim::collective
