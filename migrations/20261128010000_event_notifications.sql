-- Each new drive event notifies its account on the `drive_events` channel, at commit (NOTIFY is
-- transactional), so the API can wake `/select-drive-events` callers that `wait` for their next
-- event instead of having them poll.
create function notify_drive_event() returns trigger
language plpgsql as $$
begin
    perform pg_notify('drive_events', new.user_id::text);
    return null;
end;
$$;

create trigger drive_events_notify
    after insert on drive_events
    for each row execute function notify_drive_event();
