"""A line that fits is printed without wrapping (:class:`lab.render.fitting.Hanging`'s short cut): the bytes must be
those the wrapping would print, styles, wide characters, trailing spaces and indents included."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from lab.render import fitting
from lab.render.fitting import Hanging

WORDS = st.sampled_from(["PASS", "race_two_requests", "(3/34)", "x", "  ", "一个场景", "ü", "a" * 30, " ", "FAIL:"])
PARTS = st.lists(st.tuples(WORDS, st.sampled_from(["", "bold", "red"])), min_size=1, max_size=8)


def _printed(line: Hanging, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system="truecolor", force_terminal=True)
    console.print(line)
    output = console.file.getvalue()
    assert isinstance(output, str)
    return output


@settings(max_examples=300, deadline=None)
@given(PARTS, st.sampled_from([0, 4]), st.sampled_from([20, 40, 80, 120]))
def test_a_line_that_fits_prints_as_its_wrapping_would(parts: list[tuple[str, str]], first: int, width: int) -> None:
    line = Hanging(Text.assemble(*parts), first=first, rest=4)
    short_cut = _printed(line, width)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fitting, "cell_len", lambda text: 10**9)  # never fits: always the wrapping path
        wrapped = _printed(line, width)
    assert short_cut == wrapped
