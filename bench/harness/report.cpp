// Text, Markdown and JSON reports of benchmark runs.
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

namespace sapling::bench {
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

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
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
  rows.push_back({"contender", is_static ? "ms/build" : "ms/frame", "median", "mean", "p95", "frame 0", "pairs",
                  "B/object", "B/pair", "x fastest", "verification"});
  for (const ContenderResult& c : scene.contenders) {
    if (!c.skipped.empty()) {
      rows.push_back({c.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "skipped: " + c.skipped});
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
                    timed ? ms_text(c.p95_ms) : "-", c.frame0_ms.empty() ? "-" : ms_text(c.frame0_median_ms),
                    std::to_string(c.pairs_last), per_object, per_pair, timed ? fixed(c.ratio, 2) : "-", verification});
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
  out << "- ms/frame: the median over the measured frames after frame 0 and any warm-up frames (static scenes: "
         "over rebuilds from scratch), or * the mean when frame times come in bursts (mean > 2x median, e.g. "
         "periodic re-insertion of fattened boxes: the median would show only the quiet frames); median, mean and "
         "p95 alongside; frame 0 (mass insertion) apart; a contender stops after 60 s of frames (budget). x fastest = "
         "ratio to the fastest contender "
         "of the scene. Contenders run interleaved, frame by frame, in one process; the order rotates each frame.\n";
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
  for (const SceneResult& s : scenes) {
    out << "\n## " << s.name << "\n\n" << s.description << ". " << scene_heading(s) << ".\n\n";
    print_rows(out, scene_rows(s), true);
    bool any_note = false;
    for (const ContenderResult& c : s.contenders) any_note = any_note || (!c.note.empty() && c.skipped.empty());
    if (any_note) {
      out << "\n";
      for (const ContenderResult& c : s.contenders) {
        if (!c.note.empty() && c.skipped.empty()) out << "- " << c.name << ": " << c.note << "\n";
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
      << ",\n  \"scenes\": [";
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
          << ", \"min_ms\": " << json_number(c.min_ms) << ", \"mean_ms\": " << json_number(c.mean_ms)
          << ", \"bursty\": " << (c.bursty ? "true" : "false") << ", \"headline_ms\": " << json_number(c.headline_ms())
          << ", \"frame0_median_ms\": " << json_number(c.frame0_median_ms)
          << ", \"ratio_to_fastest\": " << json_number(c.ratio) << ", \"pairs_last\": " << c.pairs_last
          << ", \"boxes_last\": " << c.boxes_last;
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
          << ", \"frame_ms\": " << json_array(c.frame_ms) << "}";
    }
    out << "]}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace sapling::bench
