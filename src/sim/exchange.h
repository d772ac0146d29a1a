// The pairing of sendrecv instructions between the cores of a logical core (internal to the
// executor). A sendrecv is two transfers: its src to core send_to, and core recv_from's src
// into its dst. Transfers on a pipe pair in order: the k-th message core a sends to core b
// on pipe p goes to the k-th receive b posts from a on pipe p. This class only pairs and
// counts; the executor moves the data and times the transfers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "isa/isa.h"
#include "sim/sim.h"

namespace trnsim::sim::detail {

// One started sendrecv.
struct ExchangeParty {
  std::uint32_t core = 0;  // launch
  std::uint32_t queue = 0;
  std::uint32_t id = 0;  // of the start
  std::size_t index = 0;
  isa::Instruction inst;                    // as started (registers applied)
  std::vector<std::uint8_t> bytes;          // src at the start (functional runs)
  Duration started = 0;                     // when it reached the head of its queue
  Duration transfer_start = -1;             // when its first transfer began (-1: none yet)
  Duration sent_at = -1, received_at = -1;  // when each transfer ended (-1: not yet)
  bool complete() const { return sent_at >= 0 && received_at >= 0; }
};

class Exchanges {
 public:
  struct Transfer {
    std::size_t sender, receiver;  // parties
  };

  // Registers a start of core `rank` of logical core `group`; returns the transfers that can
  // begin now (each pairs a waiting message with a waiting receive).
  std::vector<Transfer> arrive(int group, std::uint32_t rank, ExchangeParty party);
  ExchangeParty& party(std::size_t i) { return parties_[i]; }
  // A completed party's slot may be reused.
  void release(std::size_t i) { free_.push_back(i); }
  // The party of core `core`'s instruction `index` that still waits, for the deadlock report:
  // " waits at sendrecv on pipe 3: sent to core 1 (not yet received there); nothing
  // received from core 1 yet".
  std::string status(std::uint32_t core, std::size_t index,
                     const std::vector<int>& physical_of_rank) const;

 private:
  using Key =
      std::tuple<int, std::uint32_t, std::uint32_t, std::uint32_t>;  // group, pipe, from, to
  std::vector<Transfer> match(const Key& key);

  std::vector<ExchangeParty> parties_;
  std::vector<std::size_t> free_;
  std::map<Key, std::deque<std::size_t>> messages_, receives_;
};

}  // namespace trnsim::sim::detail
