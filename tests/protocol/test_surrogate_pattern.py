"""The lone-surrogate pattern is written with ``re`` escapes (compiled builds cannot hold a
surrogate literal); it must match exactly what the code-point class matched."""

from __future__ import annotations

import random
import re

from elicitguard.protocol import surrogates

# The pattern as it was written before: the code points themselves, built with chr().
_CODE_POINTS = re.compile("[" + chr(0xD800) + "-" + chr(0xDFFF) + "]")


def test_every_code_point_near_the_surrogate_block_matches_alike() -> None:
    for code in range(0xD000, 0xE100):
        text = f"a{chr(code)}b"
        assert bool(surrogates._SURROGATE.search(text)) == bool(_CODE_POINTS.search(text)), hex(
            code
        )
        assert surrogates._SURROGATE.sub("\ufffd", text) == _CODE_POINTS.sub("\ufffd", text)


def test_generated_strings_are_cleaned_alike() -> None:
    rng = random.Random(20261202)
    alphabet = [
        chr(c)
        for c in (0x41, 0xE9, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0x1F600, 0xFFFD)
    ]
    for _ in range(2_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        assert surrogates._clean(text) == _CODE_POINTS.sub("\ufffd", text)
    assert surrogates._clean("x" + chr(0xD800)) == "x\ufffd"  # a wrong change would fail here
