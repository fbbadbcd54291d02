-- The size upsertFile declared (issue #24): an upload may not exceed it, and the upload quotas count it while the upload
-- is pending (README "Upload quotas"). NULL on rows from before this migration: no declared bound, nothing reserved.
-- Keep this file in step with ../sqlite/0021_file_declared_size.sql.
ALTER TABLE files ADD COLUMN declared_size BIGINT;
