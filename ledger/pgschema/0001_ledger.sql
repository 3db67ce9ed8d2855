-- fiscal402 ledger on PostgreSQL, schema version 1 (ledger/pg.go).
-- Every key the bbolt store keeps as bytes is bytea here, so that byte
-- order (memcmp) is key order, as in bbolt, and keys may hold NUL.

-- meta: origin, the pinned public keys (key:<name>), the layout version.
CREATE TABLE ledger_meta (
    name  text PRIMARY KEY,
    value text NOT NULL
);

-- log_head is the single sequencer of the log: every commit (and every
-- side-data update) of every replica takes its row lock (SELECT … FOR
-- UPDATE) for the length of its transaction.
CREATE TABLE log_head (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    size       bigint  NOT NULL CHECK (size >= 0),
    frontier   bytea   NOT NULL, -- right edge: the hashes of the set bits of size, lowest level first
    checkpoint bytea   NOT NULL, -- the signed checkpoint of size
    dict_id    bigint  NOT NULL,
    dict_cut   bigint  NOT NULL
);

CREATE TABLE entries (
    idx  bigint PRIMARY KEY CHECK (idx >= 0),
    id   bytea  NOT NULL UNIQUE,
    blob bytea  NOT NULL
);

CREATE TABLE hashes (
    idx  bigint PRIMARY KEY CHECK (idx >= 0),
    hash bytea  NOT NULL CHECK (length(hash) = 32)
);

CREATE TABLE checkpoints (
    size bigint PRIMARY KEY CHECK (size >= 0),
    note bytea  NOT NULL
);

CREATE TABLE claims (
    space       bytea  NOT NULL,
    key         bytea  NOT NULL,
    idx         bigint NOT NULL,
    fingerprint bytea  NOT NULL,
    PRIMARY KEY (space, key)
);

CREATE TABLE postings (
    ix  bytea NOT NULL,
    key bytea NOT NULL,
    id  bytea NOT NULL,
    PRIMARY KEY (ix, key)
);

CREATE TABLE side (
    bucket bytea NOT NULL,
    key    bytea NOT NULL,
    value  bytea NOT NULL,
    PRIMARY KEY (bucket, key)
);

CREATE TABLE sequences (
    name bytea  PRIMARY KEY,
    n    bigint NOT NULL
);

CREATE TABLE dicts (
    id      bigint PRIMARY KEY CHECK (id > 0 AND id < 4294967296),
    cut_at  bigint NOT NULL,
    content bytea  NOT NULL
);

-- leases: who does a piece of background work until when (database time),
-- so that every replica may run the loop and one does the work.
CREATE TABLE leases (
    name   text        PRIMARY KEY,
    holder text        NOT NULL,
    until  timestamptz NOT NULL
);
