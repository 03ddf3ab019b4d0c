import io

from trialbook.github import (
    add_mask_lines,
    annotation,
    emit_annotation,
    escape_data,
    escape_property,
    mask_secrets,
)


def test_escape_data_and_property() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("evals/a,b: c%") == "evals/a%2Cb%3A c%25"


def test_error_annotation_with_file_line_title() -> None:
    line = annotation(
        "error",
        "2/3 trials failed\nneon deploy never ran",
        file="evals/setup, neon.eval.yaml",
        line=12,
        title="setup/neon × claude-code: fail",
    )
    assert line == (
        "::error file=evals/setup%2C neon.eval.yaml,line=12,title=setup/neon × claude-code%3A fail"
        "::2/3 trials failed%0Aneon deploy never ran"
    )


def test_annotation_without_properties() -> None:
    assert annotation("notice", "nothing to run") == "::notice::nothing to run"
    assert annotation("warning", "x", line=3, end_line=5, col=2) == "::warning line=3,endLine=5,col=2::x"


def test_emit_annotation_writes_one_line() -> None:
    out = io.StringIO()
    emit_annotation("error", "bad", file="a.eval.yaml", line=1, stream=out)
    assert out.getvalue() == "::error file=a.eval.yaml,line=1::bad\n"


def test_multi_line_secret_is_masked_line_by_line() -> None:
    assert add_mask_lines("-----BEGIN KEY-----\nabc123\n\n-----END KEY-----\n") == [
        "::add-mask::-----BEGIN KEY-----",
        "::add-mask::abc123",
        "::add-mask::-----END KEY-----",
    ]


def test_secret_with_percent_is_masked_in_both_forms() -> None:
    assert add_mask_lines("p%40ss") == ["::add-mask::p%40ss", "::add-mask::p%2540ss"]


def test_mask_secrets_skips_empty_values_and_counts() -> None:
    out = io.StringIO()
    assert mask_secrets(["sk-one", "", "  ", "two\nthree"], stream=out) == 3
    assert out.getvalue() == "::add-mask::sk-one\n::add-mask::two\n::add-mask::three\n"
