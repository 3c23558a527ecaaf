-- An agent task's change of state, and its beginning to wait, notify its account on the
-- `agent_tasks` channel at commit, so A2A's blocking SendMessage wakes when its task ends or
-- waits instead of polling (api/src/follow.rs, as `drive_events` does for the event feed).
create function notify_agent_task() returns trigger
language plpgsql as $$
begin
    perform pg_notify('agent_tasks', new.user_id::text);
    return null;
end;
$$;

create trigger agent_tasks_notify
    after update of state on agent_tasks
    for each row when (old.state is distinct from new.state)
    execute function notify_agent_task();

-- A wait is made, or made again for a task answered before (an upsert): either way it waits.
create trigger agent_waits_notify
    after insert or update on agent_waits
    for each row when (new.happened is null)
    execute function notify_agent_task();
