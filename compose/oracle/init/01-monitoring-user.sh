#!/bin/bash
# gvenzl/oracle-free runs the scripts in /container-entrypoint-initdb.d once,
# on the database's first start, as the oracle OS user with the environment
# set up (ORACLE_HOME, ORACLE_SID=FREE), after the PDB is open and the SYS
# password is set. An executable *.sh is run (a non-executable one would be
# sourced into the entrypoint: keep mode 0755); a *.sql would run as SYS in
# CDB$ROOT, not in FREEPDB1, hence this shell script. It creates the least-privilege
# monitoring user ORAMON from docs/oracle-monitoring-user.sql (mounted at
# /opt/monitoring, used unchanged) as a local user of the pluggable database
# FREEPDB1, then replaces the script's placeholder password with
# ORACLE_MONITOR_PASSWORD (fed through stdin, never on a command line).
set -euo pipefail
: "${ORACLE_MONITOR_PASSWORD:?ORACLE_MONITOR_PASSWORD must be set (compose/docker-compose.yml)}"
case "$ORACLE_MONITOR_PASSWORD" in *'"'*)
  echo "ORACLE_MONITOR_PASSWORD must not contain a double quote" >&2; exit 1;;
esac
echo "creating the monitoring user ORAMON in FREEPDB1 from /opt/monitoring/oracle-monitoring-user.sql"
sqlplus -s -L / as sysdba <<SQL
WHENEVER SQLERROR EXIT SQL.SQLCODE
SET VERIFY OFF
ALTER SESSION SET CONTAINER = FREEPDB1;
@/opt/monitoring/oracle-monitoring-user.sql
SET DEFINE OFF
ALTER USER oramon IDENTIFIED BY "${ORACLE_MONITOR_PASSWORD}";
EXIT
SQL
# The image's healthcheck.sh reports healthy as soon as FREEPDB1 is open, which
# is BEFORE this script runs; compose's healthcheck also waits for this marker
# (on the oradata volume, so it survives restarts), so oracle-exporter starts
# only once its user exists.
touch /opt/oracle/oradata/.monitoring-user-created
