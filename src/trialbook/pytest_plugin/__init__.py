"""trialbook.pytest_plugin."""
