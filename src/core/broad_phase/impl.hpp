// What a BroadPhase holds (broad_phase.hpp keeps the interface only), and
// where each of its jobs lives:
//   frame.cpp           creation, staging calls, update(): the frame
//                       protocol, refusals, out-of-memory recovery, commit;
//   static_objects.*    static objects and changes of filter;
//   queries.cpp         region queries, rays and per-object lookups (with
//                       query_tree.* for the dynamic objects' tree);
//   memory.cpp          reserve(), memory given back, memory_bytes();
//   validate.cpp        validate() and its oracle;
//   object_table.*      the objects by slot, which every job shares;
//   contact_distance.*  each object's own box and contact distance, where
//                       the algorithms see the grown (broad) box;
//   large_world.*       boxes given in doubles, the origin and its shifts,
//                       and the exact pairs (Options::exact_pairs);
//   staged_frame.*      the frame's operations as staged.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/broad_phase/object_table.hpp"
#include "core/broad_phase/query_tree.hpp"
#include "core/broad_phase/staged_frame.hpp"
#include "core/broad_phase/static_objects.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling {

struct BroadPhase::Impl {
  Impl(std::string algorithm_name, AlgorithmFactory factory, const Options& given, std::unique_ptr<ThreadPool> threads,
       std::unique_ptr<Algorithm> first)
      : name(std::move(algorithm_name)),
        make(std::move(factory)),
        options(given),
        pool(std::move(threads)),
        algorithm(std::move(first)) {
    pairs.set_budget(options.max_pairs);
  }

  std::string name;
  AlgorithmFactory make;             // remakes the algorithm after a failed frame
  Options options;                   // as given by the user
  std::unique_ptr<ThreadPool> pool;  // Options::threads' pool; outlives algorithm
  std::unique_ptr<Algorithm> algorithm;
  // A frame failed part-way: the algorithm's and the static tree's state is
  // lost until the next update() rebuilds them from the live objects.
  bool remake_algorithm = false;

  detail::ObjectTable objects;
  detail::StagedFrame staged;
  detail::StaticObjects statics;
  detail::QueryTree query_tree;
  PairManager pairs;
  std::vector<Pair> created, deleted;
  FrameDelta delta;
  std::uint64_t frame = 0;

  detail::LargeWorld large;

  std::vector<Box3> lifted;                          // scratch: Box2 batches lifted to 3D
  std::vector<Box3d> lifted_exact;                   // scratch: Box2d batches lifted to 3D
  std::vector<Box3> before_shift, own_before_shift;  // the boxes an origin shift replaced, while update() runs
  std::vector<Slot> overlap_slots;                   // scratch of DynamicOverlaps during update()
  // Held by the batch that runs on the task system, which takes one batch
  // at a time; a batch asked for meanwhile runs on its caller's thread.
  mutable std::mutex batch_mutex;

  // frame.cpp
  void rebuild_from_live();
  // large_world_frame.cpp
  Status stage_exact(Operation op, std::span<const Id> ids, std::span<const Box3d> boxes,
                     std::span<const Filter> filters, Motion motion, std::span<const float> distances);
  void apply_shift();
  void undo_shift() noexcept;
  void keep_exact_pairs();
  Box3d exact_box_of(Slot s) const noexcept;
  void commit_frame() noexcept;
  // memory.cpp
  void give_back_memory();
  void compact_slots();
  // validate.cpp
  bool holds_the_pairs_there_are() const;
  // queries.cpp: every read is const and changes nothing (but the query
  // tree's first build, under its lock), so that threads may read at once.
  void answer_query(const Box3& box, std::vector<Id>& out, std::uint32_t mask) const;
  // The same for each of `boxes` into its answer, the trees' walks of the
  // boxes interleaved (AabbTree::query_each()).
  void answer_queries(std::span<const Box3> boxes, std::span<std::vector<Id>> answers, std::uint32_t mask) const;
  bool answers_query(Slot s, const Box3& box, std::uint32_t mask) const;
  void cast_ray(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask, bool closest) const;
  Status check_ray_here(const Ray3& ray, Operation op = Operation::kRayCast, std::size_t index = 0) const;
  Status cast_rays(std::span<const Ray3> rays, std::vector<RayHit>& hits, std::vector<std::size_t>& offsets,
                   std::uint32_t mask, bool closest) const;
  template <class T, class AnswerChunk>
  void answer_many(std::size_t count, std::vector<T>& flat, std::vector<std::size_t>& offsets,
                   AnswerChunk&& answer_chunk) const;
  /// Whether the static tree holds the static objects of the last update()
  /// (a failed frame may have changed it part-way).
  bool statics_trusted() const noexcept { return statics.tree() != nullptr && !remake_algorithm; }
};

}  // namespace sapling
