// sapling-demo: a small 2D physics loop on sapling's broad phase, in a window
// or headless (frames written as PNG). Usage: sapling-demo --help.
#include <SDL.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "canvas.hpp"
#include "demo.hpp"
#include "output.hpp"
#include "png_writer.hpp"
#include "renderer.hpp"
#include "sapling/registry.hpp"
#include "scaling.hpp"

namespace {

using namespace sapling::demo;
using sapling::cli::Output;
using sapling::cli::prove_writable;

constexpr const char* kUsage =
    "usage: sapling-demo [--scene S] [--algo A] [--count N] [--moving F] [--seed N]\n"
    "                    [--size WxH] [--frames N] [--switch-every N]\n"
    "                    [--screenshot FILE] [--headless --out DIR [--every N]]\n"
    "  --scene S         particles, pile (default), flat, mixed, spawn, ground\n"
    "  --algo A          a registered algorithm (sapling algos), default sap\n"
    "  --count N         bodies (default: the scene's)\n"
    "  --moving F        fraction of bodies that move, 0..1 (default: the scene's)\n"
    "  --frames N        stop after N frames (default: never in a window, 120 headless)\n"
    "  --switch-every N  switch to the next algorithm every N frames; exits 1 if the\n"
    "                    pairs after a switch differ\n"
    "  --screenshot FILE in a window, write the last frame to FILE (PNG)\n"
    "  --headless        no window: render with SDL's software renderer and write\n"
    "                    DIR/frame-NNNNN.png every N frames (--every, default 1)\n"
    "       sapling-demo --scaling JSON [--scene S] [--moving F] [--frames N]\n"
    "                    [--algos A,B,...] [--sizes N,N,...]\n"
    "  --scaling JSON    the blog's experiment, headless: broad-phase time per frame\n"
    "                    of each algorithm (default brute,sort-sweep,sap,box-pruning)\n"
    "                    at each count (default 10..1000), interleaved in lockstep,\n"
    "                    pairs checked equal; plot: bench/plot_demo_scaling.py\n"
    "keys (window): see the help line at the bottom; H hides it.\n"
    "exit status (those of the sapling command): 0 success; 1 a bad command line,\n"
    "an output that cannot be written, no display, or a switch whose pairs differ;\n"
    "3 the algorithm does not support the scene (unisize: bodies of one size only),\n"
    "said on stderr\n";

struct Args {
  SceneSettings scene;
  std::string algorithm = "sap";
  long frames = -1;
  long every = 1;
  long switch_every = 0;
  bool headless = false;
  std::string out;
  std::string screenshot;
  std::string scaling;  // --scaling JSON
  bool scene_given = false;
  std::vector<std::string> algos;
  std::vector<std::size_t> sizes;
  int width = 1280, height = 720;
};

// The exit statuses of the sapling command (docs/trace-format.md).
constexpr int kExitFailed = 1;       // an output that cannot be written, no display, a switch with other pairs
constexpr int kExitUsage = 1;        // a bad command line
constexpr int kExitUnsupported = 3;  // the algorithm does not support the scene

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "sapling-demo: %s\n%s", what.c_str(), kUsage);
  std::exit(kExitUsage);
}

int failed(const std::string& why) {
  std::fprintf(stderr, "sapling-demo: %s\n", why.c_str());
  return kExitFailed;
}

// A refusal of the broad phase: status 3 when the algorithm does not take
// such boxes (StatusCode::kUnsupported), else 1.
int refused(const std::string& why, const sapling::Status& status) {
  std::fprintf(stderr, "sapling-demo: %s\n", why.c_str());
  return status.code() == sapling::StatusCode::kUnsupported ? kExitUnsupported : kExitFailed;
}

// The entries of a comma-separated list given to `flag`: none empty, none twice.
std::vector<std::string_view> list_entries(std::string_view flag, std::string_view list) {
  if (list.empty()) usage_error(std::string(flag) + ": an empty list");
  std::vector<std::string_view> items;
  for (std::size_t at = 0;;) {
    const std::size_t end = list.find(',', at);
    const std::string_view item = list.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (item.empty()) usage_error(std::string(flag) + ": an empty entry in '" + std::string(list) + "'");
    if (std::find(items.begin(), items.end(), item) != items.end()) {
      usage_error(std::string(flag) + ": " + std::string(item) + " is given twice");
    }
    items.push_back(item);
    if (end == std::string_view::npos) return items;
    at = end + 1;
  }
}

template <typename T>
T number(std::string_view flag, std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    usage_error(std::string(flag) + ": not a number: '" + std::string(text) + "'");
  }
  return value;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      Output out("-");
      out.buffer() = kUsage;
      std::exit(out.close() ? 0 : failed(out.error()));
    } else if (flag == "--scene") {
      a.scene.name = value();
      a.scene_given = true;
    } else if (flag == "--algo") {
      a.algorithm = value();
    } else if (flag == "--count") {
      a.scene.count = number<std::size_t>(flag, value());
    } else if (flag == "--moving") {
      a.scene.moving = number<float>(flag, value());
      if (a.scene.moving < 0 || a.scene.moving > 1) usage_error("--moving: a fraction between 0 and 1");
    } else if (flag == "--seed") {
      a.scene.seed = number<std::uint64_t>(flag, value());
    } else if (flag == "--frames") {
      a.frames = number<long>(flag, value());
      if (a.frames < 1) usage_error("--frames: at least 1");
    } else if (flag == "--every") {
      a.every = number<long>(flag, value());
      if (a.every < 1) usage_error("--every: at least 1");
    } else if (flag == "--switch-every") {
      a.switch_every = number<long>(flag, value());
      if (a.switch_every < 1) usage_error("--switch-every: at least 1");
    } else if (flag == "--size") {
      const std::string_view s = value();
      const auto x = s.find('x');
      if (x == std::string_view::npos) usage_error("--size: WIDTHxHEIGHT");
      a.width = number<int>(flag, s.substr(0, x));
      a.height = number<int>(flag, s.substr(x + 1));
      if (a.width < 320 || a.height < 200) usage_error("--size: at least 320x200");
    } else if (flag == "--headless") {
      a.headless = true;
    } else if (flag == "--scaling") {
      a.scaling = value();
    } else if (flag == "--algos" || flag == "--sizes") {
      for (const std::string_view item : list_entries(flag, value())) {
        if (flag == "--algos") {
          a.algos.emplace_back(item);
        } else {
          a.sizes.push_back(number<std::size_t>(flag, item));
        }
      }
    } else if (flag == "--screenshot") {
      a.screenshot = value();
    } else if (flag == "--out") {
      a.out = value();
    } else {
      usage_error("unknown option '" + std::string(flag) + "'");
    }
  }
  if (a.headless && a.out.empty()) usage_error("--headless needs --out DIR");
  if (a.headless && a.frames < 0) a.frames = 120;
  return a;
}

// Appends a line to standard output and writes it; false (said on stderr) if it cannot.
bool say(Output& out, const std::string& line) {
  out.buffer() += line;
  out.buffer() += '\n';
  if (out.flush()) return true;
  failed(out.error());
  return false;
}

// Every `switch_every` frames, the next registered algorithm that takes the
// world; a switch that reports other pairs is an error.
bool maybe_switch(Demo& demo, const Args& a, long frame, Output& out) {
  if (a.switch_every <= 0 || frame == 0 || frame % a.switch_every != 0) return true;
  const auto all = sapling::algorithms();
  std::size_t i = 0;
  while (i < all.size() && all[i].name != demo.world().algorithm()) ++i;
  for (std::size_t k = 1; k < all.size(); ++k) {
    const auto& next = all[(i + k) % all.size()];
    const std::string why = demo.switch_algorithm(next.name);
    if (why.empty()) return say(out, "frame " + std::to_string(frame) + ": " + demo.message());
    if (why.find("reports") != std::string::npos) {
      failed("frame " + std::to_string(frame) + ": " + why);
      return false;
    }
    if (!say(out, "frame " + std::to_string(frame) + ": skipped: " + why)) return false;
  }
  return true;
}

// The PNG of frame `frame` (counted from 1) in `dir`.
std::string frame_path(const std::string& dir, long frame) {
  char name[32];
  std::snprintf(name, sizeof name, "frame-%05ld.png", frame);
  return (std::filesystem::path(dir) / name).string();
}

int run_headless(Demo& demo, const Args& a, Output& out) {
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec) return failed("cannot create " + a.out + ": " + ec.message());
  // Proved writable before the first frame, even when no frame is written.
  if (std::string why; !prove_writable(frame_path(a.out, a.every), why)) return failed(why);
  Canvas canvas(a.width, a.height);
  for (long frame = 0; frame < a.frames; ++frame) {
    if (!maybe_switch(demo, a, frame, out)) return kExitFailed;
    demo.advance();
    if (const auto& w = demo.world(); !w.last_error().empty()) {
      return refused("frame " + std::to_string(frame) + ": " + w.last_error(), w.last_refusal());
    }
    if ((frame + 1) % a.every != 0) continue;
    render(canvas, demo);
    if (std::string why = write_png(frame_path(a.out, frame + 1), canvas.surface()); !why.empty()) return failed(why);
  }
  const auto& s = demo.world().stats();
  return say(out, std::to_string(a.frames) + " frames of " + demo.scene().name + " on " + demo.world().algorithm() +
                      ": " + std::to_string(s.objects) + " objects, " + std::to_string(s.pairs) + " pairs; PNG in " +
                      a.out)
             ? 0
             : kExitFailed;
}

int run_window(Demo& demo, const Args& a, Output& out) {
  if (std::string why; !a.screenshot.empty() && !prove_writable(a.screenshot, why)) return failed(why);
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    std::fprintf(stderr, "sapling-demo: no display (%s); use --headless --out DIR\n", SDL_GetError());
    return kExitFailed;
  }
  SDL_Window* window = SDL_CreateWindow("sapling-demo", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, a.width,
                                        a.height, SDL_WINDOW_SHOWN);
  SDL_Renderer* renderer = window ? SDL_CreateRenderer(window, -1, 0) : nullptr;
  SDL_Texture* texture =
      renderer ? SDL_CreateTexture(renderer, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, a.width, a.height)
               : nullptr;
  int rc = 0;
  if (!texture) {
    std::fprintf(stderr, "sapling-demo: cannot open a window: %s\n", SDL_GetError());
    rc = kExitFailed;
  } else {
    Canvas canvas(a.width, a.height);
    for (long frame = 0; !demo.quit() && (a.frames < 0 || frame < a.frames); ++frame) {
      const Uint64 start = SDL_GetTicks64();
      const Viewport view = fit(demo.world(), a.width, a.height);
      SDL_Event e;
      while (SDL_PollEvent(&e)) {
        if (e.type == SDL_QUIT) demo.apply({Action::kQuit});
        if (e.type == SDL_KEYDOWN) demo.apply(command_for_key(e.key.keysym.sym, (e.key.keysym.mod & KMOD_SHIFT) != 0));
        if (e.type == SDL_MOUSEMOTION) {
          demo.set_mouse(view.world_x(static_cast<float>(e.motion.x)), view.world_y(static_cast<float>(e.motion.y)));
        }
        if (e.type == SDL_MOUSEBUTTONDOWN) {
          demo.burst(view.world_x(static_cast<float>(e.button.x)), view.world_y(static_cast<float>(e.button.y)));
        }
      }
      if (!maybe_switch(demo, a, frame, out)) {
        rc = kExitFailed;
        break;
      }
      demo.advance();
      // Here a refusal follows a key (a scene, a burst): the message line shows it, and stderr.
      if (const auto& w = demo.world(); !w.last_error().empty()) {
        std::fprintf(stderr, "sapling-demo: frame %ld: %s\n", frame, w.last_error().c_str());
      }
      render(canvas, demo);
      SDL_UpdateTexture(texture, nullptr, canvas.surface()->pixels, canvas.surface()->pitch);
      SDL_RenderCopy(renderer, texture, nullptr, nullptr);
      SDL_RenderPresent(renderer);
      const Uint64 spent = SDL_GetTicks64() - start;
      if (spent < 16) SDL_Delay(static_cast<Uint32>(16 - spent));
    }
    if (rc == 0 && !a.screenshot.empty()) {
      if (std::string why = write_png(a.screenshot, canvas.surface()); !why.empty()) rc = failed(why);
    }
    if (rc == 0 && !say(out, demo.message())) rc = kExitFailed;
  }
  if (texture) SDL_DestroyTexture(texture);
  if (renderer) SDL_DestroyRenderer(renderer);
  if (window) SDL_DestroyWindow(window);
  SDL_Quit();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  Output out("-");
  if (!out.open()) return failed(out.error());
  int rc = 0;
  if (!args.scaling.empty()) {
    ScalingSettings s;
    if (args.scene_given) s.scene = args.scene.name;
    if (args.scene.moving >= 0) s.moving = args.scene.moving;
    if (args.frames > 0) s.frames = static_cast<int>(args.frames);
    if (!args.algos.empty()) s.algorithms = args.algos;
    if (!args.sizes.empty()) s.sizes = args.sizes;
    s.json = args.scaling;
    rc = run_scaling(s, out);
  } else {
    try {
      Demo demo(args.scene, args.algorithm);
      // Refused up front: the scene's bodies the algorithm would not take.
      if (const sapling::Status s = demo.world().accepts_pending(); !s) {
        return refused(args.algorithm + " does not support the scene " + args.scene.name + ": " + s.message(), s);
      }
      rc = args.headless ? run_headless(demo, args, out) : run_window(demo, args, out);
    } catch (const std::exception& e) {
      return failed(e.what());
    }
  }
  if (!out.close()) return failed(out.error());
  return rc;
}
