"""The starter app's entry point."""

print("hello from the starter app")
