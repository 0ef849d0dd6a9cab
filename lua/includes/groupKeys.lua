-- The keys of a queue's groups (BullMQ Pro's "groups", docs/groups.md), all nimbusq's own under the
-- queue prefix {P}: `nq:groups` ZSET, the groups with ready jobs in round-robin order (score: the
-- turn they were last served or joined); `nq:gc` STRING, the counter those turns and the job scores
-- come from; `nq:g:<gid>` ZSET, a group's ready jobs, score priority * 2^32 + 2^31 ± turn (FIFO,
-- lifo before them, handed-back jobs first); `nq:gdelayed` ZSET, grouped delayed jobs, BullMQ's
-- delayed score; `nq:gpaused` SET, paused groups; `nq:grun` HASH, running jobs per group;
-- `nq:gl:<gid>` STRING, a group's rate-limit window count (PX the window); `nq:glimited` ZSET,
-- rate-limited groups by when their limit ends; `nq:ginbox` LIST, grouped jobs made ready by a call
-- that could not name their group's key (drainGroupInbox).
-- BullMQ reads none of these: a plain BullMQ worker never takes a grouped job.
local function groupKeys(prefix)
  return { ring = prefix .. "nq:groups", counter = prefix .. "nq:gc", delayed = prefix .. "nq:gdelayed",
    paused = prefix .. "nq:gpaused", running = prefix .. "nq:grun", jobs = prefix .. "nq:g:",
    limiter = prefix .. "nq:gl:", limited = prefix .. "nq:glimited", inbox = prefix .. "nq:ginbox" }
end
