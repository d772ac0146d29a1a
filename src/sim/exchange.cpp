#include "sim/exchange.h"

#include <fmt/core.h>

#include <utility>

namespace trnsim::sim::detail {

std::vector<Exchanges::Transfer> Exchanges::arrive(int group, std::uint32_t rank,
                                                   ExchangeParty party) {
  const isa::SendRecv op = std::get<isa::SendRecv>(party.inst.op);  // before the move below
  std::size_t slot = parties_.size();
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    parties_[slot] = std::move(party);
  } else {
    parties_.push_back(std::move(party));
  }
  const Key out{group, op.pipe, rank, op.send_to};
  const Key in{group, op.pipe, op.recv_from, rank};
  messages_[out].push_back(slot);
  receives_[in].push_back(slot);
  std::vector<Transfer> ready = match(out);
  if (in != out)
    for (const Transfer& t : match(in)) ready.push_back(t);
  return ready;
}

std::vector<Exchanges::Transfer> Exchanges::match(const Key& key) {
  std::vector<Transfer> ready;
  auto& sent = messages_[key];
  auto& posted = receives_[key];
  while (!sent.empty() && !posted.empty()) {
    ready.push_back({sent.front(), posted.front()});
    sent.pop_front();
    posted.pop_front();
  }
  return ready;
}

std::string Exchanges::status(std::uint32_t core, std::size_t index,
                              const std::vector<int>& physical_of_rank) const {
  for (std::size_t i = 0; i < parties_.size(); ++i) {
    const ExchangeParty& p = parties_[i];
    if (p.core != core || p.index != index || p.complete()) continue;
    const auto& op = std::get<isa::SendRecv>(p.inst.op);
    const auto name = [&](std::uint32_t rank) {
      return rank < physical_of_rank.size() ? fmt::format("core {}", physical_of_rank[rank])
                                            : fmt::format("rank {}", rank);
    };
    return fmt::format(
        " waits at sendrecv on pipe {}: {}; {}", op.pipe,
        p.sent_at >= 0 ? fmt::format("sent to {}", name(op.send_to))
                       : fmt::format("{} has not posted the matching receive", name(op.send_to)),
        p.received_at >= 0 ? fmt::format("received from {}", name(op.recv_from))
                           : fmt::format("{} has not sent to it", name(op.recv_from)));
  }
  return " waits at a sendrecv";
}

}  // namespace trnsim::sim::detail
