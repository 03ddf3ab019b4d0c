"""trialbook.select."""
