"""A synthetic database host for dbhost-exporter: sysfs/procfs trees with SCSI and
dm-multipath LUNs, NVMe, ZFS ARC/L2ARC and Oracle processes (``tree``, ``procs``).

The tests build their fixtures with it, and ``make run DEMO=1`` serves an
animated tree (counters advanced one step per interval) so every host panel and
host alert has data on a machine without SAN LUNs, ZFS or Oracle."""
