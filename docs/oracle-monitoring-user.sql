-- Least-privilege monitoring user for oracle-exporter.
--
-- Run as SYS (or a user holding these objects WITH GRANT OPTION). The exporter only
-- SELECTs from the dynamic performance views below (one view per statement, see
-- exporters/oracle_exporter/queries.py); it needs no SELECT ANY DICTIONARY, no
-- SELECT_CATALOG_ROLE and no access to any table. The public synonyms GV$X / V$X
-- point to the SYS views GV_$X / V_$X, which is what the grants must name.
-- tests/oracle/test_sql_catalog.py keeps this grant list equal to the views the
-- exporter queries.
--
-- Multitenant: create a common user (C##ORAMON) in CDB$ROOT and add CONTAINER=ALL
-- to every statement, or create a local user in one PDB as written here.
-- Releases before 12.1.0.2 have no GV_$EVENT_HISTOGRAM_MICRO: skip that grant there
-- (the exporter falls back to GV$EVENT_HISTOGRAM).
-- Replace the password; the exporter reads it from a file or an environment variable.

CREATE USER oramon IDENTIFIED BY "change-me-Str0ng";
GRANT CREATE SESSION TO oramon;

GRANT SELECT ON SYS.GV_$SYSTEM_EVENT TO oramon;
GRANT SELECT ON SYS.GV_$EVENT_HISTOGRAM TO oramon;
GRANT SELECT ON SYS.GV_$EVENT_HISTOGRAM_MICRO TO oramon;
GRANT SELECT ON SYS.GV_$SYSSTAT TO oramon;
GRANT SELECT ON SYS.GV_$SYS_TIME_MODEL TO oramon;
GRANT SELECT ON SYS.GV_$LOG TO oramon;
GRANT SELECT ON SYS.GV_$SYSTEM_PARAMETER TO oramon;
GRANT SELECT ON SYS.GV_$PGASTAT TO oramon;
GRANT SELECT ON SYS.GV_$LATCH TO oramon;
GRANT SELECT ON SYS.GV_$SYSMETRIC TO oramon;
GRANT SELECT ON SYS.GV_$INSTANCE TO oramon;
GRANT SELECT ON SYS.V_$DATABASE TO oramon;
GRANT SELECT ON SYS.GV_$PROCESS TO oramon;
-- Sessions and instance health (collectors sessions, resource_limits, tablespaces, recovery_area,
-- dataguard, archive_dest, asm). The CDB_ views exist from 12.1; before that the exporter reads
-- the DBA_ views (skip the CDB_ grants and V_$CONTAINERS there). A common user in CDB$ROOT also
-- needs to see every container's rows: ALTER USER C##ORAMON SET CONTAINER_DATA=ALL CONTAINER=CURRENT;
GRANT SELECT ON SYS.GV_$SESSION TO oramon;
GRANT SELECT ON SYS.GV_$RESOURCE_LIMIT TO oramon;
GRANT SELECT ON SYS.CDB_TABLESPACE_USAGE_METRICS TO oramon;
GRANT SELECT ON SYS.CDB_TABLESPACES TO oramon;
GRANT SELECT ON SYS.V_$CONTAINERS TO oramon;
GRANT SELECT ON SYS.DBA_TABLESPACE_USAGE_METRICS TO oramon;
GRANT SELECT ON SYS.DBA_TABLESPACES TO oramon;
GRANT SELECT ON SYS.V_$RECOVERY_FILE_DEST TO oramon;
GRANT SELECT ON SYS.V_$DATAGUARD_STATS TO oramon;
GRANT SELECT ON SYS.GV_$ARCHIVE_DEST TO oramon;
GRANT SELECT ON SYS.V_$ASM_DISKGROUP_STAT TO oramon;
-- Per-PDB statistics (the opt-in pdb collector; 12.2 and later; from CDB$ROOT with CONTAINER_DATA=ALL
-- they list every PDB). Skip them where the pdb collector stays off.
GRANT SELECT ON SYS.GV_$CON_SYS_TIME_MODEL TO oramon;
GRANT SELECT ON SYS.GV_$CON_SYSSTAT TO oramon;
GRANT SELECT ON SYS.GV_$CON_SYSTEM_EVENT TO oramon;
GRANT SELECT ON SYS.GV_$CON_EVENT_HISTOGRAM_MICRO TO oramon;
GRANT SELECT ON SYS.GV_$CON_SYSMETRIC TO oramon;
