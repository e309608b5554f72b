// The demo's physics loop (world.hpp has the design).
#include "world.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace sapling::demo {
namespace {

constexpr float kRestitution = 0.3f;
constexpr float kFriction = 0.2f;
constexpr float kSlop = 0.01f;           // penetration left alone, so resting contacts stay touching
constexpr float kCorrection = 0.6f;      // share of the penetration corrected per iteration
constexpr float kRestingSpeed2 = 0.05f;  // squared speed below which a body is slow
constexpr int kIterations = 2;           // contact passes per sub-step

Box2 box_of(const Body& b) { return Box2{{b.x - b.half[0], b.y - b.half[1]}, {b.x + b.half[0], b.y + b.half[1]}}; }

std::unique_ptr<BroadPhase> make_broad_phase(const std::string& name, std::string* why) {
  // BroadPhase::create takes "NAME:" as NAME with the defaults; a command
  // line that says "NAME:" most likely lost its settings.
  if (!name.empty() && name.back() == ':') {
    if (why) *why = "algorithm '" + name + "': no settings after the colon (NAME:SETTINGS, or NAME alone)";
    return nullptr;
  }
  Options options;
  options.dims = 2;
  Status status;
  auto bp = BroadPhase::create(name, options, &status);
  if (!bp && why) *why = "algorithm '" + name + "': " + status.message();
  return bp;
}

// A contact: unit normal from a to b, and how deep the shapes overlap.
struct Contact {
  float nx = 0, ny = 1, depth = 0;
};

bool circle_circle(const Body& a, const Body& b, Contact& c) {
  const float dx = b.x - a.x, dy = b.y - a.y, r = a.half[0] + b.half[0];
  const float d2 = dx * dx + dy * dy;
  if (d2 > r * r) return false;
  const float d = std::sqrt(d2);
  if (d > 0) {
    c.nx = dx / d;
    c.ny = dy / d;
  }
  c.depth = r - d;
  return true;
}

bool box_box(const Body& a, const Body& b, Contact& c) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float ox = a.half[0] + b.half[0] - std::fabs(dx), oy = a.half[1] + b.half[1] - std::fabs(dy);
  if (ox < 0 || oy < 0) return false;
  if (ox < oy) {
    c = {dx < 0 ? -1.0f : 1.0f, 0, ox};
  } else {
    c = {0, dy < 0 ? -1.0f : 1.0f, oy};
  }
  return true;
}

// Circle a against box b.
bool circle_box(const Body& a, const Body& b, Contact& c) {
  const float px = std::clamp(a.x, b.x - b.half[0], b.x + b.half[0]);
  const float py = std::clamp(a.y, b.y - b.half[1], b.y + b.half[1]);
  const float dx = px - a.x, dy = py - a.y, r = a.half[0];
  const float d2 = dx * dx + dy * dy;
  if (d2 == 0) {  // the centre is inside the box: push out along the shallower axis
    Body as_box = a;
    return box_box(as_box, b, c);
  }
  if (d2 > r * r) return false;
  const float d = std::sqrt(d2);
  c = {dx / d, dy / d, r - d};
  return true;
}

bool collide(const Body& a, const Body& b, Contact& c) {
  if (a.shape == Shape::kCircle && b.shape == Shape::kCircle) return circle_circle(a, b, c);
  if (a.shape == Shape::kBox && b.shape == Shape::kBox) return box_box(a, b, c);
  if (a.shape == Shape::kCircle) return circle_box(a, b, c);
  if (!circle_box(b, a, c)) return false;
  c.nx = -c.nx;
  c.ny = -c.ny;
  return true;
}

// Impulse along the normal (restitution), Coulomb friction along the
// tangent, and a positional correction shared by inverse mass.
void resolve(Body& a, Body& b, const Contact& c) {
  const float inv = a.inv_mass + b.inv_mass;
  if (inv == 0) return;
  const float rvx = b.vx - a.vx, rvy = b.vy - a.vy;
  const float vn = rvx * c.nx + rvy * c.ny;
  if (vn < 0) {
    const float j = -(1 + kRestitution) * vn / inv;
    a.vx -= j * c.nx * a.inv_mass;
    a.vy -= j * c.ny * a.inv_mass;
    b.vx += j * c.nx * b.inv_mass;
    b.vy += j * c.ny * b.inv_mass;
    float tx = rvx - vn * c.nx, ty = rvy - vn * c.ny;
    const float tl = std::sqrt(tx * tx + ty * ty);
    if (tl > 1e-6f) {
      tx /= tl;
      ty /= tl;
      const float jt = std::clamp(-(rvx * tx + rvy * ty) / inv, -kFriction * j, kFriction * j);
      a.vx -= jt * tx * a.inv_mass;
      a.vy -= jt * ty * a.inv_mass;
      b.vx += jt * tx * b.inv_mass;
      b.vy += jt * ty * b.inv_mass;
    }
  }
  const float push = std::max(c.depth - kSlop, 0.0f) * kCorrection / inv;
  a.x -= push * c.nx * a.inv_mass;
  a.y -= push * c.ny * a.inv_mass;
  b.x += push * c.nx * b.inv_mass;
  b.y += push * c.ny * b.inv_mass;
}

}  // namespace

World::World(std::string algorithm, float width, float height)
    : algorithm_(std::move(algorithm)), width_(width), height_(height) {
  std::string why;
  broad_phase_ = make_broad_phase(algorithm_, &why);
  if (!broad_phase_) throw std::invalid_argument(why);
}

std::string World::set_algorithm(const std::string& name) {
  std::string why;
  auto next = make_broad_phase(name, &why);
  if (!next) return why;
  ids_.clear();
  boxes_.clear();
  for (const Body& b : bodies_) {
    if (std::find(pending_adds_.begin(), pending_adds_.end(), b.id) != pending_adds_.end()) continue;
    ids_.push_back(b.id);
    boxes_.push_back(b.box);
  }
  if (Status s = next->add(ids_, boxes_); !s) return "algorithm '" + name + "' refused the world: " + s.message();
  if (const FrameDelta& d = next->update(); !d.status) return "algorithm '" + name + "': " + d.status.message();
  std::vector<Pair> pairs;
  next->sorted_pairs(pairs);
  if (pairs != sorted_) {
    return "algorithm '" + name + "' reports " + std::to_string(pairs.size()) + " pairs where '" + algorithm_ +
           "' reported " + std::to_string(sorted_.size()) + " (or different ones)";
  }
  broad_phase_ = std::move(next);
  algorithm_ = name;
  swaps_seen_ = swap_total();
  return "";
}

void World::reset(float width, float height) {
  std::string why;
  auto fresh = make_broad_phase(algorithm_, &why);
  if (!fresh) throw std::runtime_error(why);  // it was made once with this name: not expected
  broad_phase_ = std::move(fresh);
  bodies_.clear();
  index_of_id_.clear();
  pending_adds_.clear();
  sorted_.clear();
  created_.clear();
  deleted_.clear();
  stats_ = {};
  last_error_.clear();
  last_refusal_ = {};
  swaps_seen_ = 0;
  next_id_ = 0;
  frame_ = 0;
  width_ = width;
  height_ = height;
}

void World::add(Body body) {
  body.id = next_id_++;
  body.box = box_of(body);
  index_of_id_.push_back(static_cast<std::int32_t>(bodies_.size()));
  pending_adds_.push_back(body.id);
  bodies_.push_back(body);
}

Status World::accepts_pending() const {
  if (pending_adds_.empty()) return {};
  std::string why;
  const auto probe = make_broad_phase(algorithm_, &why);
  if (!probe) throw std::runtime_error(why);  // it was made once with this name: not expected
  std::vector<Id> ids;
  std::vector<Box2> boxes;
  for (const Id id : pending_adds_) {
    ids.push_back(id);
    boxes.push_back(box_of(bodies_[static_cast<std::size_t>(index_of_id_[id])]));
  }
  return probe->add(ids, boxes);
}

const Body* World::find(Id id) const noexcept {
  if (id >= index_of_id_.size() || index_of_id_[id] < 0) return nullptr;
  return &bodies_[static_cast<std::size_t>(index_of_id_[id])];
}

std::uint64_t World::swap_total() const {
  struct Counts : DebugDraw {
    std::uint64_t swaps = 0;
    void count(std::string_view name, std::uint64_t value) override {
      if (name == "swaps") swaps = value;
    }
  } counts;
  broad_phase_->debug_draw(counts);
  return counts.swaps;
}

void World::step(float dt) {
  stats_ = {};
  created_.clear();
  deleted_.clear();
  last_error_.clear();
  last_refusal_ = {};
  for (Body& b : bodies_) b.touching = false;
  despawn();
  const float h = dt / static_cast<float>(sub_steps_);
  for (int i = 0; i < sub_steps_; ++i) sub_step(h);
  for (Body& b : bodies_) {
    const bool slow = b.vx * b.vx + b.vy * b.vy < kRestingSpeed2;
    b.slow_frames = slow ? std::min(b.slow_frames + 1, Body::kRestingFrames) : 0;
  }
  std::sort(created_.begin(), created_.end());
  std::sort(deleted_.begin(), deleted_.end());
  const std::uint64_t swaps = swap_total();
  stats_.swaps = swaps >= swaps_seen_ ? swaps - swaps_seen_ : swaps;
  swaps_seen_ = swaps;
  stats_.objects = broad_phase_->size();
  stats_.pairs = sorted_.size();
  stats_.created = created_.size();
  stats_.deleted = deleted_.size();
  ++frame_;
}

// Removes the bodies whose life ran out (they leave the broad phase at the next update).
void World::despawn() {
  ids_.clear();
  bool any = false;
  for (Body& b : bodies_) {
    if (b.life > 0) --b.life;
    if (b.life != 0) continue;
    any = true;
    if (auto it = std::find(pending_adds_.begin(), pending_adds_.end(), b.id); it != pending_adds_.end()) {
      pending_adds_.erase(it);
    } else {
      ids_.push_back(b.id);
    }
  }
  if (!any) return;
  if (!ids_.empty()) {
    if (Status st = broad_phase_->remove(ids_); !st) throw std::logic_error("remove: " + st.message());
  }
  std::erase_if(bodies_, [](const Body& b) { return b.life == 0; });
  reindex();
}

void World::reindex() {
  std::fill(index_of_id_.begin(), index_of_id_.end(), -1);
  for (std::size_t i = 0; i < bodies_.size(); ++i) index_of_id_[bodies_[i].id] = static_cast<std::int32_t>(i);
}

void World::sub_step(float dt) {
  for (Body& b : bodies_) {
    if (b.is_static()) continue;
    b.vy += gravity_ * dt;
    b.x += b.vx * dt;
    b.y += b.vy * dt;
    // The world's walls.
    if (b.x - b.half[0] < 0) b.x = b.half[0], b.vx = std::fabs(b.vx) * kRestitution;
    if (b.x + b.half[0] > width_) b.x = width_ - b.half[0], b.vx = -std::fabs(b.vx) * kRestitution;
    if (b.y - b.half[1] < 0) b.y = b.half[1], b.vy = std::fabs(b.vy) * kRestitution;
    if (b.y + b.half[1] > height_) b.y = height_ - b.half[1], b.vy = -std::fabs(b.vy) * kRestitution;
  }
  sync_broad_phase();
  resolve_contacts();
}

// Stages the new bodies and the moved boxes, and runs the broad phase.
void World::sync_broad_phase() {
  if (!pending_adds_.empty()) {
    ids_.clear();
    boxes_.clear();
    for (Id id : pending_adds_) {
      Body& b = bodies_[static_cast<std::size_t>(index_of_id_[id])];
      b.box = box_of(b);
      ids_.push_back(id);
      boxes_.push_back(b.box);
    }
    if (Status s = broad_phase_->add(ids_, boxes_); !s) {
      last_error_ = algorithm_ + " refused new bodies: " + s.message();
      last_refusal_ = s;
      // pending_adds_ is sorted: ids are handed out in increasing order.
      std::erase_if(
          bodies_, [&](const Body& b) { return std::binary_search(pending_adds_.begin(), pending_adds_.end(), b.id); });
      reindex();
    }
    pending_adds_.clear();
  }
  ids_.clear();
  boxes_.clear();
  for (Body& b : bodies_) {
    if (b.is_static()) continue;
    const Box2 box = box_of(b);
    if (box == b.box) continue;
    b.box = box;
    ids_.push_back(b.id);
    boxes_.push_back(box);
  }
  // A move of a live body with a valid box of its own size is never refused.
  if (!ids_.empty()) {
    if (Status st = broad_phase_->move(ids_, boxes_); !st) throw std::logic_error("move: " + st.message());
  }
  const auto start = std::chrono::steady_clock::now();
  const FrameDelta& d = broad_phase_->update();
  // A refused frame (a pair budget: the demo sets none) would leave the broad phase behind the bodies.
  if (!d.status) throw std::runtime_error("update: " + d.status.message());
  stats_.broad_phase_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  created_.insert(created_.end(), d.created.begin(), d.created.end());
  deleted_.insert(deleted_.end(), d.deleted.begin(), d.deleted.end());
  broad_phase_->sorted_pairs(sorted_);
}

// The narrow phase over the broad phase's pairs, in sorted order, and the response.
void World::resolve_contacts() {
  std::size_t contacts = 0;
  for (int it = 0; it < kIterations; ++it) {
    contacts = 0;
    for (const Pair& p : sorted_) {
      Body& a = bodies_[static_cast<std::size_t>(index_of_id_[p.a])];
      Body& b = bodies_[static_cast<std::size_t>(index_of_id_[p.b])];
      Contact c;
      if (!collide(a, b, c)) continue;
      ++contacts;
      a.touching = b.touching = true;
      resolve(a, b, c);
    }
  }
  stats_.contacts = contacts;
}

}  // namespace sapling::demo
