"""trialbook.report."""
