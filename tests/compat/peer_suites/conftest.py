"""The peer suites are test data: run by ``tests/compat/test_peer_suites.py`` in a pytest of
their own, never collected by this suite."""

collect_ignore_glob = ["openevals-*", "agentevals-*", "peer_*.py"]
