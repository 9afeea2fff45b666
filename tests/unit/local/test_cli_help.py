"""`agent --help` and each command's help: every argument explained, the formats ingest really reads,
the exit codes, and what chat tells the user after a hand-off."""

from __future__ import annotations

import argparse

import pytest

from agent_local import cli


def _parsers(parser: argparse.ArgumentParser, name: str = "agent"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {child}")


def test_every_argument_of_every_command_has_a_help_text():
    missing = [f"{name}: {action.dest}" for name, parser in _parsers(cli.build_parser())
               for action in parser._actions
               if not isinstance(action, argparse._SubParsersAction) and not (action.help or "").strip()]
    assert missing == []


def test_the_top_level_help_says_what_the_command_is_and_what_to_run_first():
    text = cli.build_parser().format_help()
    assert "agent_local" not in text and "local stack" in text and "$AGENT_HOME" in text
    first = text.split("first commands to try")[1]
    for command in ("agent ingest samples/corpus/sepehr --tenant sepehr", "agent chat --tenant sepehr --user",
                    "agent serve"):
        assert command in first


@pytest.mark.parametrize("command", ["ingest", "eval"])
def test_the_document_formats_in_the_help_are_those_ingest_reads(command):
    from insurance_ingest.sniff import BY_SUFFIX

    parser = dict(_parsers(cli.build_parser()))[f"agent {command}"]
    text = " ".join(parser.format_help().split())
    assert ".md/.txt" not in text
    for kind in set(BY_SUFFIX.values()):  # each format: at least one of its names is given
        assert any(suffix in text for suffix, of in BY_SUFFIX.items() if of == kind), kind


def test_ingest_documents_its_exit_code_for_skipped_files():
    parser = dict(_parsers(cli.build_parser()))["agent ingest"]
    assert f"{cli.EXIT_SKIPPED}  the readable files were ingested, some were skipped" in parser.format_help()
    assert cli.EXIT_SKIPPED not in (0, 1, 2)


@pytest.mark.parametrize(("reply", "hinted"), [
    ({"status": "escalate", "reason": "user_requested"}, True),
    ({"status": "escalate", "reason": "system_error"}, True),
    ({"status": "refused", "error": "thread_handed_off"}, True),
    ({"status": "refused", "error": "invalid_input"}, False),
    ({"status": "answer"}, False),
    ({"status": "clarify"}, False),
])
def test_chat_tells_the_user_to_start_a_new_thread_after_a_hand_off(reply, hinted):
    hint = cli.handoff_hint(reply)
    assert (hint is not None and "/new" in hint) == hinted
