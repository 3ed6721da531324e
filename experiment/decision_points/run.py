"""The decision-point run: one completion per item, arm and sample, resumable.

The frozen files (:mod:`~experiment.decision_points.freeze`) are checked against
``MANIFEST.json`` before anything is sent. The plan (:func:`plan`) is item by item in an
order drawn from the seed, per item the four arms in a drawn order and an arm's samples
together (amendment 1: consecutive identical prompts let the server reuse its prompt
cache) — so a run cut short has compared the arms on the same items, and no arm always
comes first. A completion's sampling seed depends on the item and the sample, never the arm:
the arms are compared under the same seeds.

Each completion is appended to ``completions.jsonl`` as it ends (flushed and synced),
with the commit and digest of the code it ran with, the model's sha256, the server,
its threads, the sampling settings and whether the demo's server asked for confirmations
when the prompts were frozen (``confirmations``: False, from the manifest); with the
frozen prompt (``prompts.jsonl``, by item and arm) it is the whole transcript. A run
resumed with other code or settings is refused (:func:`check_same`); a completion the
model's endpoint failed is not written (the run stops; resuming does it again) — the
only exclusion the plan allows.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from experiment.decision_points.arms import ARMS
from experiment.decision_points.freeze import FILES
from experiment.decision_points.scoring import score

__all__ = [
    "COMPARABLE",
    "Endpoint",
    "Frozen",
    "ModelFailed",
    "check_same",
    "completion_seed",
    "finished",
    "load",
    "plan",
    "run",
]

JOURNAL = "completions.jsonl"
# Completions made under other values of these do not compare: resuming will not mix them.
COMPARABLE = ("commit", "code", "model", "threads", "temperature", "maxTokens", "seed")


class ModelFailed(RuntimeError):
    """The model's endpoint could not be reached or kept failing: nothing is recorded."""


@dataclass(frozen=True)
class Frozen:
    items: dict[str, dict[str, Any]]
    prompts: dict[tuple[str, str], dict[str, Any]]
    tools: dict[str, list[dict[str, Any]]]
    manifest: dict[str, Any]


def load(folder: Path) -> Frozen:
    """The frozen files, each checked against ``MANIFEST.json`` (ValueError if changed)."""
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    for name in FILES:
        found = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        if found != manifest["files"][name]:
            raise ValueError(f"{folder / name} is not the frozen file (sha256 {found}).")
    items = {item["id"]: item for item in json.loads((folder / "items.json").read_text())}
    prompts = {}
    for line in (folder / "prompts.jsonl").read_text().splitlines():
        prompt = json.loads(line)
        prompts[(prompt["item"], prompt["arm"])] = prompt
    tools = json.loads((folder / "tools.json").read_text())
    return Frozen(items, prompts, tools, manifest)


Slot = tuple[str, str, int]  # item, arm, sample


def plan(items: list[str], samples: int, seed: int, arms: tuple[str, ...] = ARMS) -> list[Slot]:
    """Item by item (in an order drawn from the seed), each item through the arms in a drawn
    order, and an arm's samples one after the other.

    Amendment 1 (``amendment-1.md``): the registered order went sample by sample, so no
    two consecutive requests shared a prompt and llama.cpp evaluated every ~4-19k-token
    prompt from scratch (77-300 s a completion on 2 cores instead of the ~15 s planned).
    Keeping an arm's samples together lets the server reuse the prompt it just evaluated;
    the set of completions, their prompts and their seeds are unchanged. A run cut short
    has still compared the arms on the same items (whole items are done first).
    """
    slots: list[Slot] = []
    order = list(items)
    random.Random(f"{seed}:items").shuffle(order)
    for item in order:
        drawn = list(arms)
        random.Random(f"{seed}:{item}").shuffle(drawn)
        for arm in drawn:
            slots.extend((item, arm, sample) for sample in range(samples))
    return slots


def completion_seed(seed: int, item: str, sample: int) -> int:
    """The sampling seed of an item's sample: the same on every arm."""
    text = f"{seed}:{item}:{sample}".encode()
    return int(hashlib.sha256(text).hexdigest()[:8], 16) & 0x7FFFFFFF


def finished(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError:
                break  # a line cut short by an interruption: that completion is done again
    return records


def check_same(kept: list[dict[str, Any]], now: Mapping[str, Any]) -> None:
    differ = []
    for key in COMPARABLE:
        seen = {json.dumps(record.get(key)) for record in kept}
        if seen - {json.dumps(now.get(key))}:
            differ.append(f"{key} {', '.join(sorted(seen))} (now {json.dumps(now.get(key))})")
    if differ:
        raise ValueError(
            "The completions so far were made with other code or settings: "
            + "; ".join(differ)
            + ". Resume from a worktree of their commit with the same settings."
        )


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # …/v1
    model: str


def _post(endpoint: Endpoint, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    import httpx2

    url = f"{endpoint.base_url}/chat/completions"
    for attempt in range(4):
        try:
            response = httpx2.post(url, json=payload, timeout=timeout)
        except httpx2.TransportError as exc:
            if attempt == 3:
                raise ModelFailed(f"{url}: {exc}") from exc
            time.sleep(2**attempt)
            continue
        if response.status_code >= 500 or response.status_code == 429:
            if attempt == 3:
                raise ModelFailed(f"{url} answered {response.status_code}")
            time.sleep(2**attempt)
            continue
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data
    raise ModelFailed(url)


def run(
    folder: Path,
    endpoint: Endpoint,
    *,
    samples: int,
    seed: int,
    temperature: float,
    max_tokens: int,
    facts: Mapping[str, Any],
    log: Callable[[str], None] = print,
    timeout: float = 600.0,
    limit: int | None = None,
) -> tuple[int, int]:
    """Do the completions not yet in ``folder/completions.jsonl``; returns (done now,
    still to do). ``facts``: commit, code, model (sha256), server, threads."""
    frozen = load(folder)
    journal = folder / JOURNAL
    now = {
        **facts,
        # The server the prompts were frozen from asked for no confirmation.
        "confirmations": (frozen.manifest.get("server") or {}).get("CONFIRMATIONS"),
        "temperature": temperature,
        "maxTokens": max_tokens,
        "seed": seed,
    }
    kept = finished(journal)
    check_same(kept, now)
    slots = plan(list(frozen.items), samples, seed)
    done = {(r["item"], r["arm"], r["sample"]) for r in kept}
    todo = [slot for slot in slots if slot not in done]
    log(f"{len(todo)} of {len(slots)} completions to do ({len(kept)} kept in {journal}).")
    started = time.perf_counter()
    count = 0
    for item_id, arm, sample in todo[:limit]:
        prompt = frozen.prompts[(item_id, arm)]
        payload = {
            "model": endpoint.model,
            "messages": prompt["messages"],
            "tools": frozen.tools[prompt["tools"]],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": completion_seed(seed, item_id, sample),
        }
        clock = time.perf_counter()
        data = _post(endpoint, payload, timeout)
        latency = (time.perf_counter() - clock) * 1000
        message = dict(data["choices"][0]["message"])
        record = {
            "item": item_id,
            "arm": arm,
            "sample": sample,
            "seed": payload["seed"],
            "prompt": prompt["sha256"],
            "response": {
                key: message.get(key)
                for key in ("content", "tool_calls", "reasoning_content")
                if message.get(key)
            },
            "finishReason": data["choices"][0].get("finish_reason"),
            "usage": data.get("usage"),
            "latencyMs": round(latency, 1),
            "score": score(frozen.items[item_id], message),
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            **now,
        }
        with journal.open("a") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            os.fsync(out.fileno())
        count += 1
        elapsed = time.perf_counter() - started
        log(
            f"[{len(kept) + count}/{len(slots)} {elapsed / count:.1f} s each] {item_id} {arm} "
            f"#{sample} {'ok' if record['score']['correct'] else '--'}"
        )
    return count, len(todo) - count
