// The test oracle: the contract's answers (docs/trace-format.md) computed
// the slowest, plainest way, for every test and fuzzer that checks pairs,
// region queries or rays. A world is a map from id to object (box, filter,
// motion); the operations change it as an accepted frame does; the answers
// are loops over every object, or every two, with the library's one
// statement of each rule:
//   pairs      overlaps() (box.hpp) of the boxes grown by their contact
//              distances (grown(), box.hpp) and may_pair() (filter.hpp);
//   queries    overlaps() and query_accepts() (filter.hpp);
//   rays       ray_entry() (ray.hpp) and query_accepts().
// Nothing here is clever on purpose: it is the reference the broad phase,
// every algorithm and `brute` are held to. Checking the operations (which
// calls are refused) is the tests' own business; the world takes only
// accepted ones, and throws std::out_of_range on a move, filter change or
// removal of an id that is not live (a slip in the test, not the library).
//
// A 2D world (dims 2) compares boxes on x and y only, as a broad phase
// created with Options::dims = 2 sees them; its rays must lie in z = 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/filter.hpp"
#include "sapling/pair.hpp"
#include "sapling/ray.hpp"
#include "sapling/trace.hpp"

namespace sapling::oracle {

/// One live object: its box as the user gave it, and its contact distance
/// (pairs are those of the boxes grown by it; queries and rays see `box`).
struct Object {
  Box3 box;
  Filter filter;
  Motion motion = Motion::kDynamic;
  float distance = 0.0f;

  Box3 grown_box() const { return grown(box, distance); }
};

/// The live objects and the answers the contract gives about them.
class World {
 public:
  explicit World(int dims = 3) : dims_(dims) {}

  int dims() const { return dims_; }
  const std::map<Id, Object>& objects() const { return objects_; }
  std::size_t size() const { return objects_.size(); }
  bool contains(Id id) const { return objects_.count(id) != 0; }
  const Object& at(Id id) const { return objects_.at(id); }

  /// An add (or, for a live id, its replacement).
  void add(Id id, const Box3& box, Filter filter = {}, Motion motion = Motion::kDynamic, float distance = 0.0f) {
    objects_[id] = Object{box, filter, motion, distance};
  }
  /// A move keeps the object's contact distance, unless given a new one.
  void move(Id id, const Box3& box) { objects_.at(id).box = box; }
  void move(Id id, const Box3& box, float distance) { objects_.at(id) = {box, at(id).filter, at(id).motion, distance}; }
  void remove(Id id) {
    if (objects_.erase(id) == 0) throw std::out_of_range("oracle: remove of an id that is not live");
  }
  void set_filter(Id id, Filter filter) { objects_.at(id).filter = filter; }

  /// A whole frame, as update() applies it: removals, moves, additions,
  /// filter changes.
  void apply(const TraceFrame& f) {
    for (const Id id : f.removed) remove(id);
    for (std::size_t i = 0; i < f.moved.size(); ++i) move(f.moved[i], f.moved_boxes[i]);
    for (std::size_t i = 0; i < f.added.size(); ++i) {
      add(f.added[i], f.added_boxes[i], f.added_filter(i), f.added_is_static(i) ? Motion::kStatic : Motion::kDynamic);
    }
    for (std::size_t i = 0; i < f.filtered.size(); ++i) set_filter(f.filtered[i], f.filters[i]);
  }

  /// Whether two boxes overlap as this world's broad phase sees them.
  bool overlap(const Box3& a, const Box3& b) const { return dims_ == 2 ? overlaps(flat(a), flat(b)) : overlaps(a, b); }

  /// Every pair, sorted by (a, b): the double loop of the definition (ids
  /// ascend in the map, so pairs come out in order; copied to a vector
  /// first only because the differential suite's worlds are large).
  std::vector<Pair> pairs() const {
    std::vector<std::pair<Id, Object>> v(objects_.begin(), objects_.end());
    for (auto& [id, o] : v) o.box = o.grown_box();  // pairs are those of the grown boxes
    std::vector<Pair> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      for (std::size_t j = i + 1; j < v.size(); ++j) {
        const Object &a = v[i].second, &b = v[j].second;
        if (overlap(a.box, b.box) && may_pair(a.filter, a.motion, b.filter, b.motion)) {
          out.push_back(Pair{v[i].first, v[j].first});
        }
      }
    }
    return out;
  }

  /// A region query: the ids whose boxes overlap `box`, ascending.
  std::vector<Id> query(const Box3& box, std::uint32_t mask = kAllCategories) const {
    std::vector<Id> out;
    for (const auto& [id, o] : objects_) {
      if (overlap(o.box, box) && query_accepts(o.filter, mask)) out.push_back(id);
    }
    return out;
  }

  /// A ray cast: every hit, sorted by (t, id).
  std::vector<RayHit> ray_cast(const Ray3& ray, std::uint32_t mask = kAllCategories) const {
    std::vector<RayHit> out;
    for (const auto& [id, o] : objects_) {
      float t = 0;
      if (query_accepts(o.filter, mask) && ray_entry(ray, dims_ == 2 ? lift(flat(o.box)) : o.box, t)) {
        out.push_back({id, t});
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// The first hit of ray_cast(), if any.
  std::optional<RayHit> ray_cast_closest(const Ray3& ray, std::uint32_t mask = kAllCategories) const {
    const std::vector<RayHit> hits = ray_cast(ray, mask);
    if (hits.empty()) return std::nullopt;
    return hits.front();
  }

 private:
  static Box2 flat(const Box3& b) { return Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}; }

  int dims_;
  std::map<Id, Object> objects_;
};

/// The pairs of sorted `x` not in sorted `y`: a frame's created pairs are
/// minus(after, before), its deleted ones minus(before, after).
inline std::vector<Pair> minus(const std::vector<Pair>& x, const std::vector<Pair>& y) {
  std::vector<Pair> out;
  std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  return out;
}

}  // namespace sapling::oracle
