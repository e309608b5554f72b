// The result of a call that can be refused. No exceptions: a refused call
// returns a Status naming the operation, the object, and the reason, and
// leaves the broad phase exactly as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/ray.hpp"

namespace sapling {

enum class StatusCode : std::uint8_t {
  kOk,
  kInvalidBox,       ///< NaN, or min > max on an axis (see box_check())
  kUnknownId,        ///< move or remove of an id that is not live
  kDuplicateId,      ///< add of an id that is already live
  kRepeatedId,       ///< a second operation on one id in one frame
  kSizeMismatch,     ///< ids and boxes spans of different lengths
  kUnsupported,      ///< the algorithm cannot take this input (see detail())
  kInvalidArgument,  ///< an option, a name or an argument out of range (see detail())
  kPairBudget,       ///< the frame would hold more pairs than Options::max_pairs
  kInvalidRay,       ///< a ray that check_ray() refuses (see ray_check())
};

/// Which call a Status is about. kNone: a one-shot call on a span of boxes
/// (e.g. UnisizePruner::complete), which has no ids: index() names the box,
/// id() is 0, and message() reads "box 3: ...".
enum class Operation : std::uint8_t {
  kNone,
  kAdd,
  kMove,
  kRemove,
  kCreate,
  kRegister,
  kUpdate,
  kQuery,
  kSetFilter,
  kRayCast,
  kRayCastMany,  ///< a batch of rays: index() names the ray
  kShiftOrigin,
  kHandOver,  ///< sapling::mpi::DistributedBroadPhase::hand_over()
};

/// The operation's name as message() writes it ("add", "register_algorithm",
/// ...; "call" for Operation::kNone).
const char* operation_name(Operation op) noexcept;
/// The code's name in snake case ("ok", "invalid_box", "pair_budget", ...),
/// for logs and bindings.
const char* status_code_name(StatusCode code) noexcept;

class [[nodiscard]] Status {
 public:
  constexpr Status() = default;

  static Status invalid_box(Operation op, Id id, std::size_t index, BoxCheck check) {
    Status s(StatusCode::kInvalidBox, op, id, index);
    s.box_ = check;
    return s;
  }
  static Status id_error(StatusCode code, Operation op, Id id, std::size_t index) {
    return Status(code, op, id, index);
  }
  static Status size_mismatch(Operation op, std::size_t ids, std::size_t boxes) {
    Status s(StatusCode::kSizeMismatch, op, 0, ids);
    s.count_ = boxes;
    return s;
  }
  /// `detail` must be a string with static storage duration.
  static Status unsupported(Operation op, Id id, std::size_t index, const char* detail) {
    Status s(StatusCode::kUnsupported, op, id, index);
    s.detail_ = detail;
    return s;
  }
  /// `detail` must be a string with static storage duration.
  static Status invalid_argument(Operation op, const char* detail, std::size_t index = 0) {
    Status s(StatusCode::kInvalidArgument, op, 0, index);
    s.detail_ = detail;
    return s;
  }
  /// An argument of one object refused (e.g. a contact distance): names
  /// the object by id and by its index in the batch. `detail` must be a
  /// string with static storage duration.
  static Status invalid_argument(Operation op, Id id, std::size_t index, const char* detail) {
    Status s(StatusCode::kInvalidArgument, op, id, index);
    s.detail_ = detail;
    s.names_object_ = true;
    return s;
  }
  /// A ray refused by check_ray() (ray.hpp); `index`, its place in a batch.
  static Status invalid_ray(Operation op, RayCheck check, std::size_t index = 0) {
    Status s(StatusCode::kInvalidRay, op, 0, index);
    s.ray_ = check;
    return s;
  }
  /// A frame refused by the pair budget; `budget` is Options::max_pairs.
  static Status pair_budget(std::size_t budget) {
    Status s(StatusCode::kPairBudget, Operation::kUpdate, 0, 0);
    s.count_ = budget;
    return s;
  }

  constexpr bool ok() const noexcept { return code_ == StatusCode::kOk; }
  constexpr explicit operator bool() const noexcept { return ok(); }
  constexpr StatusCode code() const noexcept { return code_; }
  constexpr Operation operation() const noexcept { return op_; }
  /// The offending id (kInvalidBox, id errors, kUnsupported, an argument of
  /// one object).
  constexpr Id id() const noexcept { return id_; }
  /// Position of the offending element in the batch (kSizeMismatch: the id count).
  constexpr std::size_t index() const noexcept { return index_; }
  constexpr BoxCheck box_check() const noexcept { return box_; }
  constexpr RayCheck ray_check() const noexcept { return ray_; }
  constexpr const char* detail() const noexcept { return detail_; }

  /// A sentence for people, e.g. "add of id 7: min.x > max.x", or for a
  /// one-shot call "box 7: ..." (its index). Allocates;
  /// meant for the error path only.
  std::string message() const;

 private:
  constexpr Status(StatusCode code, Operation op, Id id, std::size_t index)
      : code_(code), op_(op), id_(id), index_(index) {}

  StatusCode code_ = StatusCode::kOk;
  Operation op_ = Operation::kNone;
  BoxCheck box_{};
  RayCheck ray_{};
  Id id_ = 0;
  std::size_t index_ = 0;
  std::size_t count_ = 0;
  const char* detail_ = "";
  bool names_object_ = false;  // kInvalidArgument about one object of a batch
};

}  // namespace sapling
