// Human-readable messages for refused calls (include/sapling/status.hpp).
#include "sapling/status.hpp"

#include <iterator>

namespace sapling {
namespace {

const char* axis_name(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

}  // namespace

// Both tables in the order of the enumerators.
const char* operation_name(Operation op) noexcept {
  constexpr const char* kNames[] = {
      "call",  "add",        "move",     "remove",        "create",       "register_algorithm", "update",
      "query", "set_filter", "ray_cast", "ray_cast_many", "shift_origin", "hand_over"};
  const auto k = static_cast<std::size_t>(op);
  return k < std::size(kNames) ? kNames[k] : "call";
}

const char* status_code_name(StatusCode code) noexcept {
  constexpr const char* kNames[] = {"ok",          "invalid_box",   "unknown_id",  "duplicate_id",
                                    "repeated_id", "size_mismatch", "unsupported", "invalid_argument",
                                    "pair_budget", "invalid_ray"};
  const auto k = static_cast<std::size_t>(code);
  return k < std::size(kNames) ? kNames[k] : "unknown";
}

std::string Status::message() const {
  // A one-shot call (Operation::kNone) on a span of boxes has no ids: it
  // names the box by its index.
  // A query names its box by its index in the batch.
  const std::string subject = op_ == Operation::kNone ? "box " + std::to_string(index_) + ": "
                              : op_ == Operation::kQuery
                                  ? "query box " + std::to_string(index_) + ": "
                                  : std::string(operation_name(op_)) + " of id " + std::to_string(id_) + ": ";
  // A batch of rays names its ray.
  const std::string caster = op_ == Operation::kRayCastMany ? "ray_cast_many: ray " + std::to_string(index_) + ": "
                                                            : std::string("ray_cast: ");
  switch (code_) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidBox: {
      const std::string axis = axis_name(box_.axis);
      switch (box_.fault) {
        case BoxFault::kNanMin:
          return subject + "invalid box: min." + axis + " is NaN";
        case BoxFault::kNanMax:
          return subject + "invalid box: max." + axis + " is NaN";
        case BoxFault::kMinGreaterMax:
          return subject + "invalid box: min." + axis + " > max." + axis;
        case BoxFault::kOffPlane:
          return subject + "invalid box: z is not [0, 0] in a broad phase of 2 dimensions";
        case BoxFault::kNone:
          break;
      }
      return subject + "invalid box";
    }
    case StatusCode::kUnknownId:
      return subject + "id is not live";
    case StatusCode::kDuplicateId:
      return subject + "id is already live";
    case StatusCode::kRepeatedId:
      return subject + "id already has an operation in this frame";
    case StatusCode::kSizeMismatch:
      return std::string(operation_name(op_)) + ": " + std::to_string(index_) + " ids but " + std::to_string(count_) +
             " boxes";
    case StatusCode::kUnsupported:
      return subject + detail_;
    case StatusCode::kInvalidArgument:
      if (names_object_) return subject + detail_;
      if (op_ == Operation::kRayCastMany) return caster + detail_;
      return std::string(operation_name(op_)) + ": " + detail_;
    case StatusCode::kInvalidRay: {
      const std::string axis = axis_name(ray_.axis);
      switch (ray_.fault) {
        case RayFault::kOrigin:
          return caster + "invalid ray: origin." + axis + " is NaN or infinite";
        case RayFault::kDirection:
          return caster + "invalid ray: direction." + axis + " is NaN or infinite";
        case RayFault::kZeroDirection:
          return caster + "invalid ray: the direction is zero";
        case RayFault::kMaxT:
          return caster + "invalid ray: max_t is NaN or negative";
        case RayFault::kNone:
          break;
      }
      return caster + "invalid ray";
    }
    case StatusCode::kPairBudget:
      return "update: the frame would hold more than " + std::to_string(count_) +
             " pairs (Options::max_pairs); its operations were dropped";
  }
  return "unknown status";
}

}  // namespace sapling
