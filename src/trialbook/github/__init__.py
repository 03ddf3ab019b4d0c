"""trialbook.github."""
