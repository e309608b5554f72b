// The live dynamic objects in an AABB tree, for rays and for region queries
// the algorithm cannot answer (Algorithm::query()). Made by the first query
// that needs it and brought up to date by the next one: the frames note the
// slots they change (each once), and get() applies a few changes one by
// one, or builds the tree anew when many are waiting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/broad_phase/object_table.hpp"
#include "core/broad_phase/staged_frame.hpp"
#include "detail/aabb_tree.hpp"

namespace sapling::detail {

class QueryTree {
 public:
  /// Room to note `frame`'s changes in commit() without allocating.
  void reserve_for(const StagedFrame& frame, std::size_t slots);
  /// Notes the slots `frame` changes, before it is committed; never fails
  /// after reserve_for().
  void note(const StagedFrame& frame, const ObjectTable& objects) noexcept;
  /// The tree of the live dynamic objects of `objects`, up to date.
  const AabbTree& get(const ObjectTable& objects);
  /// Forgets the tree (slots renumbered or the algorithm rebuilt): the next
  /// get() builds it anew.
  void reset() noexcept;
  std::size_t memory_bytes() const noexcept;

 private:
  std::unique_ptr<AabbTree> tree_;
  std::vector<Slot> changes_;
  std::vector<std::uint8_t> marked_;  // by slot: in changes_
};

}  // namespace sapling::detail
