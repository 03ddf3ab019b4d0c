"""trialbook.assertions."""
