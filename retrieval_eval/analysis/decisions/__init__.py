"""Decisions: what the analyses conclude. :mod:`.gates` (pass/fail rules on a report),
:mod:`.report` (the spec's JSON report) and :mod:`.compare` (paired comparison of systems, with
the tests and corrections of :mod:`..stats`).
"""
