"""What the bridge and the app agree on, with no dependency on either: event names, run
states, the reducer that turns events into a view, and how events are stored as log rows.

Everything here is plain Python (no reflex, no database, no hermes)."""
