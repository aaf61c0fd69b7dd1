#!/usr/bin/env bash
# check_aarch64_simd.sh — checks the AArch64 (NEON) path of the CPU SIMD math
# (cpp/src/cpu/vector_math.cpp) on an x86-64 Debian or Ubuntu machine, by emulation.
#
# Run by hand, as root, not by CI: it installs a cross compiler and QEMU with apt, and
# downloads Debian trixie's arm64 libc6 package (glibc 2.41, which has the AArch64 libmvec)
# with apt-get download through a private apt list under $WORK (the system's apt sources
# are not touched). Steps:
#   1. builds tools/aarch64_simd_check.cpp with the real vector_math.cpp using the cross
#      compiler (aarch64-linux-gnu-g++, -std=c++17 -O2 as CMakeLists.txt; the program
#      needs glibc no newer than its own, 2.36 on Debian bookworm);
#   2. runs it under qemu-aarch64 against the trixie libc: the table must say NEON and hold
#      all 22 vector functions (11 ops in float and double), each result within 4 ulp of
#      the exact value, special values as the scalar libm, every tail length alike;
#      then again with MINITORCH_CPU_CAPABILITY=default: no vector functions;
#   3. runs it against the cross toolchain's own libc (bookworm: glibc 2.36, no AArch64
#      libmvec): the table must stay empty (DEFAULT), so the scalar loops run;
#   4. compiles every cpp/src/cpu/*.cpp for AArch64 with -fsyntax-only;
#   5. on an x86-64 host, builds the same checker natively (with vector_math_avx2.cpp) and
#      runs the AVX2 (when the CPU has it), SSE and DEFAULT paths.
# Prints PASS/FAIL lines; exits non-zero at the first failing step.
#
#   bash tools/check_aarch64_simd.sh            # WORK=/tmp/minitorch-aarch64-check by default
set -euo pipefail
cd "$(dirname "$0")/.."
WORK="${WORK:-/tmp/minitorch-aarch64-check}"
SUITE="${SUITE:-trixie}"
mkdir -p "$WORK"
FLAGS=(-std=c++17 -O2 -Wall -Wextra -Wno-unused-parameter -fwrapv -Icpp/include)

echo "== toolchain"
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++-aarch64-linux-gnu qemu-user >"$WORK/apt.log"
fi
aarch64-linux-gnu-g++ --version | head -1
qemu-aarch64 --version | head -1

echo "== $SUITE's arm64 libc6 into a sysroot"
APT="$WORK/apt"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/deb"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [arch=arm64 signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main" >"$APT/sources.list"
APT_OPTS=(-o Dir::Etc::SourceList="$APT/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" -o Dir::State::status=/dev/null
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root)
if ! ls "$APT"/deb/libc6_*_arm64.deb >/dev/null 2>&1; then
  apt-get "${APT_OPTS[@]}" update -qq
  (cd "$APT/deb" && apt-get "${APT_OPTS[@]}" download libc6:arm64 -qq)
fi
DEB=$(ls "$APT"/deb/libc6_*_arm64.deb | head -1)
SYSROOT="$WORK/sysroot-$SUITE"
rm -rf "$SYSROOT"
dpkg-deb -x "$DEB" "$SYSROOT"
[ -e "$SYSROOT/lib" ] || ln -s usr/lib "$SYSROOT/lib"  # merged /usr: base-files makes this link
echo "$(basename "$DEB"): $(find "$SYSROOT" -name 'libmvec.so.1' | sed "s|$SYSROOT||")"

echo "== build the checker for AArch64"
aarch64-linux-gnu-g++ "${FLAGS[@]}" -static-libstdc++ -static-libgcc -o "$WORK/check_aarch64" \
  tools/aarch64_simd_check.cpp cpp/src/cpu/vector_math.cpp -ldl

echo "== NEON: $SUITE's glibc"
qemu-aarch64 -L "$SYSROOT" "$WORK/check_aarch64" NEON
echo "== NEON forced off (MINITORCH_CPU_CAPABILITY=default): $SUITE's glibc"
MINITORCH_CPU_CAPABILITY=default qemu-aarch64 -L "$SYSROOT" "$WORK/check_aarch64" DEFAULT
echo "== fallback: the cross toolchain's glibc (/usr/aarch64-linux-gnu)"
qemu-aarch64 -L /usr/aarch64-linux-gnu "$WORK/check_aarch64" DEFAULT

echo "== cpp/src/cpu/*.cpp compile for AArch64 (-fsyntax-only)"
OPENBLAS_INC=$(python3 -c "import scipy_openblas32 as s; print(s.get_include_dir())" 2>/dev/null || true)
n=0
for f in cpp/src/cpu/*.cpp; do
  aarch64-linux-gnu-g++ "${FLAGS[@]}" -fsyntax-only -fopenmp \
    ${OPENBLAS_INC:+-DMINITORCH_SCIPY_OPENBLAS=1 -I"$OPENBLAS_INC"} "$f"
  n=$((n + 1))
done
echo "$n files: PASS"

if [ "$(uname -m)" = x86_64 ]; then
  echo "== the same checker on this x86-64 host"
  g++ "${FLAGS[@]}" -mavx2 -mfma -c cpp/src/cpu/vector_math_avx2.cpp -o "$WORK/vector_math_avx2.o"
  g++ "${FLAGS[@]}" -o "$WORK/check_x86" tools/aarch64_simd_check.cpp cpp/src/cpu/vector_math.cpp \
    "$WORK/vector_math_avx2.o" -ldl
  if grep -q ' avx2' /proc/cpuinfo && grep -q ' fma' /proc/cpuinfo; then
    "$WORK/check_x86" AVX2 | grep -E '^(capability|vector functions|PASS|FAIL)'
  fi
  MINITORCH_CPU_CAPABILITY=sse "$WORK/check_x86" SSE | grep -E '^(capability|vector functions|PASS|FAIL)'
  MINITORCH_CPU_CAPABILITY=default "$WORK/check_x86" DEFAULT | grep -E '^(capability|vector functions|PASS|FAIL)'
fi
echo "all checks passed"
