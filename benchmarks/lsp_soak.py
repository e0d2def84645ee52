"""The language-server soak, long form (issue 19): several seeded runs of the random user of
`tests/e2e/soak.py` against the real `dice-lsp`, then the hostile inputs of
`tests/e2e/hostile.py` (hover time and $/cancelRequest round trips). Prints the figures and
writes them as JSON (default benchmarks/lsp_soak.json). Not a test: a report; the short form
runs in the test suite (tests/e2e/test_soak.py).

Usage: python benchmarks/lsp_soak.py [--runs 3] [--edits 4000] [--time-limit 600]
                                      [--no-hostile] [--write benchmarks/lsp_soak.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.editor import start, stop  # noqa: E402  (the repository's own test client)
from tests.e2e.hostile import HOSTILE  # noqa: E402
from tests.e2e.soak import run_soak  # noqa: E402
from tests.e2e.test_reliability import cancel_round_trip, timed_hover  # noqa: E402

TOTALS = ("edits", "server_edits", "server_edits_refused", "bytes_outside_regions", "publishes",
          "diagnostics", "invalid_positions", "errors", "generates", "forced", "cancelled", "saves",
          "requests")


async def soak_runs(runs: int, edits: int, time_limit: float) -> list[dict]:
    out = []
    for seed in range(runs):
        root = Path(tempfile.mkdtemp(prefix="dice-soak-"))
        figures = await run_soak(root, edits=edits, seed=1000 + seed, time_limit_s=time_limit)
        clean = not (figures.bytes_outside_regions or figures.invalid_positions or figures.errors)
        if clean:
            shutil.rmtree(root, ignore_errors=True)
        else:
            figures.notes.append(f"kept the session's files (server log included) in {root}")
        row = figures.to_json()
        row["seed"] = 1000 + seed
        print(f"seed {row['seed']}: " + ", ".join(f"{k} {row[k]}" for k in (*TOTALS, "seconds")), flush=True)
        for note in row["notes"][:5]:
            print(f"    {note}")
        out.append(row)
    return out


async def hostile_runs() -> dict[str, dict]:
    out = {}
    for name, make in HOSTILE.items():
        with tempfile.TemporaryDirectory(prefix="dice-hostile-") as root:
            editor = await start(Path(root), settings={"budget": 2})
            uri = editor.open("hostile.cu", make())
            began = time.perf_counter()
            trips = [await cancel_round_trip(editor, uri) for _ in range(10)]
            hovers = [await timed_hover(editor, uri, 1, 6)]
            diagnostics = await editor.diagnostics(uri, version=1, timeout=300)
            first = time.perf_counter() - began
            editor.type(uri, 0, 0, 0, 0, "// typed\n")
            trips += [await cancel_round_trip(editor, uri) for _ in range(10)]
            hovers.append(await timed_hover(editor, uri, 2, 6))
            await editor.diagnostics(uri, version=2, timeout=300)
            await asyncio.wait_for(stop(editor), 60)
        trips.sort()
        row = {"hover_max_ms": round(max(hovers) * 1000, 1),
               "cancel_round_trip_median_ms": round(trips[len(trips) // 2] * 1000, 1),
               "cancel_round_trip_max_ms": round(trips[-1] * 1000, 1),
               "first_diagnostics_s": round(first, 2),
               "skipped": any(str(d.code) == "DICE-A001" for d in diagnostics)}
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        out[name] = row
    return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--edits", type=int, default=4000)
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--no-hostile", action="store_true")
    parser.add_argument("--write", type=Path, default=REPO / "benchmarks" / "lsp_soak.json")
    args = parser.parse_args()
    runs = await soak_runs(args.runs, args.edits, args.time_limit)
    totals = {key: sum(r[key] for r in runs) for key in TOTALS}
    print("total: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    hostile = {} if args.no_hostile else await hostile_runs()
    report = {"machine": f"{platform.node()} ({platform.machine()}, {platform.python_version()})",
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "totals": totals, "runs": runs, "hostile": hostile}
    args.write.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.write}")
    clean = (totals["bytes_outside_regions"] == 0 and totals["invalid_positions"] == 0
             and totals["errors"] == 0)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
