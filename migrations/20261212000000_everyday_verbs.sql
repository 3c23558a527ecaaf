-- The everyday verbs: renaming, copying, moving and deleting folders.

-- The kinds a mirror follows: asked for by name only (a client that knows the contract's six
-- sees no change).
alter table drive_events drop constraint drive_events_kind_check;
alter table drive_events add constraint drive_events_kind_check check (kind in (
    'drop', 'note', 'view', 'file', 'generation', 'job',
    'trashed', 'restored', 'deleted', 'moved', 'renamed', 'access'));

-- A file trashed with its deleted folder remembers where it sat: restored, it goes back there,
-- the folder made again. Null for a file trashed on its own (its folder_id is kept).
alter table files add column trashed_from_path text;
