// The explorer: one self-contained HTML file (inline CSS and JavaScript, the data as JSON in
// a <script type="application/json"> block), and the one-call front-end entry point.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include "profile/assets.h"
#include "profile/detail.h"
#include "profile/profile.h"

namespace trnsim::profile {

namespace {

class Json {
 public:
  std::string s;
  // Value writers put the separating comma themselves.
  void num(double v) {
    comma();
    if (!std::isfinite(v)) v = 0;
    fmt::format_to(std::back_inserter(s), "{}", v);
  }
  void str(std::string_view v) {
    comma();
    detail::json_string(s, v);
  }
  void key(std::string_view k) {
    comma();
    detail::json_string(s, k);
    s += ':';
    fresh_ = true;
  }
  void open(char c) {
    comma();
    s += c;
    fresh_ = true;
  }
  void close(char c) {
    s += c;
    fresh_ = false;
  }
  // For raw text written straight into `s`.
  void comma() {
    if (!fresh_) s += ',';
    fresh_ = false;
  }
  void kv(std::string_view k, double v) {
    key(k);
    num(v);
  }
  void kv(std::string_view k, std::string_view v) {
    key(k);
    str(v);
  }
  template <class T, class F>
  void array(std::string_view k, const std::vector<T>& items, F f) {
    key(k);
    open('[');
    for (const auto& x : items) f(x);
    close(']');
  }

 private:
  bool fresh_ = true;
};

void metrics_json(Json& j, const Metrics& m) {
  j.key("metrics");
  j.open('{');
  j.kv("total_ns", m.total_ns);
  j.kv("tensor_mode", m.tensor_mode);
  j.kv("model_flops", m.model_flops);
  j.kv("transpose_flops", m.transpose_flops);
  j.kv("peak_flops_per_s", m.peak_flops_per_s);
  j.kv("achieved_flops_per_s", m.achieved_flops_per_s);
  j.kv("mfu_percent", m.mfu_percent);
  j.kv("hfu_percent", m.hfu_percent);
  j.kv("mbu_percent", m.mbu_percent);
  j.kv("hbm_bytes", static_cast<double>(m.hbm_bytes));
  j.kv("dma_bytes", static_cast<double>(m.dma_bytes));
  j.kv("hbm_bandwidth_bytes_per_s", m.hbm_bandwidth_bytes_per_s);
  j.kv("achieved_hbm_bytes_per_s", m.achieved_hbm_bytes_per_s);
  j.kv("dma_active_time_percent", m.dma_active_time_percent);
  j.kv("average_dma_size", m.average_dma_size);
  j.kv("dma_transfers", static_cast<double>(m.dma_transfers));
  j.kv("dma_engines", m.dma_engines);
  j.kv("dma_peak_bytes_per_s", m.dma_peak_bytes_per_s);
  j.kv("achieved_dma_bytes_per_s", m.achieved_dma_bytes_per_s);
  j.kv("mm_arithmetic_intensity", m.mm_arithmetic_intensity);
  j.kv("peak_flops_bandwidth_ratio", m.peak_flops_bandwidth_ratio);
  j.kv("throttled_ns", m.throttled_ns);
  j.kv("hbm_limited_ns", m.hbm_limited_ns);
  j.kv("stall_ns", m.stall_ns);
  j.kv("sb_read_bytes", static_cast<double>(m.sb_read_bytes));
  j.kv("sb_write_bytes", static_cast<double>(m.sb_write_bytes));
  j.kv("psum_read_bytes", static_cast<double>(m.psum_read_bytes));
  j.kv("psum_write_bytes", static_cast<double>(m.psum_write_bytes));
  j.kv("bounding_engine", m.bounding_engine);
  j.kv("bounding_active_percent", m.bounding_active_percent);
  j.close('}');
}

template <class F>
void column(Json& j, std::string_view name, const std::vector<InstructionProfile>& ins,
            std::size_t limit, F f) {
  j.key(name);
  j.open('[');
  for (std::size_t i = 0; i < ins.size() && i < limit; ++i) j.num(f(ins[i]));
  j.close(']');
}

void tracks_json(Json& j, const CoreProfile& cp) {
  j.array("tracks", cp.tracks, [&](const TrackProfile& t) {
    j.open('{');
    j.kv("name", t.name);
    j.kv("engine", isa::engine_name(t.queue.engine));
    j.kv("instructions", static_cast<double>(t.instructions));
    j.kv("busy_ns", t.busy_ns);
    j.kv("stalled_ns", t.stalled_ns);
    j.kv("active_percent", t.active_percent);
    j.kv("flops", t.flops);
    j.kv("bytes", static_cast<double>(t.bytes));
    j.kv("achieved_per_s", t.achieved_per_s);
    j.kv("peak_per_s", t.peak_per_s);
    j.kv("unit", t.unit);
    j.close('}');
  });
}

void stalls_and_counters_json(Json& j, const CoreProfile& cp) {
  j.array("stalls", cp.stalls, [&](const StallBucket& s) {
    j.open('{');
    j.kv("key", s.key);
    j.kv("group", s.group);
    j.kv("ns", s.ns);
    j.kv("n", static_cast<double>(s.instructions));
    j.kv("percent", s.percent);
    j.close('}');
  });
  j.array("stall_lines", cp.stall_lines, [&](const StallLinePair& p) {
    j.open('{');
    j.kv("waiting", p.waiting_source);
    j.kv("releasing", p.releasing_source);
    j.kv("cause", stall_cause_name(p.cause));
    j.kv("ns", p.ns);
    j.kv("n", static_cast<double>(p.instructions));
    j.kv("percent", p.percent);
    j.array("sems", p.semaphores, [&](std::int16_t sem) { j.num(sem); });
    j.array("waiting_tracks", p.waiting_tracks, [&](std::uint16_t t) { j.num(t); });
    j.array("releasing_tracks", p.releasing_tracks, [&](std::uint16_t t) { j.num(t); });
    j.close('}');
  });
  j.key("counters");
  j.open('{');
  j.kv("bucket_ns", cp.counters.bucket_ns);
  j.array("hbm", cp.counters.hbm_bytes_per_s, [&](double v) { j.num(v); });
  j.array("sbuf", cp.counters.sbuf_bytes, [&](double v) { j.num(v); });
  j.array("psum", cp.counters.psum_bytes, [&](double v) { j.num(v); });
  j.array("util", cp.counters.track_util, [&](const std::vector<double>& u) {
    j.open('[');
    for (double v : u) j.num(std::round(v * 1000) / 1000);
    j.close(']');
  });
  j.close('}');
}

// Instructions, column by column (compact for 10^5+ rows).
void instructions_json(Json& j, const std::vector<InstructionProfile>& ins, std::size_t limit) {
  j.key("ins");
  j.open('{');
  j.kv("n", static_cast<double>(std::min(ins.size(), limit)));
  j.kv("total", static_cast<double>(ins.size()));
  column(j, "track", ins, limit, [](const InstructionProfile& p) { return p.track; });
  column(j, "op", ins, limit, [](const InstructionProfile& p) { return p.op; });
  column(j, "src", ins, limit, [](const InstructionProfile& p) { return p.source; });
  column(j, "start", ins, limit, [](const InstructionProfile& p) { return p.start; });
  column(j, "occ", ins, limit,
         [](const InstructionProfile& p) { return p.occupied_until - p.start; });
  column(j, "lat", ins, limit, [](const InstructionProfile& p) { return p.end - p.start; });
  column(j, "flops", ins, limit, [](const InstructionProfile& p) { return p.flops; });
  column(j, "bytes", ins, limit,
         [](const InstructionProfile& p) { return static_cast<double>(p.bytes); });
  column(j, "hbm", ins, limit,
         [](const InstructionProfile& p) { return static_cast<double>(p.hbm_bytes); });
  column(j, "stall", ins, limit, [](const InstructionProfile& p) { return p.stall_ns; });
  column(j, "cause", ins, limit,
         [](const InstructionProfile& p) { return static_cast<int>(p.cause); });
  column(j, "sem", ins, limit, [](const InstructionProfile& p) { return p.wait_sem; });
  column(j, "rel", ins, limit,
         [](const InstructionProfile& p) { return static_cast<double>(p.released_by); });
  column(j, "parts", ins, limit, [](const InstructionProfile& p) { return p.partitions; });
  column(j, "bound", ins, limit,
         [](const InstructionProfile& p) { return static_cast<int>(p.bound); });
  j.close('}');
}

void core_json(Json& j, const Analysis& a, std::size_t c, std::size_t limit) {
  const CoreProfile& cp = a.cores[c];
  j.open('{');
  j.kv("core", cp.core);
  metrics_json(j, cp.metrics);
  tracks_json(j, cp);
  stalls_and_counters_json(j, cp);
  instructions_json(j, cp.instructions, limit);
  j.key("text");
  j.open('[');
  if (c < a.text.size())
    for (std::size_t i = 0; i < a.text[c].size() && i < limit; ++i) j.str(a.text[c][i]);
  j.close(']');
  j.key("edges");
  j.open('[');
  for (const Edge& e : cp.edges) {
    if (e.to >= limit) break;
    j.comma();
    fmt::format_to(std::back_inserter(j.s), "[{},{},{},{}]", e.from, e.to, e.kinds,
                   e.semaphore ? e.sem : -1);
  }
  j.close(']');
  j.close('}');
}

void analysis_json(Json& j, const Analysis& a, const HtmlOptions& options) {
  j.open('{');
  j.kv("title", options.title.empty() ? a.title : options.title);
  j.kv("chip", a.chip);
  j.kv("total_ns", a.total_ns);
  j.array("ops", a.op_names, [&](const std::string& s) { j.str(s); });
  j.array("sources", a.sources, [&](const SourceLine& s) {
    j.open('{');
    j.kv("file", s.file);
    j.kv("line", s.line);
    j.kv("code", s.code);
    j.kv("busy_ns", s.busy_ns);
    j.kv("stall_ns", s.stall_ns);
    j.kv("flops", s.flops);
    j.kv("n", static_cast<double>(s.instructions));
    j.close('}');
  });
  j.array("suggestions", a.suggestions, [&](const Suggestion& s) {
    j.open('{');
    j.kv("rule", s.rule);
    j.kv("title", s.title);
    j.kv("detail", s.detail);
    j.kv("core", s.core);
    j.kv("source", s.source);
    j.kv("impact_ns", s.impact_ns);
    j.close('}');
  });
  j.key("cores");
  j.open('[');
  for (std::size_t c = 0; c < a.cores.size(); ++c) core_json(j, a, c, options.max_instructions);
  j.close(']');
  j.key("bounds");
  j.open('[');
  for (int b = 0; b <= static_cast<int>(timing::Bound::kNone); ++b) {
    j.str(timing::bound_name(static_cast<timing::Bound>(b)));
  }
  j.close(']');
  j.close('}');
}

int track_count(const Analysis& a) {
  int n = 0;
  for (const auto& c : a.cores) n += static_cast<int>(c.tracks.size());
  return n;
}

void write_page(std::ostream& out, const std::string& title, const std::string& data, int tracks) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  for (char ch : title) {
    if (ch == '<')
      out << "&lt;";
    else if (ch == '&')
      out << "&amp;";
    else
      out << ch;
  }
  out << "</title>\n<style>\n";
  for (std::size_t i = 0; i < assets::kExplorerCssCount; ++i) out << assets::kExplorerCss[i];
  out << "</style>\n</head>\n<body>\n"
         "<header><h1 id=\"title\"></h1><nav><a href=\"#summary\">Summary</a> <a "
         "href=\"#timeline-section\">Timeline</a> "
         "<a href=\"#suggestions\">Suggestions</a> <a href=\"#stalls\">Stalls</a> <a "
         "href=\"#instructions\">Instructions</a> "
         "<a href=\"#source\">Source</a></nav></header>\n"
         "<main>\n<section id=\"summary\"></section>\n<section id=\"compare\"></section>\n"
         "<section id=\"timeline-section\"><h2>Timeline</h2><div class=\"hint\">wheel: zoom, drag: "
         "pan, "
         "double-click: reset, click: select</div>\n<div id=\"timeline\" data-tracks=\""
      << tracks
      << "\"><canvas id=\"timeline-canvas\"></canvas><div id=\"tooltip\"></div></div></section>\n"
         "<section id=\"details\"><h2>Instruction details</h2><div id=\"details-body\">Click an "
         "instruction.</div></section>\n"
         "<section id=\"suggestions\"><h2>Suggestions</h2></section>\n"
         "<section id=\"stalls\"><h2>Stall breakdown</h2></section>\n"
         "<section id=\"instructions\"><h2>Instructions</h2></section>\n"
         "<section id=\"source\"><h2>Source lines</h2></section>\n"
         "<pre id=\"selftest\"></pre>\n</main>\n"
         "<script type=\"application/json\" id=\"profile-data\">";
  out << data;
  out << "</script>\n<script>\n";
  for (std::size_t i = 0; i < assets::kExplorerJsCount; ++i) out << assets::kExplorerJs[i];
  out << "</script>\n</body>\n</html>\n";
}

}  // namespace

void write_html_report(const Analysis& analysis, std::ostream& out, const HtmlOptions& options) {
  Json j;
  j.open('{');
  j.kv("mode", "report");
  j.key("runs");
  j.open('[');
  analysis_json(j, analysis, options);
  j.close(']');
  j.close('}');
  write_page(out, options.title.empty() ? analysis.title : options.title, j.s,
             track_count(analysis));
}

void write_html_comparison(const Analysis& before, const Analysis& after, std::ostream& out,
                           const HtmlOptions& options) {
  Json j;
  j.open('{');
  j.kv("mode", "compare");
  j.key("runs");
  j.open('[');
  analysis_json(j, before, options);
  analysis_json(j, after, options);
  j.close(']');
  j.close('}');
  const std::string title =
      options.title.empty() ? fmt::format("{} vs {}", before.title, after.title) : options.title;
  write_page(out, title, j.s, track_count(before));  // the timeline shows the first run
}

Analysis write_profile(const ProfileInput& input, const ReportFiles& files,
                       const HtmlOptions& options) {
  Analysis analysis = analyze(input);
  if (!files.trace.empty()) {
    std::ofstream out(files.trace, std::ios::binary);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", files.trace));
    write_chrome_trace(input, out);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", files.trace));
  }
  if (!files.html.empty()) {
    std::ofstream out(files.html, std::ios::binary);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", files.html));
    if (files.compare) {
      const Analysis other = analyze(*files.compare);
      write_html_comparison(analysis, other, out, options);
    } else {
      write_html_report(analysis, out, options);
    }
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", files.html));
  }
  return analysis;
}

}  // namespace trnsim::profile
