// The changing worlds of changing_scenes.hpp: each steps a spec scenario and
// edits what its frame says (which ids are live, moved, added, removed).
#include "harness/changing_scenes.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace sapling::bench {
namespace {

ScenarioParams tracy_params(std::size_t n, std::size_t movers) {
  ScenarioParams p;
  p.name = "tracy";
  p.n = n;
  p.moving = movers;
  p.inserts = 0;
  p.removes = 0;
  return p;
}

// A scene over a source scenario: the source steps, the scene keeps its own
// boxes, live set and frame lists, which edit() sets from the source's.
class EditedScene : public Scenario {
 public:
  EditedScene(int dims, const ScenarioParams& params) : Scenario(dims, params) {
    std::string error;
    source_ = make_scenario(params, &error);
    if (!source_) throw std::runtime_error("scenario " + params.name + ": " + error);
    boxes_.assign(source_->boxes().begin(), source_->boxes().end());
    alive_.assign(boxes_.size(), 0);
    world_ = source_->world();
  }
  void step() override {
    source_->step();
    ++frame_;
    removed_.clear();
    moved_.clear();
    added_.clear();
    edit();
  }

 protected:
  virtual void edit() = 0;
  // Brings the source's moves of live ids over, ascending.
  void take_moves() {
    for (const Id id : source_->moved()) {
      if (alive_[id] == 0) continue;
      boxes_[id] = source_->boxes()[id];
      moved_.push_back(id);
    }
  }
  void add(Id id) {
    boxes_[id] = source_->boxes()[id];
    alive_[id] = 1;
    alive_ids_.push_back(id);
    added_.push_back(id);
  }
  std::unique_ptr<Scenario> source_;
};

class PlanarResting final : public EditedScene {
 public:
  PlanarResting(std::size_t n, std::size_t movers) : EditedScene(2, params(n)), movers_(movers) {
    for (Id id = 0; id < n; ++id) add(id);
  }

 private:
  static ScenarioParams params(std::size_t n) {
    ScenarioParams p;
    p.name = "unisize2d";
    p.n = n;
    return p;
  }
  void edit() override {
    for (const Id id : source_->moved()) {
      if (id >= movers_) break;  // ascending
      boxes_[id] = source_->boxes()[id];
      moved_.push_back(id);
    }
  }
  std::size_t movers_;
};

class Explosion final : public EditedScene {
 public:
  Explosion(std::size_t n, std::size_t movers, std::size_t from, std::size_t frames)
      : EditedScene(3, tracy_params(n, movers)), movers_(movers), from_(from), frames_(frames) {
    for (Id id = 0; id < n; ++id) add(id);
  }

 private:
  void edit() override {
    take_moves();
    if (frame_ < from_ || frame_ >= from_ + frames_) return;
    const Box3& world = *world_;
    const double speed = 0.5 * std::pow(0.9, double(frame_ - from_));
    for (Id id = static_cast<Id>(movers_ + (3 - movers_ % 3) % 3); id < boxes_.size(); id += 3) {
      Box3& b = boxes_[id];
      double d[3], length = 0;
      for (int k = 0; k < 3; ++k) {
        d[k] = (double(b.min[k]) + double(b.max[k]) - double(world.min[k]) - double(world.max[k])) / 2;
        length += d[k] * d[k];
      }
      length = std::sqrt(length) + 1e-9;
      for (int k = 0; k < 3; ++k) {
        const float step = static_cast<float>(speed * d[k] / length);
        b.min[k] += step;
        b.max[k] += step;
      }
      moved_.push_back(id);
    }
  }
  std::size_t movers_, from_, frames_;
};

class StreamedLevel final : public EditedScene {
 public:
  StreamedLevel(std::size_t n, std::size_t movers, std::size_t batch, std::size_t every)
      : EditedScene(3, tracy_params(n, movers)), batch_(batch), every_(every) {
    load();
  }

 private:
  void load() {
    const std::size_t end = std::min(boxes_.size(), loaded_ + batch_);
    for (; loaded_ < end; ++loaded_) add(static_cast<Id>(loaded_));
  }
  void edit() override {
    take_moves();
    if (frame_ % every_ == 0) load();
  }
  std::size_t batch_, every_, loaded_ = 0;
};

class Wakeups final : public EditedScene {
 public:
  Wakeups(std::size_t n, std::size_t per_frame, std::size_t awake)
      : EditedScene(3, tracy_params(n, 0)),
        per_frame_(per_frame),
        awake_(std::min(awake, n / std::max<std::size_t>(1, per_frame))) {
    for (Id id = 0; id < n; ++id) add(id);
  }

 private:
  // The k-th cube woken: a stride through the ids coprime with n, so the
  // cubes awake together (fewer than n) are distinct.
  Id woken(std::uint64_t k) const {
    const std::uint64_t n = boxes_.size();
    std::uint64_t stride = 7919;  // prime
    while (std::gcd(stride, n) != 1) stride += 2;
    return static_cast<Id>((k % n) * stride % n);
  }
  // A step in [-0.05, 0.05] from a hash of (id, frame, axis).
  static float nudge(Id id, std::size_t frame, int axis) {
    std::uint64_t h = (std::uint64_t{id} << 32) ^ (std::uint64_t{frame} << 2) ^ static_cast<std::uint64_t>(axis);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return static_cast<float>(double(h >> 11) / double(std::uint64_t{1} << 53) * 0.1 - 0.05);
  }
  void edit() override {
    for (std::size_t age = 0; age < awake_ && age < frame_; ++age) {
      const std::uint64_t first = std::uint64_t{frame_ - age} * per_frame_;
      for (std::size_t k = 0; k < per_frame_; ++k) {
        const Id id = woken(first + k);
        Box3& b = boxes_[id];
        for (int axis = 0; axis < 3; ++axis) {
          const float step = nudge(id, frame_, axis);
          b.min[axis] += step;
          b.max[axis] += step;
        }
        moved_.push_back(id);
      }
    }
    std::sort(moved_.begin(), moved_.end());
  }
  std::size_t per_frame_, awake_;
};

class Refill final : public EditedScene {
 public:
  Refill(std::size_t n, std::size_t movers, std::size_t empty_at, std::size_t refill_at)
      : EditedScene(3, tracy_params(n, movers)), empty_at_(empty_at), refill_at_(refill_at) {
    for (Id id = 0; id < n; ++id) add(id);
  }

 private:
  void edit() override {
    if (frame_ != empty_at_) take_moves();  // an id takes one operation a frame
    if (frame_ == empty_at_) {
      removed_ = alive_ids_;
      for (const Id id : removed_) alive_[id] = 0;
      alive_ids_.clear();
    } else if (frame_ == refill_at_) {
      for (Id id = 0; id < boxes_.size(); ++id) add(id);
    }
  }
  std::size_t empty_at_, refill_at_;
};

}  // namespace

std::unique_ptr<Scenario> make_planar_resting(std::size_t n, std::size_t movers) {
  return std::make_unique<PlanarResting>(n, movers);
}
std::unique_ptr<Scenario> make_explosion(std::size_t n, std::size_t movers, std::size_t from, std::size_t frames) {
  return std::make_unique<Explosion>(n, movers, from, frames);
}
std::unique_ptr<Scenario> make_streamed_level(std::size_t n, std::size_t movers, std::size_t batch, std::size_t every) {
  return std::make_unique<StreamedLevel>(n, movers, batch, every);
}
std::unique_ptr<Scenario> make_refill(std::size_t n, std::size_t movers, std::size_t empty_at, std::size_t refill_at) {
  return std::make_unique<Refill>(n, movers, empty_at, refill_at);
}
std::unique_ptr<Scenario> make_wakeups(std::size_t n, std::size_t per_frame, std::size_t awake) {
  return std::make_unique<Wakeups>(n, per_frame, awake);
}

}  // namespace sapling::bench
