// A frame every rank holds whole (a trace's, a scenario's), staged rank by
// rank: share_of() keeps a rank's operations, stage_frame() stages them in
// sapling::stage_frame()'s order (removes, moves, static adds, dynamic
// adds, filter changes).
#include "sapling/mpi/distributed_broad_phase.hpp"

namespace sapling::mpi {

void share_of(const TraceFrame& frame, const std::function<bool(Id)>& owns, TraceFrame& share) {
  share = TraceFrame{};
  for (const Id id : frame.removed) {
    if (owns(id)) share.removed.push_back(id);
  }
  for (std::size_t k = 0; k < frame.moved.size(); ++k) {
    if (owns(frame.moved[k])) share.moved.push_back(frame.moved[k]), share.moved_boxes.push_back(frame.moved_boxes[k]);
  }
  for (std::size_t k = 0; k < frame.added.size(); ++k) {
    if (!owns(frame.added[k])) continue;
    share.added.push_back(frame.added[k]);
    share.added_boxes.push_back(frame.added_boxes[k]);
    if (!frame.added_filters.empty()) share.added_filters.push_back(frame.added_filters[k]);
    if (!frame.added_static.empty()) share.added_static.push_back(frame.added_static[k]);
  }
  for (std::size_t k = 0; k < frame.filtered.size(); ++k) {
    if (owns(frame.filtered[k])) share.filtered.push_back(frame.filtered[k]), share.filters.push_back(frame.filters[k]);
  }
}

Status stage_frame(DistributedBroadPhase& broad_phase, const TraceFrame& frame) {
  if (Status s = broad_phase.remove(frame.removed); !s) return s;
  if (Status s = broad_phase.move(frame.moved, frame.moved_boxes); !s) return s;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
  for (const bool statics : {true, false}) {
    const bool all_dynamic = frame.added_static.empty();
    if (statics && all_dynamic) continue;
    if (!statics && all_dynamic && frame.added_filters.empty()) {  // the common frame: no copy
      if (Status s = broad_phase.add(frame.added, frame.added_boxes); !s) return s;
      continue;
    }
    ids.clear(), boxes.clear(), filters.clear();
    for (std::size_t k = 0; k < frame.added.size(); ++k) {
      if (frame.added_is_static(k) != statics) continue;
      ids.push_back(frame.added[k]), boxes.push_back(frame.added_boxes[k]), filters.push_back(frame.added_filter(k));
    }
    if (Status s = broad_phase.add(ids, boxes, filters, statics ? Motion::kStatic : Motion::kDynamic); !s) return s;
  }
  return broad_phase.set_filter(frame.filtered, frame.filters);
}

Status stage_share(DistributedBroadPhase& broad_phase, const TraceFrame& frame, const std::function<bool(Id)>& owns) {
  TraceFrame share;
  share_of(frame, owns, share);
  return stage_frame(broad_phase, share);
}

}  // namespace sapling::mpi
