"""The scripted chat-completions server (scripted_server.py) as a fixture: a real HTTP server
process on 127.0.0.1, started per test with the replies that test scripts."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

HERE = Path(__file__).parent


@dataclass
class ScriptedModel:
    url: str
    log: Path
    process: subprocess.Popen

    def requests(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def scripted_model(tmp_path) -> Callable[[list[dict]], ScriptedModel]:
    started: list[subprocess.Popen] = []

    def start(script: list[dict]) -> ScriptedModel:
        script_path = tmp_path / f"script{len(started)}.json"
        script_path.write_text(json.dumps(script))
        log = tmp_path / f"requests{len(started)}.jsonl"
        command = [sys.executable, str(HERE / "scripted_server.py"), str(script_path), str(log)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        started.append(process)
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the scripted server did not start: {line!r}"
        return ScriptedModel(f"http://127.0.0.1:{int(line.split()[1])}/v1", log, process)

    yield start
    for process in started:
        process.kill()
        process.wait(timeout=10)
