"""A huge observation is held once, not once per step (issue 24 finding 7, docs/evaluation.md §5.6).

A result line repeats a tool observation in every later step's ``inference_input``; these tests check
the structural properties that keep memory from following that shape: the parsed line holds one
string object for the repeated text, the reader keeps no reference to a line it handed over, and a
large record is written in pieces whose bytes are those of the whole-line path.
"""

from __future__ import annotations

import json
import sys

import pytest

from wildtoolbench.bench.io import SHARE_LINES_FROM, SHARED_STRING_FROM, iter_jsonl, iter_jsonl_spans, loads_json
from wildtoolbench.bench.schema import _too_deep
from wildtoolbench.common.files import STREAM_LINES_FROM, dumps_line, line_chunks, strings_over
from wildtoolbench.runner.store import ResultFile

BIG = "x" * SHARE_LINES_FROM + "é"  # above the shared-string size; non-ASCII like a real observation


def _record(observation: str, steps: int = 7) -> dict:
    message = {"role": "tool", "content": observation, "tool_call_id": "call_0"}
    log = {
        f"step_{s}": {"inference_input": {"messages": [{"role": "user", "content": "hi"}, dict(message)]}}
        for s in range(steps)
    }
    return {
        "id": "wild_tool_bench_1",
        "model_name": "m",
        "result": [{"inference_log": log, "tags": [observation, "y"]}],
    }


def _big_strings(value) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) >= SHARED_STRING_FROM:
            found.append(item)
    return found


def test_a_long_line_holds_each_repeated_string_once():
    text = json.dumps(_record(BIG), ensure_ascii=False)
    assert len(text) >= SHARE_LINES_FROM
    value = loads_json(text)
    assert value == json.loads(text)
    strings = _big_strings(value)
    assert len(strings) == 8  # seven steps and the list entry
    assert len({id(s) for s in strings}) == 1  # one object, not eight copies


def test_a_short_line_is_parsed_as_json_loads_does():
    text = json.dumps(_record("short"))
    assert loads_json(text) == json.loads(text)
    assert loads_json(text.encode()) == json.loads(text)


@pytest.mark.parametrize("reader", [iter_jsonl_spans, iter_jsonl])
def test_the_reader_keeps_no_reference_to_the_line_it_gave(tmp_path, reader):
    path = tmp_path / "result.jsonl"
    path.write_text("\n".join(json.dumps({"id": str(i), "v": "z" * 1000 + str(i)}) for i in range(3)) + "\n \n")
    for item in reader(path):
        text = item[-1]
        del item
        assert sys.getrefcount(text) == 2  # this name and getrefcount's argument: the reader holds none


def test_large_records_are_written_in_pieces_with_the_whole_line_bytes():
    record = _record(BIG)
    assert strings_over(record, STREAM_LINES_FROM)
    pieces = list(line_chunks(record))
    assert len(pieces) > 1
    assert max(len(p) for p in pieces) < len(BIG.encode()) + (1 << 20) + 16  # never the whole line at once
    assert b"".join(pieces) == (dumps_line(record) + "\n").encode("utf-8")
    small = {"id": "a", "v": [1, 2.5, None, True, {"k": "é"}]}
    assert not strings_over(small, STREAM_LINES_FROM)
    assert b"".join(line_chunks(small)) == b"".join(line_chunks(small, large=True))


def test_a_lone_surrogate_in_a_large_record_reads_back_the_same():
    record = {"id": "a", "big": BIG, "reply": "bad \ud800 text"}
    data = b"".join(line_chunks(record, large=True))
    assert json.loads(data) == record
    assert b"\\ud800" in data


def test_the_result_file_streams_a_large_record_and_keeps_its_index(tmp_path):
    results = ResultFile(tmp_path / "result.jsonl")
    results.scan()
    small = {"id": "wild_tool_bench_2", "model_name": "m", "result": "Error during inference: x"}
    big = _record(BIG * 3)
    results.append_many([small, big])
    lines = (tmp_path / "result.jsonl").read_bytes().splitlines(keepends=True)
    assert lines == [(dumps_line(small) + "\n").encode(), (dumps_line(big) + "\n").encode()]
    assert [info.id for info in results.finalize()] == ["wild_tool_bench_1", "wild_tool_bench_2"]
    assert json.loads((tmp_path / "result.jsonl").read_text().splitlines()[0]) == big


def test_a_record_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path):
    results = ResultFile(tmp_path / "result.jsonl")
    results.append_many([{"id": "a", "v": 1}])
    before = (tmp_path / "result.jsonl").read_bytes()
    bad = {"id": "b", "big": BIG * 3, "z": object()}
    with pytest.raises(TypeError):
        results.append_many([{"id": "c", "v": 2}, bad])
    assert (tmp_path / "result.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("text", "limit", "deep"),
    [
        ("[" * 101 + "]" * 101, 100, True),
        ('["' + "[" * 200 + '"]', 100, False),
        ('["a\\"[[", ' + "[" * 99 + "]" * 99 + "]", 100, False),
        ('["\\\\"' + ",[" * 100 + "]" * 100 + "]", 100, True),
        ('"\\a{{\\"\\', 0, False),  # an unterminated string ending in a backslash
        ('{"a":' * 101 + "1" + "}" * 101, 100, True),
    ],
)
def test_nesting_is_counted_outside_strings(text, limit, deep):
    assert _too_deep(text, limit) is deep
