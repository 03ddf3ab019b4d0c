"""trialbook.spec."""
