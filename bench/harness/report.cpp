// Text, Markdown and JSON reports of benchmark runs; the query scenes' tables.
#include "harness/report.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>

#include "harness/timing.hpp"

namespace sapling::bench {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// The value of the first "key : value" line of a /proc file.
std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "unknown";
}

std::string run_and_read(const std::string& command) {
  std::string text;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 256> buf;
    while (std::fgets(buf.data(), buf.size(), pipe)) text += buf.data();
    if (pclose(pipe) != 0) text.clear();
  }
  return trim(text);
}

// Milliseconds with about four significant digits.
std::string ms_text(double ms) {
  if (ms >= 1000) return fixed(ms, 0);
  if (ms >= 100) return fixed(ms, 1);
  if (ms >= 10) return fixed(ms, 2);
  return fixed(ms, 3);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  std::ostringstream s;
  s << std::setprecision(6) << v;
  return s.str();
}

std::string json_array(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + json_number(v[k]);
  return out + "]";
}

std::string exactness_name(Exactness e) { return e == Exactness::kExact ? "exact" : "superset"; }

// One row of cells per contender.
std::vector<std::vector<std::string>> scene_rows(const SceneResult& scene) {
  std::vector<std::vector<std::string>> rows;
  const bool is_static = scene.shape.is_static;
  rows.push_back({"contender", is_static ? "ms/build" : "ms/frame", "median", "mean", "p95", "p99", "max", "frame 0",
                  "pairs", "B/object", "B/pair", "x fastest", "verification"});
  for (const ContenderResult& c : scene.contenders) {
    if (!c.skipped.empty()) {
      rows.push_back({c.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "skipped: " + c.skipped});
      continue;
    }
    std::string per_object = "-", per_pair = "-";
    if (c.memory && c.boxes_last > 0) per_object = fixed(double(c.memory->object_bytes) / double(c.boxes_last), 1);
    if (c.memory && c.pairs_last > 0) per_pair = fixed(double(c.memory->pair_bytes) / double(c.pairs_last), 1);
    const bool timed = is_static ? !c.frame0_ms.empty() : !c.frame_ms.empty();
    std::string verification = c.verification.text();
    if (!c.error.empty()) verification = "ERROR: " + c.error;
    if (c.stopped_by_budget) {
      verification += ", stopped by budget after " +
                      std::to_string(is_static ? c.frame0_ms.size() : c.frame_ms.size()) +
                      (is_static ? " build(s)" : " frame(s)");
    }
    rows.push_back({c.name, timed ? ms_text(c.headline_ms()) + (c.bursty ? "*" : "") : "-",
                    timed ? ms_text(c.median_ms) : "-", timed ? ms_text(c.mean_ms) : "-",
                    timed ? ms_text(c.p95_ms) : "-", timed ? ms_text(c.p99_ms) : "-", timed ? ms_text(c.max_ms) : "-",
                    c.frame0_ms.empty() ? "-" : ms_text(c.frame0_median_ms), std::to_string(c.pairs_last), per_object,
                    per_pair, timed ? fixed(c.ratio, 2) : "-", verification});
  }
  return rows;
}

std::string scene_heading(const SceneResult& scene) {
  std::ostringstream s;
  s << "n = " << scene.shape.n << ", " << scene.shape.dims << "D, ";
  if (scene.shape.is_static) {
    s << "static: " << scene.reps << " builds from scratch";
  } else {
    s << scene.frames << " frames";
    if (scene.warmup) s << " after " << scene.warmup << " warm-up frames";
    s << " x " << scene.reps << " rep(s), frame 0 (mass insertion) apart";
  }
  if (!scene.reference.empty()) {
    s << "; reference " << scene.reference << " (" << scene.reference_pairs0 << " pairs at frame 0";
    if (scene.expected_pairs) {
      s << ", published " << *scene.expected_pairs
        << (*scene.expected_pairs == scene.reference_pairs0 ? ": match" : ": MISMATCH");
    }
    s << ")";
  }
  return s.str();
}

// Aligned columns: text columns (those whose header is in `text_columns`, and
// the first) to the left, figures to the right.
void print_rows(std::ostream& out, const std::vector<std::vector<std::string>>& rows, bool markdown) {
  const std::vector<std::string>& header = rows.front();
  std::vector<std::size_t> width(header.size(), 0);
  std::vector<bool> left(header.size(), false);
  for (std::size_t k = 0; k < header.size(); ++k) {
    left[k] = k == 0 || header[k] == "verification" || header[k].find("fastest") != std::string::npos;
    if (header[k] == "x fastest") left[k] = false;
  }
  for (const auto& row : rows) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    out << (markdown ? "| " : "  ");
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string pad(width[k] - row[k].size(), ' ');
      out << (left[k] ? row[k] + (k + 1 < row.size() || markdown ? pad : "") : pad + row[k]);
      if (k + 1 < row.size()) out << (markdown ? " | " : "  ");
    }
    out << (markdown ? " |" : "") << "\n";
    if (markdown && r == 0) {
      out << "|";
      for (std::size_t k = 0; k < row.size(); ++k) {
        const std::string dashes(width[k] + 1, '-');
        out << (left[k] ? ":" + dashes : dashes + ":") << "|";
      }
      out << "\n";
    }
  }
}

bool trustworthy(const ContenderResult& c) {
  return c.error.empty() && c.verification.status != "MISSES" && c.verification.status != "PHANTOM";
}

// The unisize paper's Table 1 (Capannini and Larsson, SIGRAD 2016, section 5):
// seconds per frame of its own method ("Our") for density d (per mille) and
// n = 2^17..2^20, on a 2.8 GHz i7-4810MQ; shown beside ours for scale.
double paper_table1_s(unsigned density_pm, std::size_t n) {
  static constexpr double kOur[4][4] = {{0.017, 0.035, 0.090, 0.220},
                                        {0.017, 0.036, 0.091, 0.216},
                                        {0.017, 0.036, 0.087, 0.219},
                                        {0.018, 0.037, 0.087, 0.215}};
  const int row = density_pm == 200 ? 0 : density_pm == 400 ? 1 : density_pm == 600 ? 2 : density_pm == 800 ? 3 : -1;
  int column = -1;
  for (int k = 0; k < 4; ++k) {
    if (n == (std::size_t{1} << (17 + k))) column = k;
  }
  return row < 0 || column < 0 ? 0 : kOur[row][column];
}

// A scene of the unisize grid: "unisize2d-N-dD".
bool unisize_scene(const SceneResult& s, std::size_t& n, unsigned& density_pm) {
  unsigned long long count = 0;
  unsigned d = 0;
  char tail = 0;
  if (std::sscanf(s.name.c_str(), "unisize2d-%llu-d%u%c", &count, &d, &tail) != 2) return false;
  n = static_cast<std::size_t>(count);
  density_pm = d;
  return true;
}

const ContenderResult* find_result(const SceneResult& s, const std::string& name) {
  for (const ContenderResult& c : s.contenders) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// One Table 1 cell: the headline ms, or why there is none.
std::string table1_cell(const ContenderResult* c) {
  if (!c) return "not run";
  if (!c->skipped.empty()) {
    return c->skipped.rfind("too slow", 0) == 0 ? "skipped (too slow)" : "skipped (" + c->skipped + ")";
  }
  if (!c->error.empty()) return "ERROR";
  if (c->frame_ms.empty()) return c->stopped_by_budget ? "stopped by budget at frame 0" : "-";
  std::string cell = ms_text(c->headline_ms()) + (c->bursty ? "*" : "");
  if (c->stopped_by_budget) cell += " (" + std::to_string(c->frame_ms.size()) + " frame(s), budget)";
  if (!trustworthy(*c)) cell += " " + c->verification.status;
  return cell;
}

std::string ratio_cell(const ContenderResult* num, const ContenderResult* den) {
  if (!num || !den || !num->has_time() || !den->has_time() || num->frame_ms.empty() || den->frame_ms.empty() ||
      den->headline_ms() <= 0) {
    return "-";
  }
  return fixed(num->headline_ms() / den->headline_ms(), 1) + "x";
}

// Table 1 of the unisize paper, in its shape: rows n x d, ms per frame per
// contender, then unisize's speed-up over CGAL and box-pruning.
void print_table1(std::ostream& out, const std::vector<SceneResult>& scenes) {
  // The paper's columns (sort-sweep for [Bar92], CGAL for [KMZ13]), the
  // persistent algorithms (BroadPhase: add/move/remove, update, created and
  // deleted pairs), then the one-shot calls (all pairs each frame, as CGAL
  // and the paper's own code work).
  static const char* const kColumns[] = {"sort-sweep",          "cgal",           "box-pruning", "dual-axis", "unisize",
                                         "box-pruning-oneshot", "unisize-oneshot"};
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"n", "d"};
  for (const char* c : kColumns) header.emplace_back(c);
  for (const char* h : {"pairs", "cgal / unisize", "box-pruning / unisize", "cgal / unisize-oneshot",
                        "box-pruning-oneshot / unisize-oneshot", "paper (Our)"}) {
    header.emplace_back(h);
  }
  rows.push_back(header);
  // Rows ordered by density, then n, like the paper's table.
  std::vector<std::pair<std::pair<unsigned, std::size_t>, const SceneResult*>> order;
  for (const SceneResult& s : scenes) {
    std::size_t n = 0;
    unsigned d = 0;
    if (unisize_scene(s, n, d)) order.push_back({{d, n}, &s});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, s] : order) {
    const auto [d, n] = key;
    std::vector<std::string> row{std::to_string(n), fixed(d / 1000.0, 1)};
    for (const char* c : kColumns) row.push_back(table1_cell(find_result(*s, c)));
    const ContenderResult* uni = find_result(*s, "unisize");
    row.push_back(uni && uni->ran ? std::to_string(uni->pairs_last) : "-");
    const ContenderResult* uni1 = find_result(*s, "unisize-oneshot");
    row.push_back(ratio_cell(find_result(*s, "cgal"), uni));
    row.push_back(ratio_cell(find_result(*s, "box-pruning"), uni));
    row.push_back(ratio_cell(find_result(*s, "cgal"), uni1));
    row.push_back(ratio_cell(find_result(*s, "box-pruning-oneshot"), uni1));
    const double paper = paper_table1_s(d, n);
    row.push_back(paper > 0 ? ms_text(paper * 1000) : "-");
    rows.push_back(std::move(row));
  }
  if (rows.size() > 1) print_rows(out, rows, true);
}

// Worst, mean and median frame time of every contender of a long run (the
// clustering run of the paper's Figure 4 reports these three).
void print_frame_stats(std::ostream& out, const SceneResult& s) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"contender", "frames", "worst ms", "mean ms", "median ms", "pairs min", "pairs max"});
  for (const ContenderResult& c : s.contenders) {
    if (c.frame_ms.empty()) continue;
    const double worst = *std::max_element(c.frame_ms.begin(), c.frame_ms.end());
    std::size_t lo = 0, hi = 0;
    if (!c.frame_pairs.empty()) {
      lo = *std::min_element(c.frame_pairs.begin(), c.frame_pairs.end());
      hi = *std::max_element(c.frame_pairs.begin(), c.frame_pairs.end());
    }
    rows.push_back({c.name, std::to_string(c.frame_ms.size()), ms_text(worst), ms_text(c.mean_ms), ms_text(c.median_ms),
                    c.frame_pairs.empty() ? "-" : std::to_string(lo),
                    c.frame_pairs.empty() ? "-" : std::to_string(hi)});
  }
  if (rows.size() > 1) print_rows(out, rows, true);
}

std::string json_counts(const std::vector<std::size_t>& v) {
  std::string out = "[";
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
  return out + "]";
}

}  // namespace

RunInfo collect_run_info() {
  RunInfo info;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  info.date = date;
  info.cpu = proc_field("/proc/cpuinfo", "model name");
  info.cores = std::thread::hardware_concurrency();
  info.memory = proc_field("/proc/meminfo", "MemTotal");
  const double kib = std::atof(info.memory.c_str());
  if (kib > 0) info.memory = fixed(kib / (1024.0 * 1024.0), 1) + " GiB";
  utsname u{};
  if (uname(&u) == 0) info.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "gcc " __VERSION__;
#endif
  info.build = SAPLING_BENCH_BUILD_TYPE;
  info.build += ", SIMD " SAPLING_BENCH_SIMD;
  info.git = run_and_read("git -C '" SAPLING_BENCH_SOURCE_DIR "' describe --always --dirty --tags 2>/dev/null");
  if (info.git.empty()) info.git = "unknown";
  info.peers = peer_libraries();
  return info;
}

void print_scene(std::ostream& out, const SceneResult& scene) {
  out << "\n== " << scene.name << ": " << scene.description << "\n   " << scene_heading(scene) << "\n";
  print_rows(out, scene_rows(scene), false);
  for (const ContenderResult& c : scene.contenders) {
    if (!c.counter_name.empty()) {
      out << "   " << c.name << ": " << fixed(c.counter_mean, 0) << " " << c.counter_name << " per measured frame\n";
    }
  }
}

void print_summary(std::ostream& out, const std::vector<SceneResult>& scenes, bool markdown) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"scene", "n", "sapling fastest", "ms", "fastest exact peer", "ms", "ratio", "fastest superset peer",
                  "ms", "ratio"});
  for (const SceneResult& s : scenes) {
    // Only contenders that passed verification count.
    const ContenderResult* best[3] = {nullptr, nullptr, nullptr};  // sapling, exact peer, superset peer
    for (const ContenderResult& c : s.contenders) {
      if (!c.has_time() || c.headline_ms() <= 0 || !trustworthy(c)) continue;
      const int kind = c.origin == "sapling" ? 0 : c.exactness == Exactness::kExact ? 1 : 2;
      if (!best[kind] || c.headline_ms() < best[kind]->headline_ms()) best[kind] = &c;
    }
    std::vector<std::string> row{s.name, std::to_string(s.shape.n)};
    for (int kind = 0; kind < 3; ++kind) {
      const ContenderResult* c = best[kind];
      row.push_back(c ? c->name : "-");
      row.push_back(c ? ms_text(c->headline_ms()) + (c->bursty ? "*" : "") : "-");
      if (kind > 0) row.push_back(c && best[0] ? fixed(c->headline_ms() / best[0]->headline_ms(), 1) + "x" : "-");
    }
    rows.push_back(std::move(row));
  }
  print_rows(out, rows, markdown);
}

namespace {

struct ScalingFit {
  std::string series, contender;
  double exponent = 0;
  std::vector<std::pair<std::size_t, double>> points;  // (n, ms per frame)
};

std::vector<ScalingFit> scaling_fits(const std::vector<SceneResult>& scenes) {
  std::vector<ScalingFit> fits;
  for (const SceneResult& s : scenes) {
    if (s.series.empty()) continue;
    for (const ContenderResult& c : s.contenders) {
      if (!c.has_time() || c.frame_ms.empty() || !trustworthy(c) || c.stopped_by_budget) continue;
      auto it = std::find_if(fits.begin(), fits.end(),
                             [&](const ScalingFit& f) { return f.series == s.series && f.contender == c.name; });
      if (it == fits.end()) it = fits.insert(fits.end(), ScalingFit{s.series, c.name, 0, {}});
      it->points.emplace_back(s.shape.n, c.headline_ms());
    }
  }
  std::erase_if(fits, [](const ScalingFit& f) { return f.points.size() < 3; });
  for (ScalingFit& f : fits) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const auto k = static_cast<double>(f.points.size());
    for (const auto& [n, ms] : f.points) {
      const double x = std::log(static_cast<double>(n)), y = std::log(ms);
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    f.exponent = (k * sxy - sx * sy) / (k * sxx - sx * sx);
  }
  return fits;
}

}  // namespace

void print_scaling(std::ostream& out, const std::vector<SceneResult>& scenes, bool markdown) {
  const std::vector<ScalingFit> fits = scaling_fits(scenes);
  if (fits.empty()) return;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"series", "contender", "exponent", "ms/frame at n"});
  for (const ScalingFit& f : fits) {
    std::string points;
    for (const auto& [n, ms] : f.points)
      points += (points.empty() ? "" : ", ") + std::to_string(n) + ": " + ms_text(ms);
    rows.push_back({f.series, f.contender, fixed(f.exponent, 2), points});
  }
  print_rows(out, rows, markdown);
}

void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<SceneResult>& scenes) {
  out << "# sapling side-by-side benchmark\n\n";
  out << "```\n" << info.command << "\n```\n\n";
  out << "- date: " << info.date << "\n- machine: " << info.cpu << ", " << info.cores << " hardware threads, "
      << info.memory << ", " << info.os << "\n- build: " << info.build << ", " << info.compiler
      << "\n- source: " << info.git << "\n- peers: ";
  for (std::size_t k = 0; k < info.peers.size(); ++k) out << (k ? ", " : "") << info.peers[k];
  if (info.peers.empty()) out << "none compiled in";
  out << "\n- sapling threads: " << info.threads << "; peers are single-threaded\n";
  out << "- heap: "
      << (info.warm_heap ? "warm (memory freed by one contender is reused by the next, whatever the order: "
                           "glibc keeps it in the process, M_MMAP_MAX 0 and M_TRIM_THRESHOLD max)"
                         : "cold (--cold-heap: glibc's defaults; page faults depend on which contender ran before)")
      << "\n";
  out << "- ms/frame: the median over the measured frames after frame 0 and any warm-up frames (static scenes: "
         "over rebuilds from scratch), or * the mean when frame times come in bursts (mean > 2x median, e.g. "
         "periodic re-insertion of fattened boxes: the median would show only the quiet frames); median, mean and "
         "p95 alongside; frame 0 (mass insertion) apart; a contender stops after "
      << json_number(info.budget_s)
      << " s of frames (budget). x fastest = ratio to the fastest contender of the scene. Contenders run interleaved, "
         "frame by frame, in one process, in an order that changes each frame so that each follows every other alike "
         "(a Williams square).\n";
  out << "- verification: each contender's full sorted pair set against the reference's on frame 0 and "
         "sampled frames up to the last. superset = every exact pair plus fattened-box extras; MISSES = pairs "
         "absent.\n";
  out << "- B/object, B/pair: bytes held after the last frame (BroadPhase::memory_bytes()): the pair manager's "
         "share per current pair, the rest per live object (sapling contenders only).\n";
  out << "\n## Summary\n\nms per frame (median; * mean) of the fastest verified contender of each kind; ratio = peer / "
         "sapling (above 1: sapling is faster). Superset peers return more pairs than exist (fattened boxes).\n\n";
  print_summary(out, scenes, true);
  if (!scaling_fits(scenes).empty()) {
    out << "\n## Scaling\n\nTime per frame against n: the exponent b of ms/frame ~ a n^b, least squares on "
           "log(ms/frame) against log(n) over the sizes of each series (computed by the harness, "
           "bench/harness/report.cpp, print_scaling()).\n\n";
    print_scaling(out, scenes, true);
  }
  bool any_unisize = false;
  for (const SceneResult& s : scenes) {
    std::size_t n = 0;
    unsigned d = 0;
    any_unisize = any_unisize || unisize_scene(s, n, d);
  }
  if (any_unisize) {
    out << "\n## Table 1 of the unisize paper\n\nCapannini and Larsson, \"Output Sensitive Collision Detection for "
           "Unisize Boxes\" (SIGRAD 2016), Table 1: n squares moving randomly in the plane at density d, passing "
           "through each other (W1 unisize2d). ms per frame (median; * mean when bursty) of each contender; their "
           "[Bar92] column is our sort-sweep, [KMZ13] is CGAL's box_intersection_d, \"Our\" is unisize: "
           "unisize-oneshot is Algorithm 1 alone (all pairs each frame, like CGAL and the paper's code), unisize "
           "the persistent algorithm (the same sweep, then created and deleted pairs through the pair manager), "
           "and likewise box-pruning-oneshot and box-pruning. "
           "\"skipped (too slow)\": left out at this n unless named in --contenders; \"(k frame(s), budget)\": "
           "stopped after k measured frames by the time budget. Ratios above 1: unisize is faster. The paper's own "
           "figure (\"Our\", on a 2.8 GHz i7-4810MQ) is given for scale only.\n\n";
    print_table1(out, scenes);
  }
  for (const SceneResult& s : scenes) {
    out << "\n## " << s.name << "\n\n" << s.description << ". " << scene_heading(s) << ".\n\n";
    print_rows(out, scene_rows(s), true);
    if (s.frames >= 100) {
      out << "\nFrame times over the " << s.frames
          << " measured frames (the unisize paper's Figure 4 gives worst, mean and median):\n\n";
      print_frame_stats(out, s);
    }
    bool any_note = false;
    for (const ContenderResult& c : s.contenders) any_note = any_note || (!c.note.empty() && c.skipped.empty());
    if (any_note) {
      out << "\n";
      for (const ContenderResult& c : s.contenders) {
        if (!c.note.empty() && c.skipped.empty()) out << "- " << c.name << ": " << c.note << "\n";
      }
    }
    for (const ContenderResult& c : s.contenders) {
      if (!c.counter_name.empty()) {
        out << "- " << c.name << ": " << fixed(c.counter_mean, 0) << " " << c.counter_name
            << " per measured frame (mean)\n";
      }
    }
  }
}

void write_frames_csv(std::ostream& out, const std::vector<SceneResult>& scenes) {
  out << "scene,contender,frame,ms,pairs\n";
  for (const SceneResult& s : scenes) {
    for (const ContenderResult& c : s.contenders) {
      if (!c.skipped.empty() || c.frame0_ms.empty()) continue;
      out << s.name << "," << c.name << ",0," << json_number(c.frame0_ms.front()) << "," << c.frame0_pairs << "\n";
      for (std::size_t k = 0; k < c.frame_pairs.size() && k < c.frame_ms.size(); ++k) {
        out << s.name << "," << c.name << "," << s.warmup + 1 + static_cast<int>(k) << "," << json_number(c.frame_ms[k])
            << "," << c.frame_pairs[k] << "\n";
      }
    }
  }
}

void write_json(std::ostream& out, const RunInfo& info, const std::vector<SceneResult>& scenes) {
  out << "{\n  \"command\": " << json_string(info.command) << ",\n  \"date\": " << json_string(info.date)
      << ",\n  \"machine\": {\"cpu\": " << json_string(info.cpu) << ", \"cores\": " << info.cores
      << ", \"memory\": " << json_string(info.memory) << ", \"os\": " << json_string(info.os)
      << "},\n  \"build\": {\"type\": " << json_string(info.build) << ", \"compiler\": " << json_string(info.compiler)
      << ", \"git\": " << json_string(info.git) << ", \"peers\": [";
  for (std::size_t k = 0; k < info.peers.size(); ++k) out << (k ? ", " : "") << json_string(info.peers[k]);
  out << "]},\n  \"threads\": " << info.threads << ",\n  \"budget_s\": " << json_number(info.budget_s)
      << ",\n  \"warm_heap\": " << (info.warm_heap ? "true" : "false") << ",\n  \"scenes\": [";
  for (std::size_t s = 0; s < scenes.size(); ++s) {
    const SceneResult& sc = scenes[s];
    out << (s ? "," : "") << "\n    {\"name\": " << json_string(sc.name)
        << ", \"description\": " << json_string(sc.description) << ", \"series\": " << json_string(sc.series)
        << ", \"n\": " << sc.shape.n << ", \"dims\": " << sc.shape.dims
        << ", \"static\": " << (sc.shape.is_static ? "true" : "false") << ", \"bipartite_split\": " << sc.shape.split
        << ", \"frames\": " << sc.frames << ", \"warmup\": " << sc.warmup << ", \"reps\": " << sc.reps
        << ", \"reference\": " << json_string(sc.reference) << ", \"reference_pairs_frame0\": " << sc.reference_pairs0;
    if (sc.expected_pairs) out << ", \"expected_pairs\": " << *sc.expected_pairs;
    out << ", \"wall_s\": " << json_number(sc.wall_s) << ",\n     \"contenders\": [";
    for (std::size_t k = 0; k < sc.contenders.size(); ++k) {
      const ContenderResult& c = sc.contenders[k];
      const Verification& v = c.verification;
      out << (k ? "," : "") << "\n      {\"name\": " << json_string(c.name) << ", \"origin\": " << json_string(c.origin)
          << ", \"exactness\": " << json_string(exactness_name(c.exactness)) << ", \"note\": " << json_string(c.note);
      if (!c.skipped.empty()) {
        out << ", \"skipped\": " << json_string(c.skipped) << "}";
        continue;
      }
      out << ", \"error\": " << json_string(c.error)
          << ", \"stopped_by_budget\": " << (c.stopped_by_budget ? "true" : "false")
          << ", \"median_ms\": " << json_number(c.median_ms) << ", \"p95_ms\": " << json_number(c.p95_ms)
          << ", \"p99_ms\": " << json_number(c.p99_ms) << ", \"max_ms\": " << json_number(c.max_ms)
          << ", \"min_ms\": " << json_number(c.min_ms) << ", \"mean_ms\": " << json_number(c.mean_ms)
          << ", \"bursty\": " << (c.bursty ? "true" : "false") << ", \"headline_ms\": " << json_number(c.headline_ms())
          << ", \"frame0_median_ms\": " << json_number(c.frame0_median_ms)
          << ", \"ratio_to_fastest\": " << json_number(c.ratio) << ", \"pairs_last\": " << c.pairs_last
          << ", \"boxes_last\": " << c.boxes_last;
      if (!c.counter_name.empty()) {
        out << ", \"counter\": {\"name\": " << json_string(c.counter_name)
            << ", \"per_frame\": " << json_number(c.counter_mean) << ", \"frames\": " << json_array(c.frame_counts)
            << "}";
      }
      if (c.memory) {
        out << ", \"memory\": {\"object_bytes\": " << c.memory->object_bytes
            << ", \"pair_bytes\": " << c.memory->pair_bytes << ", \"bytes_per_object\": "
            << json_number(c.boxes_last ? double(c.memory->object_bytes) / double(c.boxes_last) : 0)
            << ", \"bytes_per_pair\": "
            << json_number(c.pairs_last ? double(c.memory->pair_bytes) / double(c.pairs_last) : 0) << "}";
      }
      out << ",\n       \"verification\": {\"status\": " << json_string(v.status)
          << ", \"text\": " << json_string(v.text()) << ", \"frames_checked\": " << v.frames_checked
          << ", \"missing\": " << v.missing << ", \"extra\": " << v.extra << ", \"duplicates\": " << v.duplicates
          << ", \"reference_pairs\": " << v.reference_pairs << ", \"first_bad_frame\": " << v.first_bad_frame
          << "},\n       \"frame0_ms\": " << json_array(c.frame0_ms) << ", \"warmup_ms\": " << json_array(c.warmup_ms)
          << ", \"frame_ms\": " << json_array(c.frame_ms) << ",\n       \"frame0_pairs\": " << c.frame0_pairs
          << ", \"frame_pairs\": " << json_counts(c.frame_pairs) << "}";
    }
    out << "]}";
  }
  out << "\n  ]\n}\n";
}

void write_query_tables(std::ostream& out, const std::vector<QuerySceneResult>& scenes, std::size_t dense_overlaps,
                        std::size_t spread_overlaps) {
  if (scenes.empty()) return;
  out << "## Queries and rays (" << scenes.front().boxes << " tiles of the dense static level, "
      << scenes.front().frames << " frames, median ns per query)\n\n";
  out << "Static-static overlaps among the dense level's tiles: " << dense_overlaps << "\n\n";
  out << "Static-static overlaps among the spread level's tiles: " << spread_overlaps << "\n\n";
  for (const QuerySceneResult& w : scenes) {
    out << "\n### " << w.name << "\n\n"
        << w.boxes << " boxes; " << w.queries << " region queries and " << w.rays << " rays per frame.\n\n";
    for (const std::string& line : w.build_lines) out << "- " << line << "\n";
    out << "\n| contender | call | ns/query (median) | min | answers | checked |\n|---|---|---|---|---|---|\n";
    for (const QueryCallResult& c : w.calls) {
      if (c.batch_size == 0) continue;
      const double lo = c.ns_per_query.empty() ? 0 : *std::min_element(c.ns_per_query.begin(), c.ns_per_query.end());
      out << "| " << c.contender << " | " << c.call << " | " << fixed(median(c.ns_per_query), 0) << " | "
          << fixed(lo, 0) << " | " << c.answers << " | "
          << (c.wrong == 0 ? "same as sapling" : "DIFFERS on " + std::to_string(c.wrong)) << " |\n";
    }
  }
}

}  // namespace sapling::bench
