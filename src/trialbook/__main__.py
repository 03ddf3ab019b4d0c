"""``python -m trialbook``: the same command line as the ``trialbook`` script."""

from trialbook.cli import main

main()
