"""Helpers shared by the test tree (``tests/`` is on ``sys.path`` through its conftest.py).

``support.servers``: free loopback ports, real servers in subprocesses and threads.
"""
