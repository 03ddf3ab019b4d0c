import re

import pytest

from trialbook.assertions import Pattern


@pytest.mark.parametrize(
    ("pattern", "line", "matches"),
    [
        ("neon", "neon", True),
        ("neon", "neon deploy", True),
        ("neon", "neonx", False),
        ("neon", "neonx deploy", False),
        ("neon deploy", "neon deploy", True),
        ("neon deploy", "neon deploy --prod", True),
        ("neon deploy", "neon deployment", False),
        ("neon deploy", "npx neon deploy", False),
        ("neon deploy", "neon", False),
        ("a.b", "axb", False),
        ("/usr/bin/neon", "/usr/bin/neon init", True),
        ("/", "/", True),
        ("/neon deploy/", "npx neon deploy --prod", True),
        ("/neon/", "neonx", True),
        ("/^neon$/", "neon", True),
        ("/^neon$/", "neon deploy", False),
        ("/neon init .*--project-id/", "neon init --org o --project-id p1", True),
        ("/neon init .*--project-id/", "neon init --org o", False),
        ("/a.b/", "axb", True),
    ],
)
def test_call_matching_rules(pattern: str, line: str, matches: bool) -> None:
    assert Pattern.parse(pattern).matches_call(line) is matches


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/[unclosed/", "/[unclosed/ is not a valid regular expression"),
        ("/(a/", "is not a valid regular expression"),
        ("//", "is empty"),
        ("", "the pattern is empty"),
        ("   ", "the pattern is empty"),
    ],
)
def test_bad_patterns_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Pattern.parse(text)


def test_text_search_is_substring_or_regex() -> None:
    text = "A=1\nDATABASE_URL=postgres://x\n"
    assert Pattern.parse("DATABASE_URL=").search_text(text) == 4
    assert Pattern.parse("/^DATABASE_URL=postgres:/").search_text(text) is None  # no MULTILINE flag
    assert Pattern.parse("/DATABASE_URL=postgres:/").search_text(text) == 4
    assert Pattern.parse("database_url").search_text(text) is None


def test_compiled_regexes_keep_their_flags() -> None:
    pattern = Pattern.of(re.compile("neon deploy", re.IGNORECASE))
    assert pattern.matches_call("NEON DEPLOY --prod")
    assert pattern.text == "/neon deploy/"
    assert pattern.to_json() == {"regex": "neon deploy", "flags": int(re.IGNORECASE | re.UNICODE)}
    assert Pattern.of("/x/").to_json() == "/x/"
    assert Pattern.of(re.compile("x")).to_json() == "/x/"
