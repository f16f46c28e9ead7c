"""The console's word wrapping: at the width, between words, the same whether text arrives whole or in pieces."""

from __future__ import annotations

import io

import pytest

from lab.terminal import Wrapper


def _wrap(pieces: list[str], width: int, indent: int = 0) -> str:
    out = io.StringIO()
    wrapper = Wrapper(out, width, indent=indent)
    for piece in pieces:
        wrapper.feed(piece)
    wrapper.end()
    return out.getvalue()


TEXT = "the quick brown fox jumps over the lazy dog, twice over"


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(TEXT)])
def test_pieces_of_any_size_wrap_as_the_whole(size: int) -> None:
    pieces = [TEXT[n : n + size] for n in range(0, len(TEXT), size)]
    assert _wrap(pieces, 16) == _wrap([TEXT], 16) == "the quick brown\nfox jumps over\nthe lazy dog,\ntwice over\n"


def test_a_word_longer_than_the_line_is_kept_whole_on_its_own() -> None:
    assert (
        _wrap(["see https://example.com/a/very/long/path now"], 12)
        == "see\nhttps://example.com/a/very/long/path\nnow\n"
    )


def test_newlines_and_tabs_are_kept_and_no_line_ends_in_a_space() -> None:
    assert _wrap(["a\tb  \nc   d   "], 80) == "a\tb\nc   d\n"


def test_wide_characters_count_two_cells_and_break_between() -> None:
    out = _wrap(["你好世界你好世界"], 9)
    assert out == "你好世界\n你好世界\n"


def test_continuations_are_indented() -> None:
    assert _wrap(["you: one two three four"], 10, indent=2) == "you: one\n  two\n  three\n  four\n"


def test_nothing_written_ends_no_line() -> None:
    assert _wrap([], 10) == "" and _wrap(["   "], 10) == ""
