-- The event feed pages by (xid, seq): the inserting transaction's id, then insertion order.
-- A reader only returns events of transactions older than every transaction still running
-- (its snapshot's xmin), so an event committed late can never land behind a cursor already
-- handed out: paging never skips or repeats, whatever commits concurrently.
alter table drive_events
    add column xid xid8 not null default pg_current_xact_id(),
    add column seq bigserial,
    -- What the event is about, for the feed's filters: the request of a drop, the review of a
    -- note, the file of a view or file event, the generation, the job.
    add column subject_id uuid;

update drive_events set subject_id = (fields -> 'file' ->> 'id')::uuid where kind = 'file';

create index drive_events_feed on drive_events (user_id, xid, seq);
create index drive_events_by_subject on drive_events (user_id, kind, subject_id);
