"""trialbook.history."""
