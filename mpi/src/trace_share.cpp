// stage_share(): one rank's share of a frame every rank holds whole (a
// trace, a scenario), in the order stage_frame() stages a frame.
#include "sapling/mpi/distributed_broad_phase.hpp"

namespace sapling::mpi {

Status stage_share(DistributedBroadPhase& broad_phase, const TraceFrame& frame, const std::function<bool(Id)>& owns) {
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
  for (const Id id : frame.removed) {
    if (owns(id)) ids.push_back(id);
  }
  if (Status s = broad_phase.remove(ids); !s) return s;
  ids.clear();
  for (std::size_t k = 0; k < frame.moved.size(); ++k) {
    if (owns(frame.moved[k])) ids.push_back(frame.moved[k]), boxes.push_back(frame.moved_boxes[k]);
  }
  if (Status s = broad_phase.move(ids, boxes); !s) return s;
  for (const bool statics : {true, false}) {
    ids.clear(), boxes.clear(), filters.clear();
    for (std::size_t k = 0; k < frame.added.size(); ++k) {
      if (frame.added_is_static(k) != statics || !owns(frame.added[k])) continue;
      ids.push_back(frame.added[k]), boxes.push_back(frame.added_boxes[k]), filters.push_back(frame.added_filter(k));
    }
    if (Status s = broad_phase.add(ids, boxes, filters, statics ? Motion::kStatic : Motion::kDynamic); !s) return s;
  }
  ids.clear(), filters.clear();
  for (std::size_t k = 0; k < frame.filtered.size(); ++k) {
    if (owns(frame.filtered[k])) ids.push_back(frame.filtered[k]), filters.push_back(frame.filters[k]);
  }
  return broad_phase.set_filter(ids, filters);
}

}  // namespace sapling::mpi
