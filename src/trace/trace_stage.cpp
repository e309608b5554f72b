// A trace frame staged on a broad phase (include/sapling/trace.hpp), the one
// place `sapling replay`, the Python replay and the tests turn a TraceFrame
// into BroadPhase calls.
//
// BroadPhase::add takes one Motion per batch, so a frame's adds go in as at
// most two batches: the static ones, then the dynamic ones. The frame is
// split only when it mixes both; otherwise its spans go in as they are.
#include <vector>

#include "sapling/broad_phase.hpp"
#include "sapling/trace.hpp"

namespace sapling {
namespace {

/// The adds of one motion, with their filters (empty when the frame has none).
struct AddBatch {
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
};

AddBatch adds_of(const TraceFrame& frame, bool is_static) {
  AddBatch batch;
  for (std::size_t i = 0; i < frame.added.size(); ++i) {
    if (frame.added_is_static(i) != is_static) continue;
    batch.ids.push_back(frame.added[i]);
    batch.boxes.push_back(frame.added_boxes[i]);
    if (!frame.added_filters.empty()) batch.filters.push_back(frame.added_filters[i]);
  }
  return batch;
}

Status stage_adds(BroadPhase& broad_phase, const TraceFrame& frame) {
  std::size_t statics = 0;
  for (std::size_t i = 0; i < frame.added.size(); ++i) statics += frame.added_is_static(i) ? 1 : 0;
  if (statics == 0 && frame.added_filters.empty()) return broad_phase.add(frame.added, frame.added_boxes);
  if (statics == 0 || statics == frame.added.size()) {
    return broad_phase.add(frame.added, frame.added_boxes, frame.added_filters,
                           statics == 0 ? Motion::kDynamic : Motion::kStatic);
  }
  const AddBatch static_adds = adds_of(frame, true);
  if (Status s = broad_phase.add(static_adds.ids, static_adds.boxes, static_adds.filters, Motion::kStatic); !s) {
    return s;
  }
  const AddBatch dynamic_adds = adds_of(frame, false);
  return broad_phase.add(dynamic_adds.ids, dynamic_adds.boxes, dynamic_adds.filters, Motion::kDynamic);
}

}  // namespace

Status stage_frame(BroadPhase& broad_phase, const TraceFrame& frame) {
  if (Status s = broad_phase.remove(frame.removed); !s) return s;
  if (Status s = broad_phase.move(frame.moved, frame.moved_boxes); !s) return s;
  if (Status s = stage_adds(broad_phase, frame); !s) return s;
  if (frame.filtered.empty()) return Status{};
  return broad_phase.set_filter(frame.filtered, frame.filters);
}

}  // namespace sapling
