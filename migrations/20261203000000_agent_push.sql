-- A2A push notifications: where a task's status changes are POSTed (at most 5 per task; an id is
-- the client's, unique within its task), and each change waiting to be delivered to each of them.
create table agent_push_configs (
    task_id uuid not null references agent_tasks (id) on delete cascade,
    id text not null,
    url text not null,
    -- The receiver's token (sent as X-A2A-Notification-Token) and the Authorization credentials,
    -- sealed (core/src/sealed.rs) for this task and id: a database leak alone reveals neither.
    token_sealed bytea,
    auth_scheme text,
    credentials_sealed bytea,
    created_at timestamptz not null default now(),
    primary key (task_id, id)
);

-- One status change to send to one config, until it is taken, given up (after two retries), or
-- overtaken by a newer one sent instead.
create table agent_push_notices (
    id bigint generated always as identity primary key,
    task_id uuid not null,
    config_id text not null,
    state text not null,
    status_message jsonb,
    status_time timestamptz not null,
    attempts int not null default 0,
    due_at timestamptz not null default now(),
    leased_by uuid,
    leased_until timestamptz,
    foreign key (task_id, config_id) references agent_push_configs (task_id, id) on delete cascade
);

create index agent_push_notices_by_config on agent_push_notices (task_id, config_id, id);
create index agent_push_notices_due on agent_push_notices (due_at);

-- Every change of a task's state, in the transaction that makes it, becomes a notice for each of
-- its configs: none is lost to a crash between the change and its sending, and no code path that
-- changes a state can forget it.
create function agent_push_notice() returns trigger language plpgsql as $$
begin
    insert into agent_push_notices (task_id, config_id, state, status_message, status_time)
    select new.id, c.id, new.state, new.status_message, new.status_time
    from agent_push_configs c
    where c.task_id = new.id;
    return null;
end
$$;

create trigger agent_tasks_push after update of state on agent_tasks
    for each row when (old.state is distinct from new.state) execute function agent_push_notice();
