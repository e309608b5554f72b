// Each rank adds a row of unit cubes, each overlapping the next; rank 0
// prints the whole frame's created pairs, gathered. On any rank count the
// answer is the same: ranks * 4 cubes in a row, one pair per neighbour.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "sapling/mpi/distributed_broad_phase.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  {
    auto bp = sapling::mpi::DistributedBroadPhase::create(MPI_COMM_WORLD);
    std::vector<sapling::Id> ids;
    std::vector<sapling::Box3> boxes;
    for (int k = 0; k < 4; ++k) {
      const int i = rank * 4 + k;
      const float x = 0.75f * static_cast<float>(i);
      ids.push_back(static_cast<sapling::Id>(i));
      boxes.push_back(sapling::Box3{{x, 0, 0}, {x + 1, 1, 1}});
    }
    if (!bp->add(ids, boxes)) status = 1;
    if (!bp->update().status) status = 1;
    std::vector<sapling::Pair> created, deleted;
    bp->gather(0, created, deleted);
    if (rank == 0) {
      std::printf("%d ranks: %zu pairs created\n", ranks, created.size());
      if (created.size() != static_cast<std::size_t>(ranks * 4 - 1)) status = 1;
    }
  }
  MPI_Finalize();
  return status;
}
