-- Deletes one job the bulk way (clean, drain, obliterate; BullMQ's removeJob with hard set): unlinked
-- hard from its parent, its deduplication window ended if it owns it, its keys deleted. The caller
-- takes its id out of the structure that held it; no event is written.
-- @include detachFromParent
-- @include parentPrefixOf
-- @include releaseDeduplicationKey
-- @include removeJobKeys
local function deleteJob(prefix, jobId, parentKey, parentField, dedupId)
  local jobKey = prefix .. jobId
  detachFromParent(jobKey, parentKey, parentPrefixOf(parentField), true, prefix)
  releaseDeduplicationKey(prefix, jobId, dedupId)
  removeJobKeys(jobKey)
end
