// What a broad phase answers between frames (broad_phase.hpp): its pairs,
// per-object lookups, region queries and rays, as of the last update().
// Every read is const and writes no shared state (scratch is the thread's
// own), so that any number of threads may read at once; batches split into
// tasks of a fixed size, answered on the task system and joined in order.
//
// Static objects are answered by the static tree (or, while a failed frame
// awaits its rebuild, by testing each one); dynamic objects by the
// algorithm's structure where it answers region queries and rays
// (Algorithm::query(), Algorithm::ray_cast()), else by the query tree
// (query_tree.hpp), made only when needed. Objects are reported
// by the query rule (filter.hpp, query_accepts()).
#include <algorithm>
#include <mutex>

#include "core/broad_phase/impl.hpp"

namespace sapling {

std::span<const Pair> BroadPhase::pairs() const noexcept {
  return impl_->options.exact_pairs ? std::span<const Pair>(impl_->large.exact_pairs) : impl_->pairs.pairs();
}

void BroadPhase::sorted_pairs(std::vector<Pair>& out) const {
  out.assign(pairs().begin(), pairs().end());
  std::sort(out.begin(), out.end());
}

bool BroadPhase::contains(Id id) const noexcept { return impl_->objects.live_slot(id) != detail::IdIndex::kNotFound; }

std::optional<Box3> BroadPhase::box(Id id) const noexcept {
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == detail::IdIndex::kNotFound) return std::nullopt;
  const detail::ObjectTable& objects = impl_->objects;
  return objects.contact.in_use ? objects.contact.own_boxes[s] : objects.boxes[s];
}

std::optional<float> BroadPhase::contact_distance(Id id) const noexcept {
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.contact.distance_of(s);
}

std::optional<Filter> BroadPhase::filter(Id id) const noexcept {
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.filter_of(s);
}

std::optional<Motion> BroadPhase::motion(Id id) const noexcept {
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.motion_of(s);
}

std::size_t BroadPhase::size() const noexcept { return impl_->objects.live; }
std::uint64_t BroadPhase::frame() const noexcept { return impl_->frame; }
std::string_view BroadPhase::algorithm_name() const noexcept { return impl_->name; }
const Options& BroadPhase::options() const noexcept { return impl_->options; }

unsigned BroadPhase::concurrency() const noexcept {
  const Impl& m = *impl_;
  if (m.options.tasks != nullptr) return m.options.tasks->concurrency();
  return m.pool != nullptr ? m.pool->concurrency() : 1;
}

void BroadPhase::debug_draw(DebugDraw& draw) const {
  if (!impl_->remake_algorithm) impl_->algorithm->debug_draw(draw, impl_->objects.ids);
}

Status BroadPhase::query(const Box3& box, std::vector<Id>& out, std::uint32_t mask) const {
  out.clear();
  if (const BoxCheck check = detail::check_box_in(box, impl_->options.dims); !check) {
    return Status::invalid_box(Operation::kQuery, 0, 0, check);
  }
  impl_->answer_query(box, out, mask);
  return {};
}

Status BroadPhase::query(const Box2& box, std::vector<Id>& out, std::uint32_t mask) const {
  return query(lift(box), out, mask);
}

// Items per task of a batch: fixed, so that the tasks depend on the batch
// alone (task_system.hpp, "Determinism"), and enough to outweigh a task's
// hand-over.
constexpr std::size_t kBatchTask = 64;

// answer_chunk(first, last, answers) fills answers[i - first] with item i's
// answers, i in [first, last): a task's items; each task keeps its items'
// answers in its own part, and the parts are joined in order.
template <class T, class AnswerChunk>
void BroadPhase::Impl::answer_many(std::size_t count, std::vector<T>& flat, std::vector<std::size_t>& offsets,
                                   AnswerChunk&& answer_chunk) const {
  const std::size_t tasks = (count + kBatchTask - 1) / kBatchTask;
  std::vector<std::vector<T>> parts(tasks);
  offsets.assign(count + 1, 0);
  auto task = [&](std::size_t t) {
    const std::size_t first = t * kBatchTask, last = std::min(count, first + kBatchTask);
    thread_local std::vector<std::vector<T>> answers;  // kept: no allocation per item once warm
    answers.resize(last - first);
    answer_chunk(first, last, answers);
    for (std::size_t i = first; i < last; ++i) {
      const std::vector<T>& one = answers[i - first];
      parts[t].insert(parts[t].end(), one.begin(), one.end());
      offsets[i + 1] = one.size();
    }
  };
  TaskSystem* system = options.tasks != nullptr ? options.tasks : pool.get();
  std::unique_lock one_batch_at_a_time(batch_mutex, std::try_to_lock);
  if (system != nullptr && tasks > 1 && one_batch_at_a_time.owns_lock()) {
    system->run(tasks, TaskRef(task));
  } else {
    for (std::size_t t = 0; t < tasks; ++t) task(t);
  }
  for (std::size_t i = 0; i < count; ++i) offsets[i + 1] += offsets[i];
  flat.clear();
  flat.reserve(offsets[count]);
  for (const std::vector<T>& part : parts) flat.insert(flat.end(), part.begin(), part.end());
}

Status BroadPhase::query_many(std::span<const Box3> boxes, std::vector<Id>& ids, std::vector<std::size_t>& offsets,
                              std::uint32_t mask) const {
  ids.clear();
  offsets.clear();
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (const BoxCheck check = detail::check_box_in(boxes[i], impl_->options.dims); !check) {
      return Status::invalid_box(Operation::kQuery, 0, i, check);
    }
  }
  impl_->answer_many(boxes.size(), ids, offsets,
                     [&](std::size_t first, std::size_t last, std::vector<std::vector<Id>>& answers) {
                       impl_->answer_queries(boxes.subspan(first, last - first), answers, mask);
                     });
  return {};
}

Status BroadPhase::ray_cast_many(std::span<const Ray3> rays, std::vector<RayHit>& hits,
                                 std::vector<std::size_t>& offsets, std::uint32_t mask) const {
  return impl_->cast_rays(rays, hits, offsets, mask, false);
}

Status BroadPhase::ray_cast_closest_many(std::span<const Ray3> rays, std::vector<RayHit>& hits,
                                         std::vector<std::size_t>& offsets, std::uint32_t mask) const {
  return impl_->cast_rays(rays, hits, offsets, mask, true);
}

Status BroadPhase::Impl::cast_rays(std::span<const Ray3> rays, std::vector<RayHit>& hits,
                                   std::vector<std::size_t>& offsets, std::uint32_t mask, bool closest) const {
  hits.clear();
  offsets.clear();
  for (std::size_t i = 0; i < rays.size(); ++i) {
    if (Status refusal = check_ray_here(rays[i], Operation::kRayCastMany, i); !refusal) return refusal;
  }
  answer_many(rays.size(), hits, offsets,
              [&](std::size_t first, std::size_t last, std::vector<std::vector<RayHit>>& answers) {
                for (std::size_t i = first; i < last; ++i) {
                  answers[i - first].clear();
                  cast_ray(rays[i], answers[i - first], mask, closest);
                }
              });
  return {};
}

// Whether candidate `s`, found by a structure's test of its broad box,
// answers the query `box`: with contact distances its own box overlaps
// too; with Options::exact_pairs its box in world coordinates overlaps the
// query box taken at the origin; and `mask` accepts its filter.
bool BroadPhase::Impl::answers_query(Slot s, const Box3& box, std::uint32_t mask) const {
  if (objects.contact.in_use && !overlaps(box, objects.contact.own_boxes[s])) return false;
  if (options.exact_pairs) {
    Box3d world_box = detail::widened(box);
    for (int k = 0; k < 3; ++k) world_box.min[k] += large.origin[k], world_box.max[k] += large.origin[k];
    const Box3d e = exact_box_of(s);
    const int axes = options.dims == 2 ? 2 : 3;
    for (int k = 0; k < axes; ++k) {
      if (e.min[k] > world_box.max[k] || world_box.min[k] > e.max[k]) return false;
    }
  }
  return query_accepts(objects.filter_of(s), mask);
}

void BroadPhase::Impl::answer_query(const Box3& box, std::vector<Id>& out, std::uint32_t mask) const {
  answer_queries({&box, 1}, {&out, 1}, mask);
}

void BroadPhase::Impl::answer_queries(std::span<const Box3> boxes, std::span<std::vector<Id>> answers,
                                      std::uint32_t mask) const {
  for (std::vector<Id>& out : answers) out.clear();
  const auto keep = [&](std::size_t i, Slot s) {
    if (answers_query(s, boxes[i], mask)) answers[i].push_back(objects.ids[s]);
  };
  const auto walk = [&](const detail::AabbTree& tree) {
    if (boxes.size() > 1 && tree.interleaves_queries()) {
      return tree.query_each(boxes, [&](std::size_t i, std::span<const detail::AabbTree::Hit> hits) {
        for (const detail::AabbTree::Hit& hit : hits) keep(i, hit.slot);
      });
    }
    for (std::size_t i = 0; i < boxes.size(); ++i) tree.query(boxes[i], [&](Slot s) { keep(i, s); });
  };
  if (statics_trusted()) {
    walk(*statics.tree());
  } else {
    objects.for_each_static([&](Slot s) {
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (overlaps(boxes[i], objects.boxes[s])) keep(i, s);
      }
    });
  }
  // The dynamic objects: the algorithm's answer where it gives one, else
  // the query tree's.
  thread_local std::vector<Slot> candidates;
  candidates.clear();
  if (!remake_algorithm && algorithm->query(boxes[0], candidates)) {
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      if (i > 0) {
        candidates.clear();
        algorithm->query(boxes[i], candidates);
      }
      for (const Slot s : candidates) keep(i, s);
    }
  } else {
    walk(query_tree.get(objects));
  }
  for (std::vector<Id>& out : answers) std::sort(out.begin(), out.end());
}

// What ray_cast() and ray_cast_closest() refuse: an invalid ray, and in a
// 2D broad phase one that leaves its plane.
Status BroadPhase::Impl::check_ray_here(const Ray3& ray, Operation op, std::size_t index) const {
  if (const RayCheck check = check_ray(ray); !check) return Status::invalid_ray(op, check, index);
  if (options.dims == 2 && (ray.origin[2] != 0.0f || ray.direction[2] != 0.0f)) {
    return Status::invalid_argument(op, "the ray leaves the plane z = 0 of a 2D broad phase", index);
  }
  return {};
}

Status BroadPhase::ray_cast(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask) const {
  hits.clear();
  if (Status refusal = impl_->check_ray_here(ray); !refusal) return refusal;
  impl_->cast_ray(ray, hits, mask, false);
  return {};
}

Status BroadPhase::ray_cast(const Ray2& ray, std::vector<RayHit>& hits, std::uint32_t mask) const {
  if (const RayCheck check = check_ray(ray); !check) {
    hits.clear();
    return Status::invalid_ray(Operation::kRayCast, check);
  }
  return ray_cast(lift(ray), hits, mask);
}

Status BroadPhase::ray_cast_closest(const Ray3& ray, std::optional<RayHit>& hit, std::uint32_t mask) const {
  hit.reset();
  if (Status refusal = impl_->check_ray_here(ray); !refusal) return refusal;
  thread_local std::vector<RayHit> hits;
  hits.clear();
  impl_->cast_ray(ray, hits, mask, true);
  if (!hits.empty()) hit = hits.front();
  return {};
}

Status BroadPhase::ray_cast_closest(const Ray2& ray, std::optional<RayHit>& hit, std::uint32_t mask) const {
  if (const RayCheck check = check_ray(ray); !check) {
    hit.reset();
    return Status::invalid_ray(Operation::kRayCast, check);
  }
  return ray_cast_closest(lift(ray), hit, mask);
}

// Static objects through their tree, which culls by node; dynamic ones
// through the algorithm's structure, else the query tree. For the closest
// hit only the best so far is kept (the least (t, id)), and the structures
// skip what lies beyond its t, never what is at it. With contact distances
// the structures meet the broad boxes: the entry is computed again on the
// own box, and a miss dropped; the broad box's entry is never later than
// the own box's, so skipping by it skips nothing that could be closer.
//
// With Options::exact_pairs each hit is computed again on the object's box
// in world coordinates (exact_box_of()), the ray's origin taken there in
// double (origin() + ray.origin), ray.hpp's computation in double on the
// first dims axes. The rounded box holds the exact one, but the two entries
// are computed in different frames (relative in float, world in double), so
// the rounded one may come later by a rounding: the closest hit skips
// nothing by it; every hit is visited and the least kept.
void BroadPhase::Impl::cast_ray(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask, bool closest) const {
  const bool own_boxes = objects.contact.in_use;
  const bool exact = options.exact_pairs;
  std::array<double, 3> world_origin{};
  for (int k = 0; k < 3; ++k) world_origin[k] = double{ray.origin[k]} + large.origin[k];
  const int axes = options.dims == 2 ? 2 : 3;
  const auto consider = [&](Slot s, float t) {
    if (!query_accepts(objects.filter_of(s), mask)) return;
    if (exact) {
      double enter = 0.0, leave = 0.0;
      if (!detail::slab_interval(world_origin, ray.direction, ray.max_t, exact_box_of(s), axes, enter, leave)) return;
      t = static_cast<float>(enter);
    } else if (own_boxes && objects.contact.distances[s] != 0.0f && !ray_entry(ray, objects.contact.own_boxes[s], t)) {
      return;
    }
    const RayHit hit{objects.ids[s], t};
    if (!closest || hits.empty()) {
      hits.push_back(hit);
    } else if (hit < hits.front()) {
      hits.front() = hit;
    }
  };
  const auto visit = [&](Slot s, float t) {
    consider(s, t);
    return closest && !exact && !hits.empty() ? hits.front().t : ray.max_t;
  };
  if (statics_trusted()) {
    statics.tree()->ray(ray, visit);
  } else {
    objects.for_each_static([&](Slot s) {
      if (float t = 0; ray_entry(ray, objects.boxes[s], t)) consider(s, t);
    });
  }
  if (remake_algorithm || !algorithm->ray_cast(ray, RayVisitor(visit))) query_tree.get(objects).ray(ray, visit);
  if (!closest) std::sort(hits.begin(), hits.end());
}

}  // namespace sapling
