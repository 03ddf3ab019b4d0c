"""Secret masking: every form of every secret becomes ``***`` before trialbook cuts, escapes or writes it.

One :class:`Masker` per run holds every secret of the run (declared ``secrets:``, provider keys given in
agent options, the GitHub token) before the first trial starts. Captured text (agent output, tool calls,
check results, call logs) is masked where it enters trialbook, so everything built from it afterwards
(failure lines cut to length, JSON, JUnit, Markdown, GitHub outputs) only ever sees masked text. Structure
(JSON keys, XML markup, file names trialbook chooses) is never masked.
"""

from ._evidence import masked_call, masked_record, masked_result
from ._forms import MIN_FORM_LENGTH, secret_forms
from ._masker import MASK, Masker
from ._names import credential_items, is_credential_name
from ._policy import (
    SHORT_SECRET,
    WEAK_SECRET,
    ShortSecretWarning,
    enforce_lengths,
    length_problem,
    length_report,
    length_warning,
)
from ._stream import StreamMasker

__all__ = [
    "MASK",
    "MIN_FORM_LENGTH",
    "SHORT_SECRET",
    "WEAK_SECRET",
    "Masker",
    "ShortSecretWarning",
    "StreamMasker",
    "credential_items",
    "enforce_lengths",
    "is_credential_name",
    "length_problem",
    "length_report",
    "length_warning",
    "masked_call",
    "masked_record",
    "masked_result",
    "secret_forms",
]
