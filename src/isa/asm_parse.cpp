// Text assembly parser: the inverse of the printer (asm_print.cpp). The syntax is documented
// (with a grammar) in docs/isa.md. Written once per field type and driven by each operation's
// fields() visitor, so a new operation needs no code here. The character-level reading of a
// line is LineParser (asm_line_parser.h).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "isa/asm.h"
#include "isa/asm_detail.h"
#include "isa/asm_line_parser.h"
#include "numerics/dtype.h"
#include "util/edit_distance.h"
#include "util/read_file.h"

namespace trnsim::isa {

AsmError::AsmError(std::string file, std::uint32_t line, std::uint32_t column, std::string message)
    : util::Error(util::Diagnostic{{std::move(file), line, column}, std::move(message)}) {}

namespace {

using namespace asm_detail;

// ---------------------------------------------------------------------------------------
// "Did you mean": the closest candidate within a small edit distance.

template <class Range>
std::string did_you_mean(std::string_view word, const Range& candidates) {
  const std::string best = util::closest(word, candidates);
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

std::vector<std::string_view> mnemonics() {
  std::vector<std::string_view> names;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (names.push_back(std::variant_alternative_t<I, Operation>::kName), ...);
  }
  (std::make_index_sequence<std::variant_size_v<Operation>>{});
  return names;
}

// NKI names plus the short spellings people type; the latter only if parse_dtype really
// accepts them, so a suggestion always parses.
std::vector<std::string_view> dtype_names() {
  std::vector<std::string_view> names;
  for (const auto& row : numerics::all_dtypes()) names.push_back(row.name);
  for (std::string_view alias :
       {"fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "e8m0", "i8", "i16",
        "i32", "u8", "u16", "u32", "mxfp8", "mxfp4"}) {
    if (numerics::parse_dtype(alias)) names.push_back(alias);
  }
  return names;
}

std::vector<std::string_view> engine_names() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kNumEngines; ++i) names.push_back(engine_name(static_cast<Engine>(i)));
  return names;
}

// ---------------------------------------------------------------------------------------
// Parser: one LineParser per line, with the column of every token.

std::string field_what(std::string_view field) {
  return fmt::format("field '{}'", field);
}

void parse_dims(LineParser& p, std::uint8_t& num_dims, std::array<Dim, kMaxFreeDims>& dims,
                std::string_view field) {
  p.expect('[', fmt::format("expected '[' to start the [[step,count],...] pattern of {}",
                            field_what(field)));
  num_dims = 0;
  dims = {};
  if (p.consume(']')) return;
  while (true) {
    if (num_dims == kMaxFreeDims) {
      p.fail(fmt::format("at most {} free dimensions in {}", kMaxFreeDims, field_what(field)));
    }
    p.expect('[', "expected '[' to start a [step,count] dimension");
    Dim& dim = dims[num_dims];
    dim.step = p.integer<std::int64_t>("a dimension step");
    p.expect(',', "expected ',' between step and count of a dimension");
    dim.count = p.integer<std::uint32_t>("a dimension count");
    p.expect(']', "expected ']' after the count of a dimension");
    ++num_dims;
    if (p.consume(']')) return;
    p.expect(',', "expected ',' or ']' after dimension");
  }
}

// r<N>, N < 255 (or "none" where `optional`). Validation, not the syntax, knows that a queue
// has kNumRegisters of them.
Reg parse_register(LineParser& p, std::string_view what, bool optional) {
  p.skip_space();
  const std::size_t start = p.position();
  const std::string_view word = p.identifier();
  if (optional && word == "none") return Reg{};
  int index = -1;
  if (word.size() >= 2 && word.size() <= 4 && word[0] == 'r' &&
      std::all_of(word.begin() + 1, word.end(), [](char c) { return c >= '0' && c <= '9'; }))
    index = std::stoi(std::string(word.substr(1)));
  if (index < 0 || index >= kNoRegister)
    p.fail_at(start, fmt::format("expected a register r<number>{} for {}, got {}",
                                 optional ? " or none" : "", what,
                                 word.empty() ? "nothing" : quoted_word(word)));
  return Reg{static_cast<std::uint8_t>(index)};
}

void parse_value(LineParser& p, Reg& reg, std::string_view field) {
  reg = parse_register(p, field_what(field), /*optional=*/true);
}

void parse_value(LineParser& p, AccessPattern& ap, std::string_view field) {
  const std::size_t start = p.position();
  const std::string_view memory_word = p.identifier();
  const auto memory = memory_from_name(memory_word);
  if (!memory) {
    p.fail_at(start, fmt::format("expected an access pattern (sbuf[...], psum[...] or hbm[...]) "
                                 "for {}, got {}",
                                 field_what(field),
                                 memory_word.empty() ? "nothing" : quoted_word(memory_word)));
  }
  ap = AccessPattern{};
  ap.memory = *memory;
  p.raw_expect('[', fmt::format("expected '[' right after '{}'", memory_word));
  p.skip_space();
  p.raw_expect('p', "expected the partition range 'p<start>:<end>'");
  // Decimal only: an 'x' after the end introduces the partition step.
  const std::size_t range_start = p.position();
  ap.start_partition = p.integer<std::uint32_t>("the start partition", /*decimal_only=*/true);
  p.raw_expect(':', "expected ':' between start and end partition");
  const auto end = p.integer<std::uint64_t>("the end partition", /*decimal_only=*/true);
  if (end < ap.start_partition) {
    p.fail_at(range_start, fmt::format("partition range end {} is before its start {}", end,
                                       ap.start_partition));
  }
  if (end - ap.start_partition > std::numeric_limits<std::uint32_t>::max()) {
    p.fail_at(range_start, "partition count does not fit 32 bits");
  }
  ap.partitions = static_cast<std::uint32_t>(end - ap.start_partition);
  if (p.raw_peek() == 'x') {
    p.raw_expect('x', "");
    ap.partition_step = p.integer<std::int64_t>("the partition step", /*decimal_only=*/true);
  }
  p.expect(',', "expected ',' after the partition range");
  const std::string_view offset_key = ap.memory == Memory::kHbm ? "addr" : "off";
  p.skip_space();
  const std::size_t key_start = p.position();
  if (p.identifier() != offset_key || !p.consume('=')) {
    p.fail_at(key_start, ap.memory == Memory::kHbm
                             ? "expected 'addr=' (HBM byte address)"
                             : "expected 'off=' (byte offset within each partition)");
  }
  ap.offset = p.integer<std::uint64_t>(ap.memory == Memory::kHbm ? "an address" : "an offset");
  if (p.consume('+')) {  // a dynamic pattern: +r<N>*<bytes per unit>
    ap.dyn_reg = parse_register(p, "the offset's register", /*optional=*/false);
    p.expect('*', "expected '*' and the bytes per register unit after the register");
    ap.dyn_scale = p.integer<std::int64_t>("the bytes per register unit");
  }
  p.expect(',', "expected ',' after the offset");
  p.skip_space();
  const std::size_t dtype_start = p.position();
  const std::string_view dtype_word = p.identifier();
  const auto dtype = numerics::parse_dtype(dtype_word);
  if (!dtype) {
    p.fail_at(dtype_start, fmt::format("unknown dtype {}{}",
                                       dtype_word.empty() ? "(none)" : quoted_word(dtype_word),
                                       did_you_mean(dtype_word, dtype_names())));
  }
  ap.dtype = *dtype;
  p.expect(',', "expected ',' after the dtype");
  parse_dims(p, ap.num_dims, ap.dims, field);
  p.expect(']', "expected ']' to close the access pattern");
}

void parse_value(LineParser& p, std::optional<AccessPattern>& ap, std::string_view field) {
  if (p.peek_identifier() == "none") {
    p.identifier();
    ap.reset();
    return;
  }
  parse_value(p, ap.emplace(), field);
}

void parse_value(LineParser& p, float& value, std::string_view field) {
  value = p.floating(field_what(field));
}

void parse_value(LineParser& p, ScalarOperand& operand, std::string_view field) {
  if (memory_from_name(p.peek_identifier())) {
    parse_value(p, operand.emplace<AccessPattern>(), field);
  } else {
    parse_value(p, operand.emplace<float>(), field);
  }
}

void parse_value(LineParser& p, bool& value, std::string_view field) {
  const std::size_t start = p.position();
  const std::string_view word = p.identifier();
  if (word != "true" && word != "false") {
    p.fail_at(start, fmt::format("expected true or false for {}", field_what(field)));
  }
  value = word == "true";
}

template <class T>
requires std::is_integral_v<T>
void parse_value(LineParser& p, T& value, std::string_view field) {
  value = p.integer<T>(field_what(field));
}

template <class E>
requires std::is_enum_v<E>
void parse_value(LineParser& p, E& value, std::string_view field) {
  p.skip_space();
  const std::size_t start = p.position();
  const std::string_view word = p.identifier();
  for (int i = 0; i < kEnumSpelling<E>.count; ++i) {
    if (enum_name(static_cast<E>(i)) == word) {
      value = static_cast<E>(i);
      return;
    }
  }
  p.fail_at(start, fmt::format("unknown {} {} for {}{}", kEnumSpelling<E>.what,
                               word.empty() ? "(none)" : quoted_word(word), field_what(field),
                               did_you_mean(word, enum_spellings<E>())));
}

void parse_value(LineParser& p, AffinePattern& pattern, std::string_view field) {
  parse_dims(p, pattern.num_dims, pattern.dims, field);
}

// '[' item (',' item)* ']' or '[]', at most kMaxListEntries items.
template <class ParseItem>
void parse_list(LineParser& p, std::string_view field, ParseItem&& parse_item) {
  p.expect('[', fmt::format("expected '[' to start the list of {}", field_what(field)));
  if (p.consume(']')) return;
  for (std::size_t count = 1;; ++count) {
    if (count > kMaxListEntries) {
      p.fail(fmt::format("more than {} entries in {}", kMaxListEntries, field_what(field)));
    }
    parse_item();
    if (p.consume(']')) return;
    p.expect(',', fmt::format("expected ',' or ']' in the list of {}", field_what(field)));
  }
}

void parse_value(LineParser& p, std::array<std::uint8_t, 32>& mask, std::string_view field) {
  std::size_t count = 0;
  const std::size_t start = p.position();
  parse_list(p, field, [&] {
    if (count == mask.size()) p.fail(fmt::format("{} takes exactly 32 entries", field_what(field)));
    mask[count++] = p.integer<std::uint8_t>(fmt::format("an entry of {}", field_what(field)));
  });
  if (count != mask.size()) {
    p.fail_at(start, fmt::format("{} takes exactly 32 entries, got {}", field_what(field), count));
  }
}

void parse_value(LineParser& p, std::vector<AccessPattern>& aps, std::string_view field) {
  aps.clear();
  parse_list(p, field, [&] { parse_value(p, aps.emplace_back(), field); });
}

void parse_value(LineParser& p, std::vector<float>& values, std::string_view field) {
  values.clear();
  parse_list(p, field, [&] { values.push_back(p.floating(field_what(field))); });
}

void parse_value(LineParser& p, std::vector<std::uint32_t>& values, std::string_view field) {
  values.clear();
  parse_list(p, field, [&] { values.push_back(p.integer<std::uint32_t>(field_what(field))); });
}

void parse_value(LineParser& p, std::string& text, std::string_view field) {
  text = p.string_literal(field_what(field));
}

// Parses "name=value, ..." into op; returns which fields were given (in fields() order).
template <class Op>
std::vector<bool> parse_fields(LineParser& p, Op& op) {
  std::vector<std::string_view> names;
  op.fields([&](std::string_view name, auto&, Role) { names.push_back(name); });
  std::vector<bool> seen(names.size(), false);

  const auto is_clause = [](std::string_view word) {
    return std::find(kClauseKeywords.begin(), kClauseKeywords.end(), word) != kClauseKeywords.end();
  };
  const std::string_view first = p.peek_identifier();
  if (!first.empty() && !is_clause(first)) {
    do {
      p.skip_space();
      const std::size_t key_start = p.position();
      const std::string_view key = p.identifier();
      if (key.empty()) p.fail("expected a field name");
      const auto it = std::find(names.begin(), names.end(), key);
      if (it == names.end()) {
        p.fail_at(key_start, fmt::format("unknown field {} for {}{}", quoted_word(key), Op::kName,
                                         did_you_mean(key, names)));
      }
      const auto index = static_cast<std::size_t>(it - names.begin());
      if (seen[index]) p.fail_at(key_start, fmt::format("duplicate field '{}'", key));
      seen[index] = true;
      p.expect('=', fmt::format("expected '=' after field name '{}'", key));
      std::size_t visiting = 0;
      op.fields([&](std::string_view name, auto& member, Role) {
        if (visiting++ == index) parse_value(p, member, name);
      });
    } while (p.consume(','));
  }
  return seen;
}

// Operand access patterns are always printed, so they are required: a forgotten operand
// must not silently become the default pattern.
template <class Op>
void check_required_fields(LineParser& p, Op& op, const std::vector<bool>& seen,
                           std::size_t mnemonic_position) {
  std::size_t visiting = 0;
  op.fields([&](std::string_view name, auto& member, Role) {
    if constexpr (kAlwaysPrinted<std::decay_t<decltype(member)>>) {
      if (!seen[visiting]) {
        p.fail_at(mnemonic_position, fmt::format("missing operand '{}' of {}", name, Op::kName));
      }
    }
    ++visiting;
  });
}

void parse_origin(LineParser& p, Origin& origin) {
  p.skip_space();
  if (p.consume('?')) {
    origin = Origin{};
    return;
  }
  if (p.raw_peek() == '"') {
    origin.file = p.string_literal("the origin file");
  } else {
    const std::size_t start = p.position();
    origin.file.clear();
    while (is_bare_file_char(p.raw_peek())) {
      if (origin.file.size() >= kMaxStringBytes) p.fail_at(start, "origin file name too long");
      origin.file += p.raw_peek();
      p.raw_expect(p.raw_peek(), "");
    }
    if (origin.file.empty()) p.fail_at(start, "expected an origin file:line:col or '?' after '@'");
  }
  p.raw_expect(':', "expected ':' after the origin file");
  origin.line = p.integer<std::uint32_t>("the origin line", /*decimal_only=*/true);
  p.raw_expect(':', "expected ':' after the origin line");
  origin.column = p.integer<std::uint32_t>("the origin column", /*decimal_only=*/true);
}

// After the fields: wait, signal, rounding and name clauses in any order (each once), then
// an optional origin, then the end of the line.
void parse_clauses(LineParser& p, Instruction& inst, bool& origin_given) {
  bool seen_wait = false, seen_signal = false, seen_rounding = false, seen_name = false;
  while (!p.at_end()) {
    if (p.consume('@')) {
      parse_origin(p, inst.origin);
      origin_given = true;
      if (!p.at_end()) p.fail("expected the end of the line after the origin");
      return;
    }
    const std::size_t start = p.position();
    const std::string_view word = p.identifier();
    auto once = [&](bool& seen) {
      if (seen) p.fail_at(start, fmt::format("duplicate '{}' clause", word));
      seen = true;
    };
    if (word == "wait" || word == "signal") {
      const bool is_wait = word == "wait";
      once(is_wait ? seen_wait : seen_signal);
      do {
        if ((is_wait ? inst.waits.size() : inst.signals.size()) >= kMaxSemaphoreClauses) {
          p.fail(fmt::format("more than {} semaphores in one '{}' clause", kMaxSemaphoreClauses,
                             word));
        }
        p.expect('s',
                 is_wait
                     ? "expected a semaphore wait 's<id> >= <value>' or 's<id> >= r<N>+<offset>'"
                     : "expected a semaphore signal 's<id> += <increment>'");
        const auto sem = p.integer<std::uint16_t>("a semaphore id");
        if (is_wait) {
          if (!p.consume(">=")) p.fail("expected '>=' after the semaphore id");
          if (p.peek() == 'r') {  // s<id> >= r<N> [+|- offset]
            SemWait& w =
                inst.waits.emplace_back(SemWait{sem, 0, parse_register(p, "a wait's base", false)});
            const bool minus = p.consume('-');
            if (minus || p.consume('+')) {
              const auto offset = p.integer<std::uint32_t>("a wait's offset");
              if (offset > (minus ? 0x80000000u : 0x7FFFFFFFu))
                p.fail("a wait's offset from its register is a signed 32-bit value");
              w.value = minus ? 0u - offset : offset;
            }
          } else {
            inst.waits.push_back({sem, p.integer<std::uint32_t>("a wait value"), Reg{}});
          }
        } else {
          if (!p.consume("+=")) p.fail("expected '+=' after the semaphore id");
          inst.signals.push_back({sem, p.integer<std::uint32_t>("a signal increment")});
        }
      } while (p.consume(','));
    } else if (word == "rounding") {
      once(seen_rounding);
      p.expect('=', "expected '=' after 'rounding'");
      parse_value(p, inst.rounding, "rounding");
    } else if (word == "name") {
      once(seen_name);
      p.expect('=', "expected '=' after 'name'");
      inst.name = p.string_literal("the instruction name");
    } else {
      p.fail_at(start, word.empty()
                           ? std::string("expected ',' and a field, a clause (wait, signal, "
                                         "rounding, name), '@' origin or the end of the line")
                           : fmt::format("unexpected {}: expected ',' before a field, or a clause "
                                         "(wait, signal, rounding, name)",
                                         quoted_word(word)));
    }
  }
}

Engine default_engine(const Operation& op) {
  const unsigned engines = op_engines(op);
  return static_cast<Engine>(engines == 0 ? 0 : std::countr_zero(engines));
}

struct ParseState {
  Program program;
  bool seed_given = false;
};

// NAME@ADDRESS:DTYPE[D0,D1,...]: the operand of a .hbm line and of `run-asm --hbm`.
HbmTensor parse_hbm_spec(LineParser& p) {
  HbmTensor t;
  p.skip_space();
  const std::size_t start = p.position();
  t.name = std::string(p.identifier());
  if (t.name.empty()) p.fail("expected the tensor's name: NAME@ADDRESS:DTYPE[D0,D1,...]");
  p.expect('@', "expected '@' and the byte address after the name (e.g. a@0x0:bfloat16[256,256])");
  t.address = p.integer<std::uint64_t>("the address");
  p.expect(':', "expected ':' and the dtype after the address (e.g. a@0x0:bfloat16[256,256])");
  const std::size_t dtype_position = p.position();
  const std::string_view dtype_name = p.identifier();
  const std::optional<DType> dtype = numerics::parse_dtype(dtype_name);
  if (!dtype) p.fail_at(dtype_position, fmt::format("unknown dtype {}", quoted_word(dtype_name)));
  t.dtype = *dtype;
  p.expect('[', "expected '[' and the dimensions after the dtype (e.g. bfloat16[256,256])");
  std::uint64_t bytes = numerics::storage_bytes(t.dtype);
  do {
    p.skip_space();
    const std::size_t dim_position = p.position();
    t.shape.push_back(p.integer<std::uint64_t>("a dimension"));
    if (t.shape.back() == 0) p.fail_at(dim_position, "a zero dimension");
    // A wrapped size would allocate a few bytes for a huge tensor.
    if (__builtin_mul_overflow(bytes, t.shape.back(), &bytes) || t.address + bytes < t.address)
      p.fail_at(start,
                fmt::format("hbm tensor '{}': its size does not fit in 64-bit addresses", t.name));
  } while (p.consume(','));
  p.expect(']', "expected ',' and a dimension, or ']'");
  return t;
}

void parse_directive(LineParser& p, ParseState& state) {
  const std::size_t start = p.position();
  p.consume('.');
  const std::string_view directive = p.identifier();
  if (directive == "seed") {
    if (state.seed_given) p.fail_at(start, "duplicate .seed directive");
    state.seed_given = true;
    state.program.seed = p.integer<std::uint32_t>("the seed");
    if (!p.at_end()) p.fail("expected the end of the line after .seed N");
  } else if (directive == "hbm") {
    p.skip_space();
    const std::size_t spec_position = p.position();
    HbmTensor t = parse_hbm_spec(p);
    if (!p.at_end()) p.fail("expected the end of the line after .hbm NAME@ADDRESS:DTYPE[DIMS]");
    for (const HbmTensor& other : state.program.hbm)
      if (other.name == t.name)
        p.fail_at(spec_position, fmt::format("hbm tensor '{}' is declared twice", t.name));
    state.program.hbm.push_back(std::move(t));
  } else {
    p.fail_at(start, fmt::format("unknown directive '.{}' (expected '.seed' or '.hbm')",
                                 directive.substr(0, 40)));
  }
}

void parse_line(LineParser& p, ParseState& state) {
  if (p.at_end()) return;  // blank or comment-only
  if (p.peek() == '.') {
    parse_directive(p, state);
    return;
  }
  Instruction inst;
  std::optional<QueueId> queue;
  if (p.consume('[')) {
    const std::size_t start = p.position();
    const std::string_view word = p.identifier();
    const auto engine = engine_from_name(word);
    if (!engine) {
      p.fail_at(start,
                fmt::format("unknown engine {}{}", word.empty() ? "(none)" : quoted_word(word),
                            did_you_mean(word, engine_names())));
    }
    queue = QueueId{*engine, 0};
    if (p.consume('.')) queue->index = p.integer<std::uint8_t>("the queue index");
    p.expect(']', "expected ']' after the queue (e.g. [vector] or [dma.3])");
  }
  p.skip_space();
  const std::size_t mnemonic_position = p.position();
  const std::string_view mnemonic = p.identifier();
  if (mnemonic.empty()) p.fail("expected a mnemonic");
  auto op = make_operation(mnemonic);
  if (!op) {
    p.fail_at(mnemonic_position, fmt::format("unknown mnemonic {}{}", quoted_word(mnemonic),
                                             did_you_mean(mnemonic, mnemonics())));
  }
  inst.op = std::move(*op);
  inst.queue = queue ? *queue : QueueId{default_engine(inst.op), 0};
  const std::vector<bool> seen =
      std::visit([&](auto& alternative) { return parse_fields(p, alternative); }, inst.op);
  bool origin_given = false;
  parse_clauses(p, inst, origin_given);
  std::visit(
      [&](auto& alternative) { check_required_fields(p, alternative, seen, mnemonic_position); },
      inst.op);
  if (!origin_given) {
    inst.origin = Origin{p.file(), p.line_number(), p.column_of(mnemonic_position)};
  }
  state.program.instructions.push_back(std::move(inst));
}

// Assembly is text: a NUL or another control byte (a binary file, a terminal escape) would
// otherwise end a line early or reach the terminal in an error message. Tabs are blanks.
void reject_control_characters(std::string_view line, std::uint32_t line_number,
                               const std::string& file) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7F)
      throw AsmError(file, line_number, static_cast<std::uint32_t>(i + 1),
                     fmt::format("control character {:#04x} in the line (assembly is text; "
                                 "write it in a string as an escape such as \\t or \\x00)",
                                 byte));
  }
}

}  // namespace

Program parse_program(std::string_view text, const std::string& file) {
  ParseState state;
  std::uint32_t line_number = 0;
  std::size_t line_start = 0;
  while (line_start <= text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == std::numeric_limits<std::uint32_t>::max()) {
      throw AsmError(file, line_number, 1, "too many lines");
    }
    ++line_number;
    if (line.size() > kMaxLineBytes) {
      throw AsmError(file, line_number, 1, fmt::format("line longer than {} bytes", kMaxLineBytes));
    }
    reject_control_characters(line, line_number, file);
    LineParser parser(line, line_number, file);
    parse_line(parser, state);
    line_start = line_end + 1;
  }
  return std::move(state.program);
}

HbmTensor parse_hbm_tensor(std::string_view spec, const std::string& file) {
  if (spec.size() > kMaxLineBytes)
    throw AsmError(file, 1, 1, fmt::format("longer than {} bytes", kMaxLineBytes));
  reject_control_characters(spec, 1, file);
  LineParser p(spec, 1, file);
  HbmTensor t = parse_hbm_spec(p);
  if (!p.at_end()) p.fail("expected the end after NAME@ADDRESS:DTYPE[D0,D1,...]");
  return t;
}

Program parse_program_file(const std::string& path) {
  std::string text;
  try {
    text = util::read_file(path, kMaxProgramFileBytes, "assembly file");
  } catch (const util::Error& e) {
    throw AsmError(path, 0, 0, e.diagnostics().front().message);
  }
  return parse_program(text, path);
}

}  // namespace trnsim::isa
