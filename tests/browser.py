"""How tests and benchmarks start Debian's chromium (never `playwright install` here)."""

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps trying hosts this machine cannot
# reach.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
