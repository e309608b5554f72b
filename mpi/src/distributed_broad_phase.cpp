// DistributedBroadPhase: creation, staging on the owner's ledger, reads and
// gathers. The frame itself: distributed_frame.cpp.
#include <algorithm>

#include "exchange.hpp"
#include "impl.hpp"
#include "sapling/registry.hpp"

namespace sapling::mpi {

double FrameStats::imbalance() const noexcept {
  return total_held == 0 ? 1.0 : static_cast<double>(max_held) * ranks / static_cast<double>(total_held);
}

DistributedBroadPhase::Impl::~Impl() {
  if (comm != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm);
  }
}

int DistributedBroadPhase::Impl::directory_rank(Id id) const noexcept {
  std::uint64_t h = id * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  return static_cast<int>(h % static_cast<std::uint64_t>(ranks));
}

std::unique_ptr<DistributedBroadPhase> DistributedBroadPhase::create(MPI_Comm comm, std::string_view algorithm,
                                                                     const Options& options, Status* why) {
  const auto refuse = [&](const char* detail) -> std::unique_ptr<DistributedBroadPhase> {
    if (why != nullptr) *why = Status::invalid_argument(Operation::kCreate, detail);
    return nullptr;
  };
  if (options.max_pairs != 0) return refuse("Options::max_pairs is not supported by the distributed broad phase");
  if (options.exact_pairs) return refuse("Options::exact_pairs is not supported by the distributed broad phase");
  const std::string_view family = algorithm.substr(0, algorithm.find(':'));
  if (family == "unisize") return refuse("unisize is not supported by the distributed broad phase");
  std::unique_ptr<BroadPhase> local = BroadPhase::create(algorithm, options, why);
  if (local == nullptr) return nullptr;
  auto impl = std::make_unique<Impl>();
  MPI_Comm_dup(comm, &impl->comm);
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->ranks);
  impl->options = options;
  impl->local = std::move(local);
  impl->before = impl->now = detail::Decomposition(impl->ranks);
  return std::unique_ptr<DistributedBroadPhase>(new DistributedBroadPhase(std::move(impl)));
}

DistributedBroadPhase::DistributedBroadPhase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DistributedBroadPhase::~DistributedBroadPhase() = default;

namespace {
std::span<const Box3> lifted(std::vector<Box3>& out, std::span<const Box2> boxes) {
  out.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), out.begin(), [](const Box2& b) { return lift(b); });
  return out;
}
}  // namespace

Status DistributedBroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                                  Motion motion) {
  Impl& m = *impl_;
  if (m.ranks == 1) {  // (the adds are remembered for hand_over()'s check)
    Status status = m.local->add(ids, boxes, filters, motion);
    if (status) {
      for (const Id id : ids) m.added_alone.insert(id, 0);
    }
    return status;
  }
  return m.staged.add(m.objects, sapling::detail::frame_stamp(m.frame), ids, boxes, filters, {}, motion, m.accept_all,
                      m.options.dims);
}

Status DistributedBroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters,
                                  Motion motion) {
  return add(ids, lifted(impl_->lifted, boxes), filters, motion);
}

Status DistributedBroadPhase::move(std::span<const Id> ids, std::span<const Box3> boxes) {
  Impl& m = *impl_;
  if (m.ranks == 1) return m.local->move(ids, boxes);
  return m.staged.change(m.objects, sapling::detail::frame_stamp(m.frame), Operation::kMove, ids, boxes, {}, {},
                         m.accept_all, m.options.dims);
}

Status DistributedBroadPhase::move(std::span<const Id> ids, std::span<const Box2> boxes) {
  return move(ids, lifted(impl_->lifted, boxes));
}

Status DistributedBroadPhase::remove(std::span<const Id> ids) {
  Impl& m = *impl_;
  if (m.handed_index.size() != 0) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (m.handed_index.find(ids[i]) != sapling::detail::IdIndex::kNotFound)
        return Status::id_error(StatusCode::kRepeatedId, Operation::kRemove, ids[i], i);
    }
  }
  Status status = m.ranks == 1 ? m.local->remove(ids)
                               : m.staged.change(m.objects, sapling::detail::frame_stamp(m.frame), Operation::kRemove,
                                                 ids, {}, {}, {}, m.accept_all, m.options.dims);
  if (status) {
    for (const Id id : ids) m.removed_now.insert(id, 0);
  }
  return status;
}

Status DistributedBroadPhase::hand_over(std::span<const Id> ids, std::span<const int> ranks) {
  Impl& m = *impl_;
  using sapling::detail::IdIndex;
  if (ids.size() != ranks.size()) return Status::size_mismatch(Operation::kHandOver, ids.size(), ranks.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (ranks[i] < 0 || ranks[i] >= m.ranks)
      return Status::invalid_argument(Operation::kHandOver, id, i, "the rank is not in the communicator");
    const bool own = m.ranks == 1 ? m.local->contains(id) || m.added_alone.find(id) != IdIndex::kNotFound
                                  : m.objects.slot_of_id.find(id) != IdIndex::kNotFound;
    if (!own) return Status::id_error(StatusCode::kUnknownId, Operation::kHandOver, id, i);
    if (m.removed_now.find(id) != IdIndex::kNotFound || m.handed_index.find(id) != IdIndex::kNotFound)
      return Status::id_error(StatusCode::kRepeatedId, Operation::kHandOver, id, i);
    for (std::size_t j = 0; j < i; ++j) {  // twice in the batch
      if (ids[j] == id) return Status::id_error(StatusCode::kRepeatedId, Operation::kHandOver, id, i);
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ranks[i] == m.rank) {  // kept, but handed all the same: no removal, no second hand this frame
      m.handed_index.insert(ids[i], 0);
      continue;
    }
    m.handed_index.insert(ids[i], static_cast<std::uint32_t>(m.handed_ids.size()));
    m.handed_ids.push_back(ids[i]);
    m.handed_to.push_back(ranks[i]);
  }
  return Status{};
}

void DistributedBroadPhase::Impl::forget_handovers() noexcept {
  handed_index = sapling::detail::IdIndex{};
  removed_now = sapling::detail::IdIndex{};
  added_alone = sapling::detail::IdIndex{};
  handed_ids.clear();
  handed_to.clear();
}

Status DistributedBroadPhase::set_filter(std::span<const Id> ids, std::span<const Filter> filters) {
  Impl& m = *impl_;
  if (m.ranks == 1) return m.local->set_filter(ids, filters);
  return m.staged.change(m.objects, sapling::detail::frame_stamp(m.frame), Operation::kSetFilter, ids, {}, filters, {},
                         m.accept_all, m.options.dims);
}

void DistributedBroadPhase::drop_staged() noexcept {
  if (impl_->ranks == 1) impl_->local->drop_staged();
  if (impl_->ranks > 1) impl_->staged.drop(impl_->objects);
  impl_->forget_handovers();
}

const FrameDelta& DistributedBroadPhase::update() { return impl_->run_frame(); }

namespace {
void sorted_union(std::vector<Pair>& all) { std::sort(all.begin(), all.end()); }
}  // namespace

void DistributedBroadPhase::gather(int root, std::vector<Pair>& created, std::vector<Pair>& deleted) const {
  const Impl& m = *impl_;
  created = detail::gather_to(m.comm, root, m.created);
  deleted = detail::gather_to(m.comm, root, m.deleted);
  sorted_union(created);
  sorted_union(deleted);
}

void DistributedBroadPhase::pairs(std::vector<Pair>& out) const {
  const Impl& m = *impl_;
  out.clear();
  for (const Pair& p : m.local->pairs()) {
    const Box3 a = *m.local->box(p.a), b = *m.local->box(p.b);
    const std::array<float, 3> corner{std::max(a.min[0], b.min[0]), std::max(a.min[1], b.min[1]),
                                      std::max(a.min[2], b.min[2])};
    if (m.now.rank_of(corner) == m.rank) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
}

void DistributedBroadPhase::gather_pairs(int root, std::vector<Pair>& out) const {
  std::vector<Pair> mine;
  pairs(mine);
  out = detail::gather_to(impl_->comm, root, mine);
  sorted_union(out);
}

bool DistributedBroadPhase::contains(Id id) const noexcept {
  if (impl_->ranks == 1) return impl_->local->contains(id);
  return impl_->objects.live_slot(id) != sapling::detail::IdIndex::kNotFound;
}

std::optional<Box3> DistributedBroadPhase::box(Id id) const noexcept {
  if (impl_->ranks == 1) return impl_->local->box(id);
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == sapling::detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.boxes[s];
}

std::optional<Filter> DistributedBroadPhase::filter(Id id) const noexcept {
  if (impl_->ranks == 1) return impl_->local->filter(id);
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == sapling::detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.filter_of(s);
}

std::optional<Motion> DistributedBroadPhase::motion(Id id) const noexcept {
  if (impl_->ranks == 1) return impl_->local->motion(id);
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == sapling::detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->objects.motion_of(s);
}

std::size_t DistributedBroadPhase::size() const noexcept {
  return impl_->ranks == 1 ? impl_->local->size() : impl_->objects.live;
}

int DistributedBroadPhase::domain_rank(const Box3& box) const noexcept {
  return impl_->now.rank_of(detail::reference_point(box));
}

void DistributedBroadPhase::plan_domains(std::span<const Box3> boxes) {
  Impl& m = *impl_;
  std::size_t bytes = 0;
  const std::vector<detail::Sample> samples = detail::sample_centres(boxes.size(), detail::kSamples, [&](auto&& visit) {
    for (const Box3& b : boxes) visit(b);
  });
  detail::Decomposition planned =
      detail::Decomposition::bisect(detail::all_gather(m.comm, samples, bytes), m.ranks, m.options.dims);
  const std::uint64_t mine = m.objects.live + m.staged.added.size();
  std::uint64_t anywhere = 0;
  MPI_Allreduce(&mine, &anywhere, 1, MPI_UINT64_T, MPI_SUM, m.comm);
  if (anywhere == 0) {
    m.before = m.now = std::move(planned);
    m.drawn = true;
    m.planned.reset();
  } else {
    m.planned = std::move(planned);
  }
}

Box3 DistributedBroadPhase::domain(int r) const noexcept { return impl_->now.domain(r); }

int DistributedBroadPhase::rank() const noexcept { return impl_->rank; }
int DistributedBroadPhase::ranks() const noexcept { return impl_->ranks; }
std::uint64_t DistributedBroadPhase::frame() const noexcept { return impl_->frame; }
const FrameStats& DistributedBroadPhase::stats() const noexcept { return impl_->stats; }
std::string_view DistributedBroadPhase::algorithm_name() const noexcept { return impl_->local->algorithm_name(); }

std::size_t DistributedBroadPhase::memory_bytes() const noexcept {
  const Impl& m = *impl_;
  return m.objects.memory_bytes() + m.directory.memory_bytes() + m.local->memory_bytes() +
         m.departing.capacity() * sizeof(Id) + (m.created.capacity() + m.deleted.capacity()) * sizeof(Pair);
}

}  // namespace sapling::mpi
