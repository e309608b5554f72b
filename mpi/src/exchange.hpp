// The messages of a distributed frame, on MPI's collectives: every rank
// sends each other rank one vector of plain records (MPI_Alltoall of the
// counts, then MPI_Alltoallv of the bytes), or all ranks gather one
// vector each. Vectors of trivially copyable records travel as bytes: all
// ranks run the same build, so the layout is the same everywhere.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace sapling::mpi::detail {

inline int as_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("sapling::mpi: a message over 2 GiB");
  return static_cast<int>(bytes);
}

/// Sends outgoing[r] to rank r, for every r, and puts what every rank sent
/// this one into `in`, in rank order (`send`: the buffer it goes out of,
/// kept by the caller from frame to frame, as `in`). Adds the bytes sent
/// to other ranks to `bytes_sent`.
template <class T>
void exchange(MPI_Comm comm, const std::vector<std::vector<T>>& outgoing, std::vector<T>& in,
              std::vector<unsigned char>& send, std::size_t& bytes_sent) {
  static_assert(std::is_trivially_copyable_v<T>);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::vector<int> send_counts(static_cast<std::size_t>(ranks)), send_offsets(send_counts.size());
  std::vector<int> recv_counts(send_counts.size()), recv_offsets(send_counts.size());
  std::size_t total = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::size_t bytes = outgoing[static_cast<std::size_t>(r)].size() * sizeof(T);
    send_offsets[static_cast<std::size_t>(r)] = as_count(total);
    send_counts[static_cast<std::size_t>(r)] = as_count(bytes);
    total += bytes;
    if (r != rank) bytes_sent += bytes;
  }
  send.resize(total);
  for (int r = 0; r < ranks; ++r) {
    const auto& part = outgoing[static_cast<std::size_t>(r)];
    if (send_counts[static_cast<std::size_t>(r)] != 0)
      std::memcpy(send.data() + send_offsets[static_cast<std::size_t>(r)], part.data(), part.size() * sizeof(T));
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  std::size_t received = 0;
  for (std::size_t r = 0; r < recv_counts.size(); ++r) {
    recv_offsets[r] = as_count(received);
    received += static_cast<std::size_t>(recv_counts[r]);
  }
  in.resize(received / sizeof(T));
  MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_BYTE, in.data(), recv_counts.data(),
                recv_offsets.data(), MPI_BYTE, comm);
}

/// Every rank's `mine`, concatenated in rank order, on every rank.
template <class T>
std::vector<T> all_gather(MPI_Comm comm, const std::vector<T>& mine, std::size_t& bytes_sent) {
  static_assert(std::is_trivially_copyable_v<T>);
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const int my_bytes = as_count(mine.size() * sizeof(T));
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size());
  MPI_Allgather(&my_bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::size_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r] = as_count(total), total += counts[r];
  std::vector<T> all(total / sizeof(T));
  MPI_Allgatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, comm);
  bytes_sent += static_cast<std::size_t>(my_bytes) * static_cast<std::size_t>(ranks - 1);
  return all;
}

/// Every rank's `mine`, concatenated in rank order, on rank `root` (empty
/// elsewhere).
template <class T>
std::vector<T> gather_to(MPI_Comm comm, int root, const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int my_bytes = as_count(mine.size() * sizeof(T));
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size());
  MPI_Gather(&my_bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::size_t total = 0;
  if (rank == root)
    for (std::size_t r = 0; r < counts.size(); ++r) offsets[r] = as_count(total), total += counts[r];
  std::vector<T> all(total / sizeof(T));
  MPI_Gatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, root, comm);
  return all;
}

}  // namespace sapling::mpi::detail
