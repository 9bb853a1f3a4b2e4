"""One browser tab's live view of a run, in plain Python (no reflex): `LiveFeed` turns a
run's events into small state patches and new-text scripts for the page."""
