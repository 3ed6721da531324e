"""The decision-point study: the frozen items, the arms, the scorer's controls, the run.

The controls gate the run, on every arm: the oracle's own completions score 100% (a
check of the scorer), the idle agent's answer 0%, the keyword-stuffing answer 0% at the
trap points (and everywhere), and a flailing write 0%.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from demo_tests.conftest import Demo
from experiment.agents.idle import IDLE_ANSWER
from experiment.decision_points import run as dp_run
from experiment.decision_points.analysis import analyse
from experiment.decision_points.arms import ARMS, LISTS, system_message
from experiment.decision_points.freeze import EXCLUDED_TASKS, freeze, items_table
from experiment.decision_points.run import Endpoint, completion_seed, finished, load, plan
from experiment.decision_points.scoring import is_read, score
from experiment.reasons import STUFFED_ANSWER
from experiment.report import IncompleteRun

FOLDER = Path(__file__).parents[2] / "docs" / "experiment" / "decision-points"
FROZEN = load(FOLDER)
ITEMS = list(FROZEN.items.values())
TRAPS = [item for item in ITEMS if item["kind"] == "trap"]


def _body(message: dict[str, Any]) -> Any:
    return json.loads(message["content"])


def _has_lists(value: Any) -> bool:
    if isinstance(value, dict):
        return any(key in LISTS for key in value) or any(map(_has_lists, value.values()))
    if isinstance(value, list):
        return any(map(_has_lists, value))
    return False


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"function": function}]}


# --- the items --------------------------------------------------------------------------


def test_the_items_cover_the_tasks_write_steps_and_trap_points():
    tasks = {item["task"] for item in ITEMS}
    assert not tasks & set(EXCLUDED_TASKS)  # N1 waits for the live-affordances announcement
    assert len(ITEMS) >= 55 and len(TRAPS) >= 15
    # The trap points the audit named, each with its reason code.
    reasons = {item["task"]: set(item["expected"]["reasons"]) for item in TRAPS}
    assert reasons["P1"] == {"requires_supervisor"}
    assert reasons["P4"] == {"refund_window_expired"}
    assert reasons["P7"] == {"payment_not_authorized"}
    assert reasons["P9"] == {"refund_above_total"}
    assert reasons["Q5"] == {"budget_exhausted"}
    assert reasons["Q15"] == {"already_approved"}
    assert {"Q2", "Q4", "Q6", "Q10"} <= set(reasons)
    assert all(item["sha256"] == FROZEN.manifest["items"][item["id"]] for item in ITEMS)


# --- the arms ---------------------------------------------------------------------------


@pytest.mark.parametrize("arm", ARMS)
def test_every_arm_ends_with_the_read_of_the_object_concerned(arm: str):
    for item in ITEMS:
        messages = FROZEN.prompts[(item["id"], arm)]["messages"]
        assert messages[0] == {"role": "system", "content": system_message(arm)}
        call = messages[-2]["tool_calls"][0]["function"]
        obj = item["object"]
        assert call["name"] == f"get_{obj['resource']}"
        assert json.loads(call["arguments"]) == {obj["idArgument"]: obj["id"]}
        read = _body(messages[-1])
        assert (read["id"], read["version"], read["status"]) == (
            obj["id"],
            obj["version"],
            obj["status"],
        )


def test_the_arms_differ_in_the_lists_and_nothing_else():
    narrowed = 0
    for item in ITEMS:
        prompts = {arm: FROZEN.prompts[(item["id"], arm)] for arm in ARMS}
        shapes = {
            arm: [(m["role"], m.get("tool_calls")) for m in p["messages"][1:]]
            for arm, p in prompts.items()
        }
        assert len({json.dumps(shape) for shape in shapes.values()}) == 1
        a, b = prompts["A"]["messages"], prompts["B"]["messages"]
        wrong, focus = prompts["B-wrong"]["messages"], prompts["B-focus"]["messages"]
        assert focus[1:] == b[1:] and prompts["B-wrong"]["tools"] == prompts["B"]["tools"]
        for ma, mb, mw in zip(a[1:], b[1:], wrong[1:], strict=True):
            if ma["role"] != "tool":
                assert ma == mb == mw
                continue
            body_a, body_b, body_w = _body(ma), _body(mb), _body(mw)
            assert not _has_lists(body_a)
            if isinstance(body_b, dict) and "affordances" in body_b:
                assert body_a == {k: v for k, v in body_b.items() if k not in LISTS}
                assert {k: v for k, v in body_w.items() if k not in LISTS} == body_a
        # B's read states the truth the scorer uses; B-wrong's names other operations.
        last_b, last_w = _body(b[-1]), _body(wrong[-1])
        assert {e["name"] for e in last_b["affordances"]} == set(item["available"])
        assert {e["name"] for e in last_w["affordances"]} != set(item["available"])
        assert all(
            e.get("arguments", {}).get(item["object"]["idArgument"], item["object"]["id"])
            == item["object"]["id"]
            for e in last_w["affordances"]
        )
        # B-focus: B's tools narrowed to the reads, the creates and what was afforded so
        # far (all of B's where everything the user may do was afforded), the reads among
        # them and every operation the object read affords.
        names = {t["function"]["name"] for t in FROZEN.tools[prompts["B-focus"]["tools"]]}
        every = {t["function"]["name"] for t in FROZEN.tools[prompts["B"]["tools"]]}
        assert names <= every and f"get_{item['object']['resource']}" in names
        assert set(item["available"]) <= names
        narrowed += names < every
    assert narrowed >= len(ITEMS) // 2  # the manipulation is delivered on most items


# --- the scorer's controls, on every arm --------------------------------------------------


def _rate(completions: list[tuple[dict[str, Any], dict[str, Any]]]) -> float:
    return sum(score(item, message)["correct"] for item, message in completions) / len(completions)


@pytest.mark.parametrize("arm", ARMS)
def test_the_scorer_gives_the_oracle_all_and_the_controls_nothing(arm: str):
    oracle = [(item, item["oracle"]) for item in ITEMS]
    assert _rate(oracle) == 1.0
    idle = [(item, {"role": "assistant", "content": IDLE_ANSWER}) for item in ITEMS]
    assert _rate(idle) == 0.0
    stuffing = [(item, {"role": "assistant", "content": STUFFED_ANSWER}) for item in ITEMS]
    assert _rate(stuffing) == 0.0
    assert (
        _rate([(item, {"role": "assistant", "content": STUFFED_ANSWER}) for item in TRAPS]) == 0.0
    )
    # Flailing: the first write tool this arm shows (B-focus may show none: then the
    # user's first, a hidden real tool the host forwards), on the object, with an
    # argument no tool takes.
    flailing = []
    for item in ITEMS:
        shown = FROZEN.tools[FROZEN.prompts[(item["id"], arm)]["tools"]]
        names = [t["function"]["name"] for t in shown] + item["catalog"]
        writes = [name for name in names if not is_read(name)]
        arguments = {item["object"]["idArgument"]: item["object"]["id"], "bogus": 1}
        flailing.append((item, _call(writes[0], arguments)))
    assert _rate(flailing) == 0.0


def test_a_write_counts_only_as_the_oracle_made_it_within_the_constraints():
    [p6] = [i for i in ITEMS if i["task"] == "P6"]
    obj = p6["object"]
    assert p6["expected"]["tool"] == "cancel_order"
    ok = _call("cancel_order", {obj["idArgument"]: obj["id"], "reason": "customer_request"})
    assert score(p6, ok)["correct"] and not score(p6, ok)["refusedWrite"]
    # The task's first choice, which this order's affordance does not accept.
    refused = _call("cancel_order", {obj["idArgument"]: obj["id"], "reason": "payment_failure"})
    assert not score(p6, refused)["correct"] and score(p6, refused)["refusedWrite"]
    other = _call("cancel_order", {obj["idArgument"]: obj["id"] + 1, "reason": "customer_request"})
    assert not score(p6, other)["correct"]
    invented = _call("archive_order", {obj["idArgument"]: obj["id"]})
    assert score(p6, invented)["invented"] and not score(p6, invented)["correct"]
    # Written as text, as small models do, it is the same call.
    text = {
        "role": "assistant",
        "content": json.dumps(
            {
                "name": "cancel_order",
                "arguments": json.loads(ok["tool_calls"][0]["function"]["arguments"]),
            }
        ),
    }
    assert score(p6, text)["correct"]


def test_a_trap_counts_the_reason_alone_or_moving_on_where_the_oracle_did():
    [p1] = [i for i in TRAPS if i["task"] == "P1"]
    said = {"role": "assistant", "content": "It stays confirmed: it needs a supervisor."}
    assert score(p1, said)["correct"]
    wrong = {"role": "assistant", "content": "It stays: the refund window has expired."}
    assert not score(p1, wrong)["correct"]
    read_on = _call("get_order", {"orderId": p1["object"]["id"] + 1})
    assert not score(p1, read_on)["correct"]  # the oracle answered here: say why
    [moving] = [i for i in TRAPS if i["task"] == "Q10" and i["expected"]["movesOn"]]
    assert score(moving, _call("get_purchase_request", {"purchaseRequestId": 1}))["correct"]
    again = _call("get_purchase_request", {"purchaseRequestId": moving["object"]["id"]})
    assert not score(moving, again)["correct"] and score(moving, again)["reread"]


# --- the run --------------------------------------------------------------------------------


def test_the_plan_draws_arm_orders_and_gives_every_arm_the_same_seed():
    slots = plan([i["id"] for i in ITEMS], samples=2, seed=0)
    assert len(slots) == len(ITEMS) * len(ARMS) * 2 == len(set(slots))
    per_item = len(ARMS) * 2
    firsts = {slots[i][1] for i in range(0, len(slots), per_item)}
    assert len(firsts) > 1  # no arm always first
    # Amendment 1: whole items one after the other, an arm's samples together (so the
    # model's server reuses the prompt it has just evaluated).
    for start in range(0, len(slots), per_item):
        block = slots[start : start + per_item]
        assert len({item for item, _, _ in block}) == 1
        assert [sample for _, _, sample in block] == [0, 1] * len(ARMS)
        assert all(block[i][1] == block[i + 1][1] for i in range(0, per_item, 2))
    item = ITEMS[0]["id"]
    assert completion_seed(0, item, 0) != completion_seed(0, item, 1)


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "dp"
    folder.mkdir()
    for name in ("items.json", "prompts.jsonl", "tools.json", "MANIFEST.json"):
        shutil.copy(FOLDER / name, folder / name)
    return folder


FACTS = {"commit": "c1", "code": "d1", "model": "m", "server": "s", "threads": 1}


def test_the_run_is_resumable_refuses_other_code_and_no_analysis_before_it_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    folder = _copy(tmp_path)
    subset = {k: FROZEN.items[k] for k in list(FROZEN.items)[:3]}
    sent: list[dict[str, Any]] = []

    def oracle(endpoint: Endpoint, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        sent.append(payload)
        [item] = [
            i
            for i in FROZEN.items.values()
            if FROZEN.prompts[(i["id"], "A")]["messages"][1:] == payload["messages"][1:]
            or FROZEN.prompts[(i["id"], "B")]["messages"][1:] == payload["messages"][1:]
            or FROZEN.prompts[(i["id"], "B-wrong")]["messages"][1:] == payload["messages"][1:]
        ][:1]
        return {"choices": [{"message": item["oracle"], "finish_reason": "stop"}]}

    monkeypatch.setattr(dp_run, "_post", oracle)
    options = dict(samples=1, seed=0, temperature=0.7, max_tokens=768, log=lambda line: None)
    done, left = dp_run.run(folder, Endpoint("http://x/v1", "m"), facts=FACTS, limit=5, **options)
    assert (done, left) == (5, len(ITEMS) * 4 - 5)
    records = finished(folder / "completions.jsonl")
    assert [r["commit"] for r in records] == ["c1"] * 5 and all(
        r["score"]["correct"] for r in records
    )
    # The same item and sample: the same seed on every arm.
    seeds = {(r["item"], r["sample"]): set() for r in records}
    for payload, record in zip(sent, records, strict=True):
        seeds[(record["item"], record["sample"])].add(payload["seed"])
        assert record["prompt"] == FROZEN.prompts[(record["item"], record["arm"])]["sha256"]
    assert all(len(s) == 1 for s in seeds.values())
    with pytest.raises(ValueError, match="other code or settings"):
        dp_run.run(folder, Endpoint("http://x/v1", "m"), facts={**FACTS, "code": "d2"}, **options)
    with pytest.raises(IncompleteRun):
        analyse(records, len(ITEMS) * 4, FROZEN.items)
    done, left = dp_run.run(folder, Endpoint("http://x/v1", "m"), facts=FACTS, limit=3, **options)
    assert (done, left) == (3, len(ITEMS) * 4 - 8)
    assert subset  # the journal goes on where it stopped
    assert len(finished(folder / "completions.jsonl")) == 8


def test_a_changed_frozen_file_is_refused(tmp_path: Path):
    folder = _copy(tmp_path)
    with (folder / "items.json").open("a") as out:
        out.write(" ")
    with pytest.raises(ValueError, match="not the frozen file"):
        load(folder)


def test_the_analysis_of_a_complete_run_tests_the_three_hypotheses():
    # Four samples: A and B-wrong right on 1 (odd items: 2), B and B-focus on 2 (3).
    records = []
    for number, item in enumerate(ITEMS):
        for arm in ARMS:
            right = (2 if arm in ("B", "B-focus") else 1) + number % 2
            records.extend(
                {
                    "item": item["id"],
                    "arm": arm,
                    "sample": sample,
                    "score": {"correct": sample < right},
                }
                for sample in range(4)
            )
    found = analyse(records, len(records), FROZEN.items)
    assert set(found) == {"H1", "H2", "H3", "glmm"}
    for name in ("H1", "H2", "H3"):
        assert found[name]["differencePoints"] == pytest.approx(25.0)
        assert found[name]["holmP"] < 0.05 and found[name]["exactP"] <= found[name]["holmP"]
        # The GLMM agrees: B's log odds ratio over A, about log 3 (25->50%, 50->75%).
        assert found[name]["glmm"]["logOddsRatio"] == pytest.approx(math.log(3), abs=0.15)
        assert found[name]["glmm"]["p"] < 0.05
    assert found["glmm"]["sigma"] < 1  # the items differ little here


def test_nothing_is_analysed_before_the_run_is_complete():
    records = [
        {"item": i["id"], "arm": "A", "sample": 0, "score": {"correct": True}} for i in ITEMS
    ]
    with pytest.raises(IncompleteRun, match="no analysis before the run is complete"):
        analyse(records, len(ITEMS) * len(ARMS), FROZEN.items)


# --- the items are what the code takes from the oracle ------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_freezing_again_takes_the_same_items(live_server: Any, demo: Demo, tmp_path: Path):
    manifest = freeze(tmp_path, base_url=live_server.url, log=lambda line: None)
    assert manifest["kinds"] == FROZEN.manifest["kinds"]
    again = {item["id"]: item for item in json.loads((tmp_path / "items.json").read_text())}
    assert set(again) == set(FROZEN.items)
    for key, item in FROZEN.items.items():
        other = again[key]
        assert (other["kind"], other["user"], other["object"]["status"]) == (
            item["kind"],
            item["user"],
            item["object"]["status"],
        )
        assert other["expected"].get("tool") == item["expected"].get("tool")
        assert other["expected"].get("reasons") == item["expected"].get("reasons")


def test_the_preregistration_names_the_frozen_files_and_every_item_by_its_hash():
    text = (FOLDER / "preregistration.md").read_text()
    for name, sha256 in FROZEN.manifest["files"].items():
        assert f"`{name}` `{sha256}`" in text
    for key, sha256 in FROZEN.manifest["items"].items():
        assert f"| {key} | " in text and f"`{sha256[:12]}`" in text, key
    assert items_table(ITEMS) in text  # `manage.py decision_points freeze` prints it
    assert FROZEN.manifest["server"] == {"CONFIRMATIONS": False}
    assert 'AFFORDANCES["CONFIRMATIONS"] = False' in text
    # The system messages quoted are the ones sent.
    for arm in ARMS:
        for line in system_message(arm).splitlines():
            assert line in text, (arm, line)


def test_the_report_is_written_from_the_complete_journal_only_with_its_deviations(
    tmp_path: Path,
):
    from experiment.decision_points.report import write_report

    folder = _copy(tmp_path)
    slots = plan(list(FROZEN.items), samples=1, seed=0)
    idle = {"role": "assistant", "content": IDLE_ANSWER}
    records = []
    for item_id, arm, sample in slots:
        item = FROZEN.items[item_id]
        response = item["oracle"] if arm in ("B", "B-focus") else idle
        records.append(
            {
                "item": item_id,
                "arm": arm,
                "sample": sample,
                "response": response,
                "score": score(item, response),
                **FACTS,
                "confirmations": False,
            }
        )
    journal = folder / "completions.jsonl"
    journal.write_text("".join(json.dumps(r) + "\n" for r in records[:-1]))
    with pytest.raises(IncompleteRun, match=f"{len(slots) - 1} of {len(slots)} planned"):
        write_report(folder, samples=1)
    assert not (folder / "report.md").exists()
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = write_report(folder, samples=1)["markdown"].read_text()
    assert "## Deviations from the plan\n\nNone recorded." in report
    assert f"| B | {len(ITEMS)}/{len(ITEMS)} " in report and f"| A | 0/{len(ITEMS)} " in report
    assert "| H1 | B vs A | +100.0 " in report
    # A recorded score the scorer of this commit does not give is a deviation.
    records[0]["score"] = {**records[0]["score"], "correct": not records[0]["score"]["correct"]}
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = write_report(folder, samples=1)["markdown"].read_text()
    assert "1 completion(s) score differently" in report
