#!/usr/bin/env bash
# The one script to run on the H200 (device tool, kind nvidia-h200, carry [".gpu-wheels"]), from
# the repository root:
#
#   bash scripts/gpu_session.sh [all|tests|bench] [bench options...]
#
# tests: doctor, then `pytest -m gpu tests/` (runner on planted kernels, sanitizer/profiler, the
#        spot-check of every sketch × sample intent × default point and corners, with its table);
# bench: the benchmark suite against PyTorch eager (+ torch.compile), RESULTS.md and results.json.
# denoiser (not part of all): the learned denoiser's dataset, benchmarks/denoiser/collect.py for
#        DICE_DENOISER_BUDGET seconds (default 220) into $OUT/measurements.jsonl, resuming the
#        repository's benchmarks/denoiser/data/measurements.jsonl when there is one (extra options go to
#        collect.py).
# sweep (not part of all): `sweep NAME [--cases a,b]`, benchmarks/point_sweep.py's forced design
#        points of one sketch family beside PyTorch (NAME: wgmma_tma, scan, simt) into $OUT/sweep.log,
#        for DICE_SWEEP_TIMEOUT seconds (default 300).
# kernelbench (not part of all): `kernelbench DIR... [--compile]`, the already translated tasks of
#        scripts/kernelbench_results.py's work folder DICE_KB_WORK (default .kb/work, carried) built
#        and evaluated for DICE_KB_TIMEOUT seconds (default 540), resuming where the last call on
#        this machine stopped (its rows.json is kept in /tmp/dice-kb-state/<work> while the machine stays
#        warm); $OUT gets KERNELBENCH_RESULTS.md/.json, rows.json and kernelbench.log. --compile times
#        torch.compile too, its Inductor caches filled in the build stage.
# Everything lands in $OUT (at most 8 files): doctor.txt, gpu-tests.log, gpu-tests.xml, bench.log,
# RESULTS.md, results.json. Stages stop themselves before the tool's 10-minute limit; tune with
# DICE_TESTS_TIMEOUT / DICE_BENCH_TIMEOUT (seconds), DICE_SPOTCHECK_BUDGET_S, DICE_SPOTCHECK_CORNERS,
# DICE_SPOTCHECK_TRIALS. Bench options (after the stage): --torch-compile, --cases a,b, --engine, ...
# One 10-minute call fits `all` with the defaults; for the whole spot-check (every corner) run
# `tests` and `bench` in two calls with larger budgets.
set -uo pipefail
stage=${1:-all}
shift || true
out=${OUT:-$PWD/gpu-session-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 DICE_CACHE_DIR=${DICE_CACHE_DIR:-/tmp/dice-cache}

python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD:$PWD/server

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  python3 -c 'import json; from dice_engine.runner import doctor; print(json.dumps(doctor(), indent=1))'
} > "$out/doctor.txt" 2>&1
status=0

if [[ $stage == all || $stage == tests ]]; then
  # Modules that need packages the GPU image lacks (pytest-lsp, ...) fail to collect; the GPU
  # tests do not depend on them.
  export DICE_SPOTCHECK_BUDGET_S=${DICE_SPOTCHECK_BUDGET_S:-200}
  export DICE_SPOTCHECK_CORNERS=${DICE_SPOTCHECK_CORNERS:-2}
  timeout "${DICE_TESTS_TIMEOUT:-300}" python3 -m pytest -m gpu tests/ --ignore=tests/e2e -q -s -rfEs -p no:cacheprovider \
    --continue-on-collection-errors --junitxml="$out/gpu-tests.xml" 2>&1 | tee "$out/gpu-tests.log" \
    | grep -E "passed|failed|error|candidates, " | tail -5
  status=$(( status | ${PIPESTATUS[0]} ))
fi

if [[ $stage == denoiser ]]; then
  data=benchmarks/denoiser/data/measurements.jsonl
  resume=()
  if [[ -s $data ]]; then cp "$data" "$out/measurements.jsonl"; resume=(--resume); fi
  budget=${DICE_DENOISER_BUDGET:-220}
  timeout $(( budget + 60 )) python3 benchmarks/denoiser/collect.py --time-budget "$budget" \
    --out "$out/measurements.jsonl" "${resume[@]}" "$@" 2>&1 | tee "$out/denoiser.log" | tail -20
  status=$(( status | ${PIPESTATUS[0]} ))
fi

if [[ $stage == sweep ]]; then
  budget=${DICE_SWEEP_TIMEOUT:-300}
  timeout "$budget" python3 benchmarks/point_sweep.py --sweep "${1:-scan}" --time-budget $(( budget - 40 )) \
    "${@:2}" 2>&1 | tee "$out/sweep.log" | tail -40
  status=$(( status | ${PIPESTATUS[0]} ))
fi

if [[ $stage == kernelbench ]]; then
  work=${DICE_KB_WORK:-.kb/work}
  state=/tmp/dice-kb-state/${work//\//_}  # one per work folder: two folders never swap rows
  # a later call on the same warm machine goes on from what the last one measured
  if [[ -s $state/rows.json && $state/rows.json -nt $work/rows.json ]]; then cp "$state/rows.json" "$work/rows.json"; fi
  budget=${DICE_KB_TIMEOUT:-540}
  start=$SECONDS
  { timeout "$budget" python3 scripts/kernelbench_results.py "$@" --work "$work" --stage build --resume --jobs "$(nproc)" &&
    timeout $(( budget - (SECONDS - start) )) python3 scripts/kernelbench_results.py "$@" --work "$work" --stage eval \
      --resume --case-timeout 100 --time-budget $(( budget - (SECONDS - start) - 110 )) \
      --out "$out/KERNELBENCH_RESULTS.md"; } 2>&1 | tee "$out/kernelbench.log" | grep -Ev "correct=True" | tail -30
  status=$(( status | ${PIPESTATUS[0]} ))
  mkdir -p "$state" && cp "$work/rows.json" "$state/rows.json" && cp "$work/rows.json" "$out/rows.json"
fi

if [[ $stage == all || $stage == bench ]]; then
  budget=${DICE_BENCH_TIMEOUT:-270}
  timeout "$budget" python3 benchmarks/run_bench.py --out "$out" --time-budget $(( budget - 45 )) "$@" 2>&1 \
    | tee "$out/bench.log" | tail -60
  status=$(( status | ${PIPESTATUS[0]} ))
fi
exit "$status"
