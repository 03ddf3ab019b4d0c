"""trialbook.runner."""
