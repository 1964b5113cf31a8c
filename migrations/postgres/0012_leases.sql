-- Ownership leases of cluster mode (several server nodes on one Postgres): the node that runs a
-- match (or a lobby), until when, and under which epoch. A node takes a lease that is absent or
-- expired (the epoch goes up by one), renews it while it runs the thing, and writes a match's
-- log only while its lease holds under the epoch it took (the fence, checked and row-locked in
-- the append's own transaction). Expiry is by the database's clock (`now()`), never a node's.
-- A released lease keeps its row (its expiry set to -infinity), so the epoch never goes back.
CREATE TABLE leases (
    kind TEXT NOT NULL CHECK (kind IN ('match', 'lobby')),
    id UUID NOT NULL,
    node_id TEXT NOT NULL,
    epoch BIGINT NOT NULL CHECK (epoch > 0),
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, id)
);
