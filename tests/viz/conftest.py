"""The browser tests say why they were skipped, whatever the ``-r`` option (issue 28, item 6).

pytest's summary line counts skips but names no reason unless asked with ``-rs``; a browser test
skipped for want of Chromium would then pass unnoticed, so its reason is printed beside the
summary, once for all of them.
"""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter):
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if "test_browser.py" not in report.nodeid:
            continue
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{count} browser test{'s' if count != 1 else ''} skipped: {reason}",
                                    yellow=True)
