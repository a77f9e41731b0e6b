"""The monitoring stack on one machine: ``make run`` (``python -m stack.run``),
the local webhook receiver, config rendering shared with compose and the
end-to-end tests, and the process management they all use (``stack.procs``)."""
