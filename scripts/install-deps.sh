#!/usr/bin/env bash
# Installs the Debian packages sapling's build, tests and CI need, if any is
# missing. Idempotent; does nothing when everything is present.
#   scripts/install-deps.sh          build + tests (the Python module's and
#                                    sapling-demo's packages included)
#   scripts/install-deps.sh --ci     also clang and libFuzzer (fuzz targets)
set -euo pipefail
packages=(cmake ninja-build g++ make libgtest-dev libbenchmark-dev)
# The Python module and its tests (python/); pip and venv for `pip install .`.
packages+=(python3-dev python3-pybind11 python3-numpy python3-pytest python3-pip python3-venv)
# sapling-demo (tools/demo/): SDL2, libpng for its headless PNGs, Xvfb for its windowed test.
packages+=(libsdl2-dev libpng-dev xvfb xauth)
# sapling::bullet (adapters/bullet/): Bullet's headers and libraries, its tests against Bullet itself.
packages+=(libbullet-dev pkg-config)
# sapling::mpi (src/mpi/) and its tests under mpirun: OpenMPI; sapling.dask
# (python/sapling/dask.py) and its LocalCluster tests: Dask; mpi4py interop.
packages+=(libopenmpi-dev openmpi-bin python3-dask python3-distributed python3-mpi4py)
if [[ "${1:-}" == "--ci" ]]; then
  packages+=(clang libclang-rt-dev clang-format)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
