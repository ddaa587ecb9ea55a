#!/bin/sh
# bench/gpu/prepare.sh: run HERE (a Debian 12 machine with network), before a GPU call.
# Downloads the .deb files of what twofold needs and the GPU machine's image lacks (Open MPI,
# Check, OpenBLAS, GLPK, METIS, cJSON, zlib's headers, pkg-config) into .gpu-debs/, and the
# peer's one missing wheel (torch-geometric-temporal; torch and torch-geometric are on the image)
# into .whl/. Both folders are ignored by git (.gitignore) and travel only with `carry`.
# bench/gpu/run.sh unpacks the debs with `dpkg -x` into a private prefix, never into /.
set -eu
cd "$(dirname "$0")/../.."

# The packages the build and the tests open. Listed by hand from `apt-cache depends` of each, the
# C library, the compiler's runtime and what a CUDA image ships (gcc, binutils, perl) left out.
main='libopenmpi-dev openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 ibverbs-providers
  librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libmunge2
  check libsubunit-dev libsubunit0
  libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0 libgfortran5 libquadmath0
  libglpk-dev libglpk40 libamd2 libcolamd2 libsuitesparseconfig5 libltdl7
  libmetis-dev libmetis5 libcjson-dev libcjson1 zlib1g-dev pkgconf pkgconf-bin libpkgconf3'
# Base libraries an Ubuntu image usually has: run.sh keeps each of their .so files only where the
# machine's own `ldconfig -p` lacks that name, so a newer system copy is never shadowed.
fallback='libudev1 libuuid1 libgmp10 libatomic1'

rm -rf .gpu-debs && mkdir -p .gpu-debs/fallback
(cd .gpu-debs && apt-get download $main)
(cd .gpu-debs/fallback && apt-get download $fallback)

# The peer (bench/peer/README.md): pure Python, installed there with --no-deps.
mkdir -p .whl
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl \
  torch-geometric-temporal==0.56.2 ||
  echo "prepare.sh: no torch-geometric-temporal wheel: run.sh will skip the race"
du -sh .gpu-debs .whl
