#!/usr/bin/env bash
# gpu_check.sh — one command that checks minitorch on a machine with an NVIDIA GPU (issue 28).
#
# Run from anywhere in the repository (it works from the repository root):
#   bash tools/gpu_check.sh                  # everything, about 10-20 minutes on an H100
#   bash tools/gpu_check.sh --quick          # smaller: suite without slow tests, bench --quick
#   bash tools/gpu_check.sh --no-build --only suite memcheck
#   bash tools/gpu_check.sh --help
#
# Stages, each timed and recorded as PASS / FAIL / SKIP with one line of detail; one summary
# table at the end; exit status 1 when a stage failed, 2 when it cannot run at all (no GPU,
# bad arguments). A failing stage does not stop the later ones, except a failed build (the
# stages that need minitorch are then skipped).
#   environment  nvidia-smi (name, memory, driver, compute capability), nvcc, Python, cores
#   build        a wheel for THIS GPU's architecture only (CMAKE_CUDA_ARCHITECTURES from
#                nvidia-smi's compute_cap), MINITORCH_CUDA=ON, installed with --target into
#                $WORK/site, which goes first on PYTHONPATH for every later stage; offline
#                (pip --no-index --find-links .gpu/whl) when .gpu/whl holds wheels
#   symbols      nm -D --defined-only on the installed _C*.so lists only PyInit__C
#   errors       in a subprocess: a shape-mismatch matmul, an out-of-range index and a 4 TiB
#                allocation on cuda raise Python exceptions (no crash); cuda.is_available()
#                is True and cuda.is_emulated() False  (tools/gpu_check_lib.py error-paths)
#   suite        python -m pytest tests -n <cores> --ignore=tests/notebooks, from the
#                repository root, where python/minitorch is not on sys.path: the tests
#                import the installed wheel
#   memcheck     compute-sanitizer --tool memcheck on tests/test_devices.py -k cuda
#   racecheck    compute-sanitizer --tool racecheck on tests/test_reduce.py
#                tests/test_matmul.py tests/nn/test_attention_mma_cuda.py -k cuda (both SKIP
#                when compute-sanitizer is absent)
#   bench        python benchmarks/bench_cuda.py, then bench_models.py, time-limited
#   notebooks    every notebooks/*.ipynb with MINITORCH_NB_LIMIT=3000: with nbclient when
#                nbclient, nbformat and ipykernel import, else as a script of its code cells
#                (IPython magics dropped, MPLBACKEND=Agg); one row per notebook
#
# Logs: one file per stage in --logs DIR (default $OUT when set — the device tool copies $OUT
# back — else gpu_check_logs/ in the repository, which ignores itself), plus results.tsv.
# MNIST: $MINITORCH_DATA, else .gpu/mnist when present (notebooks 02, 03 need it).
# What was seen on the GPU machine this replaces .gpu/on_device.sh for: runs as root, CUDA 13,
# Python 3.12, no internet (hence .gpu/whl), no nbclient/ipykernel, numba-cuda broken.
# The stage functions are called through run_stage, which shellcheck cannot follow.
# shellcheck disable=SC2317
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LIB="$ROOT/tools/gpu_check_lib.py"
PY=${PYTHON:-python3}
NVIDIA_SMI=${GPU_CHECK_NVIDIA_SMI:-nvidia-smi}
ALL_STAGES=(environment build symbols errors suite memcheck racecheck bench notebooks)
NEEDS_MINITORCH=" symbols errors suite memcheck racecheck bench notebooks "

QUICK=0
ONLY=()
SKIP=()
LOGS=""
WORK="${TMPDIR:-/tmp}/minitorch-gpu-check"
JOBS=""
ARCH=""
PYTEST_EXTRA=()
SUITE_TIMEOUT=1200
SAN_TIMEOUT=600
BENCH_TIMEOUT=600
NB_TIMEOUT=900

usage() {
  cat <<EOF
Usage: bash tools/gpu_check.sh [options] [-- pytest arguments for the suite]

Checks minitorch on this machine's NVIDIA GPU: builds for it, checks the exported symbols
and the error paths, runs the test suite on cuda in parallel, compute-sanitizer memcheck and
racecheck, benchmarks/bench_cuda.py and every notebook; prints one summary table.
Exit status: 0 all passed, 1 a stage failed, 2 cannot run (no GPU, bad arguments).

Options:
  --quick            suite without slow tests, bench_cuda.py --quick, shorter time limits
  --no-build         do not build: use the site folder of an earlier run (in --work) when
                     it is there, else the minitorch python3 imports (= --skip build)
  --skip STAGE...    skip these stages (names below; several words or a,b list)
  --only STAGE...    run only these stages (without build, as --no-build)
  --logs DIR         where the logs go (default: \$OUT when set, else gpu_check_logs/)
  --work DIR         build and install folder (default: \$TMPDIR or /tmp + /minitorch-gpu-check)
  --jobs N, -n N     pytest-xdist workers for the suite (default: nproc)
  -- ARGS...         the rest goes to the suite's pytest, e.g. -- -x -k "cuda and conv"
  --arch CC          CUDA architecture(s) to build for, e.g. 90 or "80;90"
                     (default: nvidia-smi's compute_cap of every GPU here)
  -h, --help         this text

Stages: ${ALL_STAGES[*]}
Environment: PYTHON (default python3), MINITORCH_DATA (MNIST), CMAKE_ARGS (added to).
EOF
}

die() { echo "gpu_check: $*" >&2; exit 2; }

is_stage() { [[ " ${ALL_STAGES[*]} " == *" $1 "* ]]; }

parse_args() {
  while (($#)); do
    case $1 in
      -h | --help) usage; exit 0 ;;
      --quick) QUICK=1; shift ;;
      --no-build) SKIP+=(build); shift ;;
      --skip | --only)
        # the stage names that follow (words up to the next option; a,b lists too)
        local opt=$1 used=0 word name
        local -a names
        shift
        for word in "$@"; do
          [[ $word == -* ]] && break
          used=$((used + 1))
          IFS=',' read -ra names <<<"$word"
          for name in "${names[@]}"; do
            [[ -z $name ]] && continue
            is_stage "$name" || die "unknown stage '$name' (stages: ${ALL_STAGES[*]})"
            if [[ $opt == --skip ]]; then SKIP+=("$name"); else ONLY+=("$name"); fi
          done
        done
        ((used > 0)) || die "$opt needs at least one stage (stages: ${ALL_STAGES[*]})"
        shift "$used"
        ;;
      --logs) (($# >= 2)) || die "--logs needs a folder"; LOGS=$2; shift 2 ;;
      --work) (($# >= 2)) || die "--work needs a folder"; WORK=$2; shift 2 ;;
      --jobs | -n) [[ ${2:-} =~ ^[0-9]+$ ]] || die "$1 needs a number"; JOBS=$2; shift 2 ;;
      --) shift; PYTEST_EXTRA=("$@"); break ;;
      --arch) (($# >= 2)) || die "--arch needs an architecture such as 90"; ARCH=$2; shift 2 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
}

wanted() {
  local s=$1
  if ((${#ONLY[@]})) && [[ " ${ONLY[*]} " != *" $s "* ]]; then return 1; fi
  [[ " ${SKIP[*]} " != *" $s "* ]]
}

now() { if [[ -n ${EPOCHREALTIME:-} ]]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The first check: is there an NVIDIA GPU at all? Nothing is built or written before it.
require_gpu() {
  local out
  if ! command -v "$NVIDIA_SMI" >/dev/null 2>&1; then
    die "no NVIDIA GPU found ($NVIDIA_SMI is not on PATH): run this on a machine with an NVIDIA GPU and its driver"
  fi
  if ! out=$(timeout 60 "$NVIDIA_SMI" -L 2>&1) || ! grep -q '^GPU ' <<<"$out"; then
    die "no NVIDIA GPU found ($NVIDIA_SMI -L says: $(head -1 <<<"$out"))"
  fi
}

# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------
ST="" DT=""   # each stage function sets its status (PASS/FAIL/SKIP) and one line of detail
SUBROWS=""    # rows a stage adds under its own (the notebooks), name<TAB>status<TAB>s<TAB>detail
BUILD_OK=1
ANY_FAIL=0

record() {  # name status seconds detail
  local detail=${4//$'\t'/ }
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${detail//$'\n'/ }" >>"$LOGS/results.tsv"
  [[ $2 == FAIL ]] && ANY_FAIL=1
  return 0
}

run_stage() {  # name function
  local name=$1 fn=$2 t0 secs
  if ! wanted "$name"; then
    record "$name" SKIP "" "not selected (--skip / --only)"
    printf '== %-11s SKIP  not selected\n' "$name"
    return
  fi
  if ((!BUILD_OK)) && [[ $NEEDS_MINITORCH == *" $name "* ]]; then
    record "$name" SKIP "" "no minitorch to check (the build failed)"
    printf '== %-11s SKIP  the build failed\n' "$name"
    return
  fi
  printf '== %-11s ...\n' "$name"
  ST=FAIL DT="" SUBROWS=""
  t0=$(now)
  "$fn"
  secs=$(since "$t0")
  record "$name" "$ST" "$secs" "$DT"
  [[ -n $SUBROWS ]] && printf '%s' "$SUBROWS" >>"$LOGS/results.tsv" && grep -q $'\tFAIL\t' <<<"$SUBROWS" && ANY_FAIL=1
  printf '   %-11s %s  (%s s) %s\n' "$name" "$ST" "$secs" "$DT"
}

# ---------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------
GPU_LINE="" CC_LIST=""

stage_environment() {
  local log="$LOGS/environment.log" nvcc_v py_v san
  {
    echo "## nvidia-smi"; timeout 60 "$NVIDIA_SMI" 2>&1
    echo "## nvcc"; timeout 60 nvcc --version 2>&1
    echo "## python"; "$PY" -VV 2>&1; command -v "$PY"
    echo "## packages"
    timeout 120 "$PY" -m pip list 2>/dev/null | grep -iE '^(numpy|torch|pytest|pytest-xdist|pytest-timeout|hypothesis|nbclient|nbformat|ipykernel|matplotlib|pybind11|scikit-build-core|scipy-openblas32|safetensors|mpi4py|numba|numba-cuda|cupy)\b'
    echo "## compute-sanitizer"; timeout 60 compute-sanitizer --version 2>&1 | tail -2
    echo "## cmake"; timeout 60 cmake --version 2>&1 | head -1
    echo "## machine"; uname -a; nproc; id -un
  } >"$log" 2>&1
  nvcc_v=$(timeout 60 nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1)
  py_v=$("$PY" -c 'import platform; print(platform.python_version())' 2>/dev/null)
  san=$(command -v compute-sanitizer >/dev/null && echo "compute-sanitizer" || echo "no compute-sanitizer")
  DT="CUDA archs ${ARCH}; nvcc ${nvcc_v:-missing}; Python ${py_v:-missing}; $(nproc) cores; $san"
  if [[ -z $nvcc_v ]] && wanted build; then
    ST=FAIL DT="nvcc not found (PATH, /usr/local/cuda/bin): cannot build; $DT"
  elif [[ -z $py_v ]]; then
    ST=FAIL DT="$PY does not run; $DT"
  else
    ST=PASS
  fi
}

# Where the installed minitorch package is, imported as every later stage imports it.
minitorch_dir() {
  (cd "$WORK" && "$PY" -c 'import os, minitorch; print(os.path.dirname(minitorch.__file__))') 2>/dev/null
}

stage_build() {
  local log="$LOGS/build.log" t0 secs rc cxx cxx_path cuda_c dir mod
  local -a src=() iso=()
  rm -rf "$WORK/wheel" "$WORK/site"
  mkdir -p "$WORK/wheel" "$WORK/site"
  : >"$log"
  # The site folder goes first on PYTHONPATH already for the build: CMakeLists.txt asks
  # Python for scipy_openblas32, and the build runs without isolation when it can.
  export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
  if compgen -G "$ROOT/.gpu/whl/*.whl" >/dev/null; then  # no internet there: wheels carried in
    src=(--no-index --find-links "$ROOT/.gpu/whl")
    "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$WORK/site" \
      "$ROOT"/.gpu/whl/*.whl >>"$log" 2>&1 || { DT="installing .gpu/whl/*.whl failed (see build.log)"; BUILD_OK=0; return; }
  fi
  for mod in numpy:numpy scipy_openblas32:scipy-openblas32 safetensors:safetensors; do  # minitorch's dependencies
    if ! (cd "$WORK" && "$PY" -c "import ${mod%%:*}") 2>/dev/null; then
      "$PY" -m pip install -q --no-compile "${src[@]}" --target "$WORK/site" "${mod#*:}" >>"$log" 2>&1 ||
        { BUILD_OK=0; DT="minitorch needs ${mod#*:}, and pip could not install it (see build.log)"; return; }
    fi
  done
  if "$PY" -c 'import scikit_build_core, pybind11' 2>/dev/null; then iso=(--no-build-isolation); fi
  t0=$(now)
  (cd "$ROOT" && CMAKE_ARGS="${CMAKE_ARGS:+$CMAKE_ARGS }-DCMAKE_CUDA_ARCHITECTURES=$ARCH" MINITORCH_CUDA=ON \
    SKBUILD_BUILD_DIR="$WORK/build" "$PY" -m pip wheel -v --no-deps "${iso[@]}" "${src[@]}" \
    -w "$WORK/wheel" .) >>"$log" 2>&1
  rc=$?
  secs=$(since "$t0")
  if ((rc != 0)); then
    BUILD_OK=0
    DT="pip wheel failed after $secs s (exit $rc): $(grep -m1 -E 'error|Error' "$log" | cut -c1-120)"
    return
  fi
  "$PY" -m pip install -q --no-deps --no-compile --upgrade --target "$WORK/site" "$WORK"/wheel/minitorch-*.whl \
    >>"$log" 2>&1 || { BUILD_OK=0; DT="installing the wheel failed (see build.log)"; return; }
  dir=$(minitorch_dir)
  if [[ $dir != "$WORK/site/minitorch" ]]; then
    BUILD_OK=0
    DT="the installed wheel does not import: $PY imports minitorch from '${dir:-nowhere}' (see build.log)"
    return
  fi
  MT_DIR=$dir
  cxx=$(grep -m1 'CXX compiler identification is' "$log" | sed 's/.*identification is //')
  cuda_c=$(grep -m1 'CUDA compiler identification is' "$log" | sed 's/.*identification is //')
  cxx_path=$(grep -m1 '^CMAKE_CXX_COMPILER:' "$WORK/build/CMakeCache.txt" 2>/dev/null | cut -d= -f2)
  ST=PASS
  DT="$secs s for CUDA archs $ARCH; C++ ${cxx:-?}${cxx_path:+ ($cxx_path)}; CUDA ${cuda_c:-?}"
  ((${#src[@]})) && DT="$DT; offline from .gpu/whl"
  return 0
}

# --no-build / --skip build: an earlier run's $WORK/site when it is there, else what imports.
use_existing_build() {
  if [[ -d $WORK/site/minitorch ]]; then export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"; fi
  mkdir -p "$WORK"
  MT_DIR=$(minitorch_dir)
  if [[ -z $MT_DIR ]]; then
    BUILD_OK=0
    record build FAIL "" "not built (--no-build / --skip build), and $PY cannot import minitorch"
    printf '== %-11s FAIL  not built, and minitorch does not import\n' build
  else
    record build SKIP "" "not built: using $MT_DIR"
    printf '== %-11s SKIP  using %s\n' build "$MT_DIR"
  fi
}

stage_symbols() {
  local log="$LOGS/symbols.log" so others
  if ! command -v nm >/dev/null; then ST=SKIP DT="nm (binutils) is not on PATH"; return; fi
  so=$(cd "$WORK" && "$PY" -c 'import minitorch._C as c; print(c.__file__)' 2>/dev/null)  # the one Python loads
  if [[ $so != *.so ]]; then DT="minitorch._C does not import from $MT_DIR"; return; fi
  nm -D --defined-only "$so" >"$log" 2>&1 || { DT="nm -D failed on $so (see symbols.log)"; return; }
  others=$(awk 'NF { print $NF }' "$log" | grep -vx 'PyInit__C')
  if ! grep -q ' PyInit__C$' "$log"; then
    DT="PyInit__C is not exported by $(basename "$so")"
  elif [[ -n $others ]]; then
    DT="$(wc -l <<<"$others") symbols besides PyInit__C, e.g. $(head -3 <<<"$others" | tr '\n' ' ')"
  else
    ST=PASS DT="$(basename "$so") exports only PyInit__C"
  fi
}

stage_errors() {
  local log="$LOGS/errors.log" rc
  (cd "$WORK" && timeout 300 "$PY" "$LIB" error-paths) >"$log" 2>&1
  rc=$?
  if ((rc == 0)); then
    ST=PASS DT="matmul, index and 4 TiB allocation raise: $(grep -E '^ok   (shape|out-of|4 TiB)' "$log" |
      sed -E 's/^ok   [^:]*: ([A-Za-z]+):.*/\1/' | paste -sd ' ' -); is_available True, is_emulated False"
  elif ((rc == 124)); then
    DT="timed out after 300 s (see errors.log)"
  elif ((rc > 128)); then
    DT="the process crashed (signal $((rc - 128))) instead of raising; see errors.log"
  else
    DT=$(grep -m2 '^FAIL' "$log" | sed 's/^FAIL //' | paste -sd ';' -)
    DT=${DT:-"exit status $rc: $(tail -1 "$log")"}
  fi
}

stage_suite() {
  local log="$LOGS/suite.log" rc
  local -a args=(tests -q -p no:cacheprovider --ignore=tests/notebooks -rfE)
  "$PY" -c 'import xdist' 2>/dev/null && args+=(-n "$JOBS")
  "$PY" -c 'import pytest_timeout' 2>/dev/null && args+=(--timeout=300)
  ((QUICK)) && args+=(-m "not slow")
  args+=("${PYTEST_EXTRA[@]}")
  {
    echo "minitorch from: $MT_DIR"
    echo "\$ $PY -m pytest $(printf '%q ' "${args[@]}")"
  } >"$log"
  (cd "$ROOT" && timeout "$SUITE_TIMEOUT" "$PY" -m pytest "${args[@]}") >>"$log" 2>&1
  rc=$?
  DT=$("$PY" "$LIB" pytest-summary --rc "$rc" "$log") && ST=PASS
  ((rc == 124)) && DT="timed out after $SUITE_TIMEOUT s; $DT"
  [[ " ${args[*]} " == *" -n "* ]] || DT="$DT (serial: pytest-xdist is not installed)"
}

sanitize() {  # tool log tests...
  local tool=$1 log=$2 rc errs
  shift 2
  if ! command -v compute-sanitizer >/dev/null; then ST=SKIP DT="compute-sanitizer is not on PATH"; return; fi
  echo "\$ compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest $* -q -k cuda" >"$log"
  (cd "$ROOT" && timeout "$SAN_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 99 \
    "$PY" -m pytest "$@" -q -k cuda -p no:cacheprovider -rfE) >>"$log" 2>&1
  rc=$?
  errs=$(grep -oE '(ERROR|RACECHECK) SUMMARY: .*' "$log" | tail -1)
  if ((rc == 99)); then
    DT="$tool found errors: ${errs:-see the log}"
  elif ((rc == 124)); then
    DT="timed out after $SAN_TIMEOUT s"
  else
    DT=$("$PY" "$LIB" pytest-summary --rc "$rc" "$log") && ST=PASS
    DT="${errs:-no ERROR SUMMARY line}; $DT"
  fi
}

stage_memcheck() { sanitize memcheck "$LOGS/memcheck.log" tests/test_devices.py; }
# The tensor-core attention is there for its shared-memory tiles: cp.async copies and the
# barriers between them (the emulator copies at once, so only a GPU can show a missing wait).
stage_racecheck() {
  sanitize racecheck "$LOGS/racecheck.log" tests/test_reduce.py tests/test_matmul.py tests/nn/test_attention_mma_cuda.py
}

stage_bench() {
  local log="$LOGS/bench_cuda.log" rc
  local -a args=()
  ((QUICK)) && args=(--quick)
  (cd "$ROOT" && timeout "$BENCH_TIMEOUT" "$PY" benchmarks/bench_cuda.py "${args[@]}") >"$log" 2>&1
  rc=$?
  if ((rc == 124)); then
    DT="timed out after $BENCH_TIMEOUT s; its tail is in bench_cuda.log"
  elif ((rc != 0)); then
    DT="exit status $rc: $(grep -v '^\s*$' "$log" | tail -1 | cut -c1-120)"
  elif grep -q '^bench_cuda: skipped' "$log"; then
    DT=$(grep -m1 '^bench_cuda: skipped' "$log")
  else
    ST=PASS
    DT="$(grep -m1 'full sum bandwidth' "$log"); $(grep -m1 '^PyTorch:' "$log"); table in bench_cuda.log"
    # The models of the GPU-speed issue (ResNet, GPT in FP32 and bf16, LSTM) beside PyTorch.
    local mlog="$LOGS/bench_models.log"
    if (cd "$ROOT" && timeout "$BENCH_TIMEOUT" "$PY" benchmarks/bench_models.py "${args[@]}") >"$mlog" 2>&1; then
      DT="$DT; models in bench_models.log"
    else
      ST=FAIL
      DT="$DT; bench_models.py failed: $(grep -v '^\s*$' "$mlog" | tail -1 | cut -c1-100)"
    fi
  fi
}

stage_notebooks() {
  local nb stem out rc detail t0 secs pass=0 fail=0 skip=0 mode
  mkdir -p "$LOGS/notebooks"
  mode=$("$PY" -c 'import nbclient, nbformat, ipykernel' 2>/dev/null && echo nbclient || echo "scripts of the code cells")
  for nb in "$ROOT"/notebooks/*.ipynb; do
    stem=$(basename "$nb" .ipynb)
    if [[ -z ${MINITORCH_DATA:-} ]] && "$PY" "$LIB" needs-mnist "$nb"; then
      SUBROWS+=$(printf '  %s\tSKIP\t\ttrains on MNIST: set MINITORCH_DATA or carry .gpu/mnist' "$stem")$'\n'
      skip=$((skip + 1))
      continue
    fi
    out="$LOGS/notebooks/$stem"
    rm -rf "$out"
    t0=$(now)
    MINITORCH_NB_LIMIT=3000 "$PY" "$LIB" run-notebook "$nb" --out "$out" --timeout "$NB_TIMEOUT" \
      --detail-file "$out.detail" >"$LOGS/notebooks/$stem.log" 2>&1
    rc=$?
    secs=$(since "$t0")
    detail=$(cat "$out.detail" 2>/dev/null || echo "exit status $rc: $(tail -1 "$LOGS/notebooks/$stem.log")")
    rm -f "$out.detail"
    if ((rc == 0)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    SUBROWS+=$(printf '  %s\t%s\t%s\t%s' "$stem" "$( ((rc == 0)) && echo PASS || echo FAIL)" "$secs" "$detail")$'\n'
    printf '   %-28s %s (%s s)\n' "$stem" "$( ((rc == 0)) && echo PASS || echo FAIL)" "$secs"
  done
  DT="$pass passed, $fail failed, $skip skipped, run as $mode; logs and plots in notebooks/"
  ((fail == 0 && pass > 0)) && ST=PASS
}

# ---------------------------------------------------------------------------------------
main() {
  parse_args "$@"
  require_gpu

  export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
  if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  if [[ -z ${MINITORCH_DATA:-} && -d $ROOT/.gpu/mnist ]]; then export MINITORCH_DATA="$ROOT/.gpu/mnist"; fi
  [[ -n $JOBS ]] || JOBS=$(nproc)
  if ((QUICK)); then SUITE_TIMEOUT=600 SAN_TIMEOUT=300 BENCH_TIMEOUT=300 NB_TIMEOUT=600; fi

  if [[ -z $LOGS ]]; then
    if [[ -n ${OUT:-} ]]; then LOGS=$OUT; else LOGS="$ROOT/gpu_check_logs"; fi
  fi
  mkdir -p "$LOGS" || die "cannot create the log folder $LOGS"
  LOGS=$(cd "$LOGS" && pwd)
  [[ $LOGS == "$ROOT/gpu_check_logs" ]] && echo '*' >"$LOGS/.gitignore"  # git ignores the folder
  : >"$LOGS/results.tsv"
  mkdir -p "$WORK" || die "cannot create the work folder $WORK"
  WORK=$(cd "$WORK" && pwd)

  # The GPU(s): name, memory, driver, and the architectures to build for.
  GPU_LINE=$("$NVIDIA_SMI" --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
    head -1 | sed 's/, /, driver /2')
  local n_gpus
  n_gpus=$("$NVIDIA_SMI" -L | grep -c '^GPU ')
  ((n_gpus > 1)) && GPU_LINE="$n_gpus GPUs, the first: $GPU_LINE"
  CC_LIST=$("$NVIDIA_SMI" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' ' |
    grep -E '^[0-9]+\.[0-9]+$' | sort -u | paste -sd ' ' -)
  if [[ -z $ARCH ]]; then ARCH=$(tr -d . <<<"$CC_LIST" | tr ' ' ';'); ARCH=${ARCH:-native}; fi
  GPU_LINE="$GPU_LINE, compute capability ${CC_LIST:-unknown (nvidia-smi has no compute_cap: building for native)}"

  echo "gpu_check: $GPU_LINE"
  echo "gpu_check: logs in $LOGS, build in $WORK"
  MT_DIR=""
  run_stage environment stage_environment
  if wanted build; then run_stage build stage_build; else use_existing_build; fi
  run_stage symbols stage_symbols
  run_stage errors stage_errors
  run_stage suite stage_suite
  run_stage memcheck stage_memcheck
  run_stage racecheck stage_racecheck
  run_stage bench stage_bench
  run_stage notebooks stage_notebooks

  echo
  echo "== gpu_check summary: $GPU_LINE"
  "$PY" "$LIB" table "$LOGS/results.tsv" || true
  echo "logs: $LOGS"
  exit "$ANY_FAIL"
}

main "$@"
