-- What the labelled dataset holds, per modality and topology: items, systems, benchmarks,
-- and the largest share any single agent has of a system's gold agents (the majority-agent
-- shortcut's ceiling).
WITH items AS (
    SELECT l.run_id, l.decisive_agent, l.split, r.benchmark, r.system, r.modality, r.topology
    FROM labels l JOIN runs r USING (run_id)
), agent_share AS (
    SELECT system, max(n) / sum(n) AS top_agent_share
    FROM (SELECT system, decisive_agent, count(*) AS n FROM items GROUP BY ALL)
    GROUP BY system
)
SELECT i.modality, i.topology, count(*) AS items,
       count(DISTINCT i.benchmark) AS benchmarks, count(DISTINCT i.system) AS systems,
       count(*) FILTER (WHERE split = 'train') AS train,
       count(*) FILTER (WHERE split = 'dev') AS dev,
       count(*) FILTER (WHERE split = 'test') AS test,
       max(a.top_agent_share) AS max_top_agent_share
FROM items i JOIN agent_share a USING (system)
GROUP BY ALL
ORDER BY i.modality, i.topology
